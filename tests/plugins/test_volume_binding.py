"""VolumeBinding's PreFilter, Filter, PreScore and Score on upstream's table, and its Reserve,
PreBind and Unreserve on hand-traced cases.

Upstream: pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go (TestVolumeBinding,
ported as data in data/volume_binding.yaml; the table's state comparisons are replaced by the
statuses and scores they lead to), Test_PreBindPreFlight, scorer_test.go. The StorageCapacityScoring
gate of a row is the release: on in v1.37, off in v1.35 (pkg/features/kube_features.go).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_builders import make_node, node_info
from storage_builders import handle

from kubesched.config.plugin_args import UtilizationShapePoint, VolumeBindingArgs
from kubesched.config.releases import V1_35, V1_37
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.volume_binding import build_scorer

TABLE: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "data" / "volume_binding.yaml").read_text())

#: The objects every row of TestVolumeBinding starts with.
FIXED = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "immediate-sc"},
     "volumeBindingMode": "Immediate"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wait-sc"},
     "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wait-hdd-sc"},
     "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wait-sc-with-storage-capacity"},
     "provisioner": "driver-with-storage-capacity", "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "driver-with-storage-capacity"},
     "spec": {"storageCapacity": True}},
]


def _pvc(row: dict[str, Any]) -> dict[str, Any]:
    md: dict[str, Any] = {"name": row["name"], "namespace": "default", "uid": f"uid-{row['name']}"}
    spec: dict[str, Any] = {"storageClassName": row["class"]}
    if "request" in row:
        spec["resources"] = {"requests": {"storage": row["request"]}}
    if "boundPV" in row:  # withBoundPV
        spec["volumeName"] = row["boundPV"]
        md["annotations"] = {"pv.kubernetes.io/bind-completed": "true"}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}
    if "phase" in row:
        obj["status"] = {"phase": row["phase"]}
    return obj


def _pv(row: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": row["class"]}
    if "capacity" in row:
        spec["capacity"] = {"storage": row["capacity"]}
    if "affinity" in row:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": v} for k, v in row["affinity"].items()]}]}}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": row["name"]},
                           "spec": spec}
    if "phase" in row:
        obj["status"] = {"phase": row["phase"]}
    return obj


def _capacity(row: dict[str, Any]) -> dict[str, Any]:
    """binder_test.go ``makeCapacity``: the node topology selects the node's ``nodeKey`` label."""
    obj: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": row["name"], "namespace": "default"},
                           "storageClassName": row["class"],
                           "nodeTopology": {"matchLabels": {"nodeKey": row["node"]}}}
    if "capacity" in row:
        obj["capacity"] = row["capacity"]
    if "max" in row:
        obj["maximumVolumeSize"] = row["max"]
    return obj


def _status(want: dict[str, Any] | None) -> tuple[Code, tuple[str, ...]] | None:
    if want is None:
        return None
    return Code[_CODES[want["code"]]], tuple(want.get("reasons", ()))


_CODES = {"Skip": "SKIP", "UnschedulableAndUnresolvable": "UNSCHEDULABLE_AND_UNRESOLVABLE", "Error": "ERROR"}


def _got(status: Status | None) -> tuple[Code, tuple[str, ...]] | None:
    if status is None or status.is_success():
        return None
    return status.code, tuple(status.reasons)


