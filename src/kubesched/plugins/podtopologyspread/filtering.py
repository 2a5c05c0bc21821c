"""PodTopologySpread PreFilter/Filter state (upstream ``podtopologyspread/filtering.go``).

PreFilter counts the matching pods of every eligible topology domain once; Filter is then
O(constraints) per node: ``matching pods in the node's domain + (1 if the pod matches itself)
- global minimum <= maxSkew``.

The global minimum is kept exact under AddPod/RemovePod with a histogram of domain counts.
v1.35 keeps only the two smallest domains ("critical paths"), which can overstate the minimum
after several AddPods in a preemption dry run; upstream master replaced it with this histogram
(``DomainsAtCount``). Fresh PreFilter results are identical either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kubesched.framework.types import NodeInfo, PodInfo

from .common import TopologySpreadConstraint, node_labels_match_spread_constraints
from .memo import MatchCountMemo

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NO_DOMAIN_MIN",
    "PreFilterState",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

#: The minimum of a constraint that has no eligible domain (upstream ``math.MaxInt32``).
NO_DOMAIN_MIN = 2**31 - 1


@dataclass(slots=True)
class PreFilterState:
    """Per constraint: matching pods per topology value, how many domains hold k pods, the minimum."""

    pod: PodInfo
    constraints: list[TopologySpreadConstraint]
    tp_value_to_match_num: list[dict[str, int]] = field(default_factory=list)
    domains_at_count: list[dict[int, int]] = field(default_factory=list)
    min_match_num: list[int] = field(default_factory=list)
    #: Whether the incoming pod matches each constraint's selector (it counts itself once placed).
    self_match: list[int] = field(default_factory=list)

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.pod,
            self.constraints,
            [dict(m) for m in self.tp_value_to_match_num],
            [dict(h) for h in self.domains_at_count],
            list(self.min_match_num),
            self.self_match,
        )

    # -- building -------------------------------------------------------------------------------
    def count(self, nodes: Iterable[NodeInfo], memo: MatchCountMemo) -> None:
        """``calPreFilterState``: count matching pods of every node that qualifies for a domain."""
        pod, constraints = self.pod, self.constraints
        tp = self.tp_value_to_match_num = [{} for _ in constraints]
        tables = [memo.table(c.selector, pod.namespace) for c in constraints]
        count = memo.count
        for ni in nodes:
            labels = ni.labels
            if not node_labels_match_spread_constraints(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, ni):
                    continue
                value = labels[c.topology_key]
                tp[i][value] = tp[i].get(value, 0) + count(tables[i], ni, c.selector, pod.namespace)
        self.domains_at_count = []
        self.min_match_num = []
        for counts in tp:
            hist: dict[int, int] = {}
            for n in counts.values():
                hist[n] = hist.get(n, 0) + 1
            self.domains_at_count.append(hist)
            self.min_match_num.append(min(counts.values()) if counts else NO_DOMAIN_MIN)
        self.self_match = [1 if c.selector.matches(pod.labels) else 0 for c in constraints]

    def min_match(self, i: int) -> int:
        """The global minimum, or 0 while fewer domains than ``minDomains`` are eligible."""
        if len(self.tp_value_to_match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.min_match_num[i]

    # -- PreFilterExtensions --------------------------------------------------------------------
    def update_with_pod(self, other: PodInfo, node_info: NodeInfo, delta: int) -> None:
        """``updateWithPod``: ``other`` was added (+1) to or removed (-1) from ``node_info``."""
        if other.namespace != self.pod.namespace or node_info.node is None:
            return
        labels = node_info.labels
        if not node_labels_match_spread_constraints(labels, self.constraints):
            return
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(other.labels) or not c.match_node_inclusion_policies(self.pod, node_info):
                continue
            value = labels[c.topology_key]
            counts = self.tp_value_to_match_num[i]
            old = counts.get(value)
            cur = (old or 0) + delta
            counts[value] = cur
            self._update_min(i, old, cur)

    def _update_min(self, i: int, old: int | None, cur: int) -> None:
        """Keep the minimum exact after one domain moved from ``old`` to ``cur`` (|cur - old| = 1;
        ``old`` None: a domain PreFilter had not seen)."""
        hist = self.domains_at_count[i]
        hist[cur] = hist.get(cur, 0) + 1
        if old is None:
            self.min_match_num[i] = min(self.min_match_num[i], cur)
            return
        n = hist.get(old, 0) - 1
        if n > 0:
            hist[old] = n
        else:
            hist.pop(old, None)
        if cur < self.min_match_num[i]:
            self.min_match_num[i] = cur
        elif old == self.min_match_num[i] and old not in hist:
            # The last domain at the minimum moved up by one: every other domain was already >= old.
            self.min_match_num[i] = cur

    # -- Filter ---------------------------------------------------------------------------------
    def violation(self, node_info: NodeInfo) -> str | None:
        """None if the node keeps every constraint's skew, else the reason (missing label first)."""
        labels = node_info.labels
        for i, c in enumerate(self.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return ERR_REASON_NODE_LABEL_NOT_MATCH
            skew = self.tp_value_to_match_num[i].get(value, 0) + self.self_match[i] - self.min_match(i)
            if skew > c.max_skew:
                return ERR_REASON_CONSTRAINTS_NOT_MATCH
        return None
