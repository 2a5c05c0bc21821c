"""The resource-allocation scorer shared by NodeResourcesFit and NodeResourcesBalancedAllocation
(upstream ``pkg/scheduler/framework/plugins/noderesources/resource_allocation.go``).

For every configured resource it pairs the node's allocatable with what would be requested once
the pod is placed, then hands both lists to a strategy (BalancedAllocation since v1.36 also wants
what the node's pods request without the pod: :meth:`ResourceAllocationScorer.node_allocatable_request`
and :meth:`ResourceAllocationScorer.dense_node_columns`). NodeResourcesFit counts cpu and memory with
the scheduler's non-zero defaults (``NonZeroRequested`` plus the pod's non-zero request);
BalancedAllocation uses the real requests. An extended (scalar) resource the pod does not request
is left out, as is any resource the node has none of.

Each strategy has a per-node form (plain integers, the reference) and a vectorised form over the
snapshot's node table; both use Go's integer arithmetic so they agree to the unit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubesched.config.plugin_args import ResourceSpec
from kubesched.framework.snapshot import NodeTable
from kubesched.framework.types import NodeInfo, PodInfo

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

#: ``scorer(requested, allocatable) -> score`` over the configured resources, in order.
Scorer = Callable[[Sequence[int], Sequence[int]], int]
#: The vectorised scorer: (requested, allocatable) as R x N int64 arrays -> N scores.
BatchScorer = Callable[[I64, I64], I64]
#: The same when every included resource is allocatable on every node (the common case): a list of
#: (requested, allocatable, weight) per included resource, 1-D arrays with allocatable > 0, and
#: the number of nodes.
DenseScorer = Callable[[list[tuple[I64, I64, int]], int], I64]


class ResourcesNotFoundError(ValueError):
    """No resources configured: upstream's Score returns an Error status "resources not found"."""

    def __init__(self) -> None:
        super().__init__("resources not found")