@pytest.mark.parametrize("row", TABLE, ids=[r["name"] for r in TABLE])
def test_volume_binding_table(row: dict[str, Any]) -> None:
    scoring = row.get("scoring", False)
    release = V1_37 if scoring else V1_35
    objects = [*FIXED, *map(_pvc, row.get("pvcs", [])), *map(_pv, row.get("pvs", [])),
               *map(_capacity, row.get("capacities", []))]
    shape = row.get("shape")
    args = VolumeBindingArgs(bind_timeout_seconds=300)
    if shape is not None:
        args.shape = [UtilizationShapePoint(u, s) for u, s in shape]
    elif scoring:
        args.shape = [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
    pl = VolumeBinding(args, handle(objects, release=release))
    pod = PodInfo({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-a", "namespace": "default", "uid": "pod-a"},
        "spec": {"containers": [], "volumes": [{"name": "", "persistentVolumeClaim": {"claimName": c}}
                                               for c in row["pod"]]},
    })
    nodes = [node_info(make_node(n["name"], labels={"kubernetes.io/hostname": n["name"], **n.get("labels", {})}))
             for n in row["nodes"]]
    state = CycleState()

    result, pre_filter = pl.pre_filter(state, pod, nodes)
    assert result is None
    assert _got(pre_filter) == _status(row.get("prefilter"))
    if pre_filter is not None and not pre_filter.is_success():
        return
    assert [_got(pl.filter(state, pod, ni)) for ni in nodes] == [_status(w) for w in row["filter"]]
    pre_score = pl.pre_score(state, pod, nodes)
    assert _got(pre_score) == _status(row.get("prescore"))
    if pre_score is not None and not pre_score.is_success():
        return
    scores = [pl.score(state, pod, ni) for ni in nodes]
    assert [s for s, _ in scores] == row["scores"]
    assert all(st is None for _, st in scores)


# -- scorer_test.go TestScore ---------------------------------------------------------------------

# scorer_test.go TestScore: (shape in args units (scores 0..10, scaled by 10 as New does),
# [(requested, capacity) per class], want). Its custom shape {50: 0, 80: 30, 100: 50} is given in
# node-score units there, so here as {50: 0, 80: 3, 100: 5}.
DEFAULT = [(0, 10), (100, 0)]
CUSTOM = [(50, 0), (80, 3), (100, 5)]
SCORER_CASES = [
    (DEFAULT, [(0, 100)], 100),
    (DEFAULT, [(30, 100)], 70),
    (DEFAULT, [(50, 100)], 50),
    (DEFAULT, [(100, 100)], 0),
    (DEFAULT, [(0, 100), (0, 100)], 100),
    (DEFAULT, [(0, 100), (30, 100)], 85),
    (DEFAULT, [(30, 100), (30, 100)], 70),
    (DEFAULT, [(30, 100), (60, 100)], 55),
    (DEFAULT, [(50, 100), (50, 100)], 50),
    (DEFAULT, [(50, 100), (100, 100)], 25),
    (DEFAULT, [(100, 100), (100, 100)], 0),
    (CUSTOM, [(0, 100), (0, 100)], 0),
    (CUSTOM, [(0, 100), (30, 100)], 0),
    (CUSTOM, [(30, 100), (30, 100)], 0),
    (CUSTOM, [(30, 100), (60, 100)], 5),
    (CUSTOM, [(50, 100), (100, 100)], 25),
    (CUSTOM, [(90, 100), (90, 100)], 40),
    (CUSTOM, [(100, 100), (100, 100)], 50),
    # Not upstream's: no class scores 0; a capacity of 0 or a request above it is full (f(100)).
    (DEFAULT, [], 0),
    (DEFAULT, [(1, 0)], 0),
    (DEFAULT, [(200, 100)], 0),
]


@pytest.mark.parametrize(("shape", "classes", "want"), SCORER_CASES)
def test_scorer(shape: list[tuple[int, int]], classes: list[tuple[int, int]], want: int) -> None:
    scorer = build_scorer(VolumeBindingArgs(shape=[UtilizationShapePoint(u, s) for u, s in shape]))
    assert scorer({f"class-{i}": [r, c] for i, (r, c) in enumerate(classes)}) == want


# -- Test_PreBindPreFlight -------------------------------------------------------------------------


def _reserved(pl: VolumeBinding, pod: PodInfo, nodes: list[Any], node: str) -> CycleState:
    state = CycleState()
    _, st = pl.pre_filter(state, pod, nodes)
    assert st is None or st.is_success(), st
    for ni in nodes:
        pl.filter(state, pod, ni)
    assert pl.reserve(state, pod, node) is None
    return state


def _claim_pod(name: str, *claims: str) -> PodInfo:
    return PodInfo({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [], "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]},
    })


LOCAL_PVS = [
    _pv({"name": "pv-a", "class": "wait-sc", "phase": "Available", "capacity": "10Gi",
         "affinity": {"kubernetes.io/hostname": ["node-a"]}}),
]
NODES = [node_info(make_node(n, labels={"kubernetes.io/hostname": n})) for n in ("node-a", "node-b")]


def test_pre_bind_pre_flight() -> None:
    """Test_PreBindPreFlight: all bound → Skip; volumes to bind on the node → Success; no state →
    "not found"; the node missing from the state → an Error naming it."""
    pl = VolumeBinding(VolumeBindingArgs(), handle(
        [*FIXED, _pvc({"name": "c", "class": "wait-sc", "request": "1Gi"}), *LOCAL_PVS], release=V1_37))
    pod = _claim_pod("p", "c")
    state = _reserved(pl, pod, NODES, "node-a")
    assert pl.pre_bind_pre_flight(state, pod, "node-a") is None
    missing = pl.pre_bind_pre_flight(state, pod, "node-b")
    assert missing is not None and (missing.code, missing.message()) == (
        Code.ERROR, 'no pod volume found for node "node-b"')
    empty = pl.pre_bind_pre_flight(CycleState(), pod, "node-a")
    assert empty is not None and (empty.code, empty.message()) == (Code.ERROR, "not found")
    bound = VolumeBinding(VolumeBindingArgs(), handle(
        [*FIXED, _pvc({"name": "c", "class": "wait-sc", "boundPV": "pv-a"}), *LOCAL_PVS], release=V1_37))
    all_bound = _reserved(bound, pod, NODES, "node-a")
    skip = bound.pre_bind_pre_flight(all_bound, pod, "node-a")
    assert skip is not None and skip.code == Code.SKIP
    assert bound.pre_bind(all_bound, pod, "node-a") is None


# -- Reserve, Unreserve, PreBind (binder.go AssumePodVolumes, RevertAssumedPodVolumes, bindAPIUpdate) --


def test_reserve_assumes_the_binding_for_the_next_pods_and_unreserve_forgets_it() -> None:
    """Two pods want the only PV that fits (on node-a). Once the first is reserved there, the PV
    cache says the PV is claimed, so the second finds nothing to bind anywhere; after Unreserve
    the PV is free again. Hand-traced from FindMatchingVolume (claimRef set to another claim: skip)."""
    objects = [*FIXED, _pvc({"name": "c1", "class": "wait-sc", "request": "1Gi"}),
               _pvc({"name": "c2", "class": "wait-sc", "request": "1Gi"}), *LOCAL_PVS]
    pl = VolumeBinding(VolumeBindingArgs(), handle(objects, release=V1_37))
    first, second = _claim_pod("p1", "c1"), _claim_pod("p2", "c2")
    state = _reserved(pl, first, NODES, "node-a")

    bind_conflict = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",))
    s2 = CycleState()
    pl.pre_filter(s2, second, NODES)
    assert [_got(pl.filter(s2, second, ni)) for ni in NODES] == [bind_conflict, bind_conflict]

    pl.unreserve(state, first, "node-a")
    s3 = CycleState()
    pl.pre_filter(s3, second, NODES)
    assert [_got(pl.filter(s3, second, ni)) for ni in NODES] == [None, bind_conflict]


def test_pre_bind_writes_the_claim_ref_and_waits_for_the_pv_controller() -> None:
    """PreBind writes the PV bound to the claim (claimRef with the claim's UID, and
    pv.kubernetes.io/bound-by-controller since the PV was not pre-bound). No PV controller completes
    the binding here and the clock is virtual, so the wait ends at once with upstream's timeout text."""
    pod = _claim_pod("p", "c")
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a",
                                                             "labels": {"kubernetes.io/hostname": "node-a"}}}
    h = handle([*FIXED, _pvc({"name": "c", "class": "wait-sc", "request": "1Gi"}), *LOCAL_PVS, node, dict(pod.pod)],
               release=V1_37)
    pl = VolumeBinding(VolumeBindingArgs(), h)
    state = _reserved(pl, pod, NODES, "node-a")
    st = pl.pre_bind(state, pod, "node-a")
    assert st is not None and (st.code, st.message()) == (Code.ERROR, "binding volumes: context deadline exceeded")
    [(_, written)] = [c for c in h.client().calls if c[0] == "update_object"]
    assert written["metadata"]["name"] == "pv-a"
    assert written["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "c",
                                           "uid": "uid-c", "apiVersion": "v1", "resourceVersion": ""}
    assert written["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}


def test_pre_bind_fails_when_the_pod_or_node_is_gone() -> None:
    """checkBindings: the node must still exist, then the pod (upstream's texts)."""
    pod = _claim_pod("p", "c")
    pl = VolumeBinding(VolumeBindingArgs(), handle(
        [*FIXED, _pvc({"name": "c", "class": "wait-sc", "request": "1Gi"}), *LOCAL_PVS], release=V1_37))
    state = _reserved(pl, pod, NODES, "node-a")
    st = pl.pre_bind(state, pod, "node-a")
    assert st is not None and st.message() == 'binding volumes: failed to get node "node-a": node "node-a" not found'
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}
    pl = VolumeBinding(VolumeBindingArgs(), handle(
        [*FIXED, _pvc({"name": "c", "class": "wait-sc", "request": "1Gi"}), *LOCAL_PVS, node], release=V1_37))
    state = _reserved(pl, pod, NODES, "node-a")
    st = pl.pre_bind(state, pod, "node-a")
    assert st is not None and st.message() == 'binding volumes: pod does not exist any more: pod "p" not found'


