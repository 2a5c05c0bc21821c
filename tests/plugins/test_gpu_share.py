"""GpuShare (issue 6): GPU requests, per-GPU accounting, topology, Reserve/Unreserve, PreBind, hints.

kubesched's own plugin, so there is no upstream table to port. Expectations are worked out by hand
from the rules in docs/gpu.md: whole GPUs take fully free GPUs (lowest indexes, or the fewest NVLink
groups / NUMA zones first); a share of a GPU takes the GPU with the least milli left that still
fits (BestFit's "best" GPU choice, ../shared/reference/fgd-method.md §3.3); BestFit scores
trunc(100·(1 − s)), s = ½(cpuLeft − cpu)/128000 + ½(gpuLeft − gpuReq)/8000, then min-max
normalised (§4). Whole-trace behaviour is in tests/sim/test_trace_framework.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.config.errors import ConfigError
from kubesched.framework.events import QueueingHint
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.gpu import PodShape, TypicalPods
from kubesched.plugins.gpu.fit import REASON_GPU_MODEL, REASON_INSUFFICIENT_GPU, REASON_NO_GPU
from kubesched.plugins.gpushare import (
    ANNOTATION_GPU_GROUPS,
    ANNOTATION_GPU_IDS,
    ANNOTATION_GPU_MODELS,
    LABEL_GPU_PRODUCT,
    RESOURCE_GPU,
    RESOURCE_GPU_MILLI,
    GpuShare,
)
from kubesched.plugins.gpushare.plugin import (
    REASON_NOT_IN_ONE_GROUP,
    REASON_TOO_MANY_FOR_ONE_GROUP,
    _after_node_change,
    _after_pod_deleted,
)
from kubesched.plugins.gpushare.requests import GpuRequestError, pod_shape
from kubesched.plugins.gpushare.topology import GpuTopology, TopologyError, pack, parse_gpu_groups
from kubesched.sim import alibaba
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NAME = "GpuShare"


def gpu_node(name: str, gpus: int = 8, model: str = "A100", *, groups: str | None = None, cpu: str = "64",
             memory: str = "512Gi") -> dict[str, Any]:
    w = make_node(name).capacity(cpu=cpu, memory=memory).res({RESOURCE_GPU: gpus, RESOURCE_GPU_MILLI: gpus * 1000})
    if model:
        w.label(LABEL_GPU_PRODUCT, model)
    if groups is not None:
        w.annotation(ANNOTATION_GPU_GROUPS, groups)
    return w.obj()


def gpu_pod(name: str, *, gpus: int = 0, milli: int = 0, cpu: str = "1", models: str | None = None,
            ids: str | None = None, node: str | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"cpu": cpu, "memory": "1Gi"}
    if gpus:
        req[RESOURCE_GPU] = gpus
    if milli:
        req[RESOURCE_GPU_MILLI] = milli
    w = make_pod(name).res(req)
    if models is not None:
        w.annotation(ANNOTATION_GPU_MODELS, models)
    if ids is not None:
        w.annotation(ANNOTATION_GPU_IDS, ids)
    if node is not None:
        w.node(node)
    return w.obj()


def framework(nodes: list[dict[str, Any]], pods: list[dict[str, Any]] = (), args: dict[str, Any] | None = None,
              objects: list[dict[str, Any]] = ()) -> TestFramework:  # type: ignore[assignment]
    return new_framework([GpuShare], nodes=nodes, pods=list(pods), args={NAME: args or {}}, objects=list(objects))


def plugin(fw: TestFramework) -> GpuShare:
    p: GpuShare = fw.plugin(NAME)
    return p


def gpu_left(fw: TestFramework, node: str) -> list[int]:
    fw.refresh()
    gs = plugin(fw).gpus
    gs.sync(fw.scheduler.snapshot)
    i = gs.cluster.index[node]
    return gs.cluster.gpu_left[i, : int(gs.cluster.gpu_count[i])].tolist()


def bound(fw: TestFramework, name: str) -> tuple[str | None, str | None]:
    pod = fw.cluster.pods[f"default/{name}"]
    ann = (pod["metadata"].get("annotations") or {}).get(ANNOTATION_GPU_IDS)
    return pod["spec"].get("nodeName"), ann


def test_registered_in_tree() -> None:
    from kubesched.plugins.registry import default_registry

    spec = default_registry(entry_points=False)[NAME]
    assert spec.factory is GpuShare and spec.origin == "in-tree"


# ---- requests ----------------------------------------------------------------------------------


def test_resource_names_match_the_trace_importer() -> None:
    assert (RESOURCE_GPU, RESOURCE_GPU_MILLI, LABEL_GPU_PRODUCT, ANNOTATION_GPU_MODELS) == (
        alibaba.RESOURCE_GPU, alibaba.RESOURCE_GPU_MILLI, alibaba.LABEL_GPU_PRODUCT, alibaba.ANNOTATION_GPU_MODELS)


@pytest.mark.parametrize(("pod", "shape"), [
    (gpu_pod("cpu", cpu="2"), PodShape(cpu=2000, memory=1 << 30)),
    (gpu_pod("whole", gpus=4, cpu="8"), PodShape(cpu=8000, memory=1 << 30, gpu_milli=1000, gpu_count=4)),
    (gpu_pod("share", milli=250), PodShape(cpu=1000, memory=1 << 30, gpu_milli=250, gpu_count=1)),
    (gpu_pod("models", milli=500, models="T4|P100"),
     PodShape(cpu=1000, memory=1 << 30, gpu_milli=500, gpu_count=1, models=("T4", "P100"))),
    (gpu_pod("commas", gpus=1, models="T4, V100"),
     PodShape(cpu=1000, memory=1 << 30, gpu_milli=1000, gpu_count=1, models=("T4", "V100"))),
])
def test_pod_shape(pod: dict[str, Any], shape: PodShape) -> None:
    assert pod_shape(PodInfo(pod)) == shape


def test_model_constraint_from_node_selector_and_affinity() -> None:
    def term(*values: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": LABEL_GPU_PRODUCT, "operator": "In", "values": list(values)}]}

    def affinity(*terms: dict[str, Any]) -> dict[str, Any]:
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}

    sel = make_pod("p").res({RESOURCE_GPU: 1}).node_selector({LABEL_GPU_PRODUCT: "H100"}).obj()
    assert pod_shape(PodInfo(sel)).models == ("H100",)
    aff = make_pod("p").res({RESOURCE_GPU: 1}).affinity(affinity(term("A100", "H100"), term("L4"))).obj()
    assert pod_shape(PodInfo(aff)).models == ("A100", "H100", "L4")
    # one term without a product restriction: the affinity does not restrict the model
    other = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    loose = make_pod("p").res({RESOURCE_GPU: 1}).affinity(affinity(term("A100"), other)).obj()
    assert pod_shape(PodInfo(loose)).models == ()
    # annotation and affinity: the annotation's models the affinity allows, in the annotation's order
    both = make_pod("p").res({RESOURCE_GPU: 1}).annotation(ANNOTATION_GPU_MODELS, "L4|H100|A100") \
        .affinity(affinity(term("A100", "H100"))).obj()
    assert pod_shape(PodInfo(both)).models == ("H100", "A100")
    clash = make_pod("p").res({RESOURCE_GPU: 1}).annotation(ANNOTATION_GPU_MODELS, "L4") \
        .affinity(affinity(term("A100"))).obj()
    with pytest.raises(GpuRequestError, match="no GPU model satisfies"):
        pod_shape(PodInfo(clash))


@pytest.mark.parametrize(("requests", "message"), [
    ({RESOURCE_GPU: 1, RESOURCE_GPU_MILLI: 500}, "either nvidia.com/gpu or kubesched.io/gpu-milli, not both"),
    ({RESOURCE_GPU_MILLI: 1000}, "kubesched.io/gpu-milli must be 1..999"),
    ({RESOURCE_GPU_MILLI: 2500}, "kubesched.io/gpu-milli must be 1..999"),
])
def test_invalid_gpu_requests_are_unresolvable_at_pre_filter(requests: dict[str, Any], message: str) -> None:
    fw = framework([gpu_node("n1")])
    status = fw.run_pre_filter(make_pod("bad").res(requests).obj()).status
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert message in status.message() and status.plugin == NAME


def test_cpu_only_pods_skip_filter_but_are_accounted_at_reserve() -> None:
    fw = framework([gpu_node("n1", cpu="8")])
    pod = gpu_pod("cpu", cpu="3")
    assert fw.run_pre_filter(pod).status.is_success()
    assert NAME in fw.state.skip_filter_plugins
    assert fw.run_reserve(pod, "n1").is_success()
    gs = plugin(fw).gpus
    assert int(gs.cluster.cpu_left[gs.cluster.index["n1"]]) == 5000
    assert plugin(fw).reserved_gpus(fw.pod_info(pod)) is None
    assert plugin(fw).pre_bind(fw.state, fw.pod_info(pod), "n1").code == Code.SKIP  # type: ignore[union-attr]


# ---- Filter ------------------------------------------------------------------------------------


def test_filter_reasons() -> None:
    nodes = [gpu_node("t4", 2, "T4"), gpu_node("cpu-only", 0, ""), gpu_node("a100", 8, "A100")]
    fw = framework(nodes, [gpu_pod("big", gpus=2, node="t4")])
    assert fw.run_filter(gpu_pod("p", gpus=1), "cpu-only").reasons == [REASON_NO_GPU]
    assert fw.run_filter(gpu_pod("p", gpus=1), "cpu-only").code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    status = fw.run_filter(gpu_pod("p", milli=100, models="A100"), "t4")
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_GPU_MODEL])
    status = fw.run_filter(gpu_pod("p", milli=100), "t4")
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, [REASON_INSUFFICIENT_GPU])
    status = fw.run_filter(gpu_pod("p", gpus=3), "t4")  # more GPUs than the node has: preemption cannot help
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_INSUFFICIENT_GPU])
    assert fw.run_filter(gpu_pod("p", gpus=8, models="T4|A100"), "a100").is_success()


def test_whole_gpus_need_fully_free_gpus_and_shares_one_gpu_with_room() -> None:
    fw = framework([gpu_node("n1", 2)], [gpu_pod("s", milli=600, ids="0", node="n1")])
    assert gpu_left(fw, "n1") == [400, 1000]
    assert fw.run_filter(gpu_pod("w2", gpus=2), "n1").reasons == [REASON_INSUFFICIENT_GPU]
    assert fw.run_filter(gpu_pod("w1", gpus=1), "n1").is_success()
    assert fw.run_filter(gpu_pod("s400", milli=400), "n1").is_success()
    fw2 = framework([gpu_node("n1", 2)], [gpu_pod("s", milli=600, ids="0", node="n1"),
                                          gpu_pod("t", milli=700, ids="1", node="n1")])
    assert gpu_left(fw2, "n1") == [400, 300]
    assert fw2.run_filter(gpu_pod("s500", milli=500), "n1").reasons == [REASON_INSUFFICIENT_GPU]
    assert fw2.run_filter(gpu_pod("s400", milli=400), "n1").is_success()


def test_filter_fails_the_cycle_message_like_upstream() -> None:
    fw = framework([gpu_node("a", 1), gpu_node("b", 1), gpu_node("c", 0, "")],
                   [gpu_pod("x", gpus=1, node="a", ids="0"), gpu_pod("y", gpus=1, node="b", ids="0")])
    fw.add_pod(gpu_pod("z", gpus=1))
    fw.schedule()
    first = next(e for e in fw.cluster.events if e.reason == "FailedScheduling")
    assert first.note == "0/3 nodes are available: 1 Node has no GPU, 2 Insufficient GPU."


# ---- GPU choice: packing shares, topology ------------------------------------------------------


def test_fractional_pods_are_packed_on_one_card() -> None:
    fw = framework([gpu_node("n1", 2)])
    for i in range(4):
        fw.add_pod(gpu_pod(f"s{i}", milli=300))
    fw.schedule()
    # best fit: the GPU with the least milli left that still fits, lowest index on ties
    assert [bound(fw, f"s{i}")[1] for i in range(4)] == ["0", "0", "0", "1"]
    assert gpu_left(fw, "n1") == [100, 700]


def test_gpu_ids_annotation_is_recorded_before_binding() -> None:
    fw = framework([gpu_node("n1", 4)], [gpu_pod("old", gpus=1, ids="0", node="n1")])
    fw.add_pod(gpu_pod("two", gpus=2))
    fw.schedule()
    assert bound(fw, "two") == ("n1", "1,2")
    # once the pod carries its GPUs, the plugin no longer needs to remember them
    assert gpu_left(fw, "n1") == [0, 0, 0, 1000]
    assert plugin(fw).reserved_gpus(fw.pod_info(fw.cluster.pods["default/two"])) is None


def test_existing_pods_are_accounted_on_their_annotated_gpus() -> None:
    fw = framework([gpu_node("n1", 4)], [gpu_pod("a", gpus=2, ids="1,3", node="n1"),
                                         gpu_pod("b", milli=250, ids="2", node="n1")])
    assert gpu_left(fw, "n1") == [1000, 0, 750, 0]
    # a pod without an annotation (bound by someone else) is counted best-fit until annotated
    fw.cluster.create_pod(gpu_pod("c", milli=700, node="n1"))
    assert gpu_left(fw, "n1") == [1000, 0, 50, 0]
    c = fw.cluster.pods["default/c"]
    fw.cluster.patch_pod_metadata(c, annotations={ANNOTATION_GPU_IDS: "0"})
    assert gpu_left(fw, "n1") == [300, 0, 750, 0]
    fw.cluster.delete_pod(fw.cluster.pods["default/a"])
    assert gpu_left(fw, "n1") == [300, 1000, 750, 1000]


def test_eight_gpu_job_goes_where_it_fits_inside_one_nvlink_group() -> None:
    # same resources; the first node in node order has two NVLink groups of 4, the second one of 8
    nodes = [gpu_node("split", groups="0,1,2,3;4,5,6,7"), gpu_node("nvswitch", groups="0-7")]
    fw = framework(nodes)
    res = fw.run_score(gpu_pod("job", gpus=8))
    # BestFit alone cannot tell them apart: s = 63000/256000 + 0 -> 75 on both
    assert res.raw[NAME].tolist() == [75, 75]
    assert dict(zip(res.nodes, res.normalized[NAME].tolist(), strict=True)) == {"split": 0, "nvswitch": 1}
    fw.add_pod(gpu_pod("job", gpus=8))
    fw.schedule()
    assert bound(fw, "job") == ("nvswitch", "0,1,2,3,4,5,6,7")


def test_four_gpu_job_is_placed_inside_one_group() -> None:
    fw = framework([gpu_node("n1", groups="0,1,2,3;4,5,6,7")], [gpu_pod("a", gpus=1, ids="0", node="n1")])
    fw.add_pod(gpu_pod("job", gpus=4))
    fw.schedule()
    assert bound(fw, "job") == ("n1", "4,5,6,7")  # not the lowest free indexes 1,2,3,4
    fw2 = framework([gpu_node("n1", groups="0,1,2,3;4,5,6,7")], [gpu_pod("a", gpus=1, ids="0", node="n1")],
                    args={"topologyPolicy": "none"})
    fw2.add_pod(gpu_pod("job", gpus=4))
    fw2.schedule()
    assert bound(fw2, "job") == ("n1", "1,2,3,4")


def test_require_single_group_rejects_nodes_that_would_split_the_job() -> None:
    split = gpu_node("n1", groups="0-3;4-7")
    used = [gpu_pod("a", gpus=1, ids="0", node="n1"), gpu_pod("b", gpus=1, ids="4", node="n1")]
    strict = framework([split], used, args={"topologyPolicy": "require-single-group"})
    status = strict.run_filter(gpu_pod("job", gpus=4), "n1")
    assert (status.code, status.reasons, status.plugin) == (Code.UNSCHEDULABLE, [REASON_NOT_IN_ONE_GROUP], NAME)
    assert strict.run_filter(gpu_pod("three", gpus=3), "n1").is_success()
    status = strict.run_filter(gpu_pod("six", gpus=6), "n1")
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [REASON_TOO_MANY_FOR_ONE_GROUP])
    strict.add_pod(gpu_pod("job", gpus=4))
    strict.schedule()
    assert bound(strict, "job") == (None, None)
    # prefer-packed (the default) places it across the two groups
    packed = framework([gpu_node("n1", groups="0-3;4-7")], used)
    assert packed.run_filter(gpu_pod("job", gpus=4), "n1").is_success()
    packed.add_pod(gpu_pod("job", gpus=4))
    packed.schedule()
    assert bound(packed, "job") == ("n1", "1,2,3,5")


def nrt(node: str, *zones: tuple[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": node},
        "zones": [{"name": name, "type": "Node", "resources": [
            {"name": "cpu", "capacity": "32", "allocatable": "32", "available": "32"},
            {"name": RESOURCE_GPU, "capacity": str(n), "allocatable": str(n), "available": str(n)},
        ]} for name, n in zones],
    }


def test_numa_zones_from_node_resource_topology() -> None:
    topo = [nrt("n1", ("node-1", 4), ("node-0", 4))]  # zones are taken in name order
    fw = framework([gpu_node("n1")], [gpu_pod("a", gpus=2, ids="0,5", node="n1")], objects=topo)
    fw.add_pod(gpu_pod("job", gpus=3))
    fw.schedule()
    assert bound(fw, "job") == ("n1", "1,2,3")
    assert plugin(fw).gpus.topologies[0] == GpuTopology(((0, 1, 2, 3), (4, 5, 6, 7)), ((0, 1, 2, 3), (4, 5, 6, 7)))
    strict = framework([gpu_node("n1")], [gpu_pod("a", gpus=2, ids="0,5", node="n1")], objects=topo,
                       args={"topologyPolicy": "require-single-group"})
    assert strict.run_filter(gpu_pod("job", gpus=4), "n1").reasons == [REASON_NOT_IN_ONE_GROUP]


def test_one_nvlink_group_over_two_numa_zones_beats_two_nvlink_groups() -> None:
    # an 8-GPU job: one NVSwitch domain spanning two NUMA zones is one group, better than 4 + 4
    topo = [nrt("nvswitch", ("node-0", 4), ("node-1", 4))]
    fw = framework([gpu_node("split", groups="0-3;4-7"), gpu_node("nvswitch", groups="0-7")], objects=topo)
    res = fw.run_score(gpu_pod("job", gpus=8))
    assert dict(zip(res.nodes, res.normalized[NAME].tolist(), strict=True)) == {"split": 0, "nvswitch": 1}


def test_numa_breaks_ties_between_nvlink_placements() -> None:
    # one NVLink domain of 8 GPUs over two NUMA zones: a 2-GPU job stays in one zone
    topo = [nrt("n1", ("node-0", 4), ("node-1", 4))]
    fw = framework([gpu_node("n1", groups="0-7")], [gpu_pod("a", gpus=3, ids="0,1,2", node="n1")], objects=topo)
    fw.add_pod(gpu_pod("job", gpus=2))
    fw.schedule()
    assert bound(fw, "job") == ("n1", "4,5")


@pytest.mark.parametrize(("text", "groups"), [
    ("0,1,2,3;4,5,6,7", ((0, 1, 2, 3), (4, 5, 6, 7))),
    ("0-3; 4-7", ((0, 1, 2, 3), (4, 5, 6, 7))),
    ("0,2;1,3;", ((0, 2), (1, 3))),
])
def test_parse_gpu_groups(text: str, groups: tuple[tuple[int, ...], ...]) -> None:
    assert parse_gpu_groups(text, sum(len(g) for g in groups)) == groups


@pytest.mark.parametrize("text", ["0-3", "0-3;3-7", "0-3;4-8", "a;b", "3-1;0,2,4-7"])
def test_parse_gpu_groups_rejects_what_is_not_a_partition(text: str) -> None:
    with pytest.raises(TopologyError):
        parse_gpu_groups(text, 8)


def test_a_malformed_groups_annotation_leaves_the_node_flat(caplog: pytest.LogCaptureFixture) -> None:
    fw = framework([gpu_node("n1", groups="0-3;3-7")], [gpu_pod("a", gpus=1, ids="0", node="n1")])
    fw.add_pod(gpu_pod("job", gpus=4))
    fw.schedule()
    assert bound(fw, "job") == ("n1", "1,2,3,4")
    assert "GPU topology ignored" in caplog.text


def test_pack_minimises_groups_then_zones_then_indexes() -> None:
    topo = GpuTopology(((0, 1), (2, 3), (4, 5, 6, 7)), ((0, 1, 2, 3), (4, 5, 6, 7)))
    assert pack(topo, [0, 1, 2, 3, 4, 5, 6, 7], 2) == ((1, 1), (0, 1))
    assert pack(topo, [0, 2, 3, 4, 5, 6], 3) == ((1, 1), (4, 5, 6))
    assert pack(topo, [0, 2, 4, 5], 3) == ((2, 2), (0, 4, 5))  # two groups either way; lowest indexes
    assert pack(topo, [1, 2, 3, 6], 3) == ((2, 1), (1, 2, 3))  # two groups, one zone beats (2, 2)
    assert pack(topo, [1, 2], 3) is None


# ---- Score -------------------------------------------------------------------------------------


def test_best_fit_scores_and_normalisation() -> None:
    # s = (cpuLeft - cpu)/128000/2 + (gpuLeft - gpu)/8000/2 on 64-core nodes, a 1-CPU 2-GPU pod
    nodes = [gpu_node("empty", 8), gpu_node("half", 8), gpu_node("four", 4)]
    fw = framework(nodes, [gpu_pod("h", gpus=4, ids="0,1,2,3", node="half", cpu="32")])
    res = fw.run_score(gpu_pod("p", gpus=2))
    raw = dict(zip(res.nodes, res.raw[NAME].tolist(), strict=True))
    # empty: s = 63000/256000 + 6000/16000 = 0.6211 -> 37; half: 31000/256000 + 2000/16000 -> 75
    # four: 63000/256000 + 2000/16000 = 0.3711 -> 62
    assert raw == {"empty": 37, "half": 75, "four": 62}
    norm = dict(zip(res.nodes, res.normalized[NAME].tolist(), strict=True))
    assert norm == {"empty": 0, "half": 100, "four": (62 - 37) * 100 // (75 - 37)}


def test_batch_score_equals_per_node_score() -> None:
    nodes = [gpu_node("a", 8), gpu_node("b", 4, "T4"), gpu_node("c", 2, "T4")]
    placed = [gpu_pod("x", milli=500, ids="1", node="a"), gpu_pod("y", gpus=2, ids="0,3", node="b")]
    for policy in ("DotProd", "GpuClustering", "GpuPacking", "BestFit"):
        fw = framework(nodes, placed, args={"scoringPolicy": policy})
        pi = fw.pod_info(gpu_pod("p", milli=300))
        batch = fw.run_score(pi)
        gs = plugin(fw)
        per_node = [gs.score(fw.state, pi, fw.node_info(n))[0] for n in batch.nodes]
        assert batch.raw[NAME].tolist() == per_node, policy


def test_random_policy_picks_the_same_node_per_node_and_in_batch() -> None:
    from kubesched.gorand import GoRand

    nodes = [gpu_node(f"n{i}", 2) for i in range(7)]
    fw = framework(nodes, args={"scoringPolicy": "Random", "randomSeed": 7})
    res = fw.run_score(gpu_pod("p", gpus=1))
    expected = GoRand(7).Intn(7)
    assert res.raw[NAME].tolist() == [100 if i == expected else 0 for i in range(7)]
    fw2 = framework(nodes, args={"scoringPolicy": "Random", "randomSeed": 7})
    pi = fw2.pod_info(gpu_pod("p", gpus=1))
    fw2.run_pre_filter(pi)
    infos = fw2.nodes()
    fw2.framework.run_pre_score_plugins(fw2.state, pi, infos)
    per_node = [plugin(fw2).score(fw2.state, pi, ni)[0] for ni in infos]
    assert per_node == res.raw[NAME].tolist()


def test_fgd_needs_typical_pods_and_scores_with_them() -> None:
    with pytest.raises(ConfigError, match="typicalPods: required"):
        framework([gpu_node("n1")], args={"scoringPolicy": "FGD"})
    typical = [{"milliCPU": 1000, "gpuMilli": 500, "gpuCount": 1, "count": 3},
               {"milliCPU": 1000, "gpuMilli": 1000, "gpuCount": 1, "count": 1}]
    fw = framework([gpu_node("a", 2), gpu_node("b", 2)], [gpu_pod("x", milli=500, ids="0", node="a")],
                   args={"scoringPolicy": "FGD", "typicalPods": typical})
    # node a (GPU 0 half used): F before = 0.75*0 (500 fits on GPU 0 and 1) + 0.25*500 = 125;
    # a 500 share on GPU 0 leaves [0, 1000]: F = 0 -> delta 125 -> sigmoid 53; on GPU 1: [500, 500]
    # F = 0.25*1000 = 250 -> worse. Node b [1000, 1000]: F 0 -> [500, 1000]: 0.25*500 = 125 -> 46.
    res = fw.run_score(gpu_pod("p", milli=500))
    assert dict(zip(res.nodes, res.raw[NAME].tolist(), strict=True)) == {"a": 53, "b": 46}
    fw.add_pod(gpu_pod("p", milli=500))
    fw.schedule()
    assert bound(fw, "p") == ("a", "0")


def test_typical_pods_args_give_the_engine_s_typical_pods() -> None:
    shapes = [PodShape(cpu=1000, gpu_milli=500, gpu_count=1)] * 5 + [PodShape(cpu=0)] * 3 + [
        PodShape(cpu=2000, gpu_milli=1000, gpu_count=2, models=("A", "B"))]
    from collections import Counter

    counts = Counter(s.key for s in shapes)
    assert TypicalPods.from_counts(counts, 80).pods == TypicalPods.from_shapes(shapes, 80).pods
    args = [{"milliCPU": k[0], "gpuMilli": k[1], "gpuCount": k[2], "gpuModels": list(k[3]), "count": n}
            for k, n in counts.items()]
    fw = framework([gpu_node("n1")], args={"scoringPolicy": "FGD", "typicalPods": args, "typicalPodsCoverage": 80})
    assert plugin(fw).policy.typical.pods == TypicalPods.from_shapes(shapes, 80).pods  # type: ignore[attr-defined]


@pytest.mark.parametrize(("args", "error"), [
    ({"scoringPolicy": "MostGpu"}, 'scoringPolicy: unsupported value "MostGpu"'),
    ({"topologyPolicy": "packed"}, 'topologyPolicy: unsupported value "packed"'),
    ({"typicalPodsCoverage": 0}, "typicalPodsCoverage: not in valid range [1, 100], got 0"),
    ({"scoringPolicy": "FGD", "typicalPods": [{"milliCPU": 1, "count": 0}]}, "typicalPods[0].count"),
    ({"scoringPolicy": "FGD", "typicalPods": [{"milliCPU": 1, "count": 1, "gpuMilli": 500, "gpuCount": 2}]},
     "typicalPods[0].gpuCount"),
])
def test_args_are_validated(args: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError) as err:
        framework([gpu_node("n1")], args=args)
    assert any(error in str(e) for e in err.value.errors), err.value.errors


# ---- Reserve / Unreserve -----------------------------------------------------------------------


def test_reserve_takes_gpus_and_unreserve_gives_them_back() -> None:
    fw = framework([gpu_node("n1", 4)])
    a, b = gpu_pod("a", gpus=2), gpu_pod("b", milli=400)
    fw.run_pre_filter(a)
    assert fw.run_reserve(a, "n1").is_success()
    assert plugin(fw).reserved_gpus(fw.pod_info(a)) == (0, 1)
    fw.run_pre_filter(b)
    assert fw.run_reserve(b, "n1").is_success()
    assert gpu_left(fw, "n1") == [0, 0, 600, 1000]
    fw.run_unreserve(a, "n1")
    assert gpu_left(fw, "n1") == [1000, 1000, 600, 1000]
    fw.run_unreserve(a, "n1")  # idempotent
    assert gpu_left(fw, "n1") == [1000, 1000, 600, 1000]
    assert plugin(fw).reserved_gpus(fw.pod_info(a)) is None
    c = gpu_pod("c", gpus=4)
    fw.run_pre_filter(c)
    status = fw.run_reserve(c, "n1")
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, [REASON_INSUFFICIENT_GPU])


def test_failed_binding_unreserves_the_gpus() -> None:
    fw = framework([gpu_node("n1", 2)])

    def refuse(pod: Any, node_name: str) -> None:
        raise RuntimeError("bind refused")

    fw.cluster.bind = refuse  # type: ignore[method-assign]
    fw.add_pod(gpu_pod("a", gpus=2))
    fw.schedule(until=fw.clock.now() + 0.5)
    assert gpu_left(fw, "n1") == [1000, 1000]


# ---- state follows the snapshot ----------------------------------------------------------------


def test_node_table_generation_follows_node_info() -> None:
    infos = [NodeInfo(gpu_node("a")), NodeInfo(gpu_node("b"))]
    snap = Snapshot(infos)
    assert snap.table.generation.tolist() == [infos[0].generation, infos[1].generation]
    updated = infos[1].clone()
    updated.add_pod(PodInfo(gpu_pod("p", node="b")))
    snap.replace_node(updated)
    assert snap.table.generation[1] == updated.generation != infos[1].generation


def test_nodes_added_and_removed_rebuild_the_state() -> None:
    fw = framework([gpu_node("a", 2)], [gpu_pod("x", gpus=1, ids="1", node="a")])
    assert gpu_left(fw, "a") == [1000, 0]
    fw.add_node(gpu_node("b", 4))
    assert gpu_left(fw, "a") == [1000, 0] and gpu_left(fw, "b") == [1000] * 4
    fw.cluster.delete_node("b")
    assert gpu_left(fw, "a") == [1000, 0]
    assert "b" not in plugin(fw).gpus.cluster.index


_shapes = st.one_of(
    st.builds(lambda k: {"gpus": k}, st.integers(1, 4)),
    st.builds(lambda m: {"milli": m}, st.sampled_from([100, 250, 500, 810, 999])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), _shapes), max_size=12), _shapes,
       st.sampled_from([None, "T4", "H100|A100"]),
       st.sampled_from(["prefer-packed", "require-single-group"]),
       st.sampled_from(["DotProd", "GpuClustering", "GpuPacking", "BestFit"]))
def test_batch_forms_equal_per_node_forms(placed: list[tuple[int, dict[str, int]]], probe: dict[str, int],
                                          models: str | None, topology: str, policy: str) -> None:
    nodes = [gpu_node("n0", 8, groups="0-3;4-7"), gpu_node("n1", 4, "T4"), gpu_node("n2", 2, "A100"),
             gpu_node("n3", 8, groups="0,1;2,3;4-7"), gpu_node("n4", 0, "")]
    fw = framework(nodes, args={"topologyPolicy": topology, "scoringPolicy": policy})
    for k, (node, shape) in enumerate(placed):
        pod = gpu_pod(f"x{k}", **shape)
        fw.run_pre_filter(pod)
        if fw.run_filter(pod, f"n{node}", pre_filter=False).is_success():
            assert fw.run_reserve(pod, f"n{node}").is_success()
    pi = fw.pod_info(gpu_pod("probe", models=models, **probe))  # type: ignore[arg-type]
    fw.run_pre_filter(pi)
    snap = fw.scheduler.snapshot
    gs = plugin(fw)
    idx = np.arange(len(nodes), dtype=np.intp)
    mask = gs.filter_batch(fw.state, pi, snap, idx)
    per_node = [gs.filter(fw.state, pi, ni) for ni in fw.nodes()]
    assert mask.tolist() == [s is None for s in per_node]
    codes, statuses = gs.filter_batch_statuses(fw.state, pi, snap, idx)
    batch = [None if c < 0 else statuses[c] for c in codes.tolist()]
    assert [None if s is None else (s.code, s.reasons) for s in batch] == [
        None if s is None else (s.code, s.reasons) for s in per_node]
    feasible = [ni for ni, ok in zip(fw.nodes(), mask.tolist(), strict=True) if ok]
    if len(feasible) < 2:
        return
    rows = np.array([snap.index[ni.name] for ni in feasible], dtype=np.intp)
    fw.framework.run_pre_score_plugins(fw.state, pi, feasible)
    batch = gs.score_batch(fw.state, pi, snap, rows)
    batch_norm = gs.normalize_score_batch(fw.state, pi, batch).tolist()
    from kubesched.framework.types import NodeScore

    fw.framework.run_pre_score_plugins(fw.state, pi, feasible)
    scores = [NodeScore(ni.name, gs.score(fw.state, pi, ni)[0]) for ni in feasible]
    assert [s.score for s in scores] == batch.tolist()
    gs.normalize_score(fw.state, pi, scores)
    assert [s.score for s in scores] == batch_norm


# ---- queueing hints ----------------------------------------------------------------------------


def test_hints() -> None:
    gpu_holder = gpu_pod("g", gpus=1, node="n1")
    cpu_holder = gpu_pod("c", node="n1")
    pending = gpu_pod("p", gpus=1)
    assert _after_pod_deleted(pending, gpu_holder, None) == QueueingHint.QUEUE
    assert _after_pod_deleted(pending, cpu_holder, None) == QueueingHint.QUEUE_SKIP
    n1 = gpu_node("n1", 4)
    assert _after_node_change(pending, None, n1) == QueueingHint.QUEUE
    assert _after_node_change(pending, None, gpu_node("cpu", 0, "")) == QueueingHint.QUEUE_SKIP
    assert _after_node_change(pending, n1, gpu_node("n1", 4)) == QueueingHint.QUEUE_SKIP
    assert _after_node_change(pending, n1, gpu_node("n1", 8)) == QueueingHint.QUEUE
    assert _after_node_change(pending, n1, gpu_node("n1", 4, groups="0,1;2,3")) == QueueingHint.QUEUE
    assert _after_node_change(pending, n1, gpu_node("n1", 4, "H100")) == QueueingHint.QUEUE


def test_a_pod_waiting_for_gpus_is_scheduled_when_gpus_are_freed() -> None:
    fw = framework([gpu_node("n1", 2)], [gpu_pod("old", gpus=2, ids="0,1", node="n1")])
    fw.add_pod(gpu_pod("new", gpus=1))
    fw.schedule()
    assert bound(fw, "new") == (None, None)
    fw.cluster.delete_pod(fw.cluster.pods["default/old"])
    fw.schedule()
    assert bound(fw, "new") == ("n1", "0")
