"""Standalone replay of the FGD paper's experiment: one policy, one seed, the whole trace.

Pods arrive one at a time and stay forever; each is bound to the best-scoring feasible node (ties to
the lowest rank) or fails. After every pod the replay records arrived and allocated GPU milli and the
cluster's fragmentation, and :func:`discrete_curve` turns them into the published "GPU allocation
ratio vs arrived workload" columns (fgd-method.md §3 and §6). It uses the GPU engine directly, not the
Scheduling Framework, so it also pins the engine's numbers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kubesched.plugins.gpu.cluster import ClusterGpuState, IntArray
from kubesched.plugins.gpu.factory import make_policy
from kubesched.plugins.gpu.fgdonline import FgdOnline
from kubesched.plugins.gpu.frag import FloatArray, TypicalPods
from kubesched.plugins.gpu.policies import Fgd
from kubesched.plugins.gpu.types import MILLI, NodeSpec, PodShape
from kubesched.sim.alibaba import DEFAULT_TUNE, Arrival, PodRecord, Trace, arrival

__all__ = [
    "REPORT_POINTS",
    "ReplayResult",
    "discrete_curve",
    "format_json",
    "format_table",
    "node_specs",
    "pod_shape",
    "replay",
    "replay_arrival",
]

MIB = 1 << 20
REPORT_POINTS: tuple[int, ...] = tuple(range(10, 131, 10))


def pod_shape(pod: PodRecord) -> PodShape:
    return PodShape(
        cpu=pod.cpu_milli,
        memory=pod.memory_mib * MIB,
        gpu_milli=pod.gpu_per_device,
        gpu_count=pod.gpu_count,
        models=pod.gpu_spec,
    )


def node_specs(trace: Trace) -> list[NodeSpec]:
    return [NodeSpec(n.name, n.cpu_milli, n.memory_mib * MIB, n.gpu, n.model) for n in trace.nodes]


def discrete_curve(
    arrived: IntArray, values: FloatArray, total_gpus: int, decimals: int | None = 2
) -> FloatArray:
    """Columns 0..130 of the published CSVs (experiments/analysis/merge_alloc_discrete.py).

    Each event's arrived % is rounded to an integer (half to even); column k averages the events at
    k %, or those within k±1 % when none is at k (NaN if none either), rounded to ``decimals``
    (the allocation file rounds the mean, the fragmentation-ratio file does not: ``None``).
    """
    arrive = np.round(arrived / total_gpus / 10, 0)
    out = np.full(131, np.nan)
    for k in range(131):
        sel = values[arrive == k]
        if len(sel) == 0:
            sel = values[(arrive >= k - 1) & (arrive <= k + 1)]
            if len(sel) == 0:
                continue
        mean = sel.mean()
        out[k] = mean if decimals is None else np.round(mean, decimals)
    return out


@dataclass(frozen=True)
class ReplayResult:
    """Per-pod-event series of one replay, and the published curves derived from them."""

    policy: str
    seed: int
    tune: float
    total_gpu_milli: int
    arrived: IntArray = field(repr=False)
    """GPU milli arrived (failed pods included) after each pod event."""
    used: IntArray = field(repr=False)
    """GPU milli allocated after each pod event."""
    fragmentation: FloatArray = field(repr=False)
    """Cluster fragmentation (Σ node F, milli) after each pod event; NaN when not tracked."""
    failed: int
    failed_gpu_milli: int
    seconds: float
    """Wall-clock compute time of the replay loop (a benchmark figure, not simulated time)."""

    @property
    def pods(self) -> int:
        return len(self.arrived)

    @property
    def total_gpus(self) -> int:
        return self.total_gpu_milli // MILLI

    def allocation_curve(self) -> FloatArray:
        """GPU allocation ratio (%) at arrived workload 0..130 % (analysis_allo_discrete.csv)."""
        alloc: FloatArray = np.round(self.used / self.total_gpus / 10, 2).astype(np.float64)
        return discrete_curve(self.arrived, alloc, self.total_gpus)

    def fragmentation_ratio_curve(self) -> FloatArray:
        """Fragmented share (%) of idle GPU milli at arrived workload 0..130 %: each event's ratio
        rounded to 2 decimals, the column means unrounded (analysis_frag_ratio_discrete.csv)."""
        idle = (self.total_gpu_milli - self.used).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(idle > 0, self.fragmentation / idle * 100, 0.0)
        rounded: FloatArray = np.round(ratio, 2).astype(np.float64)
        return discrete_curve(self.arrived, rounded, self.total_gpus, decimals=None)

    def summary(self, points: Sequence[int] = REPORT_POINTS) -> dict[str, object]:
        alloc = self.allocation_curve()
        frag = self.fragmentation_ratio_curve()
        return {
            "policy": self.policy,
            "seed": self.seed,
            "tune": self.tune,
            "pods": self.pods,
            "failed": self.failed,
            "failed_gpu_milli": self.failed_gpu_milli,
            "seconds": round(self.seconds, 3),
            "allocation": {str(k): _num(alloc[k]) for k in points},
            "fragmentation_ratio": {str(k): _num(frag[k]) for k in points},
        }


def _num(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def replay(trace: Trace, policy: str, seed: int, tune: float = DEFAULT_TUNE, *,
           track_fragmentation: bool = True) -> ReplayResult:
    """Replay ``trace`` under ``policy`` with run seed ``seed`` and workload ``tune`` (fgd-method.md)."""
    return replay_arrival(arrival(trace, seed, tune), policy, track_fragmentation=track_fragmentation)


def replay_arrival(arr: Arrival, policy: str, *, track_fragmentation: bool = True) -> ReplayResult:
    """Replay a prepared arrival sequence (its Go stream is consumed by the Random policy)."""
    trace = arr.trace
    cluster = ClusterGpuState(node_specs(trace))
    rank = np.asarray(arr.node_rank, dtype=np.int64)
    shapes: dict[tuple[int, int, int, int, tuple[str, ...]], PodShape] = {}

    def shape_of(p: PodRecord) -> PodShape:
        key = (p.cpu_milli, p.memory_mib, p.gpu_per_device, p.gpu_count, p.gpu_spec)
        s = shapes.get(key)
        if s is None:
            s = shapes[key] = pod_shape(p)
        return s

    typical = TypicalPods.from_shapes(shape_of(p) for p in trace.pods)
    engine = make_policy(policy, typical=typical, rng=arr.rng)
    # fragmentation is measured against the trace's mix, whatever the policy learns
    tracker = engine if isinstance(engine, Fgd) and not isinstance(engine, FgdOnline) else Fgd(typical)
    sequence = [shape_of(p) for p in arr.sequence]
    n = len(sequence)
    arrived = np.zeros(n, dtype=np.int64)
    used = np.zeros(n, dtype=np.int64)
    changed = np.full(n, -1, dtype=np.int64)
    sid_before = np.zeros(n, dtype=np.int64)
    sid_after = np.zeros(n, dtype=np.int64)
    initial_sids = cluster.node_sid.copy()
    total_arrived = 0
    failed = 0
    failed_milli = 0

    start = time.perf_counter()
    for e, pod in enumerate(sequence):
        total_arrived += pod.total_gpu_milli
        arrived[e] = total_arrived
        engine.observe(pod)
        nodes = np.flatnonzero(cluster.feasible(pod))
        if len(nodes) == 0:
            failed += 1
            failed_milli += pod.total_gpu_milli
            used[e] = cluster.used_gpu_milli
            continue
        if len(nodes) == 1:  # kube-scheduler takes a single feasible node without scoring
            chosen = int(nodes[0])
        else:
            scores = engine.score_batch(cluster, nodes, pod)
            best = nodes[scores == scores.max()]
            chosen = int(best[np.argmin(rank[best])]) if len(best) > 1 else int(best[0])
        gpus = engine.select_gpus(cluster.node_state(chosen), pod) if pod.wants_gpu else ()
        sid_before[e] = cluster.node_sid[chosen]
        cluster.allocate(chosen, pod, gpus)
        sid_after[e] = cluster.node_sid[chosen]
        changed[e] = chosen
        used[e] = cluster.used_gpu_milli
    seconds = time.perf_counter() - start

    if track_fragmentation:
        frag_of = tracker.state_fragmentation(cluster, np.arange(cluster.n_states, dtype=np.int64))
        bound = changed >= 0
        delta = np.where(bound, frag_of[sid_after] - frag_of[sid_before], 0.0)
        fragmentation = float(frag_of[initial_sids].sum()) + np.cumsum(delta)
    else:
        fragmentation = np.full(n, np.nan)
    return ReplayResult(
        policy=engine.name,
        seed=arr.seed,
        tune=arr.tune,
        total_gpu_milli=cluster.total_gpu_milli,
        arrived=arrived,
        used=used,
        fragmentation=fragmentation,
        failed=failed,
        failed_gpu_milli=failed_milli,
        seconds=seconds,
    )


def format_table(results: Sequence[ReplayResult], points: Sequence[int] = REPORT_POINTS) -> str:
    """A plain-text table: one row per replay, GPU allocation % at each arrived-% point."""
    head = ["policy", "seed"] + [f"{k}%" for k in points] + ["failed", "frag@130", "secs"]
    rows = [head]
    for r in results:
        alloc = r.allocation_curve()
        frag = r.fragmentation_ratio_curve()
        rows.append([r.policy, str(r.seed)] + [f"{alloc[k]:.2f}" for k in points]
                    + [str(r.failed), f"{frag[130]:.2f}", f"{r.seconds:.2f}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows)


def format_json(results: Sequence[ReplayResult], points: Sequence[int] = REPORT_POINTS) -> str:
    return json.dumps([r.summary(points) for r in results], indent=2)