def test_pre_bind_of_a_provisioned_claim_writes_the_selected_node() -> None:
    """A claim of a class with a provisioner and room on node-b only (its CSIStorageCapacity):
    Filter keeps node-b, Reserve assumes the claim with ``volume.kubernetes.io/selected-node:
    node-b`` and PreBind writes that claim (the provisioner's cue)."""
    pod = _claim_pod("p", "c")
    nodes = [node_info(make_node(n, labels={"kubernetes.io/hostname": n, "nodeKey": n})) for n in ("node-a", "node-b")]
    node_b = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-b"}}
    h = handle([*FIXED, _pvc({"name": "c", "class": "wait-sc-with-storage-capacity", "request": "1Gi"}),
                _capacity({"name": "cap-b", "class": "wait-sc-with-storage-capacity", "node": "node-b",
                           "capacity": "10Gi"}), node_b, dict(pod.pod)], release=V1_37)
    pl = VolumeBinding(VolumeBindingArgs(), h)
    state = CycleState()
    pl.pre_filter(state, pod, nodes)
    assert [_got(pl.filter(state, pod, ni)) for ni in nodes] == [
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) did not have enough free storage",)), None]
    assert pl.reserve(state, pod, "node-b") is None
    assert pl.pre_bind_pre_flight(state, pod, "node-b") is None
    pl.pre_bind(state, pod, "node-b")
    [(_, written)] = [c for c in h.client().calls if c[0] == "update_object"]
    assert (written["kind"], written["metadata"]["name"]) == ("PersistentVolumeClaim", "c")
    assert written["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-b"


def test_provisioning_without_capacity_objects_is_refused_for_lack_of_storage() -> None:
    """hasEnoughCapacity: the driver publishes capacity (CSIDriver storageCapacity: true) and no
    CSIStorageCapacity reaches the node: ``node(s) did not have enough free storage``."""
    pl = VolumeBinding(VolumeBindingArgs(), handle(
        [*FIXED, _pvc({"name": "c", "class": "wait-sc-with-storage-capacity", "request": "1Gi"})], release=V1_37))
    pod = _claim_pod("p", "c")
    state = CycleState()
    pl.pre_filter(state, pod, NODES)
    assert [_got(pl.filter(state, pod, ni)) for ni in NODES] == [
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) did not have enough free storage",))] * 2


# -- bad input: never an exception out of the plugin ------------------------------------------------


def _run(objects: list[dict[str, Any]], pod: PodInfo) -> list[Any]:
    pl = VolumeBinding(VolumeBindingArgs(), handle([*FIXED, *objects], release=V1_37))
    state = CycleState()
    _, st = pl.pre_filter(state, pod, NODES)
    if st is not None and not st.is_success():
        return [_got(st)]
    return [_got(pl.filter(state, pod, ni)) for ni in NODES]


def test_a_malformed_claim_selector_is_an_error_status() -> None:
    claim = _pvc({"name": "c", "class": "wait-sc", "request": "1Gi"})
    claim["spec"]["selector"] = {"matchExpressions": [{"key": "a", "operator": "Bogus", "values": ["x"]}]}
    got = _run([claim, *LOCAL_PVS], _claim_pod("p", "c"))
    assert all(g is not None and g[0] == Code.ERROR for g in got), got
    assert got[0][1][0].startswith("error creating internal label selector for claim: default/c: ")


_FITS = [None, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",))]
_NOWHERE = [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",))] * 2


@pytest.mark.parametrize(("request_", "want"), [
    ("NaN", _FITS), ("", _FITS), ("garbage", _FITS), ("-1Gi", _FITS),
    ("1e400", _NOWHERE), ("99999999999999999999999Ei", _NOWHERE),
])
def test_odd_storage_requests_do_not_raise(request_: str, want: list[Any]) -> None:
    """The API server refuses most of these; an informer (or a test) may still hand one over. An
    unparsable request reads as none (0, as a zero ``resource.Quantity``) and fits the 10Gi PV on
    node-a; a huge one is compared exactly and fits no PV."""
    got = _run([_pvc({"name": "c", "class": "wait-sc", "request": request_}), *LOCAL_PVS], _claim_pod("p", "c"))
    assert got == want


def test_a_class_without_binding_mode_is_an_error_status() -> None:
    """IsDelayBindingMode: ``VolumeBindingMode not set for StorageClass "x"`` (an Error at PreFilter)."""
    bare = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "bare"}}
    got = _run([bare, _pvc({"name": "c", "class": "bare"})], _claim_pod("p", "c"))
    assert got == [(Code.ERROR, ('VolumeBindingMode not set for StorageClass "bare"',))]


@pytest.mark.parametrize("affinity", [{"required": "x"}, {"required": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "k", "operator": "Gt", "values": ["not-a-number"]}]}]}}, {"required": {"nodeSelectorTerms": 7}}])
def test_garbage_pv_node_affinity_never_matches(affinity: Any) -> None:
    pv = _pv({"name": "pv-a", "class": "wait-sc", "phase": "Available", "capacity": "10Gi"})
    pv["spec"]["nodeAffinity"] = affinity
    got = _run([_pvc({"name": "c", "class": "wait-sc", "request": "1Gi"}), pv], _claim_pod("p", "c"))
    assert all(g is None or g[0] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for g in got), got


