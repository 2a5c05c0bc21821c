"""Import of the Alibaba GPU cluster trace v2023 (the FGD paper's ``openb`` trace).

Reads the node and pod CSVs into typed records, turns them into Kubernetes Node and Pod manifests,
and builds the FGD simulator's arrival sequence: pods sorted by name and shuffled with the run's Go
``math/rand`` stream, then resampled up to ``tune`` x the cluster's GPU capacity, and each node's
tie-break rank (the ``%04d-`` prefix the simulator gives node names from ``rand.Perm``).
See ../shared/reference/fgd-method.md §1-§2 for the method and its sources.

**Layouts.** A node list has the columns ``sn, cpu_milli, memory_mib, gpu, model`` (``model`` may be
left out; empty or ``nan`` means no GPU model). A pod list needs ``name, cpu_milli, num_gpu,
gpu_milli``; the published lists add ``memory_mib, gpu_spec, qos, pod_phase, creation_time,
deletion_time, scheduled_time`` (``openb_pod_list_*.csv``), leave out the last five
(``openb_pod_list_multigpu*.csv``) or ``memory_mib`` (the simulator's ``openb_pod_list_nomem*.csv``).
What is left out takes the value pod_csv_to_yaml.py gives it, and none is read by the replay:
``memory_mib`` 0 (no memory request), ``gpu_spec`` any model, ``qos`` and ``pod_phase`` empty, the
times None. Columns may come in any order; an empty time cell is None, as is ``scheduled_time`` of
the pods that never ran.

**Refused**, with ``FILE:LINE: column "cpu_milli": "abc" is not a number`` lines (at most
:data:`MAX_ERRORS` per file; :class:`TraceError`): what is not a regular file (FIFOs and devices are
refused before they are opened, by api/yamlsafe's reader), more than :data:`MAX_CSV_BYTES`, bytes
that are not UTF-8, an empty
file or a header only, unknown, repeated or missing columns, a row with another number of cells than
the header, a name that is not a DNS-1123 subdomain or is repeated, a number that is empty (where
required), not a number, not finite, not whole or outside 0..its maximum (:data:`MAX_CPU_MILLI`,
:data:`MAX_MEMORY_MIB`, :data:`MAX_GPUS`, :data:`MAX_TIME`), a GPU model that is not a label value,
a share of a GPU (``gpu_milli`` < 1000) asked of several GPUs, and a node list without GPUs.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from kubesched.api.validation import is_dns1123_subdomain, is_valid_label_value
from kubesched.api.yamlsafe import YAMLInputError, read_text_file
from kubesched.gorand import GoRand

__all__ = [
    "ANNOTATION_GPU_MODELS",
    "DEFAULT_TUNE",
    "EXTRA_DRAWS",
    "LABEL_GPU_PRODUCT",
    "MAX_ARRIVAL_PODS",
    "MAX_CPU_MILLI",
    "MAX_CSV_BYTES",
    "MAX_GPUS",
    "MAX_MEMORY_MIB",
    "MAX_TUNE",
    "RESOURCE_GPU",
    "RESOURCE_GPU_MILLI",
    "Arrival",
    "NodeRecord",
    "PodRecord",
    "Trace",
    "TraceError",
    "arrival",
    "check_tune",
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


# ---- reading the CSVs ----------------------------------------------------------------------------

MAX_CSV_BYTES = 16 << 20
"""A trace CSV may have at most 16 MiB (the largest published list has 0.7 MiB): the whole file is
read and parsed at once, so its size bounds the importer's memory."""
MAX_ERRORS = 20
"""Problems reported per file before the importer stops reading it."""
MAX_CPU_MILLI = 10**9
"""Largest ``cpu_milli`` (a million cores) and ``gpu_milli`` cell."""
MAX_MEMORY_MIB = 1 << 30
"""Largest ``memory_mib`` cell (1 PiB): its bytes, summed over a node's pods, stay within int64."""
MAX_GPUS = 64
"""Largest ``gpu`` / ``num_gpu`` cell (the published trace has 0..8): the GPU engine keeps a
column per GPU of the largest node."""
MAX_TIME = (1 << 63) - 1
"""Largest time cell (Go's int64)."""

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
NODE_REQUIRED = ("sn", "cpu_milli", "memory_mib", "gpu")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
               "creation_time", "deletion_time", "scheduled_time")
POD_REQUIRED = ("name", "cpu_milli", "num_gpu", "gpu_milli")

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_DIGITS = re.compile(r"\d{1,19}")
_R = TypeVar("_R")


