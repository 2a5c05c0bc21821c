"""The simulator's PV controller and ephemeral volume controller (src/kubesched/sim/pv_controller.py),
and SimCluster.update_object, against the behaviour of kube-controller-manager's
pkg/controller/volume/persistentvolume (bind: claimRef, volumeName, bind-completed and
bound-by-controller, phases Bound) and pkg/controller/volume/ephemeral (``<pod>-<volume>`` owned by
the pod). Expectations are hand-written from those rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.clock import VirtualClock
from kubesched.framework.cluster import ObjectConflictError
from kubesched.sim import pv_controller
from kubesched.sim.cluster import SimCluster

V1, STORAGE = "v1", "storage.k8s.io/v1"


class _Handlers:
    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def _cluster() -> SimCluster:
    c = SimCluster(VirtualClock(0.0))
    c.add_event_handlers(_Handlers())
    pv_controller.install(c)
    return c


def _sc(name: str, mode: str = "Immediate", provisioner: str = "kubernetes.io/no-provisioner") -> dict[str, Any]:
    return {"apiVersion": STORAGE, "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode}


def _pv(name: str, size: str, cls: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "PersistentVolume", "metadata": {"name": name, "uid": f"u-{name}"},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                     "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}}


def _pvc(name: str, size: str, cls: str) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": cls, "volumeMode": "Filesystem",
                     "resources": {"requests": {"storage": size}}},
            "status": {"phase": "Pending"}}


def _get(c: SimCluster, kind: str, name: str, ns: str = "") -> dict[str, Any]:
    obj = c.get_object(V1, kind, ns, name)
    assert obj is not None
    return obj


def test_an_immediate_claim_is_bound_to_the_smallest_matching_volume() -> None:
    c = _cluster()
    c.create_object(STORAGE, "StorageClass", _sc("fast"))
    for pv in (_pv("big", "100Gi", "fast"), _pv("small", "10Gi", "fast"), _pv("tiny", "1Gi", "fast")):
        c.create_object(V1, "PersistentVolume", pv)
    assert _get(c, "PersistentVolume", "tiny")["status"]["phase"] == "Available"
    c.create_object(V1, "PersistentVolumeClaim", _pvc("data", "5Gi", "fast"))
    claim = _get(c, "PersistentVolumeClaim", "data", "default")
    assert claim["spec"]["volumeName"] == "small"
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                                "pv.kubernetes.io/bound-by-controller": "yes"}
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}
    pv = _get(c, "PersistentVolume", "small")
    assert (pv["spec"]["claimRef"]["name"], pv["spec"]["claimRef"]["uid"], pv["status"]["phase"]) == (
        "data", "u-data", "Bound")
    assert _get(c, "PersistentVolume", "big")["status"]["phase"] == "Available"


def test_an_immediate_claim_without_a_volume_is_provisioned_when_the_class_can() -> None:
    c = _cluster()
    c.create_object(STORAGE, "StorageClass", _sc("dyn", provisioner="csi.example.com"))
    c.create_object(STORAGE, "StorageClass", _sc("static"))
    c.create_object(V1, "PersistentVolumeClaim", _pvc("a", "3Gi", "dyn"))
    c.create_object(V1, "PersistentVolumeClaim", _pvc("b", "3Gi", "static"))
    a = _get(c, "PersistentVolumeClaim", "a", "default")
    pv = _get(c, "PersistentVolume", a["spec"]["volumeName"])
    assert pv["spec"]["capacity"] == {"storage": "3Gi"} and pv["spec"]["csi"]["driver"] == "csi.example.com"
    assert "nodeAffinity" not in pv["spec"]  # not node-selected: no topology
    b = _get(c, "PersistentVolumeClaim", "b", "default")
    assert not b["spec"].get("volumeName") and b["status"]["phase"] == "Pending"


def test_a_waiting_claim_is_left_to_the_scheduler() -> None:
    c = _cluster()
    c.create_object(STORAGE, "StorageClass", _sc("wait", mode="WaitForFirstConsumer"))
    c.create_object(V1, "PersistentVolume", _pv("pv", "10Gi", "wait"))
    c.create_object(V1, "PersistentVolumeClaim", _pvc("c", "1Gi", "wait"))
    assert not _get(c, "PersistentVolumeClaim", "c", "default")["spec"].get("volumeName")
    # The scheduler's PreBind: the PV's claimRef (an update at the stored resourceVersion).
    pv = _get(c, "PersistentVolume", "pv")
    c.update_object({**pv, "spec": {**pv["spec"], "claimRef": {"name": "c", "namespace": "default", "uid": "u-c"}}})
    assert _get(c, "PersistentVolumeClaim", "c", "default")["spec"]["volumeName"] == "pv"


def test_update_object_is_optimistic_on_the_resource_version() -> None:
    c = _cluster()
    c.create_object(STORAGE, "StorageClass", _sc("wait", mode="WaitForFirstConsumer"))
    c.create_object(V1, "PersistentVolume", _pv("pv", "10Gi", "wait"))
    stale = _get(c, "PersistentVolume", "pv")  # the controller has since made it Available
    c.store_object(V1, "PersistentVolume", {**stale, "metadata": {**stale["metadata"]}})
    with pytest.raises(ObjectConflictError, match="the object has been modified"):
        c.update_object(stale)
    with pytest.raises(ObjectConflictError, match="not found"):
        c.update_object({**stale, "metadata": {"name": "gone"}})


def test_ephemeral_volumes_get_their_claims_before_the_scheduler_sees_the_pod() -> None:
    c = _cluster()
    pod = {"apiVersion": V1, "kind": "Pod", "metadata": {"name": "job", "namespace": "default", "uid": "pod-uid"},
           "spec": {"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
               "metadata": {"labels": {"a": "b"}},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                        "storageClassName": "x"}}}}]}}
    c.create_pod(pod)
    claim = _get(c, "PersistentVolumeClaim", "job-scratch", "default")
    assert claim["metadata"]["labels"] == {"a": "b"}
    assert claim["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "job", "uid": "pod-uid", "controller": True,
         "blockOwnerDeletion": True}]
    assert claim["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
