"""PodTopologySpread's Filter over the node table.

The per-node PreFilter (filtering.py) visits every node each cycle to count matching pods per
topology domain. Here the per-node counts are an array over the snapshot's rows, kept across
cycles per (selector, namespace) and recomputed only for the rows whose NodeInfo changed
(:class:`~kubesched.framework.node_columns.RowTracker`); which rows form domains (every topology
key present, node inclusion policies) is a mask from the label and taint columns; counts per
domain are one ``bincount`` over the key's label column. The per-node state stays the reference,
filled on first read (:class:`LazyPreFilterState`) for nominated pods, preemption and reasons;
tests/plugins/test_batch_pod_topology_spread.py proves both agree.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from kubesched.api.labels import Selector
from kubesched.api.taints import find_matching_untolerated_taint
from kubesched.framework.lazy_state import lazy_slot
from kubesched.framework.node_columns import RowTracker, per_taint_set
from kubesched.framework.snapshot import NodeTable, Snapshot
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo
from kubesched.plugins import names
from kubesched.plugins.nodeaffinity.batch import required_mask

from .common import HONOR, TopologySpreadConstraint, _is_do_not_schedule_taint, count_pods_match_selector
from .filtering import NO_DOMAIN_MIN, PreFilterState

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

_TAINTS_KEY = names.POD_TOPOLOGY_SPREAD + "/tolerated"


class RowMatchCounts:
    """Matching pods of one (selector, namespace) on every row, kept current by row."""

    def __init__(self, selector: Selector, namespace: str) -> None:
        self.selector = selector
        self.namespace = namespace
        self._tracker = RowTracker()
        self.counts: I64 = np.zeros(0, dtype=np.int64)

    def refresh(self, snapshot: Snapshot) -> I64:
        infos = snapshot.node_infos
        changed = self._tracker.changes(snapshot.table)
        sel, ns = self.selector, self.namespace
        if changed is None:
            self.counts = np.fromiter(
                (count_pods_match_selector(ni.pods, sel, ns) if ni.pods else 0 for ni in infos),
                dtype=np.int64,
                count=len(infos),
            )
        else:
            for r in changed:
                self.counts[r] = count_pods_match_selector(infos[r].pods, sel, ns)
        return self.counts


class MatchCountIndex:
    """LRU of :class:`RowMatchCounts` by (selector, namespace), as :class:`~.memo.MatchCountMemo`."""

    def __init__(self, max_keys: int = 64) -> None:
        self._entries: OrderedDict[tuple[Selector, str], RowMatchCounts] = OrderedDict()
        self._max = max_keys

    def counts(self, snapshot: Snapshot, selector: Selector, namespace: str) -> I64:
        key = (selector, namespace)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = RowMatchCounts(selector, namespace)
            if len(self._entries) > self._max:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        return entry.refresh(snapshot)


def _inclusion(snapshot: Snapshot, pod: PodInfo, c: TopologySpreadConstraint) -> Bools | None:
    """``matchNodeInclusionPolicies`` for every row (None: every row)."""
    t = snapshot.table
    mask: Bools | None = None
    if c.node_affinity_policy == HONOR:
        mask = required_mask(snapshot, pod.required_node_affinity, t.all)
    if c.node_taints_policy == HONOR and t.tainted_count:
        tolerations = pod.tolerations

        def tolerated(taints: Sequence[JSONObj]) -> bool:
            return find_matching_untolerated_taint(taints, tolerations, _is_do_not_schedule_taint) is None

        ok = per_taint_set(pod.cache, _TAINTS_KEY, tolerated)[t.taint_id]
        mask = ok if mask is None else mask & ok
    return mask


def filter_mask(
    snapshot: Snapshot, pod: PodInfo, constraints: Sequence[TopologySpreadConstraint], index: MatchCountIndex
) -> Bools:
    """``calPreFilterState`` then Filter for every row."""
    t: NodeTable = snapshot.table
    cols = [t.label_column(c.topology_key) for c in constraints]
    all_keys = np.ones(t.size, dtype=np.bool_)
    for col in cols:
        all_keys &= col.values > 0
    ok = all_keys.copy()
    for c, col in zip(constraints, cols, strict=True):
        counts = index.counts(snapshot, c.selector, pod.namespace)
        eligible = all_keys
        incl = _inclusion(snapshot, pod, c)
        if incl is not None:
            eligible = eligible & incl
        vals = col.values
        k = len(col.strings) + 1
        ev = vals[eligible]
        per_value = np.bincount(ev, weights=counts[eligible], minlength=k).astype(np.int64)
        domains = np.bincount(ev, minlength=k) > 0
        domains[0] = False
        n_domains = int(domains.sum())
        # Fewer domains than minDomains: the global minimum is taken as 0.
        min_match = 0
        if n_domains >= c.min_domains:
            min_match = int(per_value[domains].min()) if n_domains else NO_DOMAIN_MIN
        self_match = 1 if c.selector.matches(pod.labels) else 0
        ok &= per_value[vals] + self_match - min_match <= c.max_skew
    return ok


_TP = PreFilterState.__dict__["tp_value_to_match_num"]
_HIST = PreFilterState.__dict__["domains_at_count"]
_MIN = PreFilterState.__dict__["min_match_num"]
_SELF = PreFilterState.__dict__["self_match"]


class LazyPreFilterState(PreFilterState):
    """A PreFilterState whose counts are filled on first read, by the reference code (``pending``)."""

    __slots__ = ("batch_mask", "pending")

    def __init__(
        self, pod: PodInfo, constraints: list[TopologySpreadConstraint], *,
        pending: Callable[[PreFilterState], None], batch_mask: Bools,
    ) -> None:
        super().__init__(pod, constraints)
        self.pending: Callable[[PreFilterState], None] | None = pending
        self.batch_mask: Bools | None = batch_mask

    tp_value_to_match_num = lazy_slot(_TP)
    domains_at_count = lazy_slot(_HIST)
    min_match_num = lazy_slot(_MIN)
    self_match = lazy_slot(_SELF)

    def update_with_pod(self, other: PodInfo, node_info: NodeInfo, delta: int) -> None:
        self.batch_mask = None  # the counts move away from what the batch mask says
        super().update_with_pod(other, node_info, delta)


__all__ = ["LazyPreFilterState", "MatchCountIndex", "RowMatchCounts", "filter_mask"]