class TraceError(ValueError):
    """Trace CSVs that cannot be imported: one ``FILE:LINE: problem`` line each in ``errors``."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class _Problems:
    """The problems of one file, capped at :data:`MAX_ERRORS` (then :class:`_Stop` ends the read)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.errors: list[str] = []

    def add(self, line: int | None, message: str) -> None:
        where = f"{self.path}:{line}" if line is not None else self.path
        self.errors.append(f"{where}: {message}")
        if len(self.errors) >= MAX_ERRORS:
            self.errors.append(f"{self.path}: stopped after {MAX_ERRORS} problems")
            raise _Stop

    def fatal(self, line: int | None, message: str) -> NoReturn:
        self.add(line, message)
        raise _Stop


class _Stop(Exception):
    """Internal: stop reading a file."""


def _read_text(path: str | Path, problems: _Problems) -> str:
    """The file's text through api/yamlsafe's reader, the CLI's one way to read a file: a FIFO, a
    device or a directory is refused before it is opened (nothing blocks), at most MAX_CSV_BYTES are
    read, and the bytes must be UTF-8."""
    try:
        return read_text_file(path, max_bytes=MAX_CSV_BYTES)
    except YAMLInputError as err:
        problems.errors.extend(f"{problems.path}{p.where()}: {p.message}" for p in err.problems)
        raise _Stop from None


