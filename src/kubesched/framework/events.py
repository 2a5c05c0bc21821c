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
    )
    ALL = ADD | DELETE | UPDATE


class EventResource(enum.StrEnum):
    """The kind of object an event is about. ``AssignedPod``/``UnscheduledPod`` split pods as upstream."""

    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    NAMESPACE = "Namespace"
    PRIORITY_CLASS = "PriorityClass"
    POD_DISRUPTION_BUDGET = "PodDisruptionBudget"
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
        if self.resource != other.resource:
            pod_kinds = {EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD}
            if not (self.resource == EventResource.POD and other.resource in pod_kinds):
                return False
        if self.label and other.label and self.label != other.label:
            return False
        return bool(self.action & other.action)

    def __str__(self) -> str:
        name = self.label or self.resource.value
        return f"{name}{_action_name(self.action)}"


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
