"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other
once the pod is placed (upstream
``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``, v1.35.4 and v1.36.3/v1.37.2).

A balance score is ``int((1 - std) * 100)`` where std is the standard deviation of
requested/allocatable (capped at 1) over the configured resources the node has, with real (not
non-zero) requests. With two resources std is ``|f1 - f2| / 2``. PreScore returns Skip for a pod
requesting nothing (kubernetes/kubernetes#129138): such a pod cannot change any node's balance.

Up to v1.35 the score is the balance with the pod placed. Since v1.36
(:data:`~kubesched.config.releases.BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD`,
kubernetes/kubernetes#135573) it is how much the pod changes the balance:
``50 + (50 + with - without) / 2`` (Go's truncating division; 75 = unchanged), so a node already
out of balance no longer loses to every balanced one whatever the pod does. The resources left out
(an extended resource the pod does not request, a resource the node has none of) are the same for
both balances. Extended resources backed by DRA device classes are not scored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.config.errors import ConfigError
from kubesched.config.plugin_args import NodeResourcesBalancedAllocationArgs
from kubesched.config.releases import BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD, DEFAULT_RELEASE
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE, BatchScorePlugin, Handle, PreScorePlugin
from kubesched.framework.row_scores import RowScores
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins import names

from .resource_allocation import (
    F64,
    I64,
    ResourceAllocationScorer,
    ResourcesNotFoundError,
    div_trunc,
)

PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScore`` (v1.35's whole ``balancedResourceScorer``)."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_resource_batch_scorer(requested: I64, allocatable: I64) -> I64:
    """The same float64 operations in the same order, per node, over R x N arrays."""
    include = allocatable != 0
    n_res, n = requested.shape
    safe = np.where(include, allocatable, 1).astype(np.float64)
    frac: F64 = np.minimum(requested.astype(np.float64) / safe, 1.0)
    count = include.sum(axis=0)
    total = np.zeros(n, dtype=np.float64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    seen = np.zeros(n, dtype=np.int64)
    for i in range(n_res):
        inc = include[i]
        total = total + np.where(inc, frac[i], 0.0)
        first = np.where(inc & (seen == 0), frac[i], first)
        second = np.where(inc & (seen == 1), frac[i], second)
        seen = seen + inc
    std2 = np.abs((first - second) / 2)
    mean = total / np.where(count == 0, 1, count)
    acc = np.zeros(n, dtype=np.float64)
    for i in range(n_res):
        d = frac[i] - mean
        acc = acc + np.where(include[i], d * d, 0.0)
    std_n = np.sqrt(acc / np.where(count == 0, 1, count))
    std = np.where(count == 2, std2, np.where(count > 2, std_n, 0.0))
    out: I64 = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    return out


def balanced_resource_dense_scorer(columns: list[tuple[I64, I64, int]], n: int) -> I64:
    """The batch form when every resource is allocatable everywhere: same float64 operations."""
    fracs = [np.minimum(q.astype(np.float64) / a.astype(np.float64), 1.0) for q, a, _ in columns]
    if len(fracs) < 2:
        return np.full(n, MAX_NODE_SCORE, dtype=np.int64)
    if len(fracs) == 2:
        std: F64 = np.abs((fracs[0] - fracs[1]) / 2)
    else:
        total = np.zeros(n, dtype=np.float64)
        for f in fracs:
            total = total + f
        mean = total / len(fracs)
        acc = np.zeros(n, dtype=np.float64)
        for f in fracs:
            d = f - mean
            acc = acc + d * d
        std = np.sqrt(acc / len(fracs))
    out: I64 = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    return out


def balance_change_score(with_pod: int, without_pod: int) -> int:
    """v1.36+ ``balancedResourceScorer``: the two balance scores (each in [50, 100] up to float
    rounding) mapped back onto [50, 100], 75 meaning the pod leaves the balance as it was."""
    half = MAX_NODE_SCORE // 2
    return half + div_trunc(half + with_pod - without_pod, 2)


def balance_change_score_batch(with_pod: I64, without_pod: I64) -> I64:
    """:func:`balance_change_score` per node. Go's ``v / 2`` truncates toward zero: for negative
    ``v`` that is the arithmetic shift of ``v + 1`` (cheaper than a general truncating division)."""
    half = MAX_NODE_SCORE // 2
    v = half + with_pod - without_pod
    out: I64 = half + ((v + (v < 0)) >> 1)
    return out


class _PreScoreState:
    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation(PreScorePlugin, BatchScorePlugin):
    name = names.NODE_RESOURCES_BALANCED_ALLOCATION
    args_type = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or NodeResourcesBalancedAllocationArgs()
        self.handle = handle
        release = handle.release if handle is not None else DEFAULT_RELEASE
        #: v1.36+: score the change in balance, not the balance with the pod.
        self.score_change = release.has(BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD)
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.scorer = ResourceAllocationScorer(
            name=self.name,
            resources=list(self.args.resources),
            scorer=balanced_resource_scorer,
            batch_scorer=balanced_resource_batch_scorer,
            use_requested=True,
            dense_scorer=balanced_resource_dense_scorer,
        )
        self._rows = RowScores()

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on the pod's requests (OpportunisticBatching). Upstream refuses
        pods whose extended resources DRA would provide (v1.36+); kubesched has no DRA
        extended resources, so every pod is signed."""
        return [SignFragment(sign.RESOURCES_SIGNER, sign.resources(pod))], None

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_requests(pod)
        if self.scorer.is_best_effort(requests):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> list[int] | None:
        """The PreScore state's requests; without one (Score called directly) computed here, and
        None for a pod requesting nothing, which upstream's Score then scores 0 (with no resources
        configured the scorer's "resources not found" Error is kept, as before)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.pod_requests
        requests = self.scorer.pod_requests(pod)
        return None if self.scorer.resources and self.scorer.is_best_effort(requests) else requests

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        requests = self._pod_requests(state, pod)
        if requests is None:
            return 0, None
        try:
            return self._one(node_info, requests), None
        except ResourcesNotFoundError as err:
            return 0, Status(Code.ERROR, str(err))

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> I64:
        requests = self._pod_requests(state, pod)
        if requests is None:
            return np.zeros(len(indices), dtype=np.int64)
        # A node's score depends on the pod's requests and the node's row only: kept per row
        # across cycles (framework/row_scores.py).
        return self._rows.scores(
            snapshot, indices, tuple(requests),
            lambda rows: self._batch(snapshot, rows, requests),
            lambda ni: self._one(ni, requests),
        )  # fmt: skip

    def _batch(self, snapshot: Snapshot, indices: npt.NDArray[np.intp], requests: list[int]) -> I64:
        if not self.score_change:
            return self.scorer.score_batch(snapshot.table, indices, requests)
        return self._score_change_batch(snapshot, indices, requests)

    def _one(self, node_info: NodeInfo, requests: list[int]) -> int:
        """:meth:`score` of one node for a pod requesting something; ResourcesNotFoundError raised."""
        if not self.score_change:
            return self.scorer.score(node_info, requests)
        requested, allocated, allocatable = self.scorer.node_allocatable_request(node_info, requests)
        with_pod = balanced_resource_scorer(requested, allocatable)
        without_pod = balanced_resource_scorer(allocated, allocatable)
        return balance_change_score(with_pod, without_pod)

    def _score_change_batch(self, snapshot: Snapshot, indices: npt.NDArray[np.intp], requests: list[int]) -> I64:
        """The v1.36+ score over the node table: both balances by the v1.35 batch scorers (in the
        dense case one call over the nodes twice, with and then without the pod: the operations
        are element-wise, so the numbers are the same, for about half the numpy calls)."""
        n = len(indices)
        dense = self.scorer.dense_node_columns(snapshot.table, indices, requests)
        if dense is not None:
            both = [(np.concatenate((q + pr, q)), np.concatenate((a, a)), w) for q, a, pr, w in dense]
            scores = balanced_resource_dense_scorer(both, 2 * n)
            with_pod, without_pod = scores[:n], scores[n:]
        else:
            requested, allocatable = self.scorer.columns(snapshot.table, indices, requests)
            pod_column = np.asarray(requests, dtype=np.int64)[:, None]
            allocated: I64 = requested - np.where(allocatable != 0, pod_column, 0)
            with_pod = balanced_resource_batch_scorer(requested, allocatable)
            without_pod = balanced_resource_batch_scorer(allocated, allocatable)
        return balance_change_score_batch(with_pod, without_pod)

    def score_extensions(self) -> None:
        return None
