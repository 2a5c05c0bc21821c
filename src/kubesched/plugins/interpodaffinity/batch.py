"""InterPodAffinity over the node table: per-row counts of matching pods, kept across cycles.

The per-node plugin (filtering.py, scoring.py) builds, every cycle, dictionaries of matching pods per
topology value by visiting every pod with affinity and every node. Here the same sums are numpy
arrays over the snapshot's rows, updated only for the rows whose NodeInfo changed since the last
cycle (:class:`~kubesched.framework.node_columns.RowTracker`):

* :class:`ExistingTerms` — for each distinct term of the existing pods (required anti-affinity,
  required affinity, preferred terms with their weight), how many pods on each row carry it. A cycle
  evaluates each distinct term once against the incoming pod, instead of once per pod.
* :class:`IncomingCounts` — for one set of incoming terms (pods of a workload share them), how many
  pods on each row match all affinity terms / each anti-affinity term / each preferred term.

Counts per topology value are then one ``bincount`` over the label column of the term's key, and a
node's verdict or score one gather. The dictionaries stay the reference (and serve AddPod/RemovePod,
nominated pods and preemption); tests/plugins/test_batch_interpod_affinity.py proves both agree.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.lazy_state import lazy_slot
from kubesched.framework.node_columns import RowTracker
from kubesched.framework.snapshot import NodeTable, Snapshot
from kubesched.framework.types import NodeInfo, PodInfo

from .filtering import PreFilterState, pod_matches_all_terms
from .scoring import PreScoreState
from .terms import AffinityTerm, WeightedAffinityTerm, pod_affinity_terms

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

ANTI = "anti"
AFFINITY = "affinity"
PREFERRED = "preferred"
#: (kind, term, weight): weight is the signed preferred weight, 0 for required terms.
Group = tuple[str, AffinityTerm, int]


def _existing_groups(ni: NodeInfo) -> dict[Group, int]:
    out: dict[Group, int] = {}
    for p in ni.pods_with_affinity:
        terms = pod_affinity_terms(p)
        for t in terms.required_anti_affinity:
            g: Group = (ANTI, t, 0)
            out[g] = out.get(g, 0) + 1
        for t in terms.required_affinity:
            g = (AFFINITY, t, 0)
            out[g] = out.get(g, 0) + 1
        for w in terms.preferred_affinity:
            g = (PREFERRED, w.term, w.weight)
            out[g] = out.get(g, 0) + 1
        for w in terms.preferred_anti_affinity:
            g = (PREFERRED, w.term, -w.weight)
            out[g] = out.get(g, 0) + 1
    return out


class ExistingTerms:
    """Rows x distinct terms of existing pods: how many pods on the row carry the term."""

    def __init__(self) -> None:
        self._tracker = RowTracker()
        self._rows: list[dict[Group, int]] = []
        self.arrays: dict[Group, I64] = {}

    def refresh(self, snapshot: Snapshot) -> None:
        infos = snapshot.node_infos
        changed = self._tracker.changes(snapshot.table)
        n = len(infos)
        if changed is None:
            self._rows = [_existing_groups(ni) if ni.pods_with_affinity else {} for ni in infos]
            self.arrays = {}
            for r, groups in enumerate(self._rows):
                for g, c in groups.items():
                    self._array(g, n)[r] = c
            return
        for r in changed:
            ni = infos[r]
            new = _existing_groups(ni) if ni.pods_with_affinity else {}
            old = self._rows[r]
            if not new and not old:
                continue
            for g in old.keys() | new.keys():
                self._array(g, n)[r] = new.get(g, 0)
            self._rows[r] = new

    def _array(self, g: Group, n: int) -> I64:
        arr = self.arrays.get(g)
        if arr is None:
            arr = self.arrays[g] = np.zeros(n, dtype=np.int64)
        return arr

    def carried(self, kind: str) -> bool:
        """Whether some pod on some row carries a ``kind`` term (else :meth:`matching` is empty
        for every pod, whatever its namespace labels)."""
        return any(k == kind and arr.any() for (k, _, _), arr in self.arrays.items())

    def matching(self, kind: str, pod: PodInfo, ns_labels: Mapping[str, str]) -> list[tuple[AffinityTerm, int, I64]]:
        """(term, weight, per-row count) of the ``kind`` terms that ``pod`` matches, where some pod has them."""
        out = []
        for (k, t, w), arr in self.arrays.items():
            if k == kind and arr.any() and t.matches(pod, ns_labels):
                out.append((t, w, arr))
        return out


class IncomingCounts:
    """For one set of incoming terms: per row, pods matching all affinity terms, each
    anti-affinity term, each weighted term."""

    def __init__(
        self,
        affinity: Sequence[AffinityTerm],
        anti_affinity: Sequence[AffinityTerm],
        weighted: Sequence[tuple[AffinityTerm, int]] = (),
    ) -> None:
        self.affinity = tuple(affinity)
        self.anti = tuple(anti_affinity)
        self.weighted = tuple(weighted)
        self._tracker = RowTracker()
        self.aff: I64 = np.zeros(0, dtype=np.int64)
        self.anti_rows: list[I64] = []
        self.weighted_rows: list[I64] = []

    def _row(self, ni: NodeInfo) -> tuple[int, list[int], list[int]]:
        aff = 0
        anti = [0] * len(self.anti)
        weighted = [0] * len(self.weighted)
        for p in ni.pods:
            if self.affinity and pod_matches_all_terms(self.affinity, p):
                aff += 1
            for i, t in enumerate(self.anti):
                if t.matches(p, None):
                    anti[i] += 1
            for i, (t, _) in enumerate(self.weighted):
                if t.matches(p, None):
                    weighted[i] += 1
        return aff, anti, weighted

    def refresh(self, snapshot: Snapshot) -> None:
        infos = snapshot.node_infos
        changed = self._tracker.changes(snapshot.table)
        if changed is None:
            n = len(infos)
            self.aff = np.zeros(n, dtype=np.int64)
            self.anti_rows = [np.zeros(n, dtype=np.int64) for _ in self.anti]
            self.weighted_rows = [np.zeros(n, dtype=np.int64) for _ in self.weighted]
            rows: Sequence[int] = range(n)
        else:
            rows = changed
        for r in rows:
            ni = infos[r]
            if not ni.pods:
                if changed is not None:
                    self._set(r, 0, [0] * len(self.anti), [0] * len(self.weighted))
                continue
            self._set(r, *self._row(ni))

    def _set(self, r: int, aff: int, anti: list[int], weighted: list[int]) -> None:
        self.aff[r] = aff
        for arr, v in zip(self.anti_rows, anti, strict=True):
            arr[r] = v
        for arr, v in zip(self.weighted_rows, weighted, strict=True):
            arr[r] = v


class IncomingIndex:
    """LRU of :class:`IncomingCounts` by term set (like :class:`~.memo.NodeMemo`)."""

    def __init__(self, max_keys: int = 16) -> None:
        self._entries: OrderedDict[Hashable, IncomingCounts] = OrderedDict()
        self._max = max_keys

    def get(
        self,
        affinity: Sequence[AffinityTerm],
        anti_affinity: Sequence[AffinityTerm],
        weighted: Sequence[tuple[AffinityTerm, int]] = (),
    ) -> IncomingCounts:
        key = (tuple(affinity), tuple(anti_affinity), tuple(weighted))
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = IncomingCounts(affinity, anti_affinity, weighted)
            if len(self._entries) > self._max:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        return entry


def _per_value(table: NodeTable, key: str, rows_count: I64) -> tuple[npt.NDArray[np.int32], I64]:
    """(value id of every row for ``key``, row counts summed per value id; id 0 = no label, zeroed)."""
    col = table.label_column(key)
    vals = col.values
    sums = np.bincount(vals, weights=rows_count, minlength=len(col.strings) + 1).astype(np.int64)
    sums[0] = 0
    return vals, sums


class FilterData:
    """Everything Filter needs, as arrays over every row of the table."""

    __slots__ = ("any_existing_anti", "mask")

    def __init__(self, mask: Bools, any_existing_anti: bool) -> None:
        self.mask = mask
        self.any_existing_anti = any_existing_anti


def existing_anti_blocked(
    table: NodeTable, groups: Sequence[tuple[AffinityTerm, int, I64]]
) -> tuple[Bools | None, bool]:
    """Rows whose topology value holds an existing pod whose anti-affinity term matches the pod;
    and whether any such count exists at all (upstream's ``existingAntiAffinityCounts`` non-empty)."""
    by_key: dict[str, I64] = {}
    for t, _, arr in groups:
        by_key[t.topology_key] = by_key[t.topology_key] + arr if t.topology_key in by_key else arr
    blocked: Bools | None = None
    any_counts = False
    for key, arr in by_key.items():
        vals, sums = _per_value(table, key, arr)
        hit = sums > 0
        if not hit.any():
            continue
        any_counts = True
        b = hit[vals]
        blocked = b if blocked is None else blocked | b
    return blocked, any_counts


def filter_mask(
    table: NodeTable,
    incoming: IncomingCounts,
    matches_own_affinity: bool,
    existing_blocked: Bools | None,
) -> Bools:
    """``satisfiesPodAffinity && satisfiesPodAntiAffinity && satisfiesExistingPodsAntiAffinity``
    for every row."""
    n = table.size
    ok = np.ones(n, dtype=np.bool_)
    if incoming.affinity:
        exists = np.ones(n, dtype=np.bool_)
        counts_empty = True
        for t in incoming.affinity:
            vals, sums = _per_value(table, t.topology_key, incoming.aff)
            if sums.any():
                counts_empty = False
            ok &= vals > 0  # every topology label must exist on the node
            exists &= sums[vals] > 0
        if not (counts_empty and matches_own_affinity):
            ok &= exists
    if incoming.anti:
        by_key: dict[str, I64] = {}
        for t, arr in zip(incoming.anti, incoming.anti_rows, strict=True):
            k = t.topology_key
            by_key[k] = by_key[k] + arr if k in by_key else arr
        for key, arr in by_key.items():
            vals, sums = _per_value(table, key, arr)
            if sums.any():
                ok &= ~(sums > 0)[vals]
    if existing_blocked is not None:
        ok &= ~existing_blocked
    return ok


class ScoreData:
    """Summed weights per topology value, as one lookup array per topology key."""

    __slots__ = ("by_key", "matched")

    def __init__(self) -> None:
        self.by_key: dict[str, tuple[npt.NDArray[np.int32], I64]] = {}
        self.matched = False

    def add(self, table: NodeTable, key: str, weighted_rows: I64) -> None:
        vals, sums = _per_value(table, key, weighted_rows)
        col = table.label_column(key)
        # Any row with a count and the label counts as a match, whatever the summed weight.
        if not self.matched and bool(((weighted_rows != 0) & (col.values > 0)).any()):
            self.matched = True
        prev = self.by_key.get(key)
        self.by_key[key] = (vals, sums if prev is None else prev[1] + sums)

    def scores(self, table: NodeTable, rows: npt.NDArray[np.intp]) -> I64:
        out = np.zeros(len(rows), dtype=np.int64)
        for vals, sums in self.by_key.values():
            out += sums[table.take(vals, rows)]
        return out


def score_data(
    table: NodeTable,
    existing: Sequence[tuple[AffinityTerm, int, I64]],
    incoming: IncomingCounts | None,
) -> ScoreData:
    """``existing``: matching terms of existing pods with their weight; ``incoming``: the pod's
    preferred terms (weights in ``incoming.weighted``)."""
    data = ScoreData()
    for t, w, arr in existing:
        _add_weighted(data, table, t, w, arr)
    if incoming is not None:
        for (t, w), arr in zip(incoming.weighted, incoming.weighted_rows, strict=True):
            _add_weighted(data, table, t, w, arr)
    return data


def _add_weighted(data: ScoreData, table: NodeTable, t: AffinityTerm, w: int, arr: I64) -> None:
    if not arr.any():
        return
    if w == 0:
        # A zero weight adds nothing but still counts as a match where the label exists.
        col = table.label_column(t.topology_key)
        if bool(((arr != 0) & (col.values > 0)).any()):
            data.matched = True
        return
    data.add(table, t.topology_key, arr * w)


def normalize_batch(scores: I64, max_score: int) -> I64:
    """scoring.py ``normalize``: min-max to [0, max], truncated like Go's int64(float64)."""
    if not len(scores):
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    diff = hi - lo
    if diff <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    out: I64 = (float(max_score) * ((scores - lo) / diff)).astype(np.int64)
    return out


def weighted_terms(
    preferred: Sequence[WeightedAffinityTerm], preferred_anti: Sequence[WeightedAffinityTerm]
) -> tuple[tuple[AffinityTerm, int], ...]:
    return tuple((w.term, w.weight) for w in preferred) + tuple((w.term, -w.weight) for w in preferred_anti)


def _slot(cls: type, name: str) -> object:
    return cls.__dict__[name]


_EXISTING = _slot(PreFilterState, "existing_anti_affinity_counts")
_AFFINITY = _slot(PreFilterState, "affinity_counts")
_ANTI = _slot(PreFilterState, "anti_affinity_counts")
_TOPOLOGY = _slot(PreScoreState, "topology_score")


class LazyPreFilterState(PreFilterState):
    """A PreFilterState whose counts are filled on first read, by the reference code (``pending``).

    PreFilter decides with the batch data (``batch_mask``); only per-node paths (nominated pods,
    preemption's dry runs, the reasons of rejected nodes) read the counts, and pay for them then."""

    __slots__ = ("batch_mask", "pending")

    def __init__(
        self,
        pod: PodInfo,
        affinity_terms: tuple[AffinityTerm, ...],
        anti_affinity_terms: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        *,
        pending: Callable[[PreFilterState], None],
        batch_mask: Bools,
    ) -> None:
        super().__init__(pod, affinity_terms, anti_affinity_terms, namespace_labels)
        self.pending: Callable[[PreFilterState], None] | None = pending
        self.batch_mask: Bools | None = batch_mask

    existing_anti_affinity_counts = lazy_slot(_EXISTING)
    affinity_counts = lazy_slot(_AFFINITY)
    anti_affinity_counts = lazy_slot(_ANTI)

    def update_with_pod(self, other: PodInfo, node_labels: Mapping[str, str], delta: int) -> None:
        self.batch_mask = None  # the counts move away from what the batch data says
        super().update_with_pod(other, node_labels, delta)


class LazyPreScoreState(PreScoreState):
    """A PreScoreState whose ``topology_score`` is filled on first read (per-node Score only)."""

    __slots__ = ("batch", "pending")

    def __init__(
        self,
        pod: PodInfo,
        preferred_affinity: tuple[WeightedAffinityTerm, ...],
        preferred_anti_affinity: tuple[WeightedAffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        hard_pod_affinity_weight: int,
        *,
        pending: Callable[[PreScoreState], None],
        batch: ScoreData,
    ) -> None:
        super().__init__(pod, preferred_affinity, preferred_anti_affinity, namespace_labels, hard_pod_affinity_weight)
        self.pending: Callable[[PreScoreState], None] | None = pending
        self.batch = batch
        self.matched = batch.matched

    topology_score = lazy_slot(_TOPOLOGY)


__all__ = [
    "ExistingTerms",
    "FilterData",
    "IncomingCounts",
    "IncomingIndex",
    "LazyPreFilterState",
    "LazyPreScoreState",
    "ScoreData",
    "existing_anti_blocked",
    "filter_mask",
    "normalize_batch",
    "score_data",
    "weighted_terms",
]
