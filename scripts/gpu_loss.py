"""Loss analysis of a GPU policy at 130 % arrived (issue 17): where are the idle GPU milli at the end?

    PYTHONPATH=src:scripts /work/venv/bin/python scripts/gpu_loss.py --policy FGD --seeds 0..9

Replays the default trace with the standalone engine loop (same as ``sim.gpu_replay``) and classifies
every node's idle GPU milli at the last event by why no pod type of the trace can use it.
"""

from __future__ import annotations

import argparse
import collections
import sys

import numpy as np

from kubesched.plugins.gpu.cluster import ClusterGpuState
from kubesched.plugins.gpu.factory import make_policy
from kubesched.plugins.gpu.frag import TypicalPods
from kubesched.plugins.gpu.types import MILLI, PodShape, accessible
from kubesched.sim.alibaba import arrival, load_trace
from kubesched.sim.gpu_replay import node_specs, pod_shape

DATA = "/work/shared/data/alibaba-gpu-v2023/"


def run(trace, policy_name, seed, tune=1.3, make=None):
    arr = arrival(trace, seed, tune)
    cluster = ClusterGpuState(node_specs(trace))
    rank = np.asarray(arr.node_rank, dtype=np.int64)
    typical = TypicalPods.from_shapes(pod_shape(p) for p in trace.pods)
    from gpu_screen import VARIANTS  # research variants (scripts/gpu_screen.py)

    if make:
        engine = make(typical, arr)
    elif policy_name in VARIANTS:
        engine = VARIANTS[policy_name]()
    else:
        engine = make_policy(policy_name, typical=typical, rng=arr.rng)
    seq = [pod_shape(p) for p in arr.sequence]
    failed = []
    placed = []
    arrived = 0
    for e, pod in enumerate(seq):
        arrived += pod.total_gpu_milli
        engine.observe(pod)
        nodes = np.flatnonzero(cluster.feasible(pod))
        if len(nodes) == 0:
            failed.append((e, arrived, pod))
            continue
        if len(nodes) == 1:
            chosen = int(nodes[0])
        else:
            scores = engine.score_batch(cluster, nodes, pod)
            best = nodes[scores == scores.max()]
            chosen = int(best[np.argmin(rank[best])]) if len(best) > 1 else int(best[0])
        gpus = engine.select_gpus(cluster.node_state(chosen), pod) if pod.wants_gpu else ()
        cluster.allocate(chosen, pod, gpus)
        placed.append((chosen, gpus, pod))
    return cluster, seq, failed, placed


def _gpu_ok(s: PodShape, model: str, left: list[int], free: int) -> bool:
    """Whether the node's idle GPUs (not its CPU or memory) could take pod shape ``s``."""
    if not accessible(model, s.models):
        return False
    if s.gpu_milli == MILLI:
        return free >= s.gpu_count
    return max(left) >= s.gpu_milli


def classify(cluster: ClusterGpuState, counts: dict[PodShape, int]) -> dict[str, int]:
    """Idle GPU milli per node, by cause (first that applies)."""
    gshapes = [s for s in counts if s.wants_gpu]
    ngpu = sum(v for s, v in counts.items() if s.wants_gpu)
    out: collections.Counter[str] = collections.Counter()
    for i in range(len(cluster)):
        idle = int(cluster.gpu_sum[i])
        if idle == 0:
            continue
        model = cluster.models[int(cluster.model_idx[i])]
        left = cluster.gpu_left[i, : int(cluster.gpu_count[i])].tolist()
        free = left.count(MILLI)
        cpu, mem = int(cluster.cpu_left[i]), int(cluster.mem_left[i])

        gfit = [s for s in gshapes if _gpu_ok(s, model, left, free)]
        full = [s for s in gfit if s.cpu <= cpu and s.memory <= mem]
        if full:
            share = sum(counts[s] for s in full) / ngpu * 100
            if all(s.is_shared and s.gpu_milli < 200 for s in full):
                out["only pods of < 200m fit (1.3 % of GPU pods)"] += idle
            elif share < 10:
                out["usable by < 10 % of GPU pods"] += idle
            else:
                out["usable by >= 10 % of GPU pods"] += idle
            continue
        if not gfit:
            # nothing fits GPU-wise
            model_ok = [s for s in gshapes if accessible(model, s.models)]
            if free > 0:
                out["whole GPUs, too few for the pods allowed here (model)"] += idle
            elif model_ok:
                out["partial cards too small for any pod type"] += idle
            else:
                out["no pod type accepts the model"] += idle
            continue
        cpu_short = all(s.cpu > cpu for s in gfit)
        mem_short = all(s.memory > mem for s in gfit)
        if cpu_short and not mem_short:
            key = "CPU exhausted"
        elif mem_short and not cpu_short:
            key = "memory exhausted"
        else:
            key = "CPU and/or memory exhausted"
        key += " (whole free GPUs)" if free > 0 else " (partial cards only)"
        out[key] += idle
    return dict(out)


