"""Typical pods and node fragmentation (FGD paper §4).

Ported rules: hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go (GetTypicalPods,
NodeGpuShareFragAmount, GetNodePodFrag, FragAmountSumExceptQ3), as specified in
../shared/reference/fgd-method.md §5, including its figures for the default trace (35 types, five
CPU-only with Σp = 0.136, the most common (3152m, 810 milli, 1 GPU) with p = 0.135, no multi-GPU type).
The vectorized F is checked for bit-equality against a plain loop written from the spec.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.gpu import ClusterGpuState, NodeGpuState, NodeSpec, PodShape, TypicalPod, TypicalPods, accessible
from kubesched.sim.alibaba import Trace
from kubesched.sim.gpu_replay import pod_shape


def reference_fragmentation(typical: TypicalPods, model: str, cpu_left: int, gpu_left: list[int]) -> float:
    """F written directly from fgd-method.md §5: one running sum per category in typical-pod order,
    then q1 + q2 + q4 + xl + xr + no_access."""
    sums = {"q1": 0.0, "q2": 0.0, "q4": 0.0, "xl": 0.0, "xr": 0.0, "na": 0.0}
    idle = sum(gpu_left)
    for t in typical.pods:
        if t.gpu_milli == 0:
            sums["xl" if cpu_left >= t.cpu else "xr"] += t.p * idle
        elif not accessible(model, t.models):
            sums["na"] += t.p * idle
        else:
            fits_gpu = sum(1 for v in gpu_left if v >= t.gpu_milli) >= t.gpu_count
            fits_cpu = cpu_left >= t.cpu
            if fits_gpu and fits_cpu:
                sums["q2"] += t.p * sum(v for v in gpu_left if v < t.gpu_milli)
            elif fits_gpu:
                sums["q4"] += t.p * idle
            elif fits_cpu:
                sums["q2"] += t.p * idle
            else:
                sums["q1"] += t.p * idle
    out = 0.0
    for key in ("q1", "q2", "q4", "xl", "xr", "na"):
        out += sums[key]
    return out


def _node(model: str, cpu: int, gpus: tuple[int, ...]) -> NodeGpuState:
    return NodeGpuState("n", model, gpus, cpu_left=cpu)


def test_categories_by_hand() -> None:
    only_a = TypicalPods([TypicalPod(1000, 100, 1, ("A",), 1, 1.0)])
    assert only_a.node_fragmentation(_node("B", 8000, (1000,))) == 1000.0  # no access: all idle GPU
    assert only_a.node_fragmentation(_node("A", 8000, (1000, 60))) == 60.0  # fits: the 60 GPU is fragment
    assert only_a.node_fragmentation(_node("A", 500, (1000,))) == 1000.0  # GPU fits, CPU does not (q4)
    assert only_a.node_fragmentation(_node("A", 8000, (50,))) == 50.0  # CPU fits, GPU does not (q2)
    assert only_a.node_fragmentation(_node("A", 500, (50,))) == 50.0  # neither (q1)
    assert only_a.node_fragmentation(_node("", 8000, (1000,))) == 1000.0  # a node without model
    cpu_only = TypicalPods([TypicalPod(4000, 0, 0, (), 1, 1.0)])
    assert cpu_only.node_fragmentation(_node("A", 8000, (1000, 400))) == 1400.0  # xl counts all idle GPU
    assert cpu_only.node_fragmentation(_node("A", 100, (1000, 400))) == 1400.0  # xr too
    two_gpu = TypicalPods([TypicalPod(1000, 1000, 2, (), 1, 0.25), TypicalPod(1000, 0, 0, (), 3, 0.75)])
    # 2 free GPUs needed; only one: 0.25 * 1500 (q2) + 0.75 * 1500 (xl)
    assert two_gpu.node_fragmentation(_node("A", 8000, (1000, 500))) == 1500.0
    # both free: the 2-GPU type has no fragment, 0.75 * 2000 remains
    assert two_gpu.node_fragmentation(_node("A", 8000, (1000, 1000))) == 1500.0


def test_cluster_fragmentation_sums_nodes_over_idle_gpu() -> None:
    # T1 CPU-only (1 core) and T2 sharing (1 core, 500 milli), p = 1/2 each
    typical = TypicalPods([TypicalPod(1000, 0, 0, (), 1, 0.5), TypicalPod(1000, 500, 1, (), 1, 0.5)])
    cluster = ClusterGpuState([NodeSpec("a", 8000, 1, 2), NodeSpec("b", 8000, 1, 1), NodeSpec("c", 8000, 1)])
    cluster.allocate(0, PodShape(cpu=0, gpu_milli=700, gpu_count=1), (1,))  # a: 1000 + 300 left
    cluster.allocate(1, PodShape(cpu=8000, gpu_milli=100, gpu_count=1), (0,))  # b: 900 left, no CPU
    # a: 0.5*1300 + 0.5*300 = 800; b: T1 and T2 lack CPU, 0.5*900 + 0.5*900 = 900; c: no GPU, 0
    frag = typical.cluster_fragmentation(cluster)
    assert (frag.fragment_milli, frag.idle_milli) == (1700.0, 2200)
    assert frag.ratio == 1700 / 2200
    assert TypicalPods([TypicalPod(1, 0, 0, (), 1, 1.0)]).cluster_fragmentation(
        ClusterGpuState([NodeSpec("c", 8000, 1)])).ratio == 0.0


def test_from_shapes_keeps_the_shortest_prefix_over_the_threshold() -> None:
    shapes = ([PodShape(1000)] * 5 + [PodShape(2000, gpu_milli=500, gpu_count=1)] * 3
              + [PodShape(4000, gpu_milli=1000, gpu_count=2), PodShape(500)])
    # counts 5, 3, 1, 1; the two singletons tie and the larger CPU goes first.
    # 95 % of 10 = 9.5: cumulative 5, 8, 9, 10 takes all four, no renormalisation
    everything = TypicalPods.from_shapes(shapes)
    assert [(t.cpu, t.gpu_milli, t.gpu_count, t.count) for t in everything.pods] == [
        (1000, 0, 0, 5), (2000, 500, 1, 3), (4000, 1000, 2, 1), (500, 0, 0, 1)]
    assert [t.p for t in everything.pods] == [0.5, 0.3, 0.1, 0.1]
    # 80 %: cumulative 5 < 8, then 8 stops; p renormalised by 0.8
    top = TypicalPods.from_shapes(shapes, threshold=80)
    assert [t.p for t in top.pods] == [0.5 / 0.8, 0.3 / 0.8]
    # 50 % with step 2: the first step already takes two types
    assert len(TypicalPods.from_shapes(shapes, threshold=50, step=2)) == 2
    assert len(TypicalPods.from_shapes(shapes, threshold=50, step=1)) == 1


def test_from_shapes_counts_zero_cpu_as_the_default_request() -> None:
    typical = TypicalPods.from_shapes([PodShape(0), PodShape(100)])
    assert [(t.cpu, t.count) for t in typical.pods] == [(100, 2)]


def test_typical_pods_of_the_default_trace(default_trace: Trace) -> None:
    typical = TypicalPods.from_shapes(pod_shape(p) for p in default_trace.pods)
    assert len(typical) == 35
    cpu_only = [t for t in typical.pods if t.gpu_milli == 0]
    assert len(cpu_only) == 5 and round(sum(t.p for t in cpu_only), 3) == 0.136
    top = typical.pods[0]
    assert (top.cpu, top.gpu_milli, top.gpu_count, top.models) == (3152, 810, 1, ())
    assert round(top.p, 3) == 0.135
    assert max(t.gpu_count for t in typical.pods) == 1
    assert abs(sum(t.p for t in typical.pods) - 1.0) < 1e-12


_models = st.sampled_from(["", "A", "B"])
_typical = st.lists(
    st.tuples(st.integers(100, 64000), st.sampled_from([0, 50, 300, 500, 810, 1000]), st.integers(1, 4),
              st.sampled_from([(), ("A",), ("A", "B")]), st.floats(0.001, 1.0)),
    min_size=1, max_size=12,
)
_state = st.tuples(_models, st.integers(-1000, 96000),
                   st.lists(st.sampled_from([0, 1, 50, 120, 300, 499, 500, 700, 810, 999, 1000]),
                            min_size=0, max_size=8))


@settings(max_examples=300, deadline=None)
@given(_typical, st.lists(_state, min_size=1, max_size=6))
def test_vectorized_fragmentation_is_bit_identical_to_the_loop(
    raw: list[tuple[int, int, int, tuple[str, ...], float]], states: list[tuple[str, int, list[int]]],
) -> None:
    typical = TypicalPods([
        TypicalPod(cpu, milli, count if milli == 1000 else (1 if milli else 0), models, 1, p)
        for cpu, milli, count, models, p in raw
    ])
    width = max(len(g) for _, _, g in states)
    gpu = np.array([g + [0] * (width - len(g)) for _, _, g in states], dtype=np.int64).reshape(len(states), width)
    access = np.stack([typical.access_row(m) for m, _, _ in states])
    cpu = np.array([c for _, c, _ in states], dtype=np.int64)
    got = typical.fragmentation(access, cpu, gpu)
    for i, (model, cpu_left, gpus) in enumerate(states):
        assert got[i] == reference_fragmentation(typical, model, cpu_left, gpus)
        assert typical.node_fragmentation(_node(model, cpu_left, tuple(gpus))) == got[i]
