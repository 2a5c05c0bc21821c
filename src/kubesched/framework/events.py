"""Cluster events and queueing hints (upstream ``staging/.../framework/types.go``).

A plugin that rejected a pod tells the queue which cluster events could make the pod schedulable
again; the queue then calls the plugin's hint function for each such event instead of retrying
the pod blindly.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.resources import compute_pod_resources


class ActionType(enum.IntFlag):
    """What happened to an object; bit flags like upstream's ``ActionType``."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_SCALE_UP = 1 << 11
    #: Any other change (an update we cannot classify more precisely).
    UPDATE_OTHER = 1 << 12
    #: ``UpdateNodeDeclaredFeature``: the node's ``status.declaredFeatures`` changed (raised from
    #: v1.36, where the NodeDeclaredFeatures gate is on).
    UPDATE_NODE_DECLARED_FEATURE = 1 << 13

    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_SCALE_UP
        | UPDATE_OTHER
        | UPDATE_NODE_DECLARED_FEATURE
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(enum.StrEnum):
    """The kind of object an event is about. ``AssignedPod``/``UnscheduledPod`` split pods as upstream;
    ``TargetPod`` (v1.37, ``SplitPodEvents``) is the pending pod's own update, which v1.35/v1.36
    report as ``UnscheduledPod``."""

    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    TARGET_POD = "TargetPod"
    NODE = "Node"
    NAMESPACE = "Namespace"
    PRIORITY_CLASS = "PriorityClass"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
    #: Storage kinds, named as upstream names them (``storage.k8s.io/`` for that group's kinds),
    #: which is also how the metrics label their events (``storage.k8s.io/StorageClassAdd``).
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    #: Custom resources our plugins read (ElasticQuota, PodGroup, NodeResourceTopology...).
    CUSTOM = "Custom"
    #: A timer owned by a plugin fired (for example a transfer window opened).
    TIMER = "Timer"
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: EventResource
    action: ActionType
    #: For CUSTOM and TIMER resources: the kind or timer name; for others a label used in metrics.
    label: str = ""

    def matches(self, other: ClusterEvent) -> bool:
        """Does the registered event ``self`` cover the incoming event ``other``?"""
        if self.resource == EventResource.WILDCARD:
            return True
        if self.resource != other.resource and not (
            self.resource == EventResource.POD and other.resource in _POD_KINDS
        ):
            return False
        if self.label and other.label and self.label != other.label:
            return False
        return bool(self.action & other.action)

    def __str__(self) -> str:
        name = self.label or self.resource.value
        return f"{name}{_action_name(self.action)}"


#: What ``Pod`` matches (upstream ``matchEventResources``): the incoming pod events' resources.
_POD_KINDS = frozenset((EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD))


def _action_name(action: ActionType) -> str:
    if action == ActionType.ALL:
        return "All"
    if action == ActionType.ADD:
        return "Add"
    if action == ActionType.DELETE:
        return "Delete"
    if action & ActionType.UPDATE and not action & (ActionType.ADD | ActionType.DELETE):
        return "Update"
    return "Change"


class QueueingHint(enum.Enum):
    QUEUE_SKIP = 0
    QUEUE = 1


#: ``hint(pod, old_obj, new_obj) -> QueueingHint``; an exception counts as Queue (upstream).
QueueingHintFn = Callable[[Mapping[str, Any], Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None


#: The EventResource of each kind delivered as an object event (``EventHandlers.on_object_event``);
#: other kinds are ``CUSTOM``, labelled with their kind.
OBJECT_EVENT_RESOURCES: dict[str, EventResource] = {
    "Namespace": EventResource.NAMESPACE,
    "PriorityClass": EventResource.PRIORITY_CLASS,
    "PodDisruptionBudget": EventResource.POD_DISRUPTION_BUDGET,
    "PersistentVolume": EventResource.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": EventResource.PERSISTENT_VOLUME_CLAIM,
    "CSINode": EventResource.CSI_NODE,
    "CSIDriver": EventResource.CSI_DRIVER,
    "VolumeAttachment": EventResource.VOLUME_ATTACHMENT,
    "CSIStorageCapacity": EventResource.CSI_STORAGE_CAPACITY,
    "StorageClass": EventResource.STORAGE_CLASS,
}
#: The storage kinds among them: their events carry no label, so they read as upstream's
#: ``Resource+Action`` (``PersistentVolumeClaimAdd``).
_UNLABELLED_RESOURCES = frozenset(OBJECT_EVENT_RESOURCES[k] for k in (
    "PersistentVolume", "PersistentVolumeClaim", "CSINode", "CSIDriver", "VolumeAttachment", "CSIStorageCapacity",
    "StorageClass"))


def object_event(kind: str, action: ActionType) -> ClusterEvent:
    """The cluster event of an object of ``kind`` added, updated or deleted."""
    resource = OBJECT_EVENT_RESOURCES.get(kind, EventResource.CUSTOM)
    return ClusterEvent(resource, action, "" if resource in _UNLABELLED_RESOURCES else kind)


# Events the framework itself raises.
WILDCARD_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "WildCard")
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
#: A pod to schedule arrived; raised only when a plugin asks for it (see runtime's
#: ``UNSCHEDULED_POD_ADD_EVENTS``), as upstream raises it only under the GangScheduling gate.
UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")


# -- pod updates and the labels of pod events (upstream framework/events.go, types.go Label) ------
#: Upstream ``ActionType.String()`` of the actions a pod event carries; our ``UPDATE_OTHER`` is
#: upstream's bare ``Update`` (an update no extractor recognised).
_UPSTREAM_ACTION_NAMES: dict[ActionType, str] = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_SCALE_UP: "UpdatePodScaleUp",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_OTHER: "Update",
    ActionType.UPDATE: "Update",
    ActionType.ALL: "All",
}


