"""Each policy's score formula and GPU choice on hand-computed cases.

Formulas: hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/{dot_product,best_fit,
gpu_packing,gpu_clustering,random,fgd}_score.go and open_gpu_share.go (allocateGpuIdBasedOn*), as
specified in ../shared/reference/fgd-method.md §3.3-§5. Every expected number below is worked out by
hand in the comment next to it. Random draws are checked against Go math/rand outputs (go1.26.8:
``rand.New(rand.NewSource(42))``: Intn(10)=5 then Intn(3)=2; Intn(1..4) = 0 1 2 2; seed 9: Intn(1..5) =
0 0 1 1 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.gorand import GoRand
from kubesched.plugins.gpu import (
    BestFit,
    ClusterGpuState,
    DotProd,
    Fgd,
    GpuClustering,
    GpuPacking,
    NodeGpuState,
    NodeSpec,
    PodShape,
    RandomPolicy,
    TypicalPod,
    TypicalPods,
    best_fit_gpus,
    exclusive_gpus,
    make_policy,
    random_fit_gpus,
)

# cpu 64 cores left; GPUs left 1000, 1000, 500, 200 (G = 2700)
NODE = NodeGpuState("n", "T4", (1000, 1000, 500, 200), cpu_left=64000)
SHARE = PodShape(cpu=4000, gpu_milli=300, gpu_count=1)
WHOLE2 = PodShape(cpu=8000, gpu_milli=1000, gpu_count=2)
CPU_ONLY = PodShape(cpu=2000)


def _with(node: NodeGpuState, **changes: object) -> NodeGpuState:
    fields = {f: getattr(node, f) for f in NodeGpuState.__slots__}
    fields.update(changes)
    return NodeGpuState(**fields)  # type: ignore[arg-type]


def test_dot_prod() -> None:
    # dot = (64000/128000)(4000/128000) + (2700/8000)(300/8000) = 0.015625 + 0.01265625; 100(1 - dot/2) = 98.59
    assert DotProd().score(NODE, SHARE) == 98
    # dot = 0.5 * 0.0625 + 0.3375 * 0.25 = 0.115625; 100(1 - 0.0578125) = 94.22
    assert DotProd().score(NODE, WHOLE2) == 94
    # a node with less CPU left than the pod's non-zero CPU (100m for a 0 request) scores 0
    assert DotProd().score(_with(NODE, cpu_left=50), PodShape(cpu=0)) == 0


def test_best_fit_raw_scores() -> None:
    # s = 60000/128000/2 + 2400/8000/2 = 0.234375 + 0.15; 100(1 - s) = 61.56
    assert BestFit().score(NODE, SHARE) == 61
    # s = 56000/128000/2 + 700/8000/2 = 0.21875 + 0.04375; 100(1 - s) = 73.75
    assert BestFit().score(NODE, WHOLE2) == 73
    # s = 62000/128000/2 + 2700/8000/2 = 0.2421875 + 0.16875; 100(1 - s) = 58.91
    assert BestFit().score(NODE, CPU_ONLY) == 58


def test_best_fit_min_max_normalization() -> None:
    # (70 - 61) * 100 div (79 - 61) = 900 div 18 = 50
    assert BestFit().normalize(np.array([61, 70, 79])).tolist() == [0, 50, 100]
    assert BestFit().normalize(np.array([5, 5])).tolist() == [0, 0]
    assert BestFit().normalize(np.array([], dtype=np.int64)).tolist() == []


def test_other_policies_do_not_normalize() -> None:
    assert DotProd().normalize(np.array([3, 9])).tolist() == [3, 9]


def test_gpu_packing() -> None:
    packing = GpuPacking()
    # ascending left 200, 500, 1000, 1000: the first that fits 300 is the 500 GPU (shared);
    # 100 - (500*100/1000) div 10 = 100 - 5
    assert packing.score(NODE, SHARE) == 95
    # needs 2 free GPUs, u = 2: max(50 - 2, 33)
    assert packing.score(NODE, WHOLE2) == 48
    # left 100, 200, 1000, 1000: only a free GPU fits 300, u = 1: max(50 - 1, 33)
    assert packing.score(_with(NODE, gpu_left=(1000, 1000, 200, 100)), SHARE) == 49
    # left 650, 700, 1000 and 600 milli: the 650 GPU, 100 - 65 div 10
    assert packing.score(_with(NODE, gpu_left=(1000, 700, 650)), PodShape(cpu=1, gpu_milli=600, gpu_count=1)) == 94
    # all GPUs free: max(33 - f, f)
    assert packing.score(_with(NODE, gpu_left=(1000,) * 4), SHARE) == 29
    assert packing.score(_with(NODE, gpu_left=(1000,) * 8), SHARE) == 25
    assert packing.score(_with(NODE, gpu_left=(1000,) * 2), SHARE) == 31
    assert packing.score(NODE, CPU_ONLY) == 0


def test_gpu_clustering() -> None:
    clustering = GpuClustering()
    # base = 25 * (8000 - 2700) div 8000 = 132500 div 8000 = 16
    assert clustering.score(NODE, SHARE) == 16 + 25  # no GPU pods on the node
    assert clustering.score(_with(NODE, gpu_classes=(("share-gpu", 1),)), SHARE) == 16 + 75
    assert clustering.score(_with(NODE, gpu_classes=(("1-gpu", 2), ("share-gpu", 1))), SHARE) == 16 + 50
    assert clustering.score(_with(NODE, gpu_classes=(("1-gpu", 1),)), SHARE) == 16
    assert clustering.score(NODE, CPU_ONLY) == 0
    # 9 free GPUs: 25 * (8000 - 9000) / 8000 = -3.125, truncated toward zero as Go does
    assert clustering.score(_with(NODE, gpu_left=(1000,) * 9), SHARE) == -3 + 25


def test_gpu_choice_helpers() -> None:
    assert exclusive_gpus((500, 1000, 1000, 1000), WHOLE2) == (1, 2)
    with pytest.raises(ValueError):
        exclusive_gpus((500, 1000), WHOLE2)
    assert best_fit_gpus((1000, 500, 400, 400), SHARE) == (2,)  # least left that fits, lowest index
    assert best_fit_gpus((1000, 1000), CPU_ONLY) == ()
    with pytest.raises(ValueError):
        best_fit_gpus((200, 100), SHARE)


def test_random_fit_gpus_reservoir_draws_like_go() -> None:
    m500 = PodShape(cpu=1, gpu_milli=500, gpu_count=1)
    left = (1000, 100, 900, 800, 700)  # GPUs 0, 2, 3, 4 fit 500
    # seed 9: Intn(1)=0 takes GPU 0, Intn(2)=0 takes GPU 2, Intn(3)=1 and Intn(4)=1 keep it
    assert random_fit_gpus(left, m500, GoRand(9)) == (2,)
    # seed 42: Intn(1)=0 takes GPU 0, then 1, 2, 2 keep it
    assert random_fit_gpus(left, m500, GoRand(42)) == (0,)
    # all five fit 50; seed 9's fifth draw Intn(5)=0 takes GPU 4
    assert random_fit_gpus(left, PodShape(cpu=1, gpu_milli=50, gpu_count=1), GoRand(9)) == (4,)
    # whole GPUs are not random: the lowest-index free ones
    assert random_fit_gpus((1000, 500, 1000), WHOLE2, GoRand(9)) == (0, 2)


def test_random_policy_draws_intn_over_the_feasible_nodes() -> None:
    cluster = ClusterGpuState([NodeSpec(f"n{i}", 1000, 1, 1, "T4") for i in range(10)])
    policy = RandomPolicy(GoRand(42))
    scores = policy.score_batch(cluster, np.arange(10), SHARE)
    assert scores.tolist() == [0, 0, 0, 0, 0, 100, 0, 0, 0, 0]  # Intn(10) = 5
    assert policy.score_batch(cluster, np.array([1, 4, 7]), SHARE).tolist() == [0, 0, 100]  # Intn(3) = 2
    per_node = RandomPolicy(GoRand(42))
    states = [cluster.node_state(i) for i in range(10)]
    chosen = per_node.pre_score(states, SHARE)
    assert [per_node.score(s, SHARE, chosen) for s in states] == scores.tolist() and chosen == "n5"


# ---- FGD ---------------------------------------------------------------------------------------------
# Typical pods: T1 CPU-only (1 core) and T2 sharing (1 core, 500 milli of one GPU), p = 1/2 each.
TYPICAL = TypicalPods([TypicalPod(1000, 0, 0, (), 1, 0.5), TypicalPod(1000, 500, 1, (), 1, 0.5)])
# 8 cores left, GPUs 1000 and 300 left (G = 1300):
# T1 fits, all idle GPU counts: 0.5 * 1300 = 650; T2 fits on GPU 0, GPU 1 (< 500) is fragment: 0.5 * 300
# F = 650 + 150 = 800
FNODE = NodeGpuState("f", "", (1000, 300), cpu_left=8000)


def test_fgd_node_fragmentation() -> None:
    assert Fgd(TYPICAL).node_fragmentation(FNODE) == 800.0


def test_fgd_shared_pod_tries_every_gpu_that_fits() -> None:
    fgd = Fgd(TYPICAL)
    # 500 milli fits GPU 0 only: after (500, 300), 7 cores: 0.5*800 + 0.5*300 = 550, delta 250,
    # 100 * sigmoid(0.25) = 56.2
    m500 = PodShape(cpu=1000, gpu_milli=500, gpu_count=1)
    assert fgd.score(FNODE, m500) == 56
    assert fgd.select_gpus(FNODE, m500) == (0,)
    # 200 milli: GPU 0 -> (800, 300): 550 + 150 = 700, delta 100 -> 52.5;
    #            GPU 1 -> (1000, 100): 550 + 50 = 600, delta 200 -> 54.98. The node scores 54 via GPU 1.
    m200 = PodShape(cpu=1000, gpu_milli=200, gpu_count=1)
    assert fgd.score(FNODE, m200) == 54
    assert fgd.select_gpus(FNODE, m200) == (1,)


def test_fgd_gpu_choice_differs_from_best_fit() -> None:
    # GPUs 600 and 1000 left: F = 0.5*1600 + 0 = 800. 200 milli on GPU 0 -> (400, 1000):
    # 0.5*1400 + 0.5*400 = 900, delta -100 -> 47.5; on GPU 1 -> (600, 800): 700 + 0, delta 100 -> 52.5
    node = NodeGpuState("g", "", (600, 1000), cpu_left=8000)
    m200 = PodShape(cpu=1000, gpu_milli=200, gpu_count=1)
    assert Fgd(TYPICAL).score(node, m200) == 52
    assert Fgd(TYPICAL).select_gpus(node, m200) == (1,)
    assert best_fit_gpus(node.gpu_left, m200) == (0,)


def test_fgd_cpu_only_and_whole_gpu_pods() -> None:
    fgd = Fgd(TYPICAL)
    # 1 core: both types still fit with 7 cores, F unchanged: delta 0 -> 50
    assert fgd.score(FNODE, PodShape(cpu=1000)) == 50
    # 7.5 cores: 0.5 cores left, T1 lacks CPU (xr, 650) and T2 lacks CPU (q4, 650): delta -500 -> 37.75
    assert fgd.score(FNODE, PodShape(cpu=7500)) == 37
    # one whole GPU takes GPU 0: (0, 300): T1 0.5*300, T2 lacks GPU 0.5*300 -> 300, delta 500 -> 62.2
    whole = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    assert fgd.score(FNODE, whole) == 62
    assert fgd.select_gpus(FNODE, whole) == (0,)


def test_fgd_batch_uses_interned_states_and_counts_misses() -> None:
    cluster = ClusterGpuState([NodeSpec("a", 8000, 1, 2, ""), NodeSpec("b", 8000, 1, 2, "")])
    cluster.allocate(0, PodShape(cpu=0, gpu_milli=700, gpu_count=1), (1,))  # a: (1000, 300), 8 cores
    fgd = Fgd(TYPICAL)
    m500 = PodShape(cpu=1000, gpu_milli=500, gpu_count=1)
    first = fgd.score_batch(cluster, np.array([0, 1]), m500)
    assert first.tolist() == [56, fgd.score(cluster.node_state(1), m500)]
    assert fgd.misses == 2
    assert fgd.score_batch(cluster, np.array([1, 0]), m500).tolist() == first[::-1].tolist()
    assert fgd.misses == 2  # served from the table


def test_make_policy() -> None:
    assert isinstance(make_policy("bestfit"), BestFit)
    assert make_policy("GpuPacking").name == "GpuPacking"
    assert make_policy("FGD", typical=TYPICAL).name == "FGD"
    assert make_policy("random", rng=GoRand(1)).name == "Random"
    for bad in ("FGD", "Random", "nope"):
        with pytest.raises(ValueError):
            make_policy(bad)
