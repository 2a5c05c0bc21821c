"""Value types, feasibility and the columnar cluster state of the GPU engine.

Feasibility follows NodeResourcesFit (pkg/scheduler/framework/plugins/noderesources/fit.go) and the FGD
simulator's Open-Gpu-Share Filter (hkust-adsl/kubernetes-scheduler-simulator
pkg/simulator/plugin/open_gpu_share.go, pkg/utils/utils.go IsNodeAccessibleToPodByType); expectations
are worked out by hand from those rules (../shared/reference/fgd-method.md §3.1).
"""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.plugins.gpu import (
    ClusterGpuState,
    NodeGpuState,
    NodeSpec,
    PodShape,
    accessible,
    gpu_class,
    gpu_fit,
    resources_fit,
)
from kubesched.plugins.gpu.fit import (
    REASON_GPU_MODEL,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_GPU,
    REASON_INSUFFICIENT_MEMORY,
    REASON_NO_GPU,
    REASON_TOO_MANY_PODS,
)

SHARE = PodShape(cpu=4000, memory=1 << 30, gpu_milli=300, gpu_count=1)
WHOLE2 = PodShape(cpu=8000, memory=1 << 30, gpu_milli=1000, gpu_count=2)
CPU_ONLY = PodShape(cpu=2000, memory=1 << 30)


def test_pod_shape_views() -> None:
    assert PodShape(cpu=0).score_cpu == 100  # kube-scheduler's non-zero default request
    assert SHARE.score_cpu == 4000 and SHARE.total_gpu_milli == 300 and SHARE.is_shared
    assert WHOLE2.total_gpu_milli == 2000 and not WHOLE2.is_shared and WHOLE2.wants_gpu
    assert not CPU_ONLY.wants_gpu
    assert PodShape(cpu=1, gpu_milli=500, gpu_count=1, models=("A", "B")).key == (1, 500, 1, ("A", "B"))
    assert PodShape(cpu=1, gpu_milli=1, gpu_count=1, models=("A", "B")).spec == "A|B"


