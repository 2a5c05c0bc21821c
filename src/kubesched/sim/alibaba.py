"""Import of the Alibaba GPU cluster trace v2023 (the FGD paper's ``openb`` trace).

Reads the node and pod CSVs into typed records, turns them into Kubernetes Node and Pod manifests,
and builds the FGD simulator's arrival sequence: pods sorted by name and shuffled with the run's Go
``math/rand`` stream, then resampled up to ``tune`` x the cluster's GPU capacity, and each node's
tie-break rank (the ``%04d-`` prefix the simulator gives node names from ``rand.Perm``).
See ../shared/reference/fgd-method.md §1-§2 for the method and its sources.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .gorand import GoRand

__all__ = [
    "ANNOTATION_GPU_MODELS",
    "DEFAULT_TUNE",
    "EXTRA_DRAWS",
    "LABEL_GPU_PRODUCT",
    "RESOURCE_GPU",
    "RESOURCE_GPU_MILLI",
    "Arrival",
    "NodeRecord",
    "PodRecord",
    "Trace",
    "arrival",
    "load_trace",
    "manifests",
    "node_manifest",
    "pod_manifest",
    "prepare",
    "read_nodes",
    "read_pods",
]

RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_GPU_MILLI = "kubesched.io/gpu-milli"
LABEL_GPU_PRODUCT = "nvidia.com/gpu.product"
ANNOTATION_GPU_MODELS = "kubesched.io/gpu-models"
MILLI = 1000
MAX_PODS = 1001
DEFAULT_TUNE = 1.3
EXTRA_DRAWS = 10
"""Go stream draws between tuning and node ranking made by other parts of the original program
(informer watch jitter); 10 makes every published run bit-identical (fgd-method.md §2 step 4)."""
MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """One row of ``openb_node_list_*.csv``."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpu: int
    model: str

    def __post_init__(self) -> None:
        if self.cpu_milli < 0 or self.memory_mib < 0 or self.gpu < 0:
            raise ValueError(f"negative capacity in node {self.name}")


@dataclass(frozen=True, slots=True)
class PodRecord:
    """One row of ``openb_pod_list_*.csv``; times are seconds, None when the cell is empty."""

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: tuple[str, ...] = ()
    qos: str = ""
    pod_phase: str = ""
    creation_time: int | None = None
    deletion_time: int | None = None
    scheduled_time: int | None = None

    def __post_init__(self) -> None:
        if self.cpu_milli < 0 or self.memory_mib < 0 or self.num_gpu < 0:
            raise ValueError(f"negative request in pod {self.name}")

    @property
    def gpu_per_device(self) -> int:
        """Per-GPU milli as pod_csv_to_yaml.py derives it: capped at 1000, 0 without GPUs."""
        if self.num_gpu == 0 or self.gpu_milli <= 0:
            return 0
        return min(self.gpu_milli, MILLI)

    @property
    def gpu_count(self) -> int:
        return self.num_gpu if self.gpu_per_device > 0 else 0

    @property
    def total_gpu_milli(self) -> int:
        return self.gpu_per_device * self.gpu_count


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace's nodes and pods, each sorted by name (the simulator's first step for both)."""

    nodes: tuple[NodeRecord, ...]
    pods: tuple[PodRecord, ...]

    @property
    def total_gpu_milli(self) -> int:
        return sum(node.gpu for node in self.nodes) * MILLI


@dataclass(frozen=True, slots=True)
class Arrival:
    """Everything a replay needs: nodes with tie-break ranks, the pod sequence, the Go stream."""

    trace: Trace
    sequence: tuple[PodRecord, ...]
    """Shuffled originals followed by the tune-up copies (named ``<name>-tuned-<i>``)."""
    node_rank: tuple[int, ...]
    """Tie-break rank of ``trace.nodes[i]`` (lower wins): its ``rand.Perm`` prefix."""
    rng: GoRand
    """The run's stream after all draws above; the Random policy keeps drawing from it."""
    seed: int
    tune: float


def _int(cell: str) -> int:
    return int(float(cell)) if cell.strip() else 0


def _opt_int(cell: str) -> int | None:
    return int(float(cell)) if cell.strip() else None


def _models(cell: str) -> tuple[str, ...]:
    return tuple(part for part in cell.split("|") if part and part.lower() != "nan")


def read_nodes(path: str | Path) -> list[NodeRecord]:
    """Node rows in file order (columns ``sn, cpu_milli, memory_mib, gpu, model``)."""
    with open(path, newline="") as f:
        return [
            NodeRecord(
                name=row["sn"],
                cpu_milli=_int(row["cpu_milli"]),
                memory_mib=_int(row["memory_mib"]),
                gpu=_int(row["gpu"]),
                model="" if row.get("model", "").lower() in ("", "nan") else row["model"],
            )
            for row in csv.DictReader(f)
        ]


def read_pods(path: str | Path) -> list[PodRecord]:
    """Pod rows in file order. Only ``name, cpu_milli, memory_mib, num_gpu, gpu_milli`` are required
    (the multigpu* lists have no more columns)."""
    with open(path, newline="") as f:
        return [
            PodRecord(
                name=row["name"],
                cpu_milli=_int(row["cpu_milli"]),
                memory_mib=_int(row["memory_mib"]),
                num_gpu=_int(row["num_gpu"]),
                gpu_milli=_int(row["gpu_milli"]),
                gpu_spec=_models(row.get("gpu_spec") or ""),
                qos=row.get("qos") or "",
                pod_phase=row.get("pod_phase") or "",
                creation_time=_opt_int(row.get("creation_time") or ""),
                deletion_time=_opt_int(row.get("deletion_time") or ""),
                scheduled_time=_opt_int(row.get("scheduled_time") or ""),
            )
            for row in csv.DictReader(f)
        ]


