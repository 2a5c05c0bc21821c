"""What the volume plugins read of storage objects: typed views of PersistentVolumeClaim,
PersistentVolume, StorageClass, CSINode, CSIDriver, CSIStorageCapacity and VolumeAttachment, of a
pod's volumes, and the storage helpers they share.

The helpers are upstream's k8s.io/component-helpers ``storage/volume`` and ``storage/ephemeral``
(storage class of a claim or volume, PV node affinity, generated claim names and ownership) and
cloud-provider's ``LabelZonesToSet``; docs/dev/volumes-plan.md lists their exact rules.

Views are built from the API server's JSON with ``from_object`` and never raise: a field of the
wrong type reads as absent (what the API server would never send; the simulator refuses such
manifests with :mod:`kubesched.api.storage_validation` before they get here). Parses that can fail
on their own (a PV's node affinity, a claim's selector) are done on first use and report their
failure the way upstream's callers see it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from kubesched.api.errors import InvalidObjectError
from kubesched.api.labels import IN, Requirement, Selector, selector_from_label_selector
from kubesched.api.nodeaffinity import NodeSelector
from kubesched.api.quantity import QuantityError, parse_quantity

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "MIGRATED_PLUGINS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "READ_WRITE_ONCE_POD",
    "TOPOLOGY_LABELS",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodVolume",
    "StorageClass",
    "VolumeAttachment",
    "ephemeral_claim_name",
    "label_zones_to_set",
    "match_topology_selector_terms",
    "not_found_message",
    "pod_volumes",
    "translate_to_ga_label",
    "volume_is_for_pod",
]

#: PVC and PV annotations of the PV controller and the scheduler (component-helpers storage/volume).
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: ``v1.BetaStorageClassAnnotation``: wins over ``spec.storageClassName`` when present.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
#: ``v1.MigratedPluginsAnnotationKey`` on CSINode: comma-separated in-tree plugins migrated to CSI.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
#: A StorageClass provisioner saying the storage cannot be provisioned dynamically.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
FILESYSTEM = "Filesystem"

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
#: The labels VolumeZone compares, in upstream's order.
TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)
#: cloud-provider ``LabelMultiZoneDelimiter``.
LABEL_MULTI_ZONE_DELIMITER = "__"

#: The GroupResource each informer lister names in its NotFound error (client-go listers use the
#: singular resource: ``persistentvolumeclaim "x" not found``).
_LISTER_RESOURCES = {
    "PersistentVolumeClaim": "persistentvolumeclaim",
    "PersistentVolume": "persistentvolume",
    "StorageClass": "storageclass.storage.k8s.io",
    "CSINode": "csinode.storage.k8s.io",
    "CSIDriver": "csidriver.storage.k8s.io",
    "CSIStorageCapacity": "csistoragecapacity.storage.k8s.io",
    "VolumeAttachment": "volumeattachment.storage.k8s.io",
}

_EMPTY: Mapping[str, str] = {}


def not_found_message(kind: str, name: str) -> str:
    """The text of the NotFound error an informer lister returns (``apierrors.NewNotFound``)."""
    return f'{_LISTER_RESOURCES.get(kind, kind.lower())} "{name}" not found'


# -- small readers ----------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _opt_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list | tuple) else ()


def _string_map(value: Any) -> Mapping[str, str]:
    if not isinstance(value, Mapping) or not value:
        return _EMPTY
    return {str(k): v for k, v in value.items() if isinstance(v, str)}


def _quantity(value: Any) -> Fraction | None:
    """A quantity's exact value, None when absent or unparsable."""
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return parse_quantity(value.strip() if isinstance(value, str) else value)
    except QuantityError:
        return None


def quantity_value(q: Fraction | None) -> int:
    """``Quantity.Value()``: rounded up (away from zero) to an integer; 0 for an absent quantity."""
    if q is None:
        return 0
    return math.ceil(q) if q >= 0 else -math.ceil(-q)


@dataclass(frozen=True, slots=True)
class _Meta:
    name: str
    namespace: str
    uid: str
    resource_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    deleting: bool
    #: UID of the ownerReference with ``controller: true`` (``metav1.GetControllerOf``), None
    #: without one (a controller reference with no UID is still one: ``IsControlledBy`` compares UIDs).
    controller_uid: str | None

    @classmethod
    def read(cls, obj: Mapping[str, Any], *, namespaced: bool) -> _Meta:
        md = _map(obj.get("metadata"))
        controller: str | None = None
        refs = md.get("ownerReferences")
        for ref in refs if isinstance(refs, list) else ():
            if isinstance(ref, Mapping) and ref.get("controller") is True:
                controller = _str(ref.get("uid"))
                break
        return cls(
            name=_str(md.get("name")),
            namespace=(_str(md.get("namespace")) or "default") if namespaced else "",
            uid=_str(md.get("uid")),
            resource_version=_str(md.get("resourceVersion")),
            labels=_string_map(md.get("labels")),
            annotations=_string_map(md.get("annotations")),
            deleting=bool(md.get("deletionTimestamp")),
            controller_uid=controller,
        )


