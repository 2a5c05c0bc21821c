"""Alibaba GPU trace v2023 import: records, manifests, arrival sequence.

Arrival expectations on the real trace come from a Go program (go1.26.8, outside the repo) that follows
the FGD simulator (hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/simulator.go SortClusterPods,
tuneUpPods, syncClusterResourceList) on the global math/rand stream: seed, rand.Int(), sort by name,
Shuffle, resample to 1.3x capacity, 10 Int63 draws, sort nodes, Perm. The seed-42 count and 129.99 %
are also quoted in ../shared/reference/fgd-method.md §2.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubesched.sim import alibaba
from kubesched.sim.alibaba import NodeRecord, PodRecord, Trace

# The trace lives next to the repository (../shared/data); KUBESCHED_ALIBABA_TRACE overrides the folder.
DATA = Path(os.environ.get("KUBESCHED_ALIBABA_TRACE")
            or Path(__file__).resolve().parents[3] / "shared" / "data" / "alibaba-gpu-v2023")
NODES_CSV = DATA / "openb_node_list_gpu_node.csv"
PODS_CSV = DATA / "openb_pod_list_default.csv"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_read_nodes_parses_columns_and_missing_model(tmp_path: Path) -> None:
    csv_path = _write(tmp_path / "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\n"
                      "n-1,64000,262144,2,P100\nn-0,32000,131072,0,\nn-2,96000,786432,8,nan\n")
    assert alibaba.read_nodes(csv_path) == [
        NodeRecord("n-1", 64000, 262144, 2, "P100"),
        NodeRecord("n-0", 32000, 131072, 0, ""),
        NodeRecord("n-2", 96000, 786432, 8, ""),
    ]


def test_read_pods_parses_spec_times_and_derived_gpu_fields(tmp_path: Path) -> None:
    csv_path = _write(
        tmp_path / "pods.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n"
        "p-0,12000,16384,1,460,V100M16|V100M32,LS,Running,0,12537496,0\n"
        "p-1,4000,8192,0,0,,BE,Pending,427061,,\n"
        "p-2,8000,8192,2,1200,,LS,Running,1,2,1\n"
        "p-3,8000,8192,0,500,,LS,Running,1,2,1\n",
    )
    pods = alibaba.read_pods(csv_path)
    assert pods[0] == PodRecord("p-0", 12000, 16384, 1, 460, ("V100M16", "V100M32"), "LS", "Running",
                                0, 12537496, 0)
    assert pods[1].deletion_time is None and pods[1].gpu_spec == ()
    assert [(p.gpu_per_device, p.gpu_count, p.total_gpu_milli) for p in pods] == [
        (460, 1, 460), (0, 0, 0), (1000, 2, 2000), (0, 0, 0)]


def test_read_pods_accepts_the_five_column_multigpu_lists(tmp_path: Path) -> None:
    csv_path = _write(tmp_path / "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,8,1000\n")
    (pod,) = alibaba.read_pods(csv_path)
    assert (pod.gpu_count, pod.gpu_per_device, pod.gpu_spec, pod.qos) == (8, 1000, (), "")


def test_node_manifest() -> None:
    node = NodeRecord("openb-node-0001", 64500, 262144, 2, "P100")
    resources = {"cpu": "64500m", "memory": "262144Mi", "pods": "1001",
                 "nvidia.com/gpu": "2", "kubesched.io/gpu-milli": "2000"}
    assert alibaba.node_manifest(node, name="0007-openb-node-0001") == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "0007-openb-node-0001",
                     "labels": {"kubernetes.io/hostname": "0007-openb-node-0001",
                                "nvidia.com/gpu.product": "P100"}},
        "status": {"capacity": resources, "allocatable": resources},
    }
    cpu_only = alibaba.node_manifest(NodeRecord("c", 32000, 1024, 0, ""))
    assert cpu_only["status"]["allocatable"] == {"cpu": "32", "memory": "1024Mi", "pods": "1001"}
    assert "nvidia.com/gpu.product" not in cpu_only["metadata"]["labels"]


def _requests(manifest: dict[str, object]) -> tuple[object, object]:
    (container,) = manifest["spec"]["containers"]  # type: ignore[index]
    res = container["resources"]
    return res["requests"], res.get("limits")


def test_pod_manifest_cpu_only_shared_and_whole_gpu() -> None:
    cpu_only = alibaba.pod_manifest(PodRecord("a", 4000, 8192, 0, 0))
    assert _requests(cpu_only) == ({"cpu": "4", "memory": "8192Mi"}, None)
    assert "annotations" not in cpu_only["metadata"]

    shared = alibaba.pod_manifest(PodRecord("b", 6000, 12288, 1, 460, ("T4",)))
    assert _requests(shared) == ({"cpu": "6", "memory": "12288Mi", "kubesched.io/gpu-milli": "460"},
                                 {"kubesched.io/gpu-milli": "460"})
    assert shared["metadata"]["annotations"] == {"kubesched.io/gpu-models": "T4"}

    whole = alibaba.pod_manifest(PodRecord("c", 88000, 327680, 8, 1000, ("V100M16", "V100M32")),
                                 scheduler_name="kubesched")
    assert _requests(whole) == ({"cpu": "88", "memory": "327680Mi", "nvidia.com/gpu": "8"},
                                {"nvidia.com/gpu": "8"})
    assert whole["metadata"]["annotations"] == {"kubesched.io/gpu-models": "V100M16|V100M32"}
    assert whole["spec"]["schedulerName"] == "kubesched"
    assert whole["metadata"]["namespace"] == "default"


def test_pod_manifest_rejects_a_share_over_several_gpus() -> None:
    with pytest.raises(ValueError, match="cannot be expressed"):
        alibaba.pod_manifest(PodRecord("d", 1000, 1024, 2, 500))


def _tiny_trace(pods: list[PodRecord], gpus: int) -> Trace:
    return Trace(nodes=(NodeRecord("n", 128000, 1 << 20, gpus, "G"),), pods=tuple(pods))


def test_tune_up_tests_the_per_gpu_share_against_the_target() -> None:
    # One 4-GPU pod on 8 GPUs, target 1.3 x 8000 = 10400: copies are added while total + 1000 <= 10400,
    # so the total overshoots to 12000 (the simulator compares the per-GPU milli, not the pod's 4000).
    arr = alibaba.arrival(_tiny_trace([PodRecord("x", 1000, 1, 4, 1000)], gpus=8), seed=3)
    assert [p.name for p in arr.sequence] == ["x", "x-tuned-0", "x-tuned-1"]


def test_tune_down_removes_pods_until_the_target_holds() -> None:
    pods = [PodRecord(f"p{i}", 1000, 1, 1, 1000) for i in range(4)]
    arr = alibaba.arrival(_tiny_trace(pods, gpus=4), seed=1, tune=0.5)
    assert len(arr.sequence) == 2
    assert {p.name for p in arr.sequence} <= {p.name for p in pods}


@pytest.mark.parametrize("tune", [0.0, 1.0])
def test_no_tuning_when_disabled_or_exactly_on_target(tune: float) -> None:
    pods = [PodRecord(f"p{i}", 1000, 1, 1, 1000) for i in range(4)]
    arr = alibaba.arrival(_tiny_trace(pods, gpus=4), seed=1, tune=tune)
    assert sorted(p.name for p in arr.sequence) == ["p0", "p1", "p2", "p3"]


@pytest.fixture(scope="module")
def trace() -> Trace:
    if not PODS_CSV.is_file():
        pytest.skip(f"Alibaba trace not found in {DATA}")
    return alibaba.load_trace(NODES_CSV, PODS_CSV)


def test_load_trace_counts(trace: Trace) -> None:
    assert len(trace.nodes) == 1213 and len(trace.pods) == 8152
    assert trace.total_gpu_milli == 6212 * 1000
    assert [p.name for p in trace.pods] == sorted(p.name for p in trace.pods)


@pytest.mark.parametrize(
    ("seed", "count", "head", "first_copies", "last", "perm_head", "perm_tail", "next_int63"),
    [
        (42, 10866, ["openb-pod-0255", "openb-pod-1685", "openb-pod-6784"],
         ["openb-pod-3888-tuned-0", "openb-pod-5689-tuned-1", "openb-pod-2936-tuned-2"],
         "openb-pod-5877-tuned-2713", [601, 815, 450, 13, 731, 1143, 966, 834], [664, 377, 291, 968],
         7427497515176534052),
        (51, 10859, ["openb-pod-7151", "openb-pod-7598", "openb-pod-3598"],
         ["openb-pod-0882-tuned-0", "openb-pod-6873-tuned-1", "openb-pod-2759-tuned-2"],
         "openb-pod-1596-tuned-2706", [226, 1032, 294, 1084, 786, 92, 816, 355], [18, 127, 712, 641],
         1172703192432718353),
    ],
)
def test_arrival_matches_the_go_simulator(
    trace: Trace, seed: int, count: int, head: list[str], first_copies: list[str], last: str,
    perm_head: list[int], perm_tail: list[int], next_int63: int,
) -> None:
    arr = alibaba.arrival(trace, seed)
    names = [p.name for p in arr.sequence]
    assert len(names) == count
    assert names[:3] == head
    assert names[8152:8155] == first_copies
    assert names[-1] == last
    assert list(arr.node_rank[:8]) == perm_head and list(arr.node_rank[-4:]) == perm_tail
    assert arr.rng.Int63() == next_int63


def test_seed_42_ends_at_129_99_percent(trace: Trace) -> None:
    arr = alibaba.prepare(NODES_CSV, PODS_CSV, 42)
    total = sum(p.total_gpu_milli for p in arr.sequence)
    assert round(100 * total / trace.total_gpu_milli, 2) == 129.99


def test_manifests_name_nodes_by_rank(trace: Trace) -> None:
    arr = alibaba.arrival(trace, 42)
    nodes, pods = alibaba.manifests(arr)
    assert nodes[0]["metadata"]["name"] == f"0601-{trace.nodes[0].name}"
    assert len(pods) == 10866 and pods[0]["metadata"]["name"] == "openb-pod-0255"
    # sorting the prefixed names gives the tie-break order
    by_name = sorted(range(len(nodes)), key=lambda i: nodes[i]["metadata"]["name"])
    assert by_name == sorted(range(len(nodes)), key=lambda i: arr.node_rank[i])
