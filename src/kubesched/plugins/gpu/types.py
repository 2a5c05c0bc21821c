"""Value types of the GPU engine: what a pod asks for, what a node offers, one node's GPU state.

The engine is framework-independent: these are plain, hashable values a Scheduling Framework plugin
builds from Pod/Node objects (or a trace importer builds from CSV rows). Units follow kube-scheduler's
``Resource``: CPU in millicores, memory in bytes, GPU in milli-GPU (one GPU = 1000).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_MAX_PODS",
    "DEFAULT_MILLI_CPU_REQUEST",
    "MAX_SPEC_CPU",
    "MAX_SPEC_GPU",
    "MILLI",
    "NodeGpuState",
    "NodeSpec",
    "PodShape",
    "ShapeKey",
    "accessible",
    "gpu_class",
]

MILLI = 1000
"""Milli-GPU per physical GPU."""
MAX_SPEC_CPU = 128_000
"""Largest node CPU (millicores) of the Alibaba cluster; DotProd and BestFit normalise by it."""
MAX_SPEC_GPU = 8 * MILLI
"""Largest node GPU capacity (8 GPUs); DotProd, BestFit and GpuClustering normalise by it."""
DEFAULT_MILLI_CPU_REQUEST = 100
"""kube-scheduler's non-zero default CPU request, used by the scoring view of a pod."""
DEFAULT_MAX_PODS = 1001
"""Pod capacity of every node in the FGD simulator's node YAML."""

ShapeKey = tuple[int, int, int, tuple[str, ...]]
"""(scoring CPU, per-GPU milli, GPU count, allowed models): everything a score depends on from a pod."""


def accessible(model: str, models: tuple[str, ...]) -> bool:
    """Whether a node of GPU ``model`` may host a pod restricted to ``models`` (empty = any model).

    A node without a model only takes unrestricted pods (``IsNodeAccessibleToPodByType``).
    """
    return not models or (model != "" and model in models)


@dataclass(frozen=True, slots=True)
class PodShape:
    """A pod's resource request as the GPU policies see it.

    ``gpu_milli`` is the per-GPU share (1..1000, 0 for no GPU) and ``gpu_count`` the number of GPUs.
    A shared GPU (``gpu_milli < 1000``) is always a single GPU, as in the FGD simulator, whose Reserve
    panics on anything else.
    """

    cpu: int
    memory: int = 0
    gpu_milli: int = 0
    gpu_count: int = 0
    models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.cpu < 0 or self.memory < 0:
            raise ValueError(f"negative request in {self}")
        if not 0 <= self.gpu_milli <= MILLI:
            raise ValueError(f"gpu_milli must be in 0..{MILLI}, got {self.gpu_milli}")
        if self.gpu_count < 0:
            raise ValueError(f"gpu_count must be >= 0, got {self.gpu_count}")
        if 0 < self.gpu_milli < MILLI and self.gpu_count > 1:
            raise ValueError("a shared-GPU pod (gpu_milli < 1000) must ask for exactly one GPU")

    @property
    def score_cpu(self) -> int:
        """CPU as the policies count it: a zero request counts as 100m (the non-zero default)."""
        return self.cpu if self.cpu > 0 else DEFAULT_MILLI_CPU_REQUEST

    @property
    def total_gpu_milli(self) -> int:
        return self.gpu_milli * self.gpu_count

    @property
    def wants_gpu(self) -> bool:
        """GPU filtering and accounting only apply when the pod asks for some GPU milli."""
        return self.gpu_milli > 0 and self.gpu_count > 0

    @property
    def is_shared(self) -> bool:
        return self.gpu_count == 1 and 0 < self.gpu_milli < MILLI

    @property
    def key(self) -> ShapeKey:
        return (self.score_cpu, self.gpu_milli, self.gpu_count, self.models)

    @property
    def spec(self) -> str:
        """The model constraint in the trace's ``A|B`` form."""
        return "|".join(self.models)


