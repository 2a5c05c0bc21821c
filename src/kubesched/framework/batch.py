"""OpportunisticBatching (KEP-5598; upstream ``pkg/scheduler/framework/runtime/batch.go``).

When consecutive pods of a profile have the same signature (``framework/signature.py``), the
previous cycle's scored candidates, best first, are still right for the next pod except on the
node the previous pod went to. The batch keeps those candidates and hands the next pod the best
remaining one as a *hint*, which the scheduling cycle tries first, like a nominated node: if it
passes the Filters, the pod goes there without filtering or scoring any other node.

What happens to the previous pod's node depends on the release:

* v1.35, v1.36: the batch is usable only while that node no longer fits the next pod (pods
  placed one per node); if it still fits, the state is thrown away (``node_not_full``), since
  its new score is unknown.
* v1.37: that node is scored again (PreScore over the remaining candidates and it, its raw
  scores, then every candidate's scores normalised together) and goes back among the
  candidates; a pod with a nominated node flushes the batch (``pod_nominated``).

The batch expires 500 ms after it was stored (``maxBatchAge``). Upstream measures that on the
wall clock; here it is the scheduler's clock, so a simulation (virtual clock) stays
deterministic, and on a real cluster (real clock) it is upstream's rule.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from kubesched.config.releases import BATCH_RESCORES_HINTED_NODE

from .cycle_state import CycleState
from .signature import PodSignature
from .status import Status
from .types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from kubesched.config.releases import Release
    from kubesched.metrics import SchedulerMetrics


class Scores(Protocol):
    """What a batch keeps of a cycle's scores (``runtime.ScoreResult``)."""

    nodes: Sequence[str]
    raw: dict[str, npt.NDArray[np.int64]]
    total: npt.NDArray[np.int64]


class BatchFramework(Protocol):
    """The parts of a profile's framework the batch calls (``runtime.Framework``)."""

    profile_name: str
    metrics: SchedulerMetrics | None

    @property
    def release(self) -> Release: ...

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status: ...

    def run_pre_score_plugins(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status: ...

    def run_raw_score_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> dict[str, int] | Status: ...

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, names: Sequence[str], raw: Mapping[str, npt.NDArray[np.int64]]
    ) -> Scores | Status: ...

log = logging.getLogger("kubesched.framework.batch")

#: Upstream ``maxBatchAge``.
MAX_BATCH_AGE = 0.5

# ``scheduler_batch_attempts_total`` results (pkg/scheduler/metrics/metrics.go).
NO_HINT = "no_hint"
HINT_USED = "hint_used"
HINT_NOT_USED = "hint_not_used"

# ``scheduler_batch_cache_flushed_total`` reasons.
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_POD_NOMINATED = "pod_nominated"  # v1.37
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"  # v1.35, v1.36
FLUSH_EMPTY_LIST = "empty_list"
FLUSH_EXPIRED = "expired"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"
FLUSH_FILTER_ERROR = "filter_error"  # v1.37
FLUSH_PRESCORE_ERROR = "prescore_error"  # v1.37
FLUSH_RESCORE_ERROR = "rescore_error"  # v1.37
FLUSH_NORMALIZE_ERROR = "normalize_error"  # v1.37


