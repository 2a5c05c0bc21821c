"""The named objects of upstream's volumebinding/binder_test.go (v1.37.2): ``makeTestPVC``,
``makeTestPV``, ``makeGenericEphemeralPVC``, the four classes of ``newTestBinder`` and the binder
under test (:class:`VolumeBinding`'s over a fake client), so binder tables can name them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from plugin_builders import make_snapshot
from storage_builders import handle

from kubesched.config.releases import V1_37
from kubesched.framework.types import PodInfo
from kubesched.plugins.helper.storage_listers import volumes_of
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.binder import PodVolumes, VolumeBinder

PROVISIONER = "test-provisioner"
NODE_LABEL_KEY = "nodeKey"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
UNBOUND, PREBOUND, BOUND, SELECTED_NODE = range(4)


def _class(name: str, mode: str, provisioner: str = "", topology: list[str] | None = None) -> dict[str, Any]:
    sc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                          "volumeBindingMode": mode}
    if provisioner:
        sc["provisioner"] = provisioner
    if topology is not None:
        sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": NODE_LABEL_KEY, "values": topology}]}]
    return sc


CLASSES = [
    _class("waitClassWithProvisioner", "WaitForFirstConsumer", PROVISIONER, ["node1", "reference-value"]),
    _class("immediateClass", "Immediate"),
    _class("waitClass", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
    _class("topoMismatchClass", "WaitForFirstConsumer", PROVISIONER, ["reference-value"]),
]


def make_test_pvc(name: str, size: str, node: str, state: int, pv_name: str, version: str, class_name: str,
             owner: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``makeTestPVC``."""
    md: dict[str, Any] = {"name": name, "namespace": "testns", "uid": "pvc-uid", "resourceVersion": version}
    spec: dict[str, Any] = {"resources": {"requests": {"storage": size}}, "storageClassName": class_name,
                            "volumeMode": "Filesystem"}
    ann: dict[str, str] = {}
    if state == SELECTED_NODE:
        ann[ANN_SELECTED_NODE] = node
    if state == BOUND:
        ann[ANN_BIND_COMPLETED] = "yes"
    if state in (BOUND, PREBOUND):
        spec["volumeName"] = pv_name
    if ann:
        md["annotations"] = ann
    if owner is not None:
        md["ownerReferences"] = [dict(owner)]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}


def make_test_pv(name: str, node: str, capacity: str, version: str, bound_to: Mapping[str, Any] | None,
            class_name: str) -> dict[str, Any]:
    """``makeTestPV``."""
    spec: dict[str, Any] = {"capacity": {"storage": capacity}, "storageClassName": class_name,
                            "volumeMode": "Filesystem"}
    md: dict[str, Any] = {"name": name, "resourceVersion": version}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": NODE_LABEL_KEY, "operator": "In", "values": [node]}]}]}}
    if bound_to is not None:
        bmd = bound_to["metadata"]
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                            "resourceVersion": bmd["resourceVersion"], "name": bmd["name"],
                            "namespace": bmd["namespace"], "uid": bmd["uid"]}
        md["annotations"] = {ANN_BOUND_BY_CONTROLLER: "yes"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec,
            "status": {"phase": "Available"}}