def gpu_class(pod: PodShape) -> str | None:
    """GpuClustering's affinity class: ``share-gpu``, ``<k>-gpu`` for whole GPUs, None for CPU-only."""
    if not pod.wants_gpu:
        return None
    return "share-gpu" if pod.is_shared else f"{pod.gpu_count}-gpu"


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node's allocatable resources and GPU model (``model`` is "" for a node without GPUs)."""

    name: str
    cpu: int
    memory: int
    gpu_count: int = 0
    model: str = ""
    max_pods: int = DEFAULT_MAX_PODS

    def empty_state(self) -> NodeGpuState:
        return NodeGpuState(
            name=self.name,
            model=self.model,
            gpu_left=(MILLI,) * self.gpu_count,
            cpu_left=self.cpu,
            memory_left=self.memory,
            pods=0,
            max_pods=self.max_pods,
        )


@dataclass(frozen=True, slots=True)
class NodeGpuState:
    """One node's free resources: the per-node input of every policy.

    Immutable on purpose: Reserve derives the next state with :meth:`allocate`, Unreserve goes back
    with :meth:`release`, and states can key caches.
    """

    name: str
    model: str
    gpu_left: tuple[int, ...]
    cpu_left: int
    memory_left: int = 1 << 62
    pods: int = 0
    max_pods: int = DEFAULT_MAX_PODS
    gpu_classes: tuple[tuple[str, int], ...] = field(default=())
    """GPU pod classes on the node with their pod counts (sorted by class), for GpuClustering."""

    @property
    def gpu_count(self) -> int:
        return len(self.gpu_left)

    @property
    def gpu_milli_left(self) -> int:
        return sum(self.gpu_left)

    @property
    def frag_key(self) -> tuple[str, int, tuple[int, ...]]:
        """What fragmentation depends on: model, CPU left and the multiset of GPU milli left."""
        return (self.model, self.cpu_left, tuple(sorted(self.gpu_left, reverse=True)))

    def allocate(self, pod: PodShape, gpus: Iterable[int]) -> NodeGpuState:
        """The state after binding ``pod`` with its GPU share taken from GPU indexes ``gpus``."""
        return self._apply(pod, tuple(gpus), +1)

    def release(self, pod: PodShape, gpus: Iterable[int]) -> NodeGpuState:
        """The state after removing ``pod`` that held GPU indexes ``gpus`` (the inverse of allocate)."""
        return self._apply(pod, tuple(gpus), -1)

    def _apply(self, pod: PodShape, gpus: tuple[int, ...], sign: int) -> NodeGpuState:
        left = list(self.gpu_left)
        if pod.wants_gpu:
            if len(gpus) != pod.gpu_count or len(set(gpus)) != len(gpus):
                raise ValueError(f"pod asks for {pod.gpu_count} GPU(s), got indexes {gpus}")
            for j in gpus:
                left[j] -= sign * pod.gpu_milli
                if not 0 <= left[j] <= MILLI:
                    raise ValueError(f"GPU {j} of node {self.name} would have {left[j]} milli left")
        elif gpus:
            raise ValueError("a pod without GPU request cannot hold GPUs")
        classes = dict(self.gpu_classes)
        cls = gpu_class(pod)
        if cls is not None:
            classes[cls] = classes.get(cls, 0) + sign
            if classes[cls] < 0:
                raise ValueError(f"no {cls} pod on node {self.name} to release")
            if classes[cls] == 0:
                del classes[cls]
        return NodeGpuState(
            name=self.name,
            model=self.model,
            gpu_left=tuple(left),
            cpu_left=self.cpu_left - sign * pod.cpu,
            memory_left=self.memory_left - sign * pod.memory,
            pods=self.pods + sign,
            max_pods=self.max_pods,
            gpu_classes=tuple(sorted(classes.items())),
        )

    def classes(self) -> Mapping[str, int]:
        return dict(self.gpu_classes)