# -- PersistentVolumeClaim --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    """What the scheduler reads of a v1 PersistentVolumeClaim."""

    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    namespace: str
    uid: str
    resource_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    deleting: bool
    controller_uid: str | None
    volume_name: str
    #: ``spec.storageClassName``; None when unset (which differs from ""), see :attr:`storage_class`.
    storage_class_name: str | None
    access_modes: tuple[str, ...]
    #: ``spec.resources.requests[storage]``, exact; None when the claim requests no storage.
    requested_storage: Fraction | None
    volume_mode: str
    volume_attributes_class_name: str
    phase: str
    _selector: Any = field(repr=False, compare=False)

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> PersistentVolumeClaim:
        m = _Meta.read(obj, namespaced=True)
        spec = _map(obj.get("spec"))
        requests = _map(_map(spec.get("resources")).get("requests"))
        return cls(
            obj=obj,
            name=m.name,
            namespace=m.namespace,
            uid=m.uid,
            resource_version=m.resource_version,
            labels=m.labels,
            annotations=m.annotations,
            deleting=m.deleting,
            controller_uid=m.controller_uid,
            volume_name=_str(spec.get("volumeName")),
            storage_class_name=_opt_str(spec.get("storageClassName")),
            access_modes=_strings(spec.get("accessModes")),
            requested_storage=_quantity(requests.get("storage")),
            volume_mode=_str(spec.get("volumeMode")) or FILESYSTEM,
            volume_attributes_class_name=_str(spec.get("volumeAttributesClassName")),
            phase=_str(_map(obj.get("status")).get("phase")),
            _selector=spec.get("selector"),
        )

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def storage_class(self) -> str:
        """``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName``, else ""."""
        if BETA_STORAGE_CLASS_ANNOTATION in self.annotations:
            return self.annotations[BETA_STORAGE_CLASS_ANNOTATION]
        return self.storage_class_name or ""

    @property
    def has_class(self) -> bool:
        """``PersistentVolumeClaimHasClass``: the annotation or ``spec.storageClassName`` is set."""
        return BETA_STORAGE_CLASS_ANNOTATION in self.annotations or self.storage_class_name is not None

    @property
    def fully_bound(self) -> bool:
        """Bound to a volume and past the PV controller's initial setup (``isPVCFullyBound``)."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    def has_access_mode(self, mode: str) -> bool:
        return mode in self.access_modes

    @property
    def request_value(self) -> int:
        """``requests[storage].Value()`` (0 without a request)."""
        return quantity_value(self.requested_storage)

    def selector(self) -> Selector | None:
        """``spec.selector`` as a selector, None when unset; raises InvalidObjectError when malformed."""
        if self._selector is None:
            return None
        return selector_from_label_selector(self._selector, "spec.selector")


# -- PersistentVolume -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class CSISource:
    driver: str
    volume_handle: str


@dataclass(frozen=True)
class PersistentVolume:
    """What the scheduler reads of a v1 PersistentVolume."""

    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    uid: str
    resource_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    deleting: bool
    #: ``spec.storageClassName`` ("" when unset); see :attr:`storage_class`.
    storage_class_name: str
    #: ``spec.capacity[storage]``, exact; None when absent (compares as zero).
    capacity: Fraction | None
    access_modes: tuple[str, ...]
    volume_mode: str
    volume_attributes_class_name: str
    claim_ref: ClaimRef | None
    phase: str
    csi: CSISource | None
    spec: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> PersistentVolume:
        m = _Meta.read(obj, namespaced=False)
        spec = _map(obj.get("spec"))
        ref = spec.get("claimRef")
        csi = spec.get("csi")
        return cls(
            obj=obj,
            name=m.name,
            uid=m.uid,
            resource_version=m.resource_version,
            labels=m.labels,
            annotations=m.annotations,
            deleting=m.deleting,
            storage_class_name=_str(spec.get("storageClassName")),
            capacity=_quantity(_map(spec.get("capacity")).get("storage")),
            access_modes=_strings(spec.get("accessModes")),
            volume_mode=_str(spec.get("volumeMode")) or FILESYSTEM,
            volume_attributes_class_name=_str(spec.get("volumeAttributesClassName")),
            claim_ref=(
                ClaimRef(_str(ref.get("namespace")), _str(ref.get("name")), _str(ref.get("uid")))
                if isinstance(ref, Mapping)
                else None
            ),
            phase=_str(_map(obj.get("status")).get("phase")),
            csi=(
                CSISource(_str(csi.get("driver")), _str(csi.get("volumeHandle"))) if isinstance(csi, Mapping) else None
            ),
            spec=spec,
        )

    @property
    def storage_class(self) -> str:
        """``GetPersistentVolumeClass``: the beta annotation, else ``spec.storageClassName``."""
        if BETA_STORAGE_CLASS_ANNOTATION in self.annotations:
            return self.annotations[BETA_STORAGE_CLASS_ANNOTATION]
        return self.storage_class_name

    @property
    def capacity_value(self) -> int:
        return quantity_value(self.capacity)

    @cached_property
    def _node_affinity(self) -> NodeSelector | None:
        affinity = self.spec.get("nodeAffinity")
        if affinity is None:
            return None
        required = affinity.get("required") if isinstance(affinity, Mapping) else affinity
        if required is None:
            return None
        if not isinstance(required, Mapping):  # malformed: like a malformed term, never matches
            return NodeSelector({}, lazy=True)
        try:
            return NodeSelector(required, "spec.nodeAffinity.required", lazy=True)
        except InvalidObjectError:  # nodeSelectorTerms not a list: no term can match
            return NodeSelector({}, lazy=True)

    def matches_node_labels(self, labels: Mapping[str, str]) -> bool:
        """``CheckNodeAffinity``: no required node affinity, or a term matching a node that has
        exactly these labels (and no name: a ``matchFields`` term on ``metadata.name`` sees "").
        A malformed term never matches."""
        selector = self._node_affinity
        if selector is None:
            return True
        return selector.match({"metadata": {"labels": labels}})

    def is_bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """``IsVolumeBoundToClaim``: claimRef names the claim (and its UID, when the ref has one)."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid


