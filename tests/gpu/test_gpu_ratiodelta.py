"""RatioDelta (issue 17): FGDOnline minus the change of a node's CPU/usable-GPU imbalance a GPU pod makes.

kubesched's own policy (src/kubesched/plugins/gpu/ratiodelta.py, docs/gpu.md "RatioDelta as a
policy"): no upstream table, so every expected score is worked out by hand next to it. FGDOnline's
part is FGD's trunc(100·sigmoid(ΔF/1000)) with ΔF = F before − F after and
F = Σ_t p_t·(GPU milli type t cannot use) over the pod types seen so far (tests/gpu/test_gpu_fgdonline.py);
RatioDelta's raw score is 1000·FGDOnline − round(W·(|after| − |before|)), imbalance =
|CPU left / c̄ − usable idle GPU milli|, c̄ = CPU per GPU milli over the GPU pods seen, W = 30, and
NormalizeScore ranks the raw scores (best 100, next 99, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.plugins.gpu import ClusterGpuState, NodeSpec, PodShape, make_policy
from kubesched.plugins.gpu.fgdonline import FgdOnline
from kubesched.plugins.gpu.frag import TypicalPods
from kubesched.plugins.gpu.ratiodelta import WEIGHT, RatioDelta, usable_taken
from kubesched.plugins.gpushare import LABEL_GPU_PRODUCT, RESOURCE_GPU, RESOURCE_GPU_MILLI, GpuShare, GpuShareArgs
from kubesched.plugins.registry import default_registry
from kubesched.sim.alibaba import Trace, arrival
from kubesched.sim.gpu_replay import replay, replay_arrival
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
    assert policy.name == "RatioDelta" and policy.weight == WEIGHT == 30 and policy.raw_scores
    assert (policy.seen, policy.cpu_sum, policy.gpu_sum) == (0, 0, 0)
    assert policy.least_useful == 1  # no GPU pod seen: every idle milli counts
    assert GpuShareArgs(scoring_policy="RatioDelta").validate() == []


def test_hand_computed_scores_of_a_gpu_pod() -> None:
    # Seen: LIGHT and HEAVY, one each: typical pods HEAVY, LIGHT with p = 1/2 (ties: larger CPU first);
    # c̄ = (2000 + 6000) / (1000 + 1000) = 4 CPU milli per GPU milli; both whole GPUs, so U = 1000 and
    # every card is whole here: usable = idle. HEAVY (6 cores, one GPU) goes on GPU 0; penalty
    # round(30 × Δ imbalance) thousandths.
    #
    # a (8 cores, 2 GPUs): F before 0 (both types fit, no partial GPU). After: 2 cores, GPUs (0, 1000):
    #   HEAVY no longer fits the CPU -> its idle 1000 counts, 1/2·1000; LIGHT fits (2 cores), no partial GPU:
    #   F = 500, ΔF = −500 -> trunc(100·sigmoid(−0.5)) = trunc(37.75) = 37.
    #   imbalance before |8000/4 − 2000| = 0, after |2000/4 − 1000| = 500: +500 -> 37000 − 15000 = 22000.
    # b (16 cores): F 0 -> 0 (10 cores left, both fit): 50.
    #   imbalance |4000 − 2000| = 2000 -> |2500 − 1000| = 1500: −500 -> 50000 + 15000 = 65000.
    # c (7 cores): F 0 -> 1000 (1 core left: neither type fits the CPU, 1/2·1000 each): trunc(26.89) = 26.
    #   imbalance |1750 − 2000| = 250 -> |250 − 1000| = 750: +500 -> 26000 − 15000 = 11000.
    # g (14 cores, 4 GPUs): F 0 -> 0 (8 cores, 3 free GPUs: both fit): 50, FGDOnline ties it with b.
    #   imbalance |3500 − 4000| = 500 -> |2000 − 3000| = 1000: +500 -> 35000: RatioDelta prefers b.
    cluster, nodes = four_nodes(), np.arange(4)
    online, ratio = FgdOnline(), RatioDelta()
    seen_light_then_heavy(online)
    seen_light_then_heavy(ratio)
    assert (ratio.cpu_sum, ratio.gpu_sum, ratio.least_useful) == (8000, 2000, 1000)
    assert online.score_batch(cluster, nodes, HEAVY).tolist() == [37, 50, 26, 50]
    raw = ratio.score_batch(cluster, nodes, HEAVY)
    assert raw.tolist() == [22000, 65000, 11000, 35000]
    # the per-node form (a Score plugin's score()) gives the same numbers
    assert [ratio.score(cluster.node_state(i), HEAVY) for i in range(4)] == [22000, 65000, 11000, 35000]
    # NormalizeScore: b 100, g 99, a 98, c 97
    assert ratio.normalize(raw).tolist() == [98, 100, 97, 99]


def test_least_useful_skips_the_rarest_two_percent_of_gpu_pods() -> None:
    # 100 GPU pods, smallest per-card requests first: 160m once, 220m once (2 pods: not more than 2 %),
    # then 470m: U = 470. One more 160m pod (3 of 101 > 2.02): U = 220. CPU-only pods do not count.
    ratio = RatioDelta()
    for pod in [PodShape(cpu=1, gpu_milli=160, gpu_count=1), PodShape(cpu=1, gpu_milli=220, gpu_count=1)] + [
        PodShape(cpu=1, gpu_milli=470, gpu_count=1)
    ] * 98 + [CPU_POD] * 50:
        ratio.observe(pod)
    assert ratio.least_useful == 470
    ratio.observe(PodShape(cpu=1, gpu_milli=160, gpu_count=1))
    assert ratio.least_useful == 220
    whole = RatioDelta()
    whole.observe(PodShape(cpu=1, gpu_milli=1000, gpu_count=4))
    assert whole.least_useful == 1000  # only whole GPUs: a partial card is no use


def test_half_rounds_to_even() -> None:
    # The cluster and pods above with W = 0.005: a change of ±500 milli costs ±2.5 thousandths,
    # rounded half to even: a 37000 − 2 = 36998, b 50000 + 2 = 50002.
    cluster = four_nodes()
    ratio = RatioDelta(weight=0.005)
    seen_light_then_heavy(ratio)
    assert ratio.score_batch(cluster, np.array([0, 1]), HEAVY).tolist() == [36998, 50002]


def test_normalize_is_the_dense_rank_from_the_top() -> None:
    ratio = RatioDelta()
    assert ratio.normalize(np.array([5, 7, 7, -3], dtype=np.int64)).tolist() == [99, 100, 100, 98]
    assert ratio.normalize(np.array([], dtype=np.int64)).tolist() == []
    # 150 distinct raw scores: the best 100 .. 0 for the 101st, 0 below it; order kept down to there
    got = ratio.normalize(np.arange(150, dtype=np.int64) * -1000)
    assert got[0] == 100 and got[100] == 0 and (got[100:] == 0).all() and (np.diff(got[:101]) == -1).all()


def test_usable_idle_milli_and_what_the_pod_takes() -> None:
    # U = 220 (the smallest typical share, say): cards with less left do not count.
    left = np.array([[190, 1000], [600, 1000], [150, 300], [200, 1000], [1000, 500]], dtype=np.int64)
    # 470m: row 0 usable 1000 (190 is too small), best-fit card 1000 leaves 530 >= 220 -> takes 470;
    # row 1 usable 1600, best fit 600 leaves 130 < 220 -> takes the whole 600.
    usable, taken = usable_taken(left[:2], PodShape(cpu=1, gpu_milli=470, gpu_count=1), 220)
    assert usable.tolist() == [1000, 1600] and taken.tolist() == [470, 600]
    # 160m (smaller than U): row 2 usable 300, best fit 300 (150 does not fit) leaves 140 -> takes 300;
    # row 3 usable 1000, best fit 200, itself not counted -> takes 0.
    usable, taken = usable_taken(left[2:4], PodShape(cpu=1, gpu_milli=160, gpu_count=1), 220)
    assert usable.tolist() == [300, 1000] and taken.tolist() == [300, 0]
    # a whole GPU takes 1000 of the usable 1500
    usable, taken = usable_taken(left[4:], PodShape(cpu=1, gpu_milli=1000, gpu_count=1), 220)
    assert usable.tolist() == [1500] and taken.tolist() == [1000]


def test_the_810m_remnant_is_not_counted_once_a_typical_share_is_larger() -> None:
    # Seen: an 810m pod (8 cores) and a 470m pod (2 cores): c̄ = 10000 / 1280 = 7.8125; typical shares 470
    # and 810, so U = 470. Node a (8 cores, GPUs 190 | 1000: an 810m pod of no CPU sits on GPU 0), node b
    # (8 cores, GPUs 1000 | 1000); the 470m pod of 2 cores. CPU in GPU milli: 8000 / 7.8125 = 1024 before,
    # 6000 / 7.8125 = 768 after.
    # a: usable 1000 (the 190 is not), the pod takes 470 (best fit 1000 leaves 530 >= 470):
    #    |1024 − 1000| = 24 -> |768 − 530| = 238: +214 -> penalty round(30 × 214) = 6420.
    #    (Counting the 190: |1024 − 1190| = 166 -> |768 − 720| = 48, −118: a would look better.)
    # b: usable 2000, takes 470: |1024 − 2000| = 976 -> |768 − 1530| = 762: −214 -> −6420.
    cluster = ClusterGpuState([NodeSpec("a", 8000, GIB, 2), NodeSpec("b", 8000, GIB, 2)])
    cluster.allocate(0, PodShape(cpu=0, gpu_milli=810, gpu_count=1), (0,))
    pod = PodShape(cpu=2000, gpu_milli=470, gpu_count=1)
    ratio, online = RatioDelta(), FgdOnline()
    for policy in (ratio, online):
        policy.observe(PodShape(cpu=8000, gpu_milli=810, gpu_count=1))
        policy.observe(pod)
    assert ratio.least_useful == 470
    fgd = online.score_batch(cluster, np.array([0, 1]), pod).tolist()
    got = ratio.score_batch(cluster, np.array([0, 1]), pod).tolist()
    assert got == [fgd[0] * 1000 - 6420, fgd[1] * 1000 + 6420]
    assert [ratio.score(cluster.node_state(i), pod) for i in (0, 1)] == got


def test_home_guard_charges_wide_pods_on_the_homes_of_narrow_ones() -> None:
    # a (T4), b and c (G2): 8 cores, 2 idle GPUs each. Seen: a T4-only one-GPU pod (home {a}: 2 of the
    # 6 GPUs, narrow), then an unrestricted one-GPU pod p (1 core each; home: every node, wide).
    # Home pressure on a: D × f / idle milli of the home = 1000 × (6000 idle / 2000 seen) / 2000 = 1.5,
    # × HOME_GUARD 30 = 45 points. Card guard: 1 whole T4 card asked / 2 whole T4 cards on nodes with at
    # least c̄ × 1000 = 1000 CPU left = 0.5, × CARD_GUARD 100 × 1 card = 50 points. 95 000 thousandths on
    # a, none on b and c; the imbalance changes alike on all three (same CPU and GPUs).
    cluster = ClusterGpuState([NodeSpec("a", 8000, GIB, 2, "T4"), NodeSpec("b", 8000, GIB, 2, "G2"),
                               NodeSpec("c", 8000, GIB, 2, "G2")])
    t4_only = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1, models=("T4",))
    p = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    ratio, online = RatioDelta(), FgdOnline()
    for policy in (ratio, online):
        policy.observe(t4_only)
        policy.observe(p)
    nodes = np.array([0, 1, 2])
    assert ratio.home_pressure(cluster).tolist() == [1.5, 0.0, 0.0]
    assert ratio.guard_penalty(cluster, nodes, p).tolist() == [95_000, 0, 0]
    base = online.score_batch(cluster, nodes, p).tolist()
    raw = ratio.score_batch(cluster, nodes, p).tolist()
    assert raw[0] - raw[1] == (base[0] - base[1]) * 1000 - 95_000
    assert raw[1] - raw[2] == (base[1] - base[2]) * 1000
    pre = ratio.cluster_context(cluster, p)
    assert [ratio.score(cluster.node_state(i), p, pre) for i in range(3)] == raw
    # the narrow pod itself is not charged (it has nowhere else to go)
    assert ratio.cluster_context(cluster, t4_only) is None
    assert ratio.guard_penalty(cluster, nodes, t4_only).tolist() == [0, 0, 0]
    # no narrow pod seen: nothing changes
    fresh = RatioDelta()
    fresh.observe(p)
    assert fresh.cluster_context(cluster, p) is None and not fresh.home_pressure(cluster).any()


def test_home_pressure_adds_up_overlapping_homes() -> None:
    # Seven nodes of 8 cores and 2 GPUs: a, b T4; c G2; d P100; e, f, g V100 (14 GPUs). A T4-only pod
    # (home {a, b}: 4 of 14 GPUs) then an unrestricted one p: f = 14 000 idle / 2000 seen = 7, pressure
    # on a and b 1000 × 7 / 4000 = 1.75. Then a (T4 or G2) pod (home {a, b, c}: 6 of 14, narrow too):
    # f = 14 000 / 3000, a and b carry both classes, 1000 f / 4000 + 1000 f / 6000 = 35/18, c the second
    # alone, 7/9. One GPU taken on a: f = 13 000 / 3000, a and b 13/9 + 13/15, c 13/15.
    models = ["T4", "T4", "G2", "P100", "V100", "V100", "V100"]
    cluster = ClusterGpuState([NodeSpec(name, 8000, GIB, 2, m) for name, m in zip("abcdefg", models, strict=True)])
    p = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    ratio = RatioDelta()
    ratio.observe(PodShape(cpu=1000, gpu_milli=1000, gpu_count=1, models=("T4",)))
    ratio.observe(p)
    assert ratio.home_pressure(cluster).tolist() == pytest.approx([1.75, 1.75, 0, 0, 0, 0, 0])
    ratio.observe(PodShape(cpu=1000, gpu_milli=1000, gpu_count=1, models=("T4", "G2")))
    both, second = 35 / 18, 7 / 9
    assert ratio.home_pressure(cluster).tolist() == pytest.approx([both, both, second, 0, 0, 0, 0])
    cluster.allocate(0, p, (0,))
    both, second = 13 / 9 + 13 / 15, 13 / 15
    assert ratio.home_pressure(cluster).tolist() == pytest.approx([both, both, second, 0, 0, 0, 0])


def test_home_pressure_with_more_narrow_classes_than_bits_in_a_word() -> None:
    # 70 one-GPU nodes, each of its own model; a one-GPU pod for each model (70 homes of one node) and
    # one for M0 or M69 (home {0, 69}), then an unrestricted pod p: 71 narrow classes (the gpuspec lists
    # have 65). f = 70 000 idle / 72 000 seen; each one-node home 1000 f / 1000 = f; nodes 0 and 69 also
    # carry the pair's 1000 f / 2000.
    models = [f"M{i}" for i in range(70)]
    cluster = ClusterGpuState([NodeSpec(f"n{i}", 8000, GIB, 1, m) for i, m in enumerate(models)])
    ratio = RatioDelta()
    for m in models:
        ratio.observe(PodShape(cpu=1000, gpu_milli=1000, gpu_count=1, models=(m,)))
    ratio.observe(PodShape(cpu=1000, gpu_milli=1000, gpu_count=1, models=("M0", "M69")))
    p = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    ratio.observe(p)
    f = 70_000 / 72_000
    assert ratio.home_pressure(cluster).tolist() == pytest.approx([1.5 * f] + [f] * 68 + [1.5 * f])
    # home guard 30 points × pressure; card guard: p takes a whole card of a model restricted pods asked
    # 1 card of (1.5 for M0 and M69), 1 whole card each: 100 points × 1 (× 1.5)
    edge, inner = round(30 * 1.5 * f * 1000) + 150_000, round(30 * f * 1000) + 100_000
    expected = [edge] + [inner] * 68 + [edge]
    assert ratio.guard_penalty(cluster, np.arange(70), p).tolist() == expected


def test_a_home_narrowed_by_cpu_and_memory() -> None:
    # g3: 128 cores, 8 GPUs, 768 GiB; g2a, g2b: 96 cores, 8 GPUs, 384 GiB. An eight-GPU pod of 120 cores
    # fits g3 only (8 of 24 GPUs: narrow), so does one of 88 cores and 500 GiB; one of 88 cores and 320
    # GiB fits all three (wide). Seen: the 120-core pod and a one-GPU pod p: f = 24 000 / 9000, the
    # pressure on g3 8000 × f / 8000 = 8/3, 30 × 8/3 = 80 points; the pod asks for a largest node's GPUs
    # and g3 is empty: the node guard adds 10 × 8000 × f / 8000 = 26.667 points; no model-restricted
    # pod: no card guard.
    cluster = ClusterGpuState([NodeSpec("g3", 128_000, 768 * GIB, 8, "G3"), NodeSpec("g2a", 96_000, 384 * GIB, 8, "G2"),
                               NodeSpec("g2b", 96_000, 384 * GIB, 8, "G2")])
    big = PodShape(cpu=120_000, memory=300 * GIB, gpu_milli=1000, gpu_count=8)
    ratio = RatioDelta()
    home = ratio.home(cluster, big)
    assert home is not None and home.tolist() == [True, False, False]
    assert ratio.home(cluster, PodShape(cpu=88_000, memory=500 * GIB, gpu_milli=1000, gpu_count=8)) is not None
    assert ratio.home(cluster, PodShape(cpu=88_000, memory=320 * GIB, gpu_milli=1000, gpu_count=8)) is None
    p = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    ratio.observe(big)
    ratio.observe(p)
    assert ratio.guard_penalty(cluster, np.array([0, 1, 2]), p).tolist() == [80_000 + 26_667, 0, 0]
    # another cluster: homes are worked out again for its nodes
    other = ClusterGpuState([NodeSpec("x", 128_000, 768 * GIB, 8, "G3"), NodeSpec("y", 128_000, 768 * GIB, 8, "G3")])
    assert ratio.home(other, big) is None


def test_node_guard_keeps_empty_nodes_for_pods_asking_for_a_largest_nodes_gpus() -> None:
    # g2a, g2b: 96 cores, 8 GPUs; t: 104 cores, 2 GPUs (the largest node has 8). Seen: an eight-GPU pod
    # of 64 cores (home g2a, g2b: 16 of 18 GPUs, wide, so no home guard; no model: no card guard) and a
    # one-GPU pod p. f = 18 000 idle / 9000 seen = 2; an empty node of the home: 8000 × 2 / 16 000 idle on
    # the home's empty nodes = 1, × NODE_GUARD 10 = 10 points. Once g2a holds a pod it is not empty (no
    # charge) and g2b carries the pressure alone: f = 17 000 / 9000, 8000 × f / 8000 = 1.8889 -> 18 889.
    cluster = ClusterGpuState([NodeSpec("g2a", 96_000, 384 * GIB, 8, "G2"), NodeSpec("g2b", 96_000, 384 * GIB, 8, "G2"),
                               NodeSpec("t", 104_000, 384 * GIB, 2, "T4")])
    big = PodShape(cpu=64_000, gpu_milli=1000, gpu_count=8)
    p = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    ratio = RatioDelta()
    ratio.observe(big)
    ratio.observe(p)
    nodes = np.array([0, 1, 2])
    assert ratio.guard_penalty(cluster, nodes, p).tolist() == [10_000, 10_000, 0]
    assert ratio.guard_penalty(cluster, nodes, big).tolist() == [0, 0, 0]  # it needs the empty node
    cluster.allocate(0, p, (0,))
    assert ratio.guard_penalty(cluster, nodes, p).tolist() == [0, 18_889, 0]
    pre = ratio.cluster_context(cluster, p)
    raw = ratio.score_batch(cluster, nodes, p).tolist()
    assert [ratio.score(cluster.node_state(i), p, pre) for i in range(3)] == raw


def test_card_guard_counts_whole_cards_with_cpu_left() -> None:
    # T4 nodes a (8 cores) and c (1 core), G2 nodes b and d (8 cores), 2 GPUs each; a holds a 400m pod of 1
    # core on GPU 1 (cards 1000, 600). T4 has half the GPUs: the T4-only pod's home is wide (no home
    # guard). Seen: a T4-only one-GPU pod and a 500m share s (1 core each): c̄ × 1000 = 2000 / 1500 ×
    # 1000 = 1333 CPU, so c's whole cards do not count and T4 has one whole card with CPU (a's GPU 0):
    # pressure 1 / 1. s takes no whole card on a (its best fit is the 600m card) and one on c: 100
    # points there; a whole one-GPU pod takes one card on either T4 node.
    cluster = ClusterGpuState([NodeSpec("a", 8000, GIB, 2, "T4"), NodeSpec("c", 1000, GIB, 2, "T4"),
                               NodeSpec("b", 8000, GIB, 2, "G2"), NodeSpec("d", 8000, GIB, 2, "G2")])
    cluster.allocate(0, PodShape(cpu=1000, gpu_milli=400, gpu_count=1), (1,))
    ratio = RatioDelta()
    ratio.observe(PodShape(cpu=1000, gpu_milli=1000, gpu_count=1, models=("T4",)))
    s = PodShape(cpu=1000, gpu_milli=500, gpu_count=1)
    ratio.observe(s)
    assert ratio.card_pressure(cluster).tolist() == [1.0, 0.0]  # cluster.models: T4, G2
    nodes = np.array([0, 1, 2, 3])
    assert ratio.guard_penalty(cluster, nodes, s).tolist() == [0, 100_000, 0, 0]
    whole = PodShape(cpu=1000, gpu_milli=1000, gpu_count=1)
    assert ratio.guard_penalty(cluster, nodes, whole).tolist() == [100_000, 100_000, 0, 0]
    # half of a T4|G2 pod's cards count for each model
    both = RatioDelta()
    both.observe(PodShape(cpu=1000, gpu_milli=1000, gpu_count=2, models=("G2", "T4")))
    assert both.whole_restricted == {"G2": 1.0, "T4": 1.0}


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
    assert ratio.score_batch(cluster, np.array([0, 1]), CPU_POD).tolist() == [87000, 90000]
    assert [ratio.score(cluster.node_state(i), CPU_POD) for i in (0, 1)] == [87000, 90000]


def test_no_cpu_seen_keeps_fgdonlines_score() -> None:
    # A GPU pod without CPU request as the only GPU pod seen: c̄ = 0, no imbalance to measure. Typical
    # pod: (100 scoring CPU, 1 GPU), p = 1; on a (8 cores, 2 GPUs) F 0 -> 0: 50, whatever W.
    no_cpu = PodShape(cpu=0, gpu_milli=1000, gpu_count=1)
    ratio = RatioDelta(weight=1000.0)
    ratio.observe(no_cpu)
    assert ratio.score_batch(four_nodes(), np.array([0]), no_cpu).tolist() == [50000]


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


def test_plugin_scores_leave_normalize_score_in_range() -> None:
    # Raw scores are thousandths of a point; NormalizeScore ranks them, so the framework sees 0..100.
    # A whole-GPU pod of 16 cores is seen first, then a 500m pod of 1 core: c̄ = 17000 / 1500, U = 500.
    # Node a has 8 cores, b 64 (2 GPUs each): a is CPU-short, and the light pod's change of imbalance
    # there is −412 milli against +412 on b (|706 − 2000| = 1294 -> |618 − 1500| = 882 on a; |5647 −
    # 2000| = 3647 -> |5559 − 1500| = 4059 on b), 12 353 thousandths each way.
    small = make_node("a").capacity(cpu="8", memory="512Gi").res({RESOURCE_GPU: 2, RESOURCE_GPU_MILLI: 2000})
    nodes = [small.label(LABEL_GPU_PRODUCT, "A100").obj(), gpu_node("b")]
    fw = new_framework([GpuShare], nodes=nodes, args={"GpuShare": {"scoringPolicy": "RatioDelta"}})
    fw.run_score(make_pod("h").res({"cpu": "16", RESOURCE_GPU: 1}).obj(), ["b"])
    res = fw.run_score(make_pod("p").res({"cpu": "1", RESOURCE_GPU_MILLI: 500}).obj())
    raw, norm = res.raw["GpuShare"], res.normalized["GpuShare"]
    policy = fw.plugin("GpuShare").policy
    assert isinstance(policy, RatioDelta) and policy.least_useful == 500
    online = FgdOnline()
    for pod in (PodShape(cpu=16000, gpu_milli=1000, gpu_count=1), PodShape(cpu=1000, gpu_milli=500, gpu_count=1)):
        online.observe(pod)
    cluster = ClusterGpuState([NodeSpec("a", 8000, 512 * GIB, 2, "A100"), NodeSpec("b", 64000, 512 * GIB, 2, "A100")])
    base = online.score_batch(cluster, np.array([0, 1]), PodShape(cpu=1000, gpu_milli=500, gpu_count=1)).tolist()
    assert raw.tolist() == [base[0] * 1000 + 12353, base[1] * 1000 - 12353]
    assert sorted(norm.tolist()) == [99, 100] and norm[int(np.argmax(raw))] == 100


# ---- whole trace -------------------------------------------------------------------------------------


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



#: docs/gpu.md "RatioDelta as a policy": the ten-seed mean at 130 % arrived (default trace, tune 1.3).
RATIO_DELTA_MEAN_AT_130 = 96.141
#: The FGD paper's published mean for the same seeds (../shared/reference/fgd-method.md §4.3).
FGD_PUBLISHED_MEAN_AT_130 = 95.39
#: The bound's mean at 130 % for seeds 42..51 (docs/gpu.md "An upper bound"; seeds 42 and 44 are pinned
#: by tests/sim/test_gpu_bound.py::test_the_default_trace_headline_bounds).
BOUND_MEAN_AT_130 = 97.90


@pytest.mark.slow
def test_ten_seed_mean_closes_a_quarter_of_fgds_gap(default_trace: Trace) -> None:
    """The issue's target: at least 25 % of FGD's gap to the bound closed at 130 % arrived, seeds
    42..51, without the workload mix."""
    per_seed = {
        s: float(replay(default_trace, "RatioDelta", s, track_fragmentation=False).allocation_curve()[130])
        for s in range(42, 52)
    }
    mean = float(np.mean(list(per_seed.values())))
    assert mean == pytest.approx(RATIO_DELTA_MEAN_AT_130, abs=0.01), per_seed
    closed = (mean - FGD_PUBLISHED_MEAN_AT_130) / (BOUND_MEAN_AT_130 - FGD_PUBLISHED_MEAN_AT_130)
    assert closed >= 0.25, (closed, per_seed)


def test_guards_on_a_cluster_without_gpus_charge_nothing() -> None:
    # CPU-only nodes: no home holds any GPU (share 0 of 0 GPUs), no node is "empty" of GPUs to keep, no
    # model has cards; the guards must neither divide by zero nor charge anyone.
    cluster = ClusterGpuState([NodeSpec("x", 8000, GIB), NodeSpec("y", 8000, GIB)])
    ratio = RatioDelta()
    big = PodShape(cpu=1000, gpu_milli=1000, gpu_count=8, models=("T4",))
    for pod in (big, CPU_POD, LIGHT):
        ratio.observe(pod)
    nodes = np.array([0, 1])
    for pod in (big, CPU_POD, LIGHT, SHARED):
        assert ratio.guard_penalty(cluster, nodes, pod).tolist() == [0, 0]
    assert ratio.cluster_context(cluster, LIGHT) is None
