"""Builders for VolumeBinding's tests, after upstream's volumebinding/test_utils.go
(``makePV``, ``makePVC``, ``makeNode``) and binder_test.go's ``makeCapacity``, reading the
shorthands of data/volume_binding.yaml."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storage_builders import pod, storage_class

from kubesched.config.plugin_args import UtilizationShapePoint, VolumeBindingArgs
from kubesched.config.releases import V1_35, V1_36, V1_37, Release

RELEASES: dict[str, Release] = {"1.35": V1_35, "1.36": V1_36, "1.37": V1_37}
NODE_LABEL_KEY = "nodeKey"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"

#: volume_binding_test.go's classes and CSIDriver, created in every row.
BASE_OBJECTS: list[dict[str, Any]] = [
    storage_class("immediate-sc", "Immediate"),
    storage_class("wait-sc", "WaitForFirstConsumer"),
    storage_class("wait-hdd-sc", "WaitForFirstConsumer"),
    storage_class("wait-sc-with-storage-capacity", "WaitForFirstConsumer", "driver-with-storage-capacity"),
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "driver-with-storage-capacity"},
     "spec": {"storageCapacity": True}},
]


def make_node(name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``makeNode(name)``: the hostname label is always there."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {}, "status": {}}


def make_pv(name: str, class_name: str = "", *, capacity: str = "", affinity: Mapping[str, Sequence[str]] | None = None,
            phase: str = "Available", claim: tuple[str, str] | None = None, version: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": class_name}
    if capacity:
        spec["capacity"] = {"storage": capacity}
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": list(v)} for k, v in affinity.items()]}]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    md: dict[str, Any] = {"name": name}
    if version:
        md["resourceVersion"] = version
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec,
            "status": {"phase": phase} if phase else {}}


def make_pvc(name: str, class_name: str, *, request: str = "", bound: str = "", phase: str = "",
             namespace: str = "default") -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    spec: dict[str, Any] = {"storageClassName": class_name}
    if request:
        spec["resources"] = {"requests": {"storage": request}}
    if bound:
        spec["volumeName"] = bound
        md["annotations"] = {BIND_COMPLETED: "true"}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def make_capacity(name: str, class_name: str, node: str | None, capacity: str = "",
                  maximum_volume_size: str = "", namespace: str = "default") -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": name, "namespace": namespace}, "storageClassName": class_name,
                           "nodeTopology": {"matchLabels": {NODE_LABEL_KEY: node}} if node else {}}
    if capacity:
        obj["capacity"] = capacity
    if maximum_volume_size:
        obj["maximumVolumeSize"] = maximum_volume_size
    return obj


def row_objects(case: Mapping[str, Any]) -> list[dict[str, Any]]:
    objs = list(BASE_OBJECTS)
    objs += [make_node(*n) for n in case["nodes"]]
    objs += [make_pvc(c["name"], c["class"], request=c.get("request", ""), bound=c.get("bound", ""),
                      phase=c.get("phase", "")) for c in case.get("pvcs", [])]
    objs += [make_pv(v["name"], v["class"], capacity=v.get("capacity", ""), affinity=v.get("affinity"),
                     phase=v.get("phase", "Available")) for v in case.get("pvs", [])]
    objs += [make_capacity(c["name"], c["class"], c["node"], c["capacity"]) for c in case.get("capacities", [])]
    return objs


def row_pod(case: Mapping[str, Any]) -> dict[str, Any]:
    """``makePod("pod-a").withPVCVolume(claim, "")``: upstream's volumes are unnamed."""
    vols = [{"name": "", "persistentVolumeClaim": {"claimName": c}} for c in case["claims"]]
    p = pod("pod-a", volumes=vols)
    p["spec"].setdefault("volumes", [])
    return p


def row_args(case: Mapping[str, Any], release: Release) -> VolumeBindingArgs:
    """Upstream's args: bindTimeoutSeconds 300, the row's shape or (with the gate) the default."""
    shape = [UtilizationShapePoint(u, s) for u, s in case["shape"]] if "shape" in case else None
    args = VolumeBindingArgs(bind_timeout_seconds=300, shape=shape)
    args.set_defaults(release)
    return args