W, IMM, P, T = "waitClass", "immediateClass", "waitClassWithProvisioner", "topoMismatchClass"
PVC: dict[str, dict[str, Any]] = {
    "unboundPVC": make_test_pvc("unbound-pvc", "1G", "", UNBOUND, "", "1", W),
    "unboundPVC2": make_test_pvc("unbound-pvc2", "5G", "", UNBOUND, "", "1", W),
    "preboundPVC": make_test_pvc("prebound-pvc", "1G", "", PREBOUND, "pv-node1a", "1", W),
    "preboundPVCNode1a": make_test_pvc("unbound-pvc", "1G", "", PREBOUND, "pv-node1a", "1", W),
    "boundPVC": make_test_pvc("bound-pvc", "1G", "", BOUND, "pv-bound", "1", W),
    "boundPVCNode1a": make_test_pvc("unbound-pvc", "1G", "", BOUND, "pv-node1a", "1", W),
    "immediateUnboundPVC": make_test_pvc("immediate-unbound-pvc", "1G", "", UNBOUND, "", "1", IMM),
    "immediateBoundPVC": make_test_pvc("immediate-bound-pvc", "1G", "", BOUND, "pv-bound-immediate", "1", IMM),
    "provisionedPVC": make_test_pvc("provisioned-pvc", "1Gi", "", UNBOUND, "", "1", P),
    "provisionedPVC2": make_test_pvc("provisioned-pvc2", "1Gi", "", UNBOUND, "", "1", P),
    "provisionedPVCHigherVersion": make_test_pvc("provisioned-pvc2", "1Gi", "", UNBOUND, "", "2", P),
    "provisionedPVCBound": make_test_pvc("provisioned-pvc", "1Gi", "", BOUND, "pv-bound", "1", P),
    "noProvisionerPVC": make_test_pvc("no-provisioner-pvc", "1Gi", "", UNBOUND, "", "1", W),
    "topoMismatchPVC": make_test_pvc("topo-mismatch-pvc", "1Gi", "", UNBOUND, "", "1", T),
    "selectedNodePVC": make_test_pvc("provisioned-pvc", "1Gi", "node1", SELECTED_NODE, "", "1", P),
    # makeGenericEphemeralPVC: the pod (no UID) owns the claim, or does not.
    "conflictingGenericPVC": make_test_pvc("test-pod-test-volume", "1G", "", BOUND, "pv-bound", "1", IMM),
    "correctGenericPVC": make_test_pvc("test-pod-test-volume", "1G", "", BOUND, "pv-bound", "1", IMM,
                                  owner={"name": "test-pod", "uid": "", "controller": True}),
}
PV: dict[str, dict[str, Any]] = {
    "pvBoundGeneric": make_test_pv("pv-bound", "node1", "1G", "1", PVC["correctGenericPVC"], W),
    "pvNode1a": make_test_pv("pv-node1a", "node1", "5G", "1", None, W),
    "pvNode1b": make_test_pv("pv-node1b", "node1", "10G", "1", None, W),
    "pvNode1c": make_test_pv("pv-node1b", "node1", "5G", "1", None, W),
    "pvNode2": make_test_pv("pv-node2", "node2", "1G", "1", None, W),
    "pvBound": make_test_pv("pv-bound", "node1", "1G", "1", PVC["boundPVC"], W),
    "pvNode1aBound": make_test_pv("pv-node1a", "node1", "5G", "1", PVC["unboundPVC"], W),
    "pvNode1bBound": make_test_pv("pv-node1b", "node1", "10G", "1", PVC["unboundPVC2"], W),
    "pvNode1bBoundHigherVersion": make_test_pv("pv-node1b", "node1", "10G", "2", PVC["unboundPVC2"], W),
    "pvBoundImmediate": make_test_pv("pv-bound-immediate", "node1", "1G", "1", PVC["immediateBoundPVC"], IMM),
    "pvBoundImmediateNode2": make_test_pv("pv-bound-immediate", "node2", "1G", "1", PVC["immediateBoundPVC"], IMM),
}
NODE1: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": "node1", "labels": {NODE_LABEL_KEY: "node1"}}, "spec": {}, "status": {}}


def csi_driver(storage_capacity: bool) -> dict[str, Any]:
    """``makeCSIDriver(provisioner, storageCapacity)``."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": PROVISIONER},
            "spec": {"storageCapacity": storage_capacity}}


def make_test_pod(claims: Iterable[Mapping[str, Any]] = (), *, ephemeral: str = "", empty_dir: bool = False,
             uid: str = "") -> dict[str, Any]:
    """``makePod("test-pod").withNamespace("testns").withNodeName("node1").withPVCSVolume(claims)``."""
    vols: list[dict[str, Any]] = [{"name": f"vol{i}", "persistentVolumeClaim": {"claimName": c["metadata"]["name"]}}
                                  for i, c in enumerate(claims)]
    if ephemeral:
        vols.append({"name": ephemeral, "ephemeral": {}})
    if empty_dir:
        vols.append({"name": "", "emptyDir": {}})
    md: dict[str, Any] = {"name": "test-pod", "namespace": "testns"}
    if uid:
        md["uid"] = uid
    return {"metadata": md, "spec": {"nodeName": "node1", "volumes": vols}}


def binder(objects: Iterable[Mapping[str, Any]]) -> tuple[VolumeBinding, VolumeBinder]:
    """``newTestBinder`` with the objects in the API (and so in the informers' caches)."""
    objs = [*CLASSES, NODE1, *objects]
    h = handle(objs, make_snapshot([NODE1]), release=V1_37)
    pl = VolumeBinding(None, h)
    return pl, pl.binder


def find_pod_volumes(b: VolumeBinder, pod: dict[str, Any]) -> tuple[PodVolumes, list[str]]:
    """binder_test.go's ``findPodVolumes``: claims, the immediate-claims error, FindPodVolumes."""
    claims = b.get_pod_volume_claims(pod, volumes_of(PodInfo(pod)))
    if claims.immediate:
        raise RuntimeError("pod has unbound immediate PersistentVolumeClaims")
    return b.find_pod_volumes(claims, "node1", NODE1["metadata"]["labels"])