@dataclass
class ResourceAllocationScorer:
    name: str
    resources: list[ResourceSpec]
    scorer: Scorer
    batch_scorer: BatchScorer
    #: True: real requests for cpu/memory (BalancedAllocation); False: the non-zero ones (Fit).
    use_requested: bool = False
    #: Optional fast form of ``batch_scorer`` (see :data:`DenseScorer`).
    dense_scorer: DenseScorer | None = None

    # -- the pod ----------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        self._key = (self.name, self.use_requested, tuple(r.name for r in self.resources))
        self._cache_key = f"{self.name}/podRequests"

    def pod_requests(self, pod: PodInfo) -> list[int]:
        """``calculatePodResourceRequestList``, memoised on the pod (one parse per pod, not per node)."""
        key = self._key
        cache_key = self._cache_key
        cached = pod.cache.get(cache_key)
        if cached is not None and cached[0] == key:
            return list(cached[1])
        requests = pod.requests
        out: list[int] = []
        for r in self.resources:
            if not self.use_requested and r.name == CPU:
                out.append(pod.non_zero_requests[0])
            elif not self.use_requested and r.name == MEMORY:
                out.append(pod.non_zero_requests[1])
            else:
                out.append(requests.get(r.name))
        pod.cache[cache_key] = (key, tuple(out))
        return out

    @staticmethod
    def is_best_effort(pod_requests: Sequence[int]) -> bool:
        return all(r == 0 for r in pod_requests)

    # -- one node ---------------------------------------------------------------------------------
    def allocatable_requested(self, ni: NodeInfo, resource: str, pod_request: int) -> tuple[int, int]:
        """``calculateResourceAllocatableRequest``: (allocatable, requested with the pod), or (0, 0)."""
        if pod_request == 0 and is_scalar_resource_name(resource):
            return 0, 0
        requested = ni.requested if self.use_requested else ni.non_zero_requested
        alloc = ni.allocatable
        if resource == CPU:
            return alloc.milli_cpu, requested.milli_cpu + pod_request
        if resource == MEMORY:
            return alloc.memory, requested.memory + pod_request
        if resource == EPHEMERAL_STORAGE:
            return alloc.ephemeral_storage, ni.requested.ephemeral_storage + pod_request
        if resource in alloc.scalar_resources:
            return alloc.scalar_resources[resource], ni.requested.scalar_resources.get(resource, 0) + pod_request
        return 0, 0

    def node_allocatable_request(
        self, ni: NodeInfo, pod_requests: Sequence[int]
    ) -> tuple[list[int], list[int], list[int]]:
        """``calculateNodeAllocatableRequest`` (v1.36+): (requested with the pod, requested by the
        node's pods alone, allocatable) per resource; all three 0 where the resource is skipped."""
        if not self.resources:
            raise ResourcesNotFoundError()
        n = len(self.resources)
        requested, allocated, allocatable = [0] * n, [0] * n, [0] * n
        for i, r in enumerate(self.resources):
            pr = pod_requests[i]
            a, q = self.allocatable_requested(ni, r.name, pr)
            if a == 0:
                continue
            allocatable[i] = a
            requested[i] = q
            allocated[i] = q - pr
        return requested, allocated, allocatable

    def score(self, ni: NodeInfo, pod_requests: Sequence[int]) -> int:
        if not self.resources:
            raise ResourcesNotFoundError()
        requested = [0] * len(self.resources)
        allocatable = [0] * len(self.resources)
        for i, r in enumerate(self.resources):
            a, q = self.allocatable_requested(ni, r.name, pod_requests[i])
            if a == 0:
                continue
            allocatable[i] = a
            requested[i] = q
        return self.scorer(requested, allocatable)

    # -- the node table ---------------------------------------------------------------------------
    def columns(
        self, table: NodeTable, indices: npt.NDArray[np.intp], pod_requests: Sequence[int]
    ) -> tuple[I64, I64]:
        """(requested, allocatable) as R x len(indices) arrays; zeros where a resource is skipped."""
        if not self.resources:
            raise ResourcesNotFoundError()
        n = len(indices)
        req = np.zeros((len(self.resources), n), dtype=np.int64)
        alloc = np.zeros((len(self.resources), n), dtype=np.int64)
        for i, r in enumerate(self.resources):
            pr = pod_requests[i]
            if pr == 0 and is_scalar_resource_name(r.name):
                continue
            col = self._table_columns(table, r.name)
            if col is None:
                continue
            a = col[0][indices]
            q = col[1][indices] + pr
            present = a != 0
            alloc[i] = np.where(present, a, 0)
            req[i] = np.where(present, q, 0)
        return req, alloc

    def score_batch(
        self, table: NodeTable, indices: npt.NDArray[np.intp], pod_requests: Sequence[int]
    ) -> I64:
        if self.dense_scorer is not None:
            dense = self.dense_columns(table, indices, pod_requests)
            if dense is not None:
                return self.dense_scorer(dense, len(indices))
        req, alloc = self.columns(table, indices, pod_requests)
        return self.batch_scorer(req, alloc)

    def dense_columns(
        self, table: NodeTable, indices: npt.NDArray[np.intp], pod_requests: Sequence[int]
    ) -> list[tuple[I64, I64, int]] | None:
        """(requested, allocatable, weight) of the resources every node includes, or None when some
        resource is allocatable on some of the nodes only (then the general form decides)."""
        dense = self.dense_node_columns(table, indices, pod_requests)
        if dense is None:
            return None
        return [(q + pr, a, w) for q, a, pr, w in dense]

    def dense_node_columns(
        self, table: NodeTable, indices: npt.NDArray[np.intp], pod_requests: Sequence[int]
    ) -> list[tuple[I64, I64, int, int]] | None:
        """:meth:`dense_columns` with the request split: (requested by the node's pods,
        allocatable, the pod's request, weight) per included resource."""
        if not self.resources:
            raise ResourcesNotFoundError()
        out: list[tuple[I64, I64, int, int]] = []
        for i, r in enumerate(self.resources):
            pr = pod_requests[i]
            if pr == 0 and is_scalar_resource_name(r.name):
                continue
            col = self._table_columns(table, r.name)
            if col is None:
                continue
            a = col[0][indices]
            if not a.all():
                if a.any():
                    return None
                continue  # no node has it: left out everywhere
            out.append((col[1][indices], a, pr, r.weight))
        return out

    def _table_columns(self, table: NodeTable, resource: str) -> tuple[I64, I64] | None:
        """(allocatable, requested by the node's pods) over the whole table, as
        ``calculateResourceAllocatableRequest`` picks them; None: the resource is never scored."""
        if resource == CPU:
            return table.alloc_cpu, table.req_cpu if self.use_requested else table.nz_cpu
        if resource == MEMORY:
            return table.alloc_mem, table.req_mem if self.use_requested else table.nz_mem
        if resource == EPHEMERAL_STORAGE:
            return table.alloc_eph, table.req_eph
        if is_scalar_resource_name(resource):
            return table.scalar(resource)
        return None


# ------------------------------------------------------------------------------------------------
# helpers with Go's integer semantics


def div_trunc(a: int, b: int) -> int:
    """Go's ``a / b`` on int64: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def div_trunc_array(a: I64, b: I64 | int) -> I64:
    """Element-wise Go division; ``b`` must be non-zero where the result is used."""
    safe_b = np.where(np.asarray(b) == 0, 1, b)
    q: I64 = np.abs(a) // np.abs(safe_b)
    neg = (a < 0) != (safe_b < 0)
    out: I64 = np.where(neg, -q, q)
    return out


def round_half_away(num: int, den: int) -> int:
    """``int64(math.Round(float64(num) / float64(den)))`` for num >= 0, den > 0, exactly."""
    return (2 * num + den) // (2 * den)


def weighted_mean(scores: I64, weights: I64, include: npt.NDArray[np.bool_]) -> I64:
    """Σ score·w / Σ w over included resources (integer division); 0 where nothing is included."""
    w = np.where(include, weights[:, None], 0)
    total = (scores * w).sum(axis=0)
    wsum = w.sum(axis=0)
    out: I64 = np.where(wsum == 0, 0, total // np.where(wsum == 0, 1, wsum))
    return out
