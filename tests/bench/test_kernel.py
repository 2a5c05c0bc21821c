"""The bare kernel of ``kubesched bench --kernel`` makes the scheduler's decisions.

The kernel is only a fair yardstick if it does the work the scheduler does: here both place the
same pods on the same nodes — kubesched with its whole default profile and ``--tie-break
node-order``, the kernel with its two scores — and must choose the same node for every pod, on
SchedulingBasic's uniform cluster and on a mixed one where nodes fill up, so the filter, the
rotating start index past infeasible nodes and the unschedulable pods all play a part.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.bench.kernel import Kernel, PodRequests
from kubesched.bench.workloads import WORKLOADS, make_node, pause_pod
from kubesched.config.load import load_config
from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.plugins.registry import default_registry
from kubesched.scheduler import TIE_BREAK_NODE_ORDER
from kubesched.sim.simulation import new_simulation

Obj = dict[str, Any]


def _kubesched(nodes: list[Obj], pods: list[Obj], release: Release) -> list[str | None]:
    reg = default_registry()
    config = load_config(None, args_types=reg.args_types(), release=release)
    sim = new_simulation(config, reg, seed=1, tie_break=TIE_BREAK_NODE_ORDER)
    for n in nodes:
        sim.cluster.add_node(n)
    for p in pods:  # all at once: one timestamp, so the queue keeps creation order
        sim.cluster.create_pod(p)
    sim.run()
    out = []
    for p in pods:
        md = p["metadata"]
        bound = sim.cluster.pods[f"{md['namespace']}/{md['name']}"]
        out.append((bound.get("spec") or {}).get("nodeName"))
    return out


def _kernel(nodes: list[Obj], pods: list[Obj], release: Release) -> list[str | None]:
    k = Kernel(nodes, release)
    rows = [k.place(PodRequests.of(p)) for p in pods]
    return [nodes[r]["metadata"]["name"] if r >= 0 else None for r in rows]


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
def test_same_placements_on_scheduling_basic(release: Release) -> None:
    w = WORKLOADS["SchedulingBasic"]
    nodes = list(w.nodes(240))
    pods = [*w.init_pods(48), *(p for p, _ in w.measured_pods(500, after=48))]
    want = _kubesched(nodes, pods, release)
    assert all(want)
    assert _kernel(nodes, pods, release) == want


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
def test_same_placements_when_nodes_fill_up(release: Release) -> None:
    rng = random.Random(5)
    nodes = [
        make_node(f"node-{i}", cpu=rng.choice(["1", "2", "3"]), memory=rng.choice(["2Gi", "4Gi", "6Gi"]), pods="12")
        for i in range(130)
    ]
    shapes = [("100m", "500Mi"), ("300m", "200Mi"), ("50m", "1Gi"), ("700m", "1500Mi")]
    pods = []
    for i in range(900):
        cpu, memory = rng.choice(shapes)
        pods.append(pause_pod("default", f"pod-{i}", cpu=cpu, memory=memory))
    want = _kubesched(nodes, pods, release)
    assert want.count(None) > 20, "the cluster should fill up"
    assert _kernel(nodes, pods, release) == want


def test_kernel_result_is_a_bench_result() -> None:
    from kubesched.bench.harness import run_bench

    out = run_bench("SchedulingBasic", nodes=120, init_pods=10, pods=50, kernel=True).to_json()
    assert out["kernel"] is True and out["scheduler"] == "kernel" and out["backend"] == "sim"
    assert out["bound"] == 50 and out["release"] == str(V1_37)
