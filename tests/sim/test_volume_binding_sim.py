"""VolumeBinding in a whole simulated scheduler with the simulated PV controller (issue 15).

Hand-computed cases: a StatefulSet-like pod whose WaitForFirstConsumer claim can only bind to a
static local PV on one node (it lands there, and the PV's claimRef and the claim's volumeName and
bind-completed annotation are set at the end: PreBind's write, completed by the PV controller);
dynamic provisioning, restricted by the class's allowedTopologies to one zone; an Immediate claim
bound by the PV controller when the objects load, before any scheduling; and a claim nothing can
satisfy, with kube-scheduler's FailedScheduling text (FitError.Error(), reasons from
volumebinding/binder.go).
"""

from __future__ import annotations

from typing import Any

from kubesched.config import load_config
from kubesched.testing import new_framework

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {HOST: name, **labels}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def pod(name: str, claim: str) -> dict[str, Any]:
    """A StatefulSet's pod: ``<set>-<ordinal>`` with the claim ``<template>-<pod>``."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                              "uid": "sts-uid", "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "pause"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}}


def storage_class(name: str, mode: str, provisioner: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode, **extra}


def claim(name: str, class_name: str, size: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": class_name, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}}}


def local_pv(name: str, node_name: str | None, size: str, class_name: str = "local") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                            "storageClassName": class_name, "persistentVolumeReclaimPolicy": "Retain"}
    if node_name is not None:
        spec["local"] = {"path": f"/mnt/disks/{name}"}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": HOST, "operator": "In", "values": [node_name]}]}]}}
    else:
        spec["hostPath"] = {"path": f"/data/{name}"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def obj(fw: Any, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    o = fw.cluster.get_object("v1", kind, namespace, name)
    assert o is not None
    return dict(o)


def condition(fw: Any, name: str) -> str:
    p = fw.cluster.pods[f"default/{name}"]
    [cond] = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"]
    return str(cond["message"])


def test_wait_for_first_consumer_claim_binds_the_only_matching_local_pv() -> None:
    # n1 has no volume, n3's is too small (1Gi < 5Gi), n2's fits: only n2 is feasible.
    objects = [storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
               local_pv("pv-n2", "n2", "10Gi"), local_pv("pv-n3", "n3", "1Gi"),
               claim("data-web-0", "local", "5Gi")]
    fw = new_framework(load_config(None), nodes=[node("n1"), node("n2"), node("n3")], objects=objects,
                       pods=[pod("web-0", "data-web-0")])
    assert "volumeName" not in obj(fw, "PersistentVolumeClaim", "data-web-0", "default")["spec"]  # waits
    fw.schedule(until=fw.clock.now() + 5)
    assert fw.cluster.pods["default/web-0"]["spec"]["nodeName"] == "n2"
    pv = obj(fw, "PersistentVolume", "pv-n2")
    assert (pv["spec"]["claimRef"]["namespace"], pv["spec"]["claimRef"]["name"]) == ("default", "data-web-0")
    assert pv["status"]["phase"] == "Bound"
    pvc = obj(fw, "PersistentVolumeClaim", "data-web-0", "default")
    assert pvc["spec"]["volumeName"] == "pv-n2"
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert pvc["status"]["phase"] == "Bound"
    assert "claimRef" not in obj(fw, "PersistentVolume", "pv-n3")["spec"]


def test_dynamic_provisioning_goes_to_an_allowed_topology() -> None:
    topologies = [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-b"]}]}]
    objects = [storage_class("zonal", "WaitForFirstConsumer", "ebs.csi.aws.com", allowedTopologies=topologies),
               claim("data-db-0", "zonal", "20Gi")]
    nodes = [node("a1", **{ZONE: "zone-a"}), node("b1", **{ZONE: "zone-b"}), node("c1", **{ZONE: "zone-c"})]
    fw = new_framework(load_config(None), nodes=nodes, objects=objects, pods=[pod("db-0", "data-db-0")])
    fw.schedule(until=fw.clock.now() + 5)
    assert fw.cluster.pods["default/db-0"]["spec"]["nodeName"] == "b1"
    pvc = obj(fw, "PersistentVolumeClaim", "data-db-0", "default")
    assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "b1"
    pv = obj(fw, "PersistentVolume", pvc["spec"]["volumeName"])
    assert pv["spec"]["capacity"]["storage"] == "20Gi"
    assert pv["spec"]["claimRef"]["name"] == "data-db-0"
    [term] = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": ZONE, "operator": "In", "values": ["zone-b"]}]


def test_immediate_claim_is_bound_at_load() -> None:
    # Two available PVs: the controller picks the smallest that fits (4Gi for a 2Gi claim).
    objects = [storage_class("fast", "Immediate", "kubernetes.io/no-provisioner"),
               local_pv("big", None, "100Gi", "fast"), local_pv("small", None, "4Gi", "fast"),
               claim("cache", "fast", "2Gi")]
    fw = new_framework(load_config(None), nodes=[node("n1")], objects=objects, pods=[pod("app-0", "cache")])
    pvc = obj(fw, "PersistentVolumeClaim", "cache", "default")
    assert pvc["spec"]["volumeName"] == "small"
    assert pvc["status"]["phase"] == "Bound"
    fw.schedule(until=fw.clock.now() + 5)
    assert fw.cluster.pods["default/app-0"]["spec"]["nodeName"] == "n1"


def test_unsatisfiable_claim_reports_upstreams_reasons() -> None:
    objects = [storage_class("local", "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
               local_pv("pv-n1", "n1", "1Gi"), claim("data-web-0", "local", "5Gi")]
    fw = new_framework(load_config(None), nodes=[node("n1"), node("n2")], objects=objects,
                       pods=[pod("web-0", "data-web-0")])
    fw.schedule(until=fw.clock.now() + 1)
    assert "nodeName" not in fw.cluster.pods["default/web-0"]["spec"]
    assert condition(fw, "web-0") == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. preemption: 0/2 "
        "nodes are available: 2 Preemption is not helpful for scheduling.")
