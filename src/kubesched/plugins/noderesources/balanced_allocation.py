"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each other
once the pod is placed (upstream
``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``, v1.35).

``score = int((1 - std) * 100)`` where std is the standard deviation of requested/allocatable
(capped at 1) over the configured resources the node has, with real (not non-zero) requests.
With two resources std is ``|f1 - f2| / 2``. PreScore returns Skip for a pod requesting nothing
(kubernetes/kubernetes#129138): such a pod cannot change any node's balance.

The v1.36 change that scores the *change* in balance (kubernetes/kubernetes#135573) is not in
v1.35 and not here. Extended resources backed by DRA device classes are not scored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kubesched.config.errors import ConfigError
from kubesched.config.plugin_args import NodeResourcesBalancedAllocationArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE, BatchScorePlugin, Handle, PreScorePlugin
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins import names

from .resource_allocation import F64, I64, ResourceAllocationScorer, ResourcesNotFoundError

PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
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

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_requests(pod)
        if self.scorer.is_best_effort(requests):
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        s = state.get(PRE_SCORE_STATE_KEY)
        return s.pod_requests if isinstance(s, _PreScoreState) else self.scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            return self.scorer.score(node_info, self._pod_requests(state, pod)), None
        except ResourcesNotFoundError as err:
            return 0, Status(Code.ERROR, str(err))

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> I64:
        return self.scorer.score_batch(snapshot.table, indices, self._pod_requests(state, pod))

    def score_extensions(self) -> None:
        return None