class SortedScoredNodes:
    """Scored candidates as upstream keeps them (``SortedScoredNodes``): a binary max-heap, Go's
    ``container/heap`` exactly, ordered by total score, then by each node's ``Randomizer``.

    The heap's own order matters, not only the best node: kube-scheduler sets ``Randomizer`` only
    for nodes an extender scored, so without extenders equal scores are ordered by where the heap
    put them, and v1.37 rebuilds the heap from its internal order plus the re-scored node
    (``UnorderedList``). Measured on the kube-scheduler v1.37.2 binary: a burst of identical pods
    lands where this order sends it (tests/e2e/test_kube_opportunistic_batching.py).

    ``raw`` keeps each plugin's raw scores by position in ``names``, which v1.37 normalises again
    when it re-scores a node. A pure-Python heap: only batchable pods (never those of the default
    profile, see ``PodTopologySpread.sign_pod``) build one.
    """

    __slots__ = ("_heap", "names", "randomizer", "raw", "total")

    def __init__(
        self,
        names: Sequence[str],
        total: npt.NDArray[np.int64],
        randomizer: npt.NDArray[np.int64],
        raw: Mapping[str, npt.NDArray[np.int64]],
        *,
        first: int = 0,
    ) -> None:
        self.names = list(names)
        self.total: list[int] = total.tolist()
        self.randomizer: list[int] = randomizer.tolist()
        self.raw = dict(raw)
        self._heap = list(range(len(self.names)))
        if first:
            # The node at ``first`` heads the list: if it has the best total, it is the root.
            self._heap[0], self._heap[first] = first, 0
        n = len(self._heap)
        for i in range(n // 2 - 1, -1, -1):  # heap.Init
            self._down(i, n)

    @classmethod
    def of(cls, scores: Scores, chosen: int) -> SortedScoredNodes:
        """The scored nodes with ``chosen`` (one of the best) first, so that it is the root:
        upstream's heap over a feasible list in which its parallel Filter found ``chosen`` first,
        one of the orders it can produce. Randomizers are 0, as upstream's without extenders."""
        n = len(scores.nodes)
        return cls(scores.nodes, scores.total, np.zeros(n, dtype=np.int64), scores.raw, first=chosen)

    def _less(self, a: int, b: int) -> bool:
        ta, tb = self.total[a], self.total[b]
        return ta > tb or (ta == tb and self.randomizer[a] > self.randomizer[b])

    def _down(self, i0: int, n: int) -> None:
        """``container/heap``'s ``down``: sift the entry at ``i0`` towards the leaves."""
        h = self._heap
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and self._less(h[j2], h[j1]):
                j = j2
            if not self._less(h[j], h[i]):
                break
            h[i], h[j] = h[j], h[i]
            i = j

    def __len__(self) -> int:
        return len(self._heap)

    def pop(self) -> str:
        """The best node's name, removed (``heap.Pop``)."""
        h = self._heap
        n = len(h) - 1
        h[0], h[n] = h[n], h[0]
        self._down(0, n)
        return self.names[h.pop()]

    def remaining(self) -> list[int]:
        """Positions (in ``names``) of the candidates left, in the heap's internal order
        (upstream ``UnorderedList``)."""
        return list(self._heap)


class _Batch:
    __slots__ = ("created", "signature", "sorted_nodes")

    def __init__(self, signature: PodSignature, sorted_nodes: SortedScoredNodes, created: float) -> None:
        self.signature = signature
        self.sorted_nodes = sorted_nodes
        self.created = created


class OpportunisticBatch:
    """One profile's batch state (upstream ``OpportunisticBatch``)."""

    def __init__(self, framework: BatchFramework, now: Callable[[], float]) -> None:
        self._fw = framework
        self._now = now
        self._rescore = framework.release.has(BATCH_RESCORES_HINTED_NODE)
        self._state: _Batch | None = None
        self._last_cycle = 0
        self._last_chosen = ""
        self._last_succeeded = False
        #: Pods placed on a hint (upstream's ``batchedPods``, for tests).
        self.batched_pods = 0

    @property
    def _metrics(self) -> SchedulerMetrics | None:
        return self._fw.metrics

    # -- GetNodeHint -------------------------------------------------------------------------------
    def get_node_hint(
        self,
        state: CycleState,
        pod: PodInfo,
        signature: PodSignature | None,
        cycle: int,
        get_node: Callable[[str], NodeInfo | None],
    ) -> str:
        """The node to try first for ``pod`` in scheduling cycle ``cycle``, or "" for none."""
        start = time.perf_counter()
        hint = ""
        usable = self._compatible(pod, signature, cycle) and (
            self._refresh(state, pod, cycle, get_node)
            if self._rescore
            else self._last_node_full(state, pod, cycle, get_node)
        )
        if usable:
            assert self._state is not None
            hint = self._state.sorted_nodes.pop()
            log.debug("OpportunisticBatch provided node hint %s for pod %s (cycle %d, %d nodes left)",
                      hint, pod.key, cycle, len(self._state.sorted_nodes))
        else:
            self._attempt(NO_HINT)
        m = self._metrics
        if m is not None:
            m.observe_get_node_hint(self._fw.profile_name, bool(hint), time.perf_counter() - start)
        return hint

    def _compatible(self, pod: PodInfo, signature: PodSignature | None, cycle: int) -> bool:
        """Upstream ``batchStateCompatible`` (v1.35/v1.36 also check the last node is full)."""
        b = self._state
        if b is None or not len(b.sorted_nodes):
            return False
        if cycle != self._last_cycle + 1:
            return self._flush(FLUSH_POD_SKIPPED, cycle)
        if not self._last_succeeded:
            return self._flush(FLUSH_POD_FAILED, cycle)
        if self._rescore and (pod.pod.get("status") or {}).get("nominatedNodeName"):
            return self._flush(FLUSH_POD_NOMINATED, cycle)
        if signature is None or signature != b.signature:
            return self._flush(FLUSH_POD_INCOMPATIBLE, cycle)
        if self._now() > b.created + MAX_BATCH_AGE:
            return self._flush(FLUSH_EXPIRED, cycle)
        return True

    def _last_node_full(
        self, state: CycleState, pod: PodInfo, cycle: int, get_node: Callable[[str], NodeInfo | None]
    ) -> bool:
        """v1.35/v1.36: the state is usable only if the previous pod's node rejects this one."""
        ni = get_node(self._last_chosen)
        if ni is None:
            return self._flush(FLUSH_NODE_MISSING, cycle)
        if not self._fw.run_filter_plugins(state, pod, ni).is_rejected():
            return self._flush(FLUSH_NODE_NOT_FULL, cycle)
        return True

    def _refresh(
        self, state: CycleState, pod: PodInfo, cycle: int, get_node: Callable[[str], NodeInfo | None]
    ) -> bool:
        """v1.37 ``refreshHintCandidates``: re-score the previous pod's node if it still fits."""
        ni = get_node(self._last_chosen)
        if ni is None:
            return self._flush(FLUSH_NODE_MISSING, cycle)
        st = self._fw.run_filter_plugins(state, pod, ni)
        if st.is_success():
            return self._rescore_node(state, pod, cycle, ni, get_node)
        if not st.is_rejected():
            return self._flush(FLUSH_FILTER_ERROR, cycle)
        return True

    def _rescore_node(
        self,
        state: CycleState,
        pod: PodInfo,
        cycle: int,
        last: NodeInfo,
        get_node: Callable[[str], NodeInfo | None],
    ) -> bool:
        """v1.37 ``rescoreHintedNode``: the remaining candidates' cached raw scores and the node's
        fresh ones, normalised together; the node's tie-breaker is 0, as upstream leaves it."""
        start = time.perf_counter()
        m = self._metrics
        if m is not None:
            m.batch_rescore_attempt(self._fw.profile_name)
        try:
            assert self._state is not None
            old = self._state.sorted_nodes
            keep = old.remaining()
            nodes: list[NodeInfo] = []
            for i in keep:
                ni = get_node(old.names[i])
                if ni is None:
                    return self._flush(FLUSH_NODE_MISSING, cycle)
                nodes.append(ni)
            nodes.append(last)
            rescore_state = state.clone()
            if not self._fw.run_pre_score_plugins(rescore_state, pod, nodes).is_success():
                return self._flush(FLUSH_PRESCORE_ERROR, cycle)
            fresh = self._fw.run_raw_score_plugins(rescore_state, pod, last)
            if not isinstance(fresh, dict):
                return self._flush(FLUSH_RESCORE_ERROR, cycle)
            idx = np.array(keep, dtype=np.intp)
            raw = {}
            for name, value in fresh.items():
                cached = old.raw.get(name)
                column = cached[idx] if cached is not None else np.zeros(len(keep), dtype=np.int64)
                raw[name] = np.append(column, np.int64(value))
            names = [old.names[i] for i in keep] + [last.name]
            res = self._fw.normalize_scores(rescore_state, pod, names, raw)
            if isinstance(res, Status):
                return self._flush(FLUSH_NORMALIZE_ERROR, cycle)
            randomizer = np.append(np.array(old.randomizer, dtype=np.int64)[idx], np.int64(0))
            self._state.sorted_nodes = SortedScoredNodes(names, res.total, randomizer, res.raw)
            return True
        finally:
            if m is not None:
                m.observe_batch_rescore(self._fw.profile_name, time.perf_counter() - start)

    # -- StoreScheduleResults ----------------------------------------------------------------------
    def store_schedule_results(
        self,
        signature: PodSignature | None,
        hinted: str,
        chosen: str,
        others: SortedScoredNodes | None,
        cycle: int,
        *,
        n_others: int = 0,
    ) -> None:
        """Remember the cycle; keep ``others`` (the candidates after ``chosen``) for the next pod
        unless the pod went to its hint (the kept candidates are still right) or cannot be batched.
        ``n_others`` counts the other candidates when the caller did not sort them (no signature)."""
        start = time.perf_counter()
        self._last_cycle, self._last_chosen, self._last_succeeded = cycle, chosen, True
        try:
            if hinted and hinted == chosen:
                self._attempt(HINT_USED)
                self.batched_pods += 1
                return
            if hinted:
                self._attempt(HINT_NOT_USED)
            count = len(others) if others is not None else n_others
            if signature is not None and others is not None and count > 0:
                self._state = _Batch(signature, others, self._now())
                return
            self._flush(FLUSH_EMPTY_LIST if count == 0 else FLUSH_POD_NOT_BATCHABLE, cycle)
            self._state = None
        finally:
            m = self._metrics
            if m is not None:
                m.observe_store_schedule_results(self._fw.profile_name, time.perf_counter() - start)

    # -- bookkeeping -------------------------------------------------------------------------------
    def _attempt(self, result: str) -> None:
        m = self._metrics
        if m is not None:
            m.batch_attempt(self._fw.profile_name, result)

    def _flush(self, reason: str, cycle: int) -> bool:
        """Count why the state cannot be used (upstream ``logUnusableState``); always False."""
        m = self._metrics
        if m is not None:
            m.batch_cache_flushed(self._fw.profile_name, reason)
        log.debug("OpportunisticBatch found unusable state (profile %s, cycle %d): %s",
                  self._fw.profile_name, cycle, reason)
        return False