def _rows(path: str | Path, columns: tuple[str, ...], required: tuple[str, ...], what: str,
          problems: _Problems) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, {column: cell}) of each data row, after checking the header against ``columns``."""
    text = _read_text(path, problems)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    known = f"a {what} list has the columns {', '.join(columns)}"
    try:
        header = next(reader, None)
        while header == []:
            header = next(reader, None)
        if header is None:
            problems.fatal(None, f"empty file: no header line (required columns: {', '.join(required)})")
        line = reader.line_num
        names = [h.strip() for h in header]
        for name in dict.fromkeys(n for n in names if names.count(n) > 1):
            problems.add(line, f'column {_quoted(name)} appears {names.count(name)} times in the header')
        for name in names:
            if name not in columns:
                problems.add(line, f'unknown column {_quoted(name)}; {known}')
        missing = [c for c in required if c not in names]
        if missing:
            listed = ", ".join(f'"{c}"' for c in missing)
            problems.add(line, f"missing column{'s' if len(missing) > 1 else ''} {listed} "
                               f"(required: {', '.join(required)})")
        if problems.errors:
            raise _Stop
        rows = 0
        start = reader.line_num + 1
        for cells in reader:
            if cells:
                rows += 1
                if len(cells) != len(names):
                    problems.add(start, f"{len(cells)} cells, but the header has {len(names)} columns")
                else:
                    yield start, dict(zip(names, cells, strict=True))
            start = reader.line_num + 1
        if rows == 0:
            problems.fatal(line, f"only a header line: the {what} list has no rows")
    except csv.Error as err:
        problems.fatal(reader.line_num, f"not valid CSV: {err}")


def _whole(problems: _Problems, line: int, row: dict[str, str], column: str, maximum: int) -> int:
    """A cell holding a whole number in 0..maximum (``12000``, ``12000.0`` and ``1.2e4`` alike);
    otherwise a problem, and 0 in its place (the row is dropped)."""
    cell = row[column]
    text = cell.strip()
    if not text:
        problems.add(line, f'column "{column}": empty, a number is required')
        return 0
    if _DIGITS.fullmatch(text):
        value: int | Decimal = int(text)
    elif _NON_FINITE.fullmatch(text):
        problems.add(line, f'column "{column}": {_quoted(cell)} is not a finite number')
        return 0
    elif _NUMBER.fullmatch(text):
        value = Decimal(text)
    else:
        problems.add(line, f'column "{column}": {_quoted(cell)} is not a number')
        return 0
    if not 0 <= value <= maximum:
        problems.add(line, f'column "{column}": {_quoted(cell)} is not in 0..{maximum}')
        return 0
    if isinstance(value, Decimal):
        if value != value.to_integral_value():
            problems.add(line, f'column "{column}": {_quoted(cell)} is not a whole number')
            return 0
        return int(value)
    return value


def _opt_whole(problems: _Problems, line: int, row: dict[str, str], column: str, maximum: int) -> int | None:
    """An optional number: None when the column is left out or the cell is empty."""
    if not row.get(column, "").strip():
        return None
    return _whole(problems, line, row, column, maximum)


def _quoted(cell: str, limit: int = 40) -> str:
    """A cell for a message: quoted, shortened when long."""
    return json.dumps(cell if len(cell) <= limit else cell[:limit] + "...", ensure_ascii=False)


def _name(problems: _Problems, line: int, row: dict[str, str], column: str, seen: dict[str, int]) -> str:
    """An object name: a DNS-1123 subdomain (metadata.name of a Node or Pod), once per file."""
    name = row[column]
    errs = is_dns1123_subdomain(name)
    if errs:
        problems.add(line, f'column "{column}": {_quoted(name)}: {"; ".join(errs)}')
        return ""
    first = seen.setdefault(name, line)
    if first != line:
        problems.add(line, f'column "{column}": "{name}" is already on line {first}')
        return ""
    return name


def _model_list(problems: _Problems, line: int, row: dict[str, str], column: str) -> tuple[str, ...]:
    """GPU models separated by ``|`` (empty parts and pandas' ``nan`` dropped), each a label value
    (the node label ``nvidia.com/gpu.product``)."""
    models = _models(row.get(column, ""))
    for model in models:
        errs = is_valid_label_value(model)
        if errs:
            problems.add(line, f'column "{column}": {_quoted(model)}: {"; ".join(errs)}')
            return ()
    return models


def _models(cell: str) -> tuple[str, ...]:
    return tuple(part for part in (p.strip() for p in cell.split("|")) if part and part.lower() != "nan")


def _collect(read: Callable[[_Problems], list[_R]], path: str | Path) -> list[_R]:
    problems = _Problems(str(path))
    try:
        out = read(problems)
    except _Stop:
        out = []
    if problems.errors:
        raise TraceError(problems.errors)
    return out


def read_nodes(path: str | Path) -> list[NodeRecord]:
    """Node rows in file order (columns ``sn, cpu_milli, memory_mib, gpu, model``; ``model`` may be
    left out or empty: no GPU model). TraceError lists the problems, ``FILE:LINE: ...`` each."""

    def read(problems: _Problems) -> list[NodeRecord]:
        out: list[NodeRecord] = []
        seen: dict[str, int] = {}
        for line, row in _rows(path, NODE_COLUMNS, NODE_REQUIRED, "node", problems):
            before = len(problems.errors)
            name = _name(problems, line, row, "sn", seen)
            cpu = _whole(problems, line, row, "cpu_milli", MAX_CPU_MILLI)
            memory = _whole(problems, line, row, "memory_mib", MAX_MEMORY_MIB)
            gpu = _whole(problems, line, row, "gpu", MAX_GPUS)
            models = _model_list(problems, line, row, "model")
            if len(models) > 1:
                problems.add(line, f'column "model": {_quoted(row["model"])}: a node has one GPU model')
            if len(problems.errors) == before:
                out.append(NodeRecord(name, cpu, memory, gpu, models[0] if models else ""))
        return out

    return _collect(read, path)


def read_pods(path: str | Path) -> list[PodRecord]:
    """Pod rows in file order. ``name, cpu_milli, num_gpu, gpu_milli`` are required; the others may
    be left out, as in the published lists that have fewer columns (module docstring: defaults).
    TraceError lists the problems, ``FILE:LINE: ...`` each."""

    def read(problems: _Problems) -> list[PodRecord]:
        out: list[PodRecord] = []
        seen: dict[str, int] = {}
        for line, row in _rows(path, POD_COLUMNS, POD_REQUIRED, "pod", problems):
            before = len(problems.errors)
            pod = PodRecord(
                name=_name(problems, line, row, "name", seen),
                cpu_milli=_whole(problems, line, row, "cpu_milli", MAX_CPU_MILLI),
                memory_mib=_whole(problems, line, row, "memory_mib", MAX_MEMORY_MIB) if "memory_mib" in row else 0,
                num_gpu=_whole(problems, line, row, "num_gpu", MAX_GPUS),
                gpu_milli=_whole(problems, line, row, "gpu_milli", MAX_CPU_MILLI),
                gpu_spec=_model_list(problems, line, row, "gpu_spec"),
                qos=row.get("qos", "").strip(),
                pod_phase=row.get("pod_phase", "").strip(),
                creation_time=_opt_whole(problems, line, row, "creation_time", MAX_TIME),
                deletion_time=_opt_whole(problems, line, row, "deletion_time", MAX_TIME),
                scheduled_time=_opt_whole(problems, line, row, "scheduled_time", MAX_TIME),
            )
            if 0 < pod.gpu_per_device < MILLI and pod.num_gpu > 1:
                problems.add(line, f'column "gpu_milli": {pod.gpu_milli} milli is a share of one GPU, '
                                   f"but num_gpu is {pod.num_gpu}")
            if len(problems.errors) == before:
                out.append(pod)
        return out

    return _collect(read, path)


def load_trace(nodes_csv: str | Path, pods_csv: str | Path) -> Trace:
    """Both lists, each sorted by name; TraceError with the problems of both files."""
    errors: list[str] = []
    nodes: list[NodeRecord] = []
    pods: list[PodRecord] = []
    try:
        nodes = read_nodes(nodes_csv)
    except TraceError as err:
        errors.extend(err.errors)
    try:
        pods = read_pods(pods_csv)
    except TraceError as err:
        errors.extend(err.errors)
    if errors:
        raise TraceError(errors)
    if not any(n.gpu for n in nodes):
        raise TraceError([f"{nodes_csv}: no node has a GPU; the replay measures GPU allocation"])
    nodes.sort(key=lambda n: n.name)
    pods.sort(key=lambda p: p.name)
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


MAX_TUNE = 10.0
"""Largest ``tune``: ten times the cluster's GPU capacity (about 84000 pods of the default trace)."""
MAX_ARRIVAL_PODS = 100_000
"""Most pods one run may create: the replay keeps every pod (about 4.5 KB each through the
framework), so this bounds its memory."""


def check_tune(tune: float) -> float:
    """``tune`` if it is a finite number in (0, MAX_TUNE]; ValueError naming the bound otherwise."""
    if not (math.isfinite(tune) and 0 < tune <= MAX_TUNE):
        raise ValueError(f"must be a finite number > 0 and <= {MAX_TUNE:g}, got {tune}")
    return tune


def _tune(
    originals: Sequence[PodRecord], shuffled: list[PodRecord], rng: GoRand, tune: float, capacity: int
) -> list[PodRecord]:
    """TunePodsByNodeTotalResource: resample (or prune) to ``tune`` x GPU capacity, Go's float tests.

    Where the simulator would loop for ever (no pod asks for a GPU) or without bound, ValueError."""
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
    if not any(p.gpu_per_device for p in originals):
        raise ValueError(f"no pod asks for a GPU, so the workload cannot grow to tune {tune:g} x the "
                         f"cluster's {capacity // MILLI} GPUs")
    out = list(shuffled)
    i = 0
    while True:
        pod = originals[rng.Intn(len(originals))]
        # the simulator tests the per-GPU milli, not the pod's total, against the target
        if float(total + pod.gpu_per_device) > target:
            return out
        if len(out) >= MAX_ARRIVAL_PODS:
            raise ValueError(f"tune {tune:g} makes more than {MAX_ARRIVAL_PODS} pods arrive, the most one run "
                             "may have; lower the tune")
        total += pod.total_gpu_milli
        out.append(replace(pod, name=f"{pod.name}-tuned-{i}"))
        i += 1


def arrival(
    trace: Trace, seed: int, tune: float = DEFAULT_TUNE, *, extra_draws: int = EXTRA_DRAWS
) -> Arrival:
    """The pod sequence and node ranks of one run (fgd-method.md §2, steps 1-5); ``tune`` <= 0
    keeps the pods as they are. ValueError for a tune that is not finite or above MAX_TUNE, or a
    run of more than MAX_ARRIVAL_PODS pods."""
    if not (math.isfinite(tune) and tune <= MAX_TUNE):
        raise ValueError(f"tune must be a finite number <= {MAX_TUNE:g}, got {tune}")
    if len(trace.pods) > MAX_ARRIVAL_PODS and tune <= 0:
        raise ValueError(f"{len(trace.pods)} pods, more than the {MAX_ARRIVAL_PODS} one run may have")
    rng = GoRand(seed)
    rng.Int63()  # a debug-log argument calls rand.Int() even with logging off (core.go)
    shuffled = rng.shuffled(list(trace.pods))
    sequence = _tune(trace.pods, shuffled, rng, tune, trace.total_gpu_milli)
    if len(sequence) > MAX_ARRIVAL_PODS:
        raise ValueError(f"tune {tune:g} keeps {len(sequence)} of the {len(trace.pods)} pods, more than the "
                         f"{MAX_ARRIVAL_PODS} one run may have")
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