def bucket(p: PodShape) -> str:
    if not p.wants_gpu:
        return "CPU-only"
    g = f"{p.gpu_count}x1000" if p.gpu_milli == MILLI else f"share {p.gpu_milli}"
    if p.gpu_milli < MILLI:
        g = "share <=300" if p.gpu_milli <= 300 else ("share 301-600" if p.gpu_milli <= 600 else "share >600")
    m = " spec" if p.models else ""
    return g + m


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="FGD")
    ap.add_argument("--pods", default="openb_pod_list_default.csv")
    ap.add_argument("--seeds", default="0..4")
    a = ap.parse_args(argv)
    lo, hi = (int(x) for x in a.seeds.split(".."))
    trace = load_trace(DATA + "openb_node_list_gpu_node.csv", DATA + a.pods)
    shapes = collections.Counter(pod_shape(p) for p in trace.pods)
    remnant: collections.Counter[str] = collections.Counter()
    total = collections.Counter()
    fails = collections.Counter()
    fails_milli = collections.Counter()
    nseeds = hi - lo + 1
    big_cards = 0
    big_left = 0
    big_pods = 0
    for seed in range(lo, hi + 1):
        cluster, _seq, failed, placed = run(trace, a.policy, seed)
        # cards holding a share > 800m (the trace's 810m pods): what is left on them at the end
        cards = {(i, g[0]) for i, g, p in placed if p.is_shared and p.gpu_milli > 800}
        big_pods += sum(1 for _i, _g, p in placed if p.is_shared and p.gpu_milli > 800)
        big_cards += len(cards)
        big_left += sum(int(cluster.gpu_left[i, g]) for i, g in cards)
        for k, v in classify(cluster, shapes).items():
            total[k] += v
        cap = cluster.total_gpu_milli
        for i in range(len(cluster)):
            for v in cluster.gpu_left[i, : int(cluster.gpu_count[i])].tolist():
                if 0 < v < MILLI:
                    lo_ = v // 100 * 100
                    remnant[f"{lo_}-{lo_ + 99}"] += v
                elif v == MILLI:
                    remnant["1000 (whole GPU)"] += v
        for _e, arrived, pod in failed:
            lvl = arrived / cap * 100
            phase = "<100%" if lvl < 100 else ("100-115%" if lvl < 115 else ">=115%")
            fails[(bucket(pod), phase)] += 1
            fails_milli[(bucket(pod), phase)] += pod.total_gpu_milli
        print(f"seed {seed}: idle {cluster.total_gpu_milli - cluster.used_gpu_milli} of {cap}", file=sys.stderr)
    cap = cluster.total_gpu_milli
    print("| cause | idle GPU milli (mean) | % of capacity |")
    print("|---|---|---|")
    for k, v in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"| {k} | {v / nseeds:.0f} | {v / nseeds / cap * 100:.2f} |")
    print()
    print(
        f"Shares > 800m placed (mean): {big_pods / nseeds:.0f} pods; milli left on their cards at the end: "
        f"{big_left / nseeds:.0f} ({big_left / nseeds / cap * 100:.2f} % of capacity)"
    )
    print()
    print("| milli left on a card | idle GPU milli (mean) | % of capacity |")
    print("|---|---|---|")
    for k, v in sorted(remnant.items()):
        print(f"| {k} | {v / nseeds:.0f} | {v / nseeds / cap * 100:.2f} |")
    print()
    print("| failed shape | phase | pods (mean) | GPU milli (mean) |")
    print("|---|---|---|---|")
    for (b, ph), v in sorted(fails.items(), key=lambda kv: (kv[0][1], -fails_milli[kv[0]])):
        print(f"| {b} | {ph} | {v / nseeds:.1f} | {fails_milli[(b, ph)] / nseeds:.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
