"""``kubesched bench --workload SchedulingBasic --kernel``: the bare numpy kernel of SchedulingBasic.

What the scheduler's numbers should be compared with: the arithmetic of the workload's decisions
and nothing else — no queue, no framework, no plugins, no cache, no binding. Per pod:

* **Filter** (NodeResourcesFit): ``free pods >= 1``, ``free cpu >= request``, ``free memory >=
  request`` over every node, as one mask;
* **sampling** as upstream's ``findNodesThatPassFilters``: the first ``numFeasibleNodesToFind``
  feasible nodes from a rotating start index, which then moves past the nodes examined;
* **Score**: NodeResourcesFit's LeastAllocated (non-zero requests) plus NodeResourcesBalancedAllocation
  (real requests; since v1.36 the change of balance the pod makes), cpu and memory, weight 1 each —
  the two scores of the default profile that differ between nodes on this workload (TaintToleration,
  ImageLocality and the skipped plugins add the same to every node);
* **assume**: the best node (the first of the highest total in walk order) takes the pod.

Nodes and pods are parsed before the clock starts (a test client has its pods ready); the init
pods are placed by the same kernel first. The result has the shape of every ``kubesched bench``
result, with ``scheduler: "kernel"`` and ``kernel: true``. Placements are the scheduler's with
``--tie-break node-order`` (tests/bench/test_kernel.py checks it), so the two rates measure the same
decisions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.config.releases import BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD, DEFAULT_RELEASE, Release
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.scheduler.schedule_one import num_feasible_nodes_to_find

from .result import BenchResult, own_peak_rss_mb, percentile
from .workloads import Workload

I64 = npt.NDArray[np.int64]
#: ``progress(bound, total)``.
Progress = Callable[[int, int], None]
MAX_SCORE = 100
#: The one workload the kernel implements.
KERNEL_WORKLOAD = "SchedulingBasic"


@dataclass(frozen=True)
class PodRequests:
    """What the kernel reads of a pod: real requests (Filter, BalancedAllocation) and the non-zero
    ones (LeastAllocated), cpu in millicores, memory in bytes."""

    cpu: int
    memory: int
    nz_cpu: int
    nz_memory: int

    @classmethod
    def of(cls, pod: dict[str, object]) -> PodRequests:
        pi = PodInfo(pod)
        nz_cpu, nz_memory = pi.non_zero_requests
        return cls(pi.requests.milli_cpu, pi.requests.memory, nz_cpu, nz_memory)


class Kernel:
    """The cluster as int64 columns, and :meth:`place` for one pod."""

    def __init__(self, nodes: Sequence[dict[str, object]], release: Release = DEFAULT_RELEASE) -> None:
        infos = [NodeInfo(n) for n in nodes]
        n = self.n = len(infos)
        self.alloc_cpu = np.array([ni.allocatable.milli_cpu for ni in infos], dtype=np.int64)
        self.alloc_mem = np.array([ni.allocatable.memory for ni in infos], dtype=np.int64)
        self.req_cpu = np.zeros(n, dtype=np.int64)
        self.req_mem = np.zeros(n, dtype=np.int64)
        self.nz_cpu = np.zeros(n, dtype=np.int64)
        self.nz_mem = np.zeros(n, dtype=np.int64)
        self.free_cpu = self.alloc_cpu.copy()
        self.free_mem = self.alloc_mem.copy()
        self.free_pods = np.array([ni.allocatable.allowed_pod_number for ni in infos], dtype=np.int64)
        self.to_find = num_feasible_nodes_to_find(0, n)
        self.start = 0
        self.balance_change = release.has(BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD)

    def place(self, pod: PodRequests) -> int:
        """The row the pod goes to (-1: it fits nowhere); the pod is assumed there."""
        n, k, start = self.n, self.to_find, self.start
        fits = (self.free_pods >= 1) & (self.free_cpu >= pod.cpu) & (self.free_mem >= pod.memory)
        # The rotated walk: positions of feasible nodes from ``start`` on, then from 0.
        rows = np.flatnonzero(fits[start:]) + start
        if len(rows) < k:
            rows = np.concatenate((rows, np.flatnonzero(fits[:start])))
        if len(rows) >= k:
            rows = rows[:k]
            last = int(rows[-1])
            processed = (last - start if last >= start else n - start + last) + 1
        else:
            processed = n
        self.start = (start + processed) % n if n else 0
        if not len(rows):
            return -1
        # One feasible node is taken unscored, as the scheduler does.
        best = int(rows[0]) if len(rows) == 1 else int(rows[int(np.argmax(self._scores(rows, pod)))])
        self.req_cpu[best] += pod.cpu
        self.req_mem[best] += pod.memory
        self.nz_cpu[best] += pod.nz_cpu
        self.nz_mem[best] += pod.nz_memory
        self.free_cpu[best] -= pod.cpu
        self.free_mem[best] -= pod.memory
        self.free_pods[best] -= 1
        return best

    def _scores(self, rows: npt.NDArray[np.intp], pod: PodRequests) -> I64:
        a_cpu, a_mem = self.alloc_cpu[rows], self.alloc_mem[rows]
        # LeastAllocated: (allocatable - requested) * 100 / allocatable per resource, mean of two.
        least_cpu = np.maximum(a_cpu - (self.nz_cpu[rows] + pod.nz_cpu), 0) * MAX_SCORE // a_cpu
        least_mem = np.maximum(a_mem - (self.nz_mem[rows] + pod.nz_memory), 0) * MAX_SCORE // a_mem
        least = (least_cpu + least_mem) // 2
        # BalancedAllocation: 1 - |f_cpu - f_mem| / 2, fractions capped at 1 (float64 as upstream).
        q_cpu, q_mem = self.req_cpu[rows], self.req_mem[rows]
        f_cpu, f_mem = a_cpu.astype(np.float64), a_mem.astype(np.float64)
        with_pod = _balance(np.minimum((q_cpu + pod.cpu) / f_cpu, 1.0), np.minimum((q_mem + pod.memory) / f_mem, 1.0))
        if not self.balance_change:
            total: I64 = least + with_pod
            return total
        without = _balance(np.minimum(q_cpu / f_cpu, 1.0), np.minimum(q_mem / f_mem, 1.0))
        v = MAX_SCORE // 2 + with_pod - without
        balanced = MAX_SCORE // 2 + ((v + (v < 0)) >> 1)  # Go's v / 2 (truncating)
        out: I64 = least + balanced
        return out


def _balance(f1: npt.NDArray[np.float64], f2: npt.NDArray[np.float64]) -> I64:
    out: I64 = ((1 - np.abs((f1 - f2) / 2)) * MAX_SCORE).astype(np.int64)
    return out


def run_kernel(
    workload: Workload,
    nodes: int,
    init_pods: int,
    pods: int,
    *,
    release: Release = DEFAULT_RELEASE,
    progress: Progress | None = None,
) -> BenchResult:
    """Place the init pods, then time the measured ones, one :meth:`Kernel.place` each."""
    kernel = Kernel(list(workload.nodes(nodes)), release)
    for pod in workload.init_pods(init_pods):
        kernel.place(PodRequests.of(pod))
    measured = [PodRequests.of(p) for p, m in workload.measured_pods(pods, after=init_pods) if m]
    attempts: list[float] = []
    perf, place, note = time.perf_counter, kernel.place, attempts.append
    bound = 0
    cpu0 = time.process_time()
    t0 = perf()
    for i, req in enumerate(measured):
        t = perf()
        row = place(req)
        note(perf() - t)
        bound += row >= 0
        if progress is not None and i % 4096 == 0:
            progress(bound, pods)
    seconds = max(perf() - t0, 1e-9)
    cpu = time.process_time() - cpu0
    if progress is not None:
        progress(bound, pods)
    return BenchResult(
        workload=workload.name,
        backend="sim",
        scheduler="kernel",
        nodes=nodes,
        init_pods=init_pods,
        pods=pods,
        seconds=seconds,
        pods_per_second=bound / seconds,
        attempt_p50_ms=percentile(attempts, 50) * 1000,
        attempt_p99_ms=percentile(attempts, 99) * 1000,
        peak_rss_mb=own_peak_rss_mb(),
        bound=bound,
        cpu_seconds=cpu,
        release=str(release),
        kernel=True,
    )
