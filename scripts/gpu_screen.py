"""Screening harness of issue 17's policy variants (standalone engine loop, research only).

    PYTHONPATH=src /work/venv/bin/python scripts/gpu_screen.py VARIANT [--seeds 0..9] [--pods LIST]

Prints the mean GPU allocation ratio at 130 % arrived and each seed's value. Variants are built on
FGDOnline (the mix learned online, no oracle); see docs/dev/gpu-policy-log.md for the results.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from kubesched.plugins.gpu.cluster import ClusterGpuState, IntArray
from kubesched.plugins.gpu.factory import make_policy
from kubesched.plugins.gpu.fgdonline import FgdOnline
from kubesched.plugins.gpu.frag import TypicalPods
from kubesched.plugins.gpu.policies import Policy
from kubesched.plugins.gpu.types import MILLI, PodShape
from kubesched.sim.alibaba import arrival, load_trace
from kubesched.sim.gpu_replay import discrete_curve, node_specs, pod_shape

DATA = "/work/shared/data/alibaba-gpu-v2023/"
SCALE = 1 << 20
TOL = int(__import__("os").environ.get("TOL", "0"))
"""Scores within TOL of the best are ties (then node rank, or TIE)."""
TOL_FLOOR = int(__import__("os").environ.get("TOL_FLOOR", "-1"))
TIE = __import__("os").environ.get("TIE", "rank")


class _Composite(FgdOnline):
    """FGDOnline's score first, a secondary key (larger is better, < SCALE) to break its ties."""

    def secondary(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        raise NotImplementedError

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = super().score_batch(cluster, nodes, pod)
        return base * SCALE + self.secondary(cluster, nodes, pod)


class DeadFill(_Composite):
    """Shared pods: prefer the node whose tightest fitting partial card is left with the least milli."""

    name = "DeadFill"

    def secondary(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        if not pod.is_shared:
            return np.zeros(len(nodes), dtype=np.int64)
        left = cluster.gpu_left[nodes]
        rest = np.where((left >= pod.gpu_milli) & (left < MILLI), left - pod.gpu_milli, MILLI)
        return (MILLI - rest.min(axis=1)).astype(np.int64)


class CpuBalance(_Composite):
    """GPU pods: prefer the node left with the least idle GPU milli its CPU cannot serve, at the mean
    CPU per GPU milli of the GPU pods seen so far."""

    name = "CpuBalance"

    def __init__(self) -> None:
        super().__init__()
        self.cpu_sum = 0
        self.gpu_sum = 0

    def observe(self, pod: PodShape) -> None:
        super().observe(pod)
        if pod.wants_gpu:
            self.cpu_sum += pod.cpu
            self.gpu_sum += pod.total_gpu_milli

    def stranded(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        per = self.cpu_sum / max(self.gpu_sum, 1)
        idle = cluster.gpu_sum[nodes] - pod.total_gpu_milli
        cpu = cluster.cpu_left[nodes] - pod.cpu
        return np.maximum(0, idle - cpu / per).astype(np.int64)

    def secondary(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        if not pod.wants_gpu:
            return np.zeros(len(nodes), dtype=np.int64)
        return np.maximum(0, SCALE - 1 - self.stranded(cluster, nodes, pod))


class CpuPenalty(CpuBalance):
    """GPU pods: FGDOnline's score minus the stranded idle GPUs (in GPUs, times ``weight``)."""

    name = "CpuPenalty"
    weight = float(__import__("os").environ.get("W", "5"))

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = FgdOnline.score_batch(self, cluster, nodes, pod)
        if not pod.wants_gpu:
            return base * SCALE
        pen = self.stranded(cluster, nodes, pod) / MILLI * self.weight
        return ((base - pen) * 1000).astype(np.int64) * SCALE // 1000


ALL_PODS = __import__("os").environ.get("ALL_PODS") == "1"


class RatioMatch(CpuBalance):
    """GPU pods: FGDOnline's score minus ``weight`` × the node's CPU/GPU imbalance after placement,
    |CPU left − c̄ · idle GPU milli| in GPU-equivalents (c̄: mean CPU per GPU milli of the GPU pods
    seen), so CPU-heavy pods go where CPU is spare and CPU-light pods leave it."""

    name = "RatioMatch"
    weight = float(__import__("os").environ.get("W", "1"))

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = FgdOnline.score_batch(self, cluster, nodes, pod)
        if not pod.wants_gpu and not ALL_PODS:
            return base * SCALE
        if self.cpu_sum == 0 or self.gpu_sum == 0:
            return base * SCALE
        per = self.cpu_sum / self.gpu_sum
        idle = cluster.gpu_sum[nodes] - pod.total_gpu_milli
        cpu = cluster.cpu_left[nodes] - pod.cpu
        gap = np.abs(cpu / per - idle) / MILLI
        return ((base - self.weight * gap) * 1000).astype(np.int64) * SCALE // 1000


class RatioDelta(RatioMatch):
    """RatioMatch on the change of the imbalance the placement makes (after − before), so an empty
    node, balanced before and after, gains nothing over a used one (RatioMatch opened empty 8-GPU
    nodes and failed 8-GPU pods earlier)."""

    name = "RatioDelta"

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = FgdOnline.score_batch(self, cluster, nodes, pod)
        if (not pod.wants_gpu and not ALL_PODS) or self.cpu_sum == 0 or self.gpu_sum == 0:
            return base * SCALE
        per = self.cpu_sum / self.gpu_sum
        idle = cluster.gpu_sum[nodes]
        cpu = cluster.cpu_left[nodes]
        before = np.abs(cpu / per - idle)
        after = np.abs((cpu - pod.cpu) / per - (idle - pod.total_gpu_milli))
        gap = (after - before) / MILLI
        return ((base - self.weight * gap) * 1000).astype(np.int64) * SCALE // 1000


class RatioDeltaInt(RatioMatch):
    """RatioDelta in the integer score range: FGDOnline − round(W × Δ imbalance), clipped to 0..100."""

    name = "RatioDeltaInt"

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = FgdOnline.score_batch(self, cluster, nodes, pod)
        if not pod.wants_gpu or self.cpu_sum == 0 or self.gpu_sum == 0:
            return base
        per = self.cpu_sum / self.gpu_sum
        idle = cluster.gpu_sum[nodes]
        cpu = cluster.cpu_left[nodes]
        before = np.abs(cpu / per - idle)
        after = np.abs((cpu - pod.cpu) / per - (idle - pod.total_gpu_milli))
        return np.clip(base - np.rint(self.weight * (after - before) / MILLI).astype(np.int64), 0, 100)


class RatioDeltaSupply(RatioDelta):
    """RatioDelta with c̄ taken from the cluster (CPU left / idle GPU milli over all nodes) instead of
    the GPU pods seen."""

    name = "RatioDeltaSupply"

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        idle_all = int(cluster.gpu_sum.sum())
        self.cpu_sum, self.gpu_sum = int(cluster.cpu_left.sum()), max(idle_all, 1)
        return super().score_batch(cluster, nodes, pod)

    def observe(self, pod: PodShape) -> None:
        FgdOnline.observe(self, pod)


class RatioMatchInt(RatioMatch):
    """RatioMatch in kube-scheduler's integer score range: FGDOnline's score minus round(weight ×
    imbalance), clipped to 0..100 (what a Score plugin can return)."""

    name = "RatioMatchInt"

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = FgdOnline.score_batch(self, cluster, nodes, pod)
        if not pod.wants_gpu or self.cpu_sum == 0 or self.gpu_sum == 0:
            return base
        per = self.cpu_sum / self.gpu_sum
        idle = cluster.gpu_sum[nodes] - pod.total_gpu_milli
        cpu = cluster.cpu_left[nodes] - pod.cpu
        gap = np.abs(cpu / per - idle) / MILLI
        return np.clip(base - np.rint(self.weight * gap).astype(np.int64), 0, 100)


class Both(DeadFill, CpuBalance):
    name = "DeadFill+CpuBalance"

    def secondary(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        if pod.is_shared:
            return DeadFill.secondary(self, cluster, nodes, pod)
        return CpuBalance.secondary(self, cluster, nodes, pod)


VARIANTS: dict[str, type[Policy]] = {
    c.name: c
    for c in (
        DeadFill,
        CpuBalance,
        CpuPenalty,
        RatioMatch,
        RatioDelta,
        RatioDeltaSupply,
        RatioDeltaInt,
        RatioMatchInt,
        Both,
    )
}


def alloc130(trace, name: str, seed: int, tune: float = 1.3) -> tuple[float, np.ndarray]:
    arr = arrival(trace, seed, tune)
    cluster = ClusterGpuState(node_specs(trace))
    rank = np.asarray(arr.node_rank, dtype=np.int64)
    if name in VARIANTS:
        engine = VARIANTS[name]()
    else:
        typical = TypicalPods.from_shapes(pod_shape(p) for p in trace.pods)
        engine = make_policy(name, typical=typical, rng=arr.rng)
    seq = [pod_shape(p) for p in arr.sequence]
    arrived = np.zeros(len(seq), dtype=np.int64)
    used = np.zeros(len(seq), dtype=np.int64)
    total = 0
    for e, pod in enumerate(seq):
        total += pod.total_gpu_milli
        arrived[e] = total
        engine.observe(pod)
        nodes = np.flatnonzero(cluster.feasible(pod))
        if len(nodes):
            if len(nodes) == 1:
                chosen = int(nodes[0])
            else:
                scores = engine.score_batch(cluster, nodes, pod)
                top = scores.max()
                best = nodes[scores >= top - TOL] if top > TOL_FLOOR else nodes[scores == top]
                if TIE == "used" and len(best) > 1:  # most GPU milli used first, then rank
                    left = cluster.gpu_sum[best]
                    best = best[left == left.min()]
                chosen = int(best[np.argmin(rank[best])]) if len(best) > 1 else int(best[0])
            gpus = engine.select_gpus(cluster.node_state(chosen), pod) if pod.wants_gpu else ()
            cluster.allocate(chosen, pod, gpus)
        used[e] = cluster.used_gpu_milli
    gpus_total = cluster.total_gpu_milli // MILLI
    curve = discrete_curve(arrived, np.round(used / gpus_total / 10, 2), gpus_total)
    return float(curve[130]), curve


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant")
    ap.add_argument("--seeds", default="0..9")
    ap.add_argument("--pods", default="openb_pod_list_default.csv")
    a = ap.parse_args(argv)
    lo, hi = (int(x) for x in a.seeds.split(".."))
    trace = load_trace(DATA + "openb_node_list_gpu_node.csv", DATA + a.pods)
    start = time.perf_counter()
    vals = [alloc130(trace, a.variant, s)[0] for s in range(lo, hi + 1)]
    print(
        f"{a.variant} {a.pods} seeds {a.seeds}: mean {np.mean(vals):.3f} | "
        + " ".join(f"{v:.2f}" for v in vals)
        + f" | {time.perf_counter() - start:.0f}s"
    )


STEPS = int(__import__("os").environ.get("STEPS", "30000"))


def _fine_sigmoid(delta: np.ndarray) -> IntArray:
    """FGD's sigmoid at STEPS steps instead of 100 (up to 30000 fits the int16 score tables), scaled
    back so that 50 stays the neutral score when STEPS divides 100."""
    import math

    out = np.empty(len(delta), dtype=np.int64)
    for i, d in enumerate(delta.tolist()):
        x = -(d / 1000.0)
        out[i] = 0 if x > 709.0 else int(1.0 / (1.0 + math.exp(x)) * STEPS)
    return out * 100 // STEPS if STEPS <= 100 else out


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1].startswith("Fine:"):
    import kubesched.plugins.gpu.fgdplus as _fp
    import kubesched.plugins.gpu.policies as _pol

    _pol._sigmoid_scores = _fine_sigmoid  # type: ignore[assignment]
    if STEPS > 100:
        _fp.NEUTRAL_SCORE = STEPS // 2
    sys.argv[1] = sys.argv[1][5:]


if __name__ == "__main__":
    main(sys.argv[1:])
