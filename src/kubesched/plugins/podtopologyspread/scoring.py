"""PodTopologySpread PreScore/Score/NormalizeScore (upstream ``podtopologyspread/scoring.go``).

A node's raw score is ``sum over soft constraints of matching pods in its domain * weight +
(maxSkew - 1)``, where ``weight = ln(number of domains + 2)`` keeps small topologies from being
drowned by big ones. Fewer matching pods is better, so NormalizeScore inverts:
``100 * (max + min - score) / max``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo

from .common import LABEL_HOSTNAME, TopologySpreadConstraint, node_labels_match_spread_constraints
from .memo import MatchCountMemo

__all__ = ["PreScoreState", "normalize", "topology_normalizing_weight"]

_INVALID_SCORE = -1


def topology_normalizing_weight(size: int) -> float:
    """``log(size + 2)``: in (1.09, 8.52) for 1..5000 domains."""
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    """``maxSkew - 1`` is added so that differences between domains are watered down."""
    return float(count) * weight + float(max_skew - 1)


@dataclass(slots=True)
class PreScoreState:
    pod: PodInfo
    constraints: list[TopologySpreadConstraint]
    #: Nodes lacking a topology key of the constraints (when all are required): scored 0.
    ignored_nodes: set[str] = field(default_factory=set)
    #: Per constraint: topology value of a candidate node -> matching pods (hostname: counted at Score).
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)
    #: Shared with the plugin: per-node matching counts, reused across cycles.
    memo: MatchCountMemo = field(default_factory=MatchCountMemo)

    def clone(self) -> PreScoreState:
        return self

    def init(self, filtered_nodes: Sequence[NodeInfo], require_all_topologies: bool) -> None:
        """``initPreScoreState``: the candidate domains and each constraint's weight."""
        constraints = self.constraints
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for ni in filtered_nodes:
            labels = ni.labels
            if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
                self.ignored_nodes.add(ni.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                # A missing label reads as "" (Go map zero value): such nodes form one domain.
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
        self.topology_value_to_pod_counts = counts
        self.topology_normalizing_weight = [
            topology_normalizing_weight(
                len(filtered_nodes) - len(self.ignored_nodes) if c.topology_key == LABEL_HOSTNAME else len(counts[i])
            )
            for i, c in enumerate(constraints)
        ]

    def count(self, all_nodes: Iterable[NodeInfo], require_all_topologies: bool) -> None:
        """Matching pods of the candidate domains, over every node of the cluster."""
        pod, constraints, counts = self.pod, self.constraints, self.topology_value_to_pod_counts
        tables = [self.memo.table(c.selector, pod.namespace) for c in constraints]
        count = self.memo.count
        for ni in all_nodes:
            labels = ni.labels
            if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, ni):
                    continue
                value = labels.get(c.topology_key, "")
                if value not in counts[i]:
                    continue
                counts[i][value] += count(tables[i], ni, c.selector, pod.namespace)

    def score(self, node_info: NodeInfo) -> int:
        if node_info.name in self.ignored_nodes:
            return 0
        labels = node_info.labels
        total = 0.0
        for i, c in enumerate(self.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                table = self.memo.table(c.selector, self.pod.namespace)
                cnt = self.memo.count(table, node_info, c.selector, self.pod.namespace)
            else:
                cnt = self.topology_value_to_pod_counts[i].get(value, 0)
            total += score_for_count(cnt, c.max_skew, self.topology_normalizing_weight[i])
        # math.Round: half away from zero (scores are never negative).
        return math.floor(total + 0.5)


def normalize(scores: list[NodeScore], ignored_nodes: set[str]) -> None:
    """Fewer matching pods scores higher; ignored nodes score 0."""
    min_score: int | None = None
    max_score = 0
    for s in scores:
        if s.name in ignored_nodes:
            s.score = _INVALID_SCORE
            continue
        min_score = s.score if min_score is None else min(min_score, s.score)
        max_score = max(max_score, s.score)
    for s in scores:
        if s.score == _INVALID_SCORE:
            s.score = 0
        elif max_score == 0:
            s.score = MAX_NODE_SCORE
        else:
            s.score = MAX_NODE_SCORE * (max_score + (min_score or 0) - s.score) // max_score