@pytest.mark.parametrize("kwargs", [
    {"cpu": -1}, {"cpu": 1, "gpu_milli": 1001, "gpu_count": 1}, {"cpu": 1, "gpu_milli": 500, "gpu_count": 2},
    {"cpu": 1, "gpu_count": -1},
])
def test_pod_shape_rejects_invalid_requests(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        PodShape(**kwargs)


def test_gpu_class() -> None:
    assert gpu_class(CPU_ONLY) is None
    assert gpu_class(SHARE) == "share-gpu"
    assert gpu_class(PodShape(cpu=1, gpu_milli=1000, gpu_count=1)) == "1-gpu"
    assert gpu_class(WHOLE2) == "2-gpu"


@pytest.mark.parametrize(("model", "models", "ok"), [
    ("T4", (), True), ("", (), True), ("", ("T4",), False), ("T4", ("V100", "T4"), True), ("P100", ("T4",), False),
])
def test_accessible(model: str, models: tuple[str, ...], ok: bool) -> None:
    assert accessible(model, models) is ok


def test_node_state_allocate_and_release_round_trip() -> None:
    empty = NodeSpec("n", cpu=32000, memory=8 << 30, gpu_count=4, model="T4").empty_state()
    assert empty.gpu_left == (1000,) * 4 and empty.gpu_milli_left == 4000
    a = empty.allocate(SHARE, (2,))
    b = a.allocate(WHOLE2, (0, 1))
    assert b.gpu_left == (0, 0, 700, 1000)
    assert (b.cpu_left, b.memory_left, b.pods) == (20000, 6 << 30, 2)
    assert b.classes() == {"2-gpu": 1, "share-gpu": 1}
    assert b.frag_key == ("T4", 20000, (1000, 700, 0, 0))
    assert b.release(WHOLE2, (0, 1)).release(SHARE, (2,)) == empty


@pytest.mark.parametrize(("pod", "gpus"), [(SHARE, ()), (SHARE, (0, 1)), (WHOLE2, (0, 0)), (CPU_ONLY, (1,))])
def test_node_state_rejects_wrong_gpu_lists(pod: PodShape, gpus: tuple[int, ...]) -> None:
    state = NodeGpuState("n", "T4", (1000, 1000), cpu_left=64000)
    with pytest.raises(ValueError):
        state.allocate(pod, gpus)


def test_node_state_rejects_over_allocation_and_unknown_release() -> None:
    state = NodeGpuState("n", "T4", (200, 1000), cpu_left=64000)
    with pytest.raises(ValueError):
        state.allocate(SHARE, (0,))
    with pytest.raises(ValueError):
        state.release(SHARE, (1,))


def test_resources_fit_reasons_in_upstream_order() -> None:
    node = NodeGpuState("n", "T4", (1000,), cpu_left=4000, memory_left=1 << 30, pods=3, max_pods=4)
    assert resources_fit(node, SHARE) is None
    assert resources_fit(node, PodShape(cpu=4001)) == REASON_INSUFFICIENT_CPU
    assert resources_fit(node, PodShape(cpu=1, memory=(1 << 30) + 1)) == REASON_INSUFFICIENT_MEMORY
    full = NodeGpuState("n", "T4", (1000,), cpu_left=4000, pods=4, max_pods=4)
    assert resources_fit(full, PodShape(cpu=99999)) == REASON_TOO_MANY_PODS


def test_gpu_fit() -> None:
    node = NodeGpuState("n", "T4", (1000, 300, 1000, 0), cpu_left=64000)
    assert gpu_fit(node, CPU_ONLY) is None
    assert gpu_fit(node, SHARE) is None  # GPU 1 has exactly 300 left
    assert gpu_fit(node, PodShape(cpu=1, gpu_milli=1000, gpu_count=2)) is None
    assert gpu_fit(node, PodShape(cpu=1, gpu_milli=1000, gpu_count=3)) == REASON_INSUFFICIENT_GPU
    partly = NodeGpuState("n", "T4", (999, 999), cpu_left=64000)
    assert gpu_fit(partly, PodShape(cpu=1, gpu_milli=1000, gpu_count=1)) == REASON_INSUFFICIENT_GPU
    assert gpu_fit(NodeGpuState("c", "", (), cpu_left=64000), SHARE) == REASON_NO_GPU
    restricted = PodShape(cpu=1, gpu_milli=100, gpu_count=1, models=("V100M16", "V100M32"))
    assert gpu_fit(node, restricted) == REASON_GPU_MODEL
    assert gpu_fit(NodeGpuState("v", "V100M32", (1000,), cpu_left=1), restricted) is None


def _cluster() -> ClusterGpuState:
    return ClusterGpuState([
        NodeSpec("a", cpu=64000, memory=256 << 30, gpu_count=2, model="P100"),
        NodeSpec("b", cpu=96000, memory=512 << 30, gpu_count=8, model="V100M32"),
        NodeSpec("c", cpu=32000, memory=64 << 30),
        NodeSpec("d", cpu=128000, memory=512 << 30, gpu_count=8, model="G3", max_pods=1),
    ])


def test_cluster_feasible_masks() -> None:
    cluster = _cluster()
    assert cluster.total_gpu_milli == 18000 and cluster.slots == 8
    assert cluster.feasible(CPU_ONLY).tolist() == [True, True, True, True]
    assert cluster.feasible(SHARE).tolist() == [True, True, False, True]
    assert cluster.feasible(PodShape(cpu=1, gpu_milli=1000, gpu_count=4)).tolist() == [False, True, False, True]
    assert cluster.feasible(PodShape(cpu=70000, gpu_milli=10, gpu_count=1)).tolist() == [False, True, False, True]
    assert cluster.feasible(PodShape(cpu=1, gpu_milli=10, gpu_count=1, models=("G3",))).tolist() == [
        False, False, False, True]
    cluster.allocate(3, CPU_ONLY, ())  # node d is now at its pod limit
    assert cluster.feasible(CPU_ONLY).tolist() == [True, True, True, False]


def test_cluster_allocate_release_and_state_ids() -> None:
    cluster = _cluster()
    before = {k: v.copy() for k, v in vars(cluster).items()
              if isinstance(v, np.ndarray) and not k.startswith("_")}  # the interning table only grows
    sid_a = int(cluster.node_sid[0])
    cluster.allocate(0, SHARE, (1,))
    cluster.allocate(0, PodShape(cpu=1000, gpu_milli=1000, gpu_count=1), (0,))
    assert cluster.gpu_left[0, :2].tolist() == [0, 700]
    assert (int(cluster.gpu_sum[0]), int(cluster.gpu_max[0]), int(cluster.gpu_free[0])) == (700, 700, 0)
    assert (int(cluster.cpu_left[0]), int(cluster.pods[0]), int(cluster.n_classes[0])) == (59000, 2, 2)
    assert cluster.used_gpu_milli == 1300
    assert cluster.node_state(0) == NodeGpuState(
        "a", "P100", (0, 700), 59000, (256 << 30) - (1 << 30), 2, 1001, (("1-gpu", 1), ("share-gpu", 1)))
    cluster.release(0, PodShape(cpu=1000, gpu_milli=1000, gpu_count=1), (0,))
    cluster.release(0, SHARE, (1,))
    for name, array in before.items():
        assert np.array_equal(getattr(cluster, name), array), name
    assert int(cluster.node_sid[0]) == sid_a  # the same state interns to the same id


def test_state_ids_merge_nodes_with_equal_fragmentation_state() -> None:
    cluster = ClusterGpuState([NodeSpec("x", 1000, 1, 2, "T4"), NodeSpec("y", 1000, 1, 2, "T4"),
                               NodeSpec("z", 1000, 1, 2, "P100")])
    assert cluster.node_sid[0] == cluster.node_sid[1] != cluster.node_sid[2]
    cluster.allocate(0, PodShape(cpu=0, gpu_milli=500, gpu_count=1), (0,))
    cluster.allocate(1, PodShape(cpu=0, gpu_milli=500, gpu_count=1), (1,))
    assert cluster.node_sid[0] == cluster.node_sid[1]  # GPU order does not matter
    model, cpu, gpu = cluster.state_arrays(cluster.node_sid[:1])
    assert (cluster.models[int(model[0])], int(cpu[0]), gpu[0].tolist()) == ("T4", 1000, [1000, 500])


@pytest.mark.parametrize(("pod", "gpus"), [(SHARE, (2,)), (SHARE, (0, 1)), (CPU_ONLY, (0,))])
def test_cluster_rejects_bad_gpu_lists(pod: PodShape, gpus: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        _cluster().allocate(0, pod, gpus)


def test_cluster_rejects_releasing_what_is_not_there() -> None:
    with pytest.raises(ValueError):
        _cluster().release(0, SHARE, (0,))


def test_cluster_rejects_duplicate_names() -> None:
    with pytest.raises(ValueError):
        ClusterGpuState([NodeSpec("a", 1, 1), NodeSpec("a", 1, 1)])
