"""VolumeZone: a pod's bound PersistentVolumes must lie in the node's zone and region
(upstream ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``).

PreFilter collects, for every persistentVolumeClaim volume of the pod, the zone and region labels
of the PersistentVolume its claim is bound to (``failure-domain.beta.kubernetes.io/{zone,region}``,
``topology.kubernetes.io/{zone,region}``; a value may list several zones joined by ``__``). Claims
still unbound are skipped when their StorageClass binds on first consumer (VolumeBinding picks a
volume for them), and refused otherwise. A pod with nothing to compare Skips. Filter passes a node
without any of the four labels (a single-zone cluster), and otherwise requires each collected
label on the node (a beta label on the volume may match the GA label on the node) with a value in
the volume's set. Generic ephemeral volumes are not looked at, as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubesched.api.storage import (
    TOPOLOGY_LABELS,
    PersistentVolume,
    label_zones_to_set,
    not_found_message,
    pod_volumes,
    translate_to_ga_label,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, FilterPlugin, Handle, PreFilterPlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.helper.storage_listers import StorageListers, volumes_of
from kubesched.plugins.helper.volumes_signer import VolumesSigner
from kubesched.plugins.jsonview import as_object, require_object

__all__ = [
    "ERR_REASON_CONFLICT",
    "PVTopology",
    "VolumeZone",
    "is_schedulable_after_persistent_volume_change",
    "is_schedulable_after_persistent_volume_claim_change",
    "is_schedulable_after_storage_class_added",
    "pv_topologies",
]

PRE_FILTER_STATE_KEY = "PreFilter" + names.VOLUME_ZONE
#: Upstream ``ErrReasonConflict``.
ERR_REASON_CONFLICT = "node(s) had no available volume zone"


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One zone or region label of a bound volume: the label key and the values it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


class _State:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        # Not changed by adding or removing pods.
        return self


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """The volume's topology labels, in upstream's label order; a label whose value does not
    parse (an empty zone in ``a__``) is ignored."""
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            out.append(PVTopology(pv.name, key, zones))
    return out


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def _claim_names(pod: JSONObj) -> list[str]:
    return [v.claim_name for v in pod_volumes(pod) if v.is_pvc]


class VolumeZone(VolumesSigner, EnqueueExtensions, PreFilterPlugin, FilterPlugin):
    name = names.VOLUME_ZONE
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        self.listers = StorageListers(handle)

    # -- PreFilter / Filter ---------------------------------------------------------------------
    def _pod_topologies(self, pod: PodInfo) -> tuple[list[PVTopology], Status | None]:
        """Upstream ``getPVbyPod``."""
        out: list[PVTopology] = []
        for claim_name in (v.claim_name for v in volumes_of(pod) if v.is_pvc):
            if not claim_name:
                return [], _unresolvable("PersistentVolumeClaim had no name")
            pvc = self.listers.pvc(pod.namespace, claim_name)
            if pvc is None:
                return [], _unresolvable(not_found_message("PersistentVolumeClaim", claim_name))
            if not pvc.volume_name:
                class_name = pvc.storage_class
                if not class_name:
                    return [], _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = self.listers.storage_class(class_name)
                if sc is None:
                    return [], _unresolvable(not_found_message("StorageClass", class_name))
                if sc.volume_binding_mode is None:
                    return [], _unresolvable(f'VolumeBindingMode not set for StorageClass "{class_name}"')
                if sc.wait_for_first_consumer:
                    continue  # VolumeBinding chooses its volume
                return [], _unresolvable("PersistentVolume had no name")
            pv = self.listers.pv(pvc.volume_name)
            if pv is None:
                return [], _unresolvable(not_found_message("PersistentVolume", pvc.volume_name))
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.get("volumes"):
            return None, Status(Code.SKIP)  # the common case, kept as cheap as the stand-ins were
        topologies, status = self._pod_topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not pod.spec.get("volumes"):
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _State):
            topologies = s.topologies
        else:
            # PreFilter did not run (disabled in the profile): compute here, as upstream.
            topologies, status = self._pod_topologies(pod)
            if status is not None:
                return status
        labels = node_info.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone labels: a single-zone cluster
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(translate_to_ga_label(t.key))
            if value is None or value not in t.values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None

    # -- EnqueueExtensions ----------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # StorageClass updates are not registered: volumeBindingMode is immutable.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), is_schedulable_after_storage_class_added
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_persistent_volume_change,
            ),
        ]


def _namespace(obj: JSONObj) -> str:
    md = obj.get("metadata")
    ns = md.get("namespace") if isinstance(md, Mapping) else None
    return ns if isinstance(ns, str) and ns else "default"


def _name(obj: JSONObj) -> str:
    md = obj.get("metadata")
    name = md.get("name") if isinstance(md, Mapping) else None
    return name if isinstance(name, str) else ""


def is_schedulable_after_persistent_volume_claim_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when the claim added or updated is one of the pod's (same namespace, named by a
    persistentVolumeClaim volume)."""
    pvc = require_object(new, "PersistentVolumeClaim")
    if _namespace(pvc) != _namespace(pod):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if _name(pvc) in _claim_names(pod) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_storage_class_added(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue only for a class binding on first consumer: the pod's unbound claims of it no
    longer count."""
    sc = require_object(new, "StorageClass")
    return QueueingHint.QUEUE if sc.get("volumeBindingMode") == "WaitForFirstConsumer" else QueueingHint.QUEUE_SKIP


def is_schedulable_after_persistent_volume_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue for a new volume, or one whose zone or region labels changed."""
    before = as_object(old, "PersistentVolume")
    after = require_object(new, "PersistentVolume")
    if before is None:
        return QueueingHint.QUEUE
    if pv_topologies(PersistentVolume.from_object(before)) != pv_topologies(PersistentVolume.from_object(after)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