# -- StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment --------------------


def match_topology_selector_terms(terms: Sequence[Any], labels: Mapping[str, str]) -> bool:
    """``MatchTopologySelectorTerms``: no terms match everything; terms are ORed, a term's
    expressions (key In values) ANDed; an empty or invalid term matches nothing."""
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") if isinstance(term, Mapping) else None
        if not isinstance(exprs, list) or not exprs:
            continue
        try:
            reqs = [
                Requirement(_str(e.get("key")), IN, _strings(e.get("values")))
                for e in exprs
                if isinstance(e, Mapping)
            ]
        except InvalidObjectError:
            continue
        if len(reqs) == len(exprs) and Selector(reqs).matches(labels):
            return True
    return False


@dataclass(frozen=True, slots=True)
class StorageClass:
    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    provisioner: str
    #: None when unset (the API server defaults it to Immediate; upstream helpers then refuse the class).
    volume_binding_mode: str | None
    allowed_topologies: tuple[Any, ...]

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> StorageClass:
        topologies = obj.get("allowedTopologies")
        return cls(
            obj=obj,
            name=_str(_map(obj.get("metadata")).get("name")),
            provisioner=_str(obj.get("provisioner")),
            volume_binding_mode=_opt_str(obj.get("volumeBindingMode")),
            allowed_topologies=tuple(topologies) if isinstance(topologies, list) else (),
        )

    @property
    def wait_for_first_consumer(self) -> bool:
        return self.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    def allows_node_labels(self, labels: Mapping[str, str]) -> bool:
        """Whether ``allowedTopologies`` admits a node with these labels."""
        return match_topology_selector_terms(self.allowed_topologies, labels)


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str
    #: ``allocatable.count``: how many volumes of this driver the node can attach; None = no limit.
    allocatable_count: int | None
    topology_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CSINode:
    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    annotations: Mapping[str, str]
    drivers: tuple[CSINodeDriver, ...]

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> CSINode:
        m = _Meta.read(obj, namespaced=False)
        drivers: list[CSINodeDriver] = []
        raw = _map(obj.get("spec")).get("drivers")
        for d in raw if isinstance(raw, list) else ():
            if not isinstance(d, Mapping):
                continue
            count = _map(d.get("allocatable")).get("count")
            drivers.append(
                CSINodeDriver(
                    name=_str(d.get("name")),
                    node_id=_str(d.get("nodeID")),
                    allocatable_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
                    topology_keys=_strings(d.get("topologyKeys")),
                )
            )
        return cls(obj=obj, name=m.name, annotations=m.annotations, drivers=tuple(drivers))

    @property
    def migrated_plugins(self) -> frozenset[str]:
        """The in-tree plugins the node's annotation says are migrated to CSI."""
        value = self.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
        return frozenset(value.split(",")) if value else frozenset()

    def driver(self, name: str) -> CSINodeDriver | None:
        for d in self.drivers:
            if d.name == name:
                return d
        return None