# -- queueing hints (TestIsSchedulableAfter*) --------------------------------------------------------


def test_queueing_hints() -> None:
    from kubesched.framework.events import QueueingHint as H
    from kubesched.plugins.volumebinding import volume_binding as vb

    pod = _claim_pod("p", "c").pod
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}}
    topo = {**sc, "allowedTopologies": [{"matchLabelExpressions": [{"key": "z", "values": ["a"]}]}]}
    assert vb.is_schedulable_after_storage_class_change(pod, None, sc) == H.QUEUE
    assert vb.is_schedulable_after_storage_class_change(pod, sc, dict(sc)) == H.QUEUE_SKIP
    assert vb.is_schedulable_after_storage_class_change(pod, sc, topo) == H.QUEUE
    mine = _pvc({"name": "c", "class": "s"})
    other_ns = {**mine, "metadata": {"name": "c", "namespace": "other"}}
    assert vb.is_schedulable_after_persistent_volume_claim_change(pod, None, mine) == H.QUEUE
    assert vb.is_schedulable_after_persistent_volume_claim_change(pod, None, other_ns) == H.QUEUE_SKIP
    assert vb.is_schedulable_after_persistent_volume_claim_change(
        pod, None, _pvc({"name": "x", "class": "s"})) == H.QUEUE_SKIP
    node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"}}
    migrated = {**node, "metadata": {"name": "n", "annotations": {
        "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}}}
    assert vb.is_schedulable_after_csi_node_change(pod, None, node) == H.QUEUE
    assert vb.is_schedulable_after_csi_node_change(pod, node, dict(node)) == H.QUEUE_SKIP
    assert vb.is_schedulable_after_csi_node_change(pod, node, migrated) == H.QUEUE
    cap = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
           "metadata": {"name": "c", "namespace": "d"}, "storageClassName": "s", "capacity": "10Gi"}
    assert vb.is_schedulable_after_csi_storage_capacity_change(pod, None, cap) == H.QUEUE
    assert vb.is_schedulable_after_csi_storage_capacity_change(pod, cap, {**cap, "capacity": "20Gi"}) == H.QUEUE
    assert vb.is_schedulable_after_csi_storage_capacity_change(pod, cap, {**cap, "capacity": "5Gi"}) == H.QUEUE_SKIP
    # maximumVolumeSize wins over capacity as the limit.
    assert vb.is_schedulable_after_csi_storage_capacity_change(
        pod, cap, {**cap, "maximumVolumeSize": "1Gi", "capacity": "50Gi"}) == H.QUEUE_SKIP
    inline = {"metadata": {"name": "q", "namespace": "default"},
              "spec": {"volumes": [{"name": "v", "csi": {"driver": "d"}}]}}
    on = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d"},
          "spec": {"storageCapacity": True}}
    off = {**on, "spec": {"storageCapacity": False}}
    assert vb.is_schedulable_after_csi_driver_change(inline, on, off) == H.QUEUE
    assert vb.is_schedulable_after_csi_driver_change(inline, off, on) == H.QUEUE_SKIP
    assert vb.is_schedulable_after_csi_driver_change(pod, on, off) == H.QUEUE_SKIP