def pod_resource_name(resource: EventResource, split_pod_events: bool) -> str:
    """The resource part of a pod event's label: v1.35/v1.36 call unscheduled pods (the pending
    pod itself included) ``UnschedulablePod``; v1.37 (``SplitPodEvents``) ``UnscheduledPod`` and
    ``TargetPod``."""
    if resource in (EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD) and not split_pod_events:
        return "UnschedulablePod"
    return resource.value


def event_label(event: ClusterEvent, split_pod_events: bool) -> str:
    """Upstream ``ClusterEvent.Label()`` (resource + action), the ``event`` label of
    ``scheduler_queue_incoming_pods_total`` and ``scheduler_event_handling_duration_seconds``.

    Pod events are named as the release names them; other events keep ``str(event)``."""
    if event.label or event.resource not in _POD_KINDS:
        return str(event)
    name = _UPSTREAM_ACTION_NAMES.get(event.action) or _action_name(event.action)
    return pod_resource_name(event.resource, split_pod_events) + name


_RESOURCE_INPUTS_SPEC = ("containers", "initContainers", "overhead", "resources")
_RESOURCE_INPUTS_STATUS = ("containerStatuses", "initContainerStatuses", "resize")


def _requests_changed(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Cheap guard: nothing requests are computed from changed, so neither scale event applies."""
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    if any(ns.get(k) != os_.get(k) for k in _RESOURCE_INPUTS_SPEC):
        return True
    nst, ost = new.get("status") or {}, old.get("status") or {}
    return any(nst.get(k) != ost.get(k) for k in _RESOURCE_INPUTS_STATUS)


def _pod_scaled_down(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """``extractPodScaleDown``: some request of the pod went down (or was removed)."""
    before = compute_pod_resources(old).requests
    after = compute_pod_resources(new).requests
    if (
        before.milli_cpu > after.milli_cpu
        or before.memory > after.memory
        or before.ephemeral_storage > after.ephemeral_storage
    ):
        return True
    return any(q > after.scalar_resources.get(name, 0) for name, q in before.scalar_resources.items())


def pod_scheduling_properties_change(
    new: Mapping[str, Any], old: Mapping[str, Any], *, target: bool, split_pod_events: bool
) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange``: one event per kind of change of a pod update,
    as the queue asks the hints and labels the metrics, or a bare Update when none applies.

    The resource: ``AssignedPod`` for a pod with a node; else ``TargetPod`` when the pending pod
    itself is the subject (``target``, the queue's Update) from v1.37, ``UnscheduledPod``
    otherwise. Not ported: ``extractPodScaleUp`` (v1.37, KEP-5836) and
    ``extractPodGeneratedResourceClaimChange`` (DRA; kubesched rejects pods with claims)."""
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    if ns.get("nodeName"):
        resource = EventResource.ASSIGNED_POD
    elif target and split_pod_events:
        resource = EventResource.TARGET_POD
    else:
        resource = EventResource.UNSCHEDULED_POD
    events: list[ClusterEvent] = []
    # Semantic.DeepEqual: an absent map equals an empty one.
    if ((new.get("metadata") or {}).get("labels") or {}) != ((old.get("metadata") or {}).get("labels") or {}):
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_LABEL))
    if _requests_changed(new, old) and _pod_scaled_down(new, old):
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCALE_DOWN))
    if not ns.get("schedulingGates") and os_.get("schedulingGates"):
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))
    # Tolerations can only be added (API validation), so a new length is the change.
    if len(ns.get("tolerations") or ()) != len(os_.get("tolerations") or ()):
        events.append(ClusterEvent(resource, ActionType.UPDATE_POD_TOLERATION))
    if not events:
        events.append(ClusterEvent(resource, ActionType.UPDATE_OTHER))
    return events