@dataclass(frozen=True, slots=True)
class CSIDriver:
    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    attach_required: bool | None
    storage_capacity: bool | None
    prevent_pod_scheduling_if_missing: bool | None

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> CSIDriver:
        spec = _map(obj.get("spec"))
        return cls(
            obj=obj,
            name=_str(_map(obj.get("metadata")).get("name")),
            attach_required=_opt_bool(spec.get("attachRequired")),
            storage_capacity=_opt_bool(spec.get("storageCapacity")),
            prevent_pod_scheduling_if_missing=_opt_bool(spec.get("preventPodSchedulingIfMissing")),
        )


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    namespace: str
    storage_class_name: str
    capacity: Fraction | None
    maximum_volume_size: Fraction | None
    _node_topology: Any = field(repr=False, compare=False)

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> CSIStorageCapacity:
        m = _Meta.read(obj, namespaced=True)
        return cls(
            obj=obj,
            name=m.name,
            namespace=m.namespace,
            storage_class_name=_str(obj.get("storageClassName")),
            capacity=_quantity(obj.get("capacity")),
            maximum_volume_size=_quantity(obj.get("maximumVolumeSize")),
            _node_topology=obj.get("nodeTopology"),
        )

    @property
    def volume_limit(self) -> Fraction | None:
        """``volumeLimit``: the maximum volume size when published, else the capacity (None: neither)."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity

    def node_has_access(self, labels: Mapping[str, str]) -> bool:
        """``nodeHasAccess``: a nodeTopology selector that selects the node (none: no access)."""
        if self._node_topology is None:
            return False
        try:
            return selector_from_label_selector(self._node_topology).matches(labels)
        except InvalidObjectError:
            return False


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    obj: Mapping[str, Any] = field(repr=False, compare=False)
    name: str
    attacher: str
    node_name: str
    #: ``spec.source.persistentVolumeName``; None for an inline volume's attachment.
    persistent_volume_name: str | None

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> VolumeAttachment:
        spec = _map(obj.get("spec"))
        return cls(
            obj=obj,
            name=_str(_map(obj.get("metadata")).get("name")),
            attacher=_str(spec.get("attacher")),
            node_name=_str(spec.get("nodeName")),
            persistent_volume_name=_opt_str(_map(spec.get("source")).get("persistentVolumeName")),
        )


# -- a pod's volumes ----------------------------------------------------------------------------

#: Inline volume sources VolumeRestrictions compares between pods (``needsRestrictionsCheck``).
RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One entry of ``spec.volumes``: its name, its source's kind (the one source key set) and the
    source itself; ``claim_name`` for a persistentVolumeClaim volume."""

    name: str
    kind: str
    source: Mapping[str, Any]
    claim_name: str = ""

    @property
    def is_pvc(self) -> bool:
        return self.kind == "persistentVolumeClaim"

    @property
    def is_ephemeral(self) -> bool:
        return self.kind == "ephemeral"


def pod_volumes(pod: Mapping[str, Any]) -> tuple[PodVolume, ...]:
    """The pod's volumes, in order. A volume has exactly one source (API validation); a volume
    without a known source key reads as kind ""."""
    spec = _map(pod.get("spec"))
    raw = spec.get("volumes")
    out: list[PodVolume] = []
    for v in raw if isinstance(raw, list) else ():
        if not isinstance(v, Mapping):
            continue
        kind, source = "", _EMPTY_SOURCE
        for key, value in v.items():
            if key != "name" and isinstance(value, Mapping):
                kind, source = str(key), value
                break
        claim = _str(source.get("claimName")) if kind == "persistentVolumeClaim" else ""
        out.append(PodVolume(_str(v.get("name")), kind, source, claim))
    return tuple(out)


_EMPTY_SOURCE: Mapping[str, Any] = {}


def ephemeral_claim_name(pod_name: str, volume_name: str) -> str:
    """``ephemeral.VolumeClaimName``: the claim the ephemeral volume controller creates."""
    return f"{pod_name}-{volume_name}"


def volume_is_for_pod(pod_namespace: str, pod_name: str, pod_uid: str, pvc: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when the claim was created for the pod (same namespace,
    controlled by the pod's UID), else upstream's error text."""
    if pvc.namespace != pod_namespace or pvc.controller_uid is None or pvc.controller_uid != pod_uid:
        return (
            f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod_namespace}/{pod_name} (pod is not owner)"
        )
    return None


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """cloud-provider ``LabelZonesToSet``: ``a__b`` -> {a, b} (items trimmed); None when an item is
    empty (upstream's error: the caller ignores the label)."""
    zones = [z.strip() for z in value.split(LABEL_MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def translate_to_ga_label(label: str) -> str:
    """The GA twin of a beta zone/region label (VolumeZone's ``translateToGALabel``)."""
    if label == LABEL_FAILURE_DOMAIN_BETA_REGION:
        return LABEL_TOPOLOGY_REGION
    if label == LABEL_FAILURE_DOMAIN_BETA_ZONE:
        return LABEL_TOPOLOGY_ZONE
    return label
