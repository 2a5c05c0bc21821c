"""Columnar GPU state of a whole cluster, for vectorized filtering and scoring.

One row per node (numpy arrays), updated in place by :meth:`ClusterGpuState.allocate` and
:meth:`ClusterGpuState.release` so a framework's Reserve/Unreserve (or the replay) keep it current.
Each node also carries a *fragmentation state id*: (model, CPU left, multiset of GPU milli left)
interned to a small integer, because every FGD quantity depends on exactly that tuple and only the
last-bound node changes state, so scores can be memoized per (state id, pod shape).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .types import MILLI, NodeGpuState, NodeSpec, PodShape, accessible, gpu_class

__all__ = ["BoolArray", "ClusterGpuState", "FloatArray", "IntArray"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

FragKey = tuple[int, int, tuple[int, ...]]


class ClusterGpuState:
    """Free CPU, memory, pod slots and per-GPU milli of every node, in node order."""

    def __init__(self, nodes: Sequence[NodeSpec]) -> None:
        n = len(nodes)
        self.names: list[str] = [node.name for node in nodes]
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        if len(self.index) != n:
            raise ValueError("node names must be unique")
        self.models: list[str] = []
        model_index: dict[str, int] = {}
        for node in nodes:
            model_index.setdefault(node.model, len(self.models))
            if len(self.models) < len(model_index):
                self.models.append(node.model)
        self.model_idx: IntArray = np.array([model_index[node.model] for node in nodes], dtype=np.int64)
        self.slots = max((node.gpu_count for node in nodes), default=0)
        self.cpu_cap: IntArray = np.array([node.cpu for node in nodes], dtype=np.int64)
        self.cpu_left: IntArray = self.cpu_cap.copy()
        self.mem_cap: IntArray = np.array([node.memory for node in nodes], dtype=np.int64)
        self.mem_left: IntArray = self.mem_cap.copy()
        self.pods: IntArray = np.zeros(n, dtype=np.int64)
        self.max_pods: IntArray = np.array([node.max_pods for node in nodes], dtype=np.int64)
        self.gpu_count: IntArray = np.array([node.gpu_count for node in nodes], dtype=np.int64)
        # GPUs a node does not have are padding columns with 0 milli left: they never fit a GPU request
        # and add nothing to any sum, so no policy has to mask them.
        self.gpu_left: IntArray = np.zeros((n, self.slots), dtype=np.int64)
        for i, node in enumerate(nodes):
            self.gpu_left[i, : node.gpu_count] = MILLI
        self.gpu_sum: IntArray = self.gpu_left.sum(axis=1)
        self.gpu_max: IntArray = self.gpu_left.max(axis=1, initial=0)
        self.gpu_free: IntArray = self.gpu_count.copy()
        self.total_gpu_milli = int(self.gpu_count.sum()) * MILLI
        self.class_index: dict[str, int] = {}
        self.class_counts: IntArray = np.zeros((n, 8), dtype=np.int64)
        self.n_classes: IntArray = np.zeros(n, dtype=np.int64)
        self._access: dict[tuple[str, ...], BoolArray] = {}
        # fragmentation-state interning
        self._sid_of: dict[FragKey, int] = {}
        self._sid_model: IntArray = np.zeros(64, dtype=np.int64)
        self._sid_cpu: IntArray = np.zeros(64, dtype=np.int64)
        self._sid_gpu: IntArray = np.zeros((64, self.slots), dtype=np.int64)
        self.n_states = 0
        self.node_sid: IntArray = np.array([self._intern(i) for i in range(n)], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.names)

    @property
    def used_gpu_milli(self) -> int:
        return self.total_gpu_milli - int(self.gpu_sum.sum())

    # ---- per-node view -------------------------------------------------------------------------

    def node_state(self, i: int) -> NodeGpuState:
        """The per-node view of row ``i`` (what a per-node plugin call receives)."""
        counts = self.class_counts[i].tolist()
        classes = tuple(sorted((name, counts[c]) for name, c in self.class_index.items() if counts[c] > 0))
        return NodeGpuState(
            name=self.names[i],
            model=self.models[int(self.model_idx[i])],
            gpu_left=tuple(self.gpu_left[i, : int(self.gpu_count[i])].tolist()),
            cpu_left=int(self.cpu_left[i]),
            memory_left=int(self.mem_left[i]),
            pods=int(self.pods[i]),
            max_pods=int(self.max_pods[i]),
            gpu_classes=classes,
        )

    # ---- filtering -----------------------------------------------------------------------------

    def model_mask(self, models: tuple[str, ...]) -> BoolArray:
        """Nodes that have GPUs of a model the pod accepts (cached per model constraint)."""
        mask = self._access.get(models)
        if mask is None:
            ok = np.array([accessible(m, models) for m in self.models], dtype=np.bool_)
            mask = ok[self.model_idx] & (self.gpu_count > 0)
            self._access[models] = mask
        return mask

    def resources_fit(self, pod: PodShape) -> BoolArray:
        """NodeResourcesFit over all nodes: CPU, memory and pod count."""
        return (self.cpu_left >= pod.cpu) & (self.mem_left >= pod.memory) & (self.pods < self.max_pods)

    def gpu_fit(self, pod: PodShape) -> BoolArray:
        """Open-Gpu-Share Filter over all nodes (all True for a pod without GPU request)."""
        if not pod.wants_gpu:
            return np.ones(len(self.names), dtype=np.bool_)
        mask = self.model_mask(pod.models)
        if pod.gpu_milli == MILLI:
            return mask & (self.gpu_free >= pod.gpu_count)
        return mask & (self.gpu_max >= pod.gpu_milli)

    def feasible(self, pod: PodShape) -> BoolArray:
        return self.resources_fit(pod) & self.gpu_fit(pod)

    # ---- state updates (Reserve / Unreserve) ---------------------------------------------------

    def allocate(self, i: int, pod: PodShape, gpus: Sequence[int]) -> None:
        """Bind ``pod`` to node ``i`` taking its GPU share from GPU indexes ``gpus``."""
        self._apply(i, pod, gpus, +1)

    def release(self, i: int, pod: PodShape, gpus: Sequence[int]) -> None:
        """Undo :meth:`allocate` (Unreserve, or a pod leaving)."""
        self._apply(i, pod, gpus, -1)

    def _apply(self, i: int, pod: PodShape, gpus: Sequence[int], sign: int) -> None:
        # Per-row work on a Python list: a node has a handful of GPUs, and numpy's per-call overhead
        # on 8 values is what a replay of ten thousand pods would pay for.
        left: list[int] = self.gpu_left[i].tolist()
        if pod.wants_gpu:
            if len(gpus) != pod.gpu_count or len(set(gpus)) != len(gpus):
                raise ValueError(f"pod asks for {pod.gpu_count} GPU(s), got indexes {list(gpus)}")
            count = int(self.gpu_count[i])
            for j in gpus:
                if not 0 <= j < count:
                    raise ValueError(f"node {self.names[i]} has no GPU {j}")
                new = left[j] - sign * pod.gpu_milli
                if not 0 <= new <= MILLI:
                    raise ValueError(f"GPU {j} of node {self.names[i]} would have {new} milli left")
                left[j] = new
            self.gpu_left[i] = left
            self.gpu_sum[i] = sum(left)
            self.gpu_max[i] = max(left, default=0)
            self.gpu_free[i] = left.count(MILLI)
        elif gpus:
            raise ValueError("a pod without GPU request cannot hold GPUs")
        self.cpu_left[i] -= sign * pod.cpu
        self.mem_left[i] -= sign * pod.memory
        self.pods[i] += sign
        cls = gpu_class(pod)
        if cls is not None:
            c = self.class_index.get(cls)
            if c is None:
                c = self.class_index[cls] = len(self.class_index)
                if c >= self.class_counts.shape[1]:
                    self.class_counts = np.hstack([self.class_counts, np.zeros_like(self.class_counts)])
            before = self.class_counts[i, c]
            if before + sign < 0:
                raise ValueError(f"no {cls} pod on node {self.names[i]} to release")
            self.class_counts[i, c] = before + sign
            self.n_classes[i] += int(before + sign > 0) - int(before > 0)
        self.node_sid[i] = self._intern(i, left)

    # ---- fragmentation-state interning ---------------------------------------------------------

    def _intern(self, i: int, left: list[int] | None = None) -> int:
        gpu = tuple(sorted(self.gpu_left[i].tolist() if left is None else left, reverse=True))
        key = (int(self.model_idx[i]), int(self.cpu_left[i]), gpu)
        sid = self._sid_of.get(key)
        if sid is None:
            sid = self.n_states
            if sid == len(self._sid_cpu):
                grow = len(self._sid_cpu)
                self._sid_model = np.concatenate([self._sid_model, np.zeros(grow, dtype=np.int64)])
                self._sid_cpu = np.concatenate([self._sid_cpu, np.zeros(grow, dtype=np.int64)])
                self._sid_gpu = np.vstack([self._sid_gpu, np.zeros((grow, self.slots), dtype=np.int64)])
            self._sid_model[sid] = key[0]
            self._sid_cpu[sid] = key[1]
            self._sid_gpu[sid] = gpu
            self._sid_of[key] = sid
            self.n_states += 1
        return sid

    def state_arrays(self, sids: IntArray) -> tuple[IntArray, IntArray, IntArray]:
        """(model index, CPU left, GPU milli left sorted descending) of interned states ``sids``."""
        return self._sid_model[sids], self._sid_cpu[sids], self._sid_gpu[sids]
