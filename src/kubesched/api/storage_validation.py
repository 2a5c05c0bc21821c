"""Every problem in a storage object that the volume plugins would read wrongly.

``validate_storage_object(kind, obj)`` returns one ``"<field path>: <message>"`` string per
problem of a PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
CSIStorageCapacity or VolumeAttachment, empty when the object is usable; the simulator refuses
manifests with problems (exit 2). The checks cover what :mod:`kubesched.api.storage` reads, with
the API server's wording where it defines the check (pkg/apis/core/validation, pkg/apis/storage/
validation): ``Required value``, ``Unsupported value: ... supported values: ...``, quantities as
``ParseQuantity`` and ``ValidateResourceQuantityValue`` read them. Like
:mod:`kubesched.api.objects_validation` it checks shapes first and leaves alone what the scheduler
is indifferent to (name syntax, immutability, fields nothing reads).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.errors import field_invalid, field_required
from kubesched.api.nodeaffinity import NodeSelector
from kubesched.api.objects_validation import _Checker, _label_selector, _shown, _source_strings, validate_volume_source

__all__ = ["STORAGE_KINDS", "validate_storage_object"]

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_PV_PHASES = ("Available", "Bound", "Failed", "Pending", "Released")
_PVC_PHASES = ("Bound", "Lost", "Pending")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")


def _meta(c: _Checker, obj: Mapping[str, Any], *, namespaced: bool) -> Mapping[str, Any]:
    md = c.mapping(obj.get("metadata"), "metadata")
    if md is None:
        return {}
    name = c.string(md.get("name"), "metadata.name")
    if name == "":
        c.error(field_required("metadata.name", "name or generateName is required"))
    if namespaced:
        c.string(md.get("namespace"), "metadata.namespace")
    c.string(md.get("uid"), "metadata.uid")
    c.string(md.get("resourceVersion"), "metadata.resourceVersion")
    c.string_map(md.get("labels"), "metadata.labels")
    c.string_map(md.get("annotations"), "metadata.annotations")
    for i, ref in enumerate(c.items(md.get("ownerReferences"), "metadata.ownerReferences") or ()):
        r = c.mapping(ref, f"metadata.ownerReferences[{i}]")
        if r is not None:
            c.string(r.get("uid"), f"metadata.ownerReferences[{i}].uid")
            c.boolean(r.get("controller"), f"metadata.ownerReferences[{i}].controller")
    return md


def _access_modes(c: _Checker, value: Any, path: str) -> None:
    for i, mode in enumerate(c.items(value, path) or ()):
        c.one_of(mode, f"{path}[{i}]", _ACCESS_MODES)


def _spec(c: _Checker, obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return c.mapping(obj.get("spec"), "spec") or {}


def _status_phase(c: _Checker, obj: Mapping[str, Any], phases: tuple[str, ...]) -> None:
    status = c.mapping(obj.get("status"), "status")
    if status is not None:
        c.one_of(status.get("phase"), "status.phase", phases)


def validate_persistent_volume(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = _spec(c, obj)
    capacity = c.mapping(spec.get("capacity"), "spec.capacity")
    if capacity is not None:
        c.resource_list(capacity, "spec.capacity", key_form=True)
    _access_modes(c, spec.get("accessModes"), "spec.accessModes")
    c.string(spec.get("storageClassName"), "spec.storageClassName")
    c.string(spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName")
    c.one_of(spec.get("volumeMode"), "spec.volumeMode", _VOLUME_MODES)
    c.one_of(spec.get("persistentVolumeReclaimPolicy"), "spec.persistentVolumeReclaimPolicy", _RECLAIM_POLICIES)
    ref = c.mapping(spec.get("claimRef"), "spec.claimRef")
    if ref:
        _source_strings(c, ref, "spec.claimRef", ("namespace", "name", "uid", "resourceVersion"))
    affinity = c.mapping(spec.get("nodeAffinity"), "spec.nodeAffinity")
    required = (affinity or {}).get("required")
    if required is not None and c.mapping(required, "spec.nodeAffinity.required") is not None:
        terms = c.items(required.get("nodeSelectorTerms"), "spec.nodeAffinity.required.nodeSelectorTerms")
        if terms is not None and all(
            c.mapping(t, f"spec.nodeAffinity.required.nodeSelectorTerms[{i}]") is not None for i, t in enumerate(terms)
        ):
            c.run(lambda: NodeSelector(required, "spec.nodeAffinity.required"))
    validate_volume_source(c, spec, "spec")
    _status_phase(c, obj, _PV_PHASES)
    return c.problems


def validate_persistent_volume_claim(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=True)
    spec = _spec(c, obj)
    _access_modes(c, spec.get("accessModes"), "spec.accessModes")
    resources = c.mapping(spec.get("resources"), "spec.resources")
    if resources is not None:
        c.resource_list(resources.get("requests"), "spec.resources.requests", key_form=True)
        c.resource_list(resources.get("limits"), "spec.resources.limits", key_form=True)
    for key in ("storageClassName", "volumeName", "volumeAttributesClassName"):
        c.string(spec.get(key), f"spec.{key}")
    c.one_of(spec.get("volumeMode"), "spec.volumeMode", _VOLUME_MODES)
    _label_selector(c, spec.get("selector"), "spec.selector")
    _status_phase(c, obj, _PVC_PHASES)
    return c.problems


def validate_storage_class(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    c.string(obj.get("provisioner"), "provisioner", required=True)
    if obj.get("provisioner") == "":
        c.error(field_required("provisioner", ""))
    c.one_of(obj.get("volumeBindingMode"), "volumeBindingMode", _BINDING_MODES)
    c.one_of(obj.get("reclaimPolicy"), "reclaimPolicy", _RECLAIM_POLICIES)
    c.string_map(obj.get("parameters"), "parameters")
    for i, term in enumerate(c.items(obj.get("allowedTopologies"), "allowedTopologies") or ()):
        tp = f"allowedTopologies[{i}]"
        t = c.mapping(term, tp)
        if t is None:
            continue
        for j, expr in enumerate(c.items(t.get("matchLabelExpressions"), f"{tp}.matchLabelExpressions") or ()):
            ep = f"{tp}.matchLabelExpressions[{j}]"
            e = c.mapping(expr, ep)
            if e is None:
                continue
            c.string(e.get("key"), f"{ep}.key", required=True)
            c.string_list(e.get("values"), f"{ep}.values")
    return c.problems


def validate_csi_node(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = _spec(c, obj)
    for i, driver in enumerate(c.items(spec.get("drivers"), "spec.drivers") or ()):
        p = f"spec.drivers[{i}]"
        d = c.mapping(driver, p)
        if d is None:
            continue
        name = c.string(d.get("name"), f"{p}.name", required=True)
        if name == "":
            c.error(field_required(f"{p}.name", ""))
        c.string(d.get("nodeID"), f"{p}.nodeID")
        c.string_list(d.get("topologyKeys"), f"{p}.topologyKeys")
        alloc = c.mapping(d.get("allocatable"), f"{p}.allocatable")
        if alloc and alloc.get("count") is not None:
            count = c.integer(alloc.get("count"), f"{p}.allocatable.count")
            if count is not None and count < 0:
                c.error(field_invalid(f"{p}.allocatable.count", count, "must be greater than or equal to 0"))
    return c.problems


def validate_csi_driver(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = _spec(c, obj)
    for key in ("attachRequired", "podInfoOnMount", "storageCapacity", "requiresRepublish",
                "seLinuxMount", "preventPodSchedulingIfMissing"):
        c.boolean(spec.get(key), f"spec.{key}")
    return c.problems


def validate_csi_storage_capacity(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=True)
    name = c.string(obj.get("storageClassName"), "storageClassName", required=True)
    if name == "":
        c.error(field_required("storageClassName", ""))
    for key in ("capacity", "maximumVolumeSize"):
        c.quantity("storage", obj.get(key), key)
    _label_selector(c, obj.get("nodeTopology"), "nodeTopology")
    return c.problems


def validate_volume_attachment(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = _spec(c, obj)
    for key in ("attacher", "nodeName"):
        value = c.string(spec.get(key), f"spec.{key}", required=True)
        if value == "":
            c.error(field_required(f"spec.{key}", ""))
    source = c.mapping(spec.get("source"), "spec.source")
    if source is not None:
        c.string(source.get("persistentVolumeName"), "spec.source.persistentVolumeName")
    return c.problems


#: kind -> (served apiVersion, namespaced, validator).
STORAGE_KINDS: dict[str, tuple[str, bool, Callable[[Mapping[str, Any]], list[str]]]] = {
    "PersistentVolume": ("v1", False, validate_persistent_volume),
    "PersistentVolumeClaim": ("v1", True, validate_persistent_volume_claim),
    "StorageClass": ("storage.k8s.io/v1", False, validate_storage_class),
    "CSINode": ("storage.k8s.io/v1", False, validate_csi_node),
    "CSIDriver": ("storage.k8s.io/v1", False, validate_csi_driver),
    "CSIStorageCapacity": ("storage.k8s.io/v1", True, validate_csi_storage_capacity),
    "VolumeAttachment": ("storage.k8s.io/v1", False, validate_volume_attachment),
}


def validate_storage_object(kind: str, obj: Any) -> list[str]:
    """``"<field path>: <message>"`` for every problem of a storage object of ``kind``."""
    if not isinstance(obj, Mapping):
        return [f"{kind}: must be an object, got {_shown(obj)}"]
    entry = STORAGE_KINDS.get(kind)
    return entry[2](obj) if entry is not None else []