def load_trace(nodes_csv: str | Path, pods_csv: str | Path) -> Trace:
    nodes = sorted(read_nodes(nodes_csv), key=lambda n: n.name)
    pods = sorted(read_pods(pods_csv), key=lambda p: p.name)
    return Trace(nodes=tuple(nodes), pods=tuple(pods))


# ---- Kubernetes manifests ------------------------------------------------------------------------------


def _cpu_quantity(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def node_manifest(node: NodeRecord, *, name: str | None = None) -> dict[str, Any]:
    """A v1 Node: allocatable = capacity = the row; GPUs as ``nvidia.com/gpu`` and, for shared GPUs,
    ``kubesched.io/gpu-milli`` (1000 per GPU); the model as label ``nvidia.com/gpu.product``."""
    node_name = name or node.name
    resources = {
        "cpu": _cpu_quantity(node.cpu_milli),
        "memory": f"{node.memory_mib}Mi",
        "pods": str(MAX_PODS),
    }
    labels = {"kubernetes.io/hostname": node_name}
    if node.gpu > 0:
        resources[RESOURCE_GPU] = str(node.gpu)
        resources[RESOURCE_GPU_MILLI] = str(node.gpu * MILLI)
    if node.model:
        labels[LABEL_GPU_PRODUCT] = node.model
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": labels},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def pod_manifest(
    pod: PodRecord, *, namespace: str = "default", scheduler_name: str | None = None
) -> dict[str, Any]:
    """A v1 Pod with one container requesting the row's CPU and memory, plus either
    ``nvidia.com/gpu: N`` (whole GPUs) or ``kubesched.io/gpu-milli: M`` (a share of one GPU), the
    extended resource also as a limit as the API server requires; a model constraint becomes the
    annotation ``kubesched.io/gpu-models: "A|B"``."""
    requests: dict[str, str] = {"cpu": _cpu_quantity(pod.cpu_milli), "memory": f"{pod.memory_mib}Mi"}
    limits: dict[str, str] = {}
    m, k = pod.gpu_per_device, pod.gpu_count
    if k > 0:
        if m == MILLI:
            limits[RESOURCE_GPU] = requests[RESOURCE_GPU] = str(k)
        elif k == 1:
            limits[RESOURCE_GPU_MILLI] = requests[RESOURCE_GPU_MILLI] = str(m)
        else:
            raise ValueError(f"pod {pod.name}: a share of {m} milli on {k} GPUs cannot be expressed")
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    metadata: dict[str, Any] = {"name": pod.name, "namespace": namespace}
    if pod.gpu_spec and k > 0:
        metadata["annotations"] = {ANNOTATION_GPU_MODELS: "|".join(pod.gpu_spec)}
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": resources}],
    }
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


# ---- arrival sequence ---------------------------------------------------------------------------


def _tune(
    originals: Sequence[PodRecord], shuffled: list[PodRecord], rng: GoRand, tune: float, capacity: int
) -> list[PodRecord]:
    """TunePodsByNodeTotalResource: resample (or prune) to ``tune`` x GPU capacity, Go's float tests."""
    total = sum(p.total_gpu_milli for p in originals)
    target = tune * float(capacity)
    if tune <= 0 or float(total) == target:
        return shuffled
    if float(total) > target:
        pods = list(shuffled)
        while float(total) > target:
            if not pods:
                raise ValueError("no pods left while pruning the workload")
            removed = pods.pop(rng.Intn(len(pods)))
            total -= removed.total_gpu_milli
        return pods
    if not originals:
        return shuffled
    out = list(shuffled)
    i = 0
    while True:
        pod = originals[rng.Intn(len(originals))]
        # the simulator tests the per-GPU milli, not the pod's total, against the target
        if float(total + pod.gpu_per_device) > target:
            return out
        total += pod.total_gpu_milli
        out.append(replace(pod, name=f"{pod.name}-tuned-{i}"))
        i += 1


def arrival(
    trace: Trace, seed: int, tune: float = DEFAULT_TUNE, *, extra_draws: int = EXTRA_DRAWS
) -> Arrival:
    """The pod sequence and node ranks of one run (fgd-method.md §2, steps 1-5)."""
    rng = GoRand(seed)
    rng.Int63()  # a debug-log argument calls rand.Int() even with logging off (core.go)
    shuffled = rng.shuffled(list(trace.pods))
    sequence = _tune(trace.pods, shuffled, rng, tune, trace.total_gpu_milli)
    for _ in range(extra_draws):
        rng.Int63()
    perm = rng.Perm(len(trace.nodes))
    return Arrival(
        trace=trace, sequence=tuple(sequence), node_rank=tuple(perm), rng=rng, seed=seed, tune=tune
    )


def prepare(
    nodes_csv: str | Path, pods_csv: str | Path, seed: int, tune: float = DEFAULT_TUNE
) -> Arrival:
    """Load the CSVs and build the run's arrival (the one call a replay needs)."""
    return arrival(load_trace(nodes_csv, pods_csv), seed, tune)


def manifests(arr: Arrival) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Node manifests (named ``%04d-<name>`` by rank, as the simulator does, so name order is the
    tie-break order) and Pod manifests in arrival order."""
    nodes = [node_manifest(n, name=f"{rank:04d}-{n.name}") for n, rank in
             zip(arr.trace.nodes, arr.node_rank, strict=True)]
    return nodes, [pod_manifest(p) for p in arr.sequence]

