"""RatioDelta (issue 17): FGDOnline minus the change of a node's CPU/GPU imbalance a GPU pod makes.

kubesched's own policy (src/kubesched/plugins/gpu/ratiodelta.py, docs/gpu.md "RatioDelta as a
policy"): no upstream table, so every expected score is worked out by hand next to it. FGDOnline's
part is FGD's trunc(100·sigmoid(ΔF/1000)) with ΔF = F before − F after and
F = Σ_t p_t·(GPU milli type t cannot use) over the pod types seen so far (tests/gpu/test_gpu_fgdonline.py);
RatioDelta subtracts round(W·(|after| − |before|)/1000), imbalance = |CPU left / c̄ − idle GPU milli|,
c̄ = CPU per GPU milli over the GPU pods seen, and clips to 0..100.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.plugins.gpu import ClusterGpuState, NodeSpec, PodShape, make_policy
from kubesched.plugins.gpu.fgdonline import FgdOnline
from kubesched.plugins.gpu.frag import TypicalPods
from kubesched.plugins.gpu.ratiodelta import WEIGHT, RatioDelta
from kubesched.plugins.gpushare import LABEL_GPU_PRODUCT, RESOURCE_GPU, RESOURCE_GPU_MILLI, GpuShare, GpuShareArgs
from kubesched.plugins.registry import default_registry
from kubesched.sim.alibaba import Trace, arrival
from kubesched.sim.gpu_replay import replay_arrival
from kubesched.sim.trace import replay_config, replay_framework, typical_pod_args
from kubesched.testing import make_node, make_pod, new_framework

GIB = 1 << 30
CPU_POD = PodShape(cpu=1000)
SHARED = PodShape(cpu=1000, gpu_milli=500, gpu_count=1)
LIGHT = PodShape(cpu=2000, gpu_milli=1000, gpu_count=1)  # 2 cores per GPU
HEAVY = PodShape(cpu=6000, gpu_milli=1000, gpu_count=1)  # 6 cores per GPU


def four_nodes() -> ClusterGpuState:
    """a: 8 cores, 2 GPUs; b: 16 cores, 2 GPUs; c: 7 cores, 2 GPUs; g: 14 cores, 4 GPUs (all idle)."""
    return ClusterGpuState([NodeSpec("a", 8000, GIB, 2), NodeSpec("b", 16000, GIB, 2), NodeSpec("c", 7000, GIB, 2),
                            NodeSpec("g", 14000, GIB, 4)])


def seen_light_then_heavy(policy: FgdOnline) -> None:
    policy.observe(LIGHT)
    policy.observe(HEAVY)  # the pod being scheduled is shown before it is scored


def test_factory_and_args() -> None:
    policy = make_policy("ratiodelta")
    assert isinstance(policy, RatioDelta) and isinstance(policy, FgdOnline)
    assert policy.name == "RatioDelta" and policy.weight == WEIGHT == 10
    assert (policy.seen, policy.cpu_sum, policy.gpu_sum) == (0, 0, 0)
    assert GpuShareArgs(scoring_policy="RatioDelta").validate() == []


def test_hand_computed_scores_of_a_gpu_pod() -> None:
    # Seen: LIGHT and HEAVY, one each: typical pods HEAVY, LIGHT with p = 1/2 (ties: larger CPU first);
    # c̄ = (2000 + 6000) / (1000 + 1000) = 4 CPU milli per GPU milli. HEAVY (6 cores, one GPU) goes on GPU 0.
    #
    # a (8 cores, 2 GPUs): F before 0 (both types fit, no partial GPU). After: 2 cores, GPUs (0, 1000):
    #   HEAVY no longer fits the CPU -> its idle 1000 counts, 1/2·1000; LIGHT fits (2 cores), no partial GPU:
    #   F = 500, ΔF = −500 -> trunc(100·sigmoid(−0.5)) = trunc(37.75) = 37.
    #   imbalance before |8000/4 − 2000| = 0, after |2000/4 − 1000| = 500: +500 -> round(10·0.5) = 5 -> 32.
    # b (16 cores): F 0 -> 0 (10 cores left, both fit): 50.
    #   imbalance |4000 − 2000| = 2000 -> |2500 − 1000| = 1500: −500 -> −5 -> 55.
    # c (7 cores): F 0 -> 1000 (1 core left: neither type fits the CPU, 1/2·1000 each): trunc(26.89) = 26.
    #   imbalance |1750 − 2000| = 250 -> |250 − 1000| = 750: +500 -> 5 -> 21.
    # g (14 cores, 4 GPUs): F 0 -> 0 (8 cores, 3 free GPUs: both fit): 50, FGDOnline ties it with b.
    #   imbalance |3500 − 4000| = 500 -> |2000 − 3000| = 1000: +500 -> 5 -> 45: RatioDelta prefers b.
    cluster, nodes = four_nodes(), np.arange(4)
    online, ratio = FgdOnline(), RatioDelta()
    seen_light_then_heavy(online)
    seen_light_then_heavy(ratio)
    assert (ratio.cpu_sum, ratio.gpu_sum) == (8000, 2000)
    assert online.score_batch(cluster, nodes, HEAVY).tolist() == [37, 50, 26, 50]
    assert ratio.score_batch(cluster, nodes, HEAVY).tolist() == [32, 55, 21, 45]
    # the per-node form (a Score plugin's score()) gives the same numbers
    assert [ratio.score(cluster.node_state(i), HEAVY) for i in range(4)] == [32, 55, 21, 45]


def test_half_rounds_to_even() -> None:
    # The cluster and pods above with W = 5: a change of ±500 costs ±5·0.5 = ±2.5, rounded half to even.
    cluster = four_nodes()
    ratio = RatioDelta(weight=5.0)
    seen_light_then_heavy(ratio)
    # a: FGDOnline 37, Δ imbalance +500 -> round(2.5) = 2 -> 35; b: −500 -> round(−2.5) = −2 -> 52
    assert ratio.score_batch(cluster, np.array([0, 1]), HEAVY).tolist() == [35, 52]


def test_clipped_to_the_score_range() -> None:
    # W = 1000: a's penalty round(1000·0.5) = 500 -> 37 − 500 clipped to 0; b's −500 -> 50 + 500 -> 100.
    cluster = four_nodes()
    ratio = RatioDelta(weight=1000.0)
    seen_light_then_heavy(ratio)
    assert ratio.score_batch(cluster, np.array([0, 1]), HEAVY).tolist() == [0, 100]
    assert [ratio.score(cluster.node_state(i), HEAVY) for i in (0, 1)] == [0, 100]


def test_cpu_only_pods_keep_fgdonlines_score() -> None:
    # The cluster of test_gpu_fgdonline.py: a (8 cores, 2 idle GPUs), b with a 400m pod (7 cores, (1000, 600)).
    # Seen: a CPU-only pod and a 500m share (c̄ = 2 is known, but a CPU-only pod is not penalised):
    # FGD 50 on both -> FGDPlus's 50 + 50·(8000 − idle) div 8000: a idle 2000 -> 87, b idle 1600 -> 90.
    cluster = ClusterGpuState([NodeSpec("a", 8000, GIB, 2), NodeSpec("b", 8000, GIB, 2)])
    cluster.allocate(1, PodShape(cpu=1000, gpu_milli=400, gpu_count=1), (1,))
    ratio = RatioDelta(weight=1000.0)
    ratio.observe(CPU_POD)
    ratio.observe(SHARED)
    assert (ratio.cpu_sum, ratio.gpu_sum) == (1000, 500)  # CPU-only pods do not count toward c̄
    assert ratio.score_batch(cluster, np.array([0, 1]), CPU_POD).tolist() == [87, 90]
    assert [ratio.score(cluster.node_state(i), CPU_POD) for i in (0, 1)] == [87, 90]


def test_no_cpu_seen_keeps_fgdonlines_score() -> None:
    # A GPU pod without CPU request as the only GPU pod seen: c̄ = 0, no imbalance to measure. Typical
    # pod: (100 scoring CPU, 1 GPU), p = 1; on a (8 cores, 2 GPUs) F 0 -> 0: 50, whatever W.
    no_cpu = PodShape(cpu=0, gpu_milli=1000, gpu_count=1)
    ratio = RatioDelta(weight=1000.0)
    ratio.observe(no_cpu)
    assert ratio.score_batch(four_nodes(), np.array([0]), no_cpu).tolist() == [50]


def test_never_handed_the_typical_pods(small_trace: Trace) -> None:
    # make_policy ignores a mix given to it: before any pod it knows one CPU-only type (all nodes tie)
    oracle = TypicalPods.from_shapes([HEAVY, HEAVY, LIGHT])
    policy = make_policy("RatioDelta", typical=oracle)
    assert policy is not None and isinstance(policy, RatioDelta)
    assert [(t.cpu, t.gpu_milli, t.p) for t in policy.typical.pods] == [(0, 0, 1.0)]
    # the framework replay's configuration gives it no typicalPods (FGD gets the trace's)
    typical = typical_pod_args(small_trace)
    reg = default_registry(entry_points=False)
    given = {}
    for name in ("RatioDelta", "ratiodelta", "FGDOnline", "FGD"):
        (gpu_share,) = [pc for pc in replay_config(name, typical, reg).profiles[0].plugin_config
                        if pc.name == "GpuShare"]
        assert isinstance(gpu_share.args, GpuShareArgs)
        given[name] = len(gpu_share.args.typical_pods)
    assert given == {"RatioDelta": 0, "ratiodelta": 0, "FGDOnline": 0, "FGD": len(typical)} and typical


def gpu_node(name: str) -> dict[str, Any]:
    """64 cores, 2 A100 GPUs (as tests/gpu/test_gpu_fgdonline.py)."""
    node: dict[str, Any] = (
        make_node(name)
        .capacity(cpu="64", memory="512Gi")
        .res({RESOURCE_GPU: 2, RESOURCE_GPU_MILLI: 2000})
        .label(LABEL_GPU_PRODUCT, "A100")
        .obj()
    )
    return node


def test_plugin_learns_c_bar_from_each_pod_once() -> None:
    fw = new_framework([GpuShare], nodes=[gpu_node("a")], args={"GpuShare": {"scoringPolicy": "RatioDelta"}})
    pod = make_pod("p").res({"cpu": "1", RESOURCE_GPU_MILLI: 500}).obj()
    fw.run_score(pod)
    fw.run_score(pod)  # a retry: not counted twice
    fw.run_score(make_pod("q").res({"cpu": "2"}).obj())  # CPU-only: counted in the mix, not in c̄
    policy = fw.plugin("GpuShare").policy
    assert isinstance(policy, RatioDelta)
    assert (policy.seen, policy.cpu_sum, policy.gpu_sum) == (2, 1000, 500)


# ---- whole trace -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_trace(default_trace: Trace) -> Trace:
    """60 nodes and 400 pods of the default trace (as tests/gpu/test_gpu_fgdonline.py)."""
    return Trace(nodes=default_trace.nodes[:60], pods=default_trace.pods[:400])


@pytest.mark.parametrize("seed", [42, 7])
def test_framework_replay_equals_standalone_replay(small_trace: Trace, seed: int) -> None:
    framework_run = replay_framework(arrival(small_trace, seed), "RatioDelta")
    standalone = replay_arrival(arrival(small_trace, seed), "RatioDelta")
    assert framework_run.policy == standalone.policy == "RatioDelta"
    assert standalone.failed > 0
    assert framework_run.failed == standalone.failed
    np.testing.assert_array_equal(framework_run.used, standalone.used)
    np.testing.assert_array_equal(framework_run.fragmentation, standalone.fragmentation)
    # the imbalance term places this run differently from FGDOnline
    online = replay_arrival(arrival(small_trace, seed), "FGDOnline")
    assert not np.array_equal(online.fragmentation, standalone.fragmentation)

