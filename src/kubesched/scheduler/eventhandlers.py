"""The Scheduler's event handlers: cluster changes into the cache and the queue (upstream ``eventhandlers.go``).

The backend calls them (the Scheduler registers itself as its
:class:`kubesched.framework.cluster.EventHandlers`); an assigned pod goes to the cache, an
unassigned one this scheduler is responsible for to the queue, and every change may move
waiting pods back to activeQ or backoffQ.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from kubesched.config.releases import NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE, SPLIT_POD_EVENTS
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    UNSCHEDULED_POD_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
    event_label,
    object_event,
    pod_resource_name,
    pod_scheduling_properties_change,
)
from kubesched.framework.types import PodInfo, QueuedPodInfo, same_parse_inputs, same_spec_inputs
from kubesched.scheduler.base import SchedulerBase


class EventHandlersMixin(SchedulerBase):
    """``on_*``: what :class:`kubesched.framework.cluster.EventHandlers` asks for."""

    def responsible_for(self, pod: Mapping[str, Any]) -> bool:
        sched = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        return sched in self.frameworks

    @staticmethod
    def _assigned(pod: Mapping[str, Any]) -> bool:
        return bool((pod.get("spec") or {}).get("nodeName"))

    @staticmethod
    def _terminated(pod: Mapping[str, Any]) -> bool:
        return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")

    def _split_pod_events(self) -> bool:
        """v1.37's pod event names (``SplitPodEvents``): UnscheduledPod/TargetPod labels."""
        return self.config.release.has(SPLIT_POD_EVENTS)

    def _unscheduled_label(self, action: str) -> str:
        """``EventUnscheduledPod<action>.Label()``: ``UnschedulablePod…`` before v1.37."""
        return pod_resource_name(EventResource.UNSCHEDULED_POD, self._split_pod_events()) + action

    def _pod_events(
        self, old: Mapping[str, Any] | None, new: Mapping[str, Any], *, target: bool
    ) -> list[ClusterEvent]:
        """``PodSchedulingPropertiesChange``; without the old object, a bare Update."""
        split = self._split_pod_events()
        if old is None:
            resource = (
                EventResource.ASSIGNED_POD
                if self._assigned(new)
                else EventResource.TARGET_POD if target and split else EventResource.UNSCHEDULED_POD
            )
            return [ClusterEvent(resource, ActionType.UPDATE_OTHER)]
        return pod_scheduling_properties_change(new, old, target=target, split_pod_events=split)

    def _nominated_pod_gone(self, pod: Mapping[str, Any]) -> None:
        """A pod with a nominated node left it (deleted, or nominated elsewhere): lower or equal
        priority pods counted it as if assigned there, so it is an AssignedPodDelete for them."""
        priority = PodInfo(dict(pod)).priority

        def lower_or_equal(qpi: QueuedPodInfo) -> bool:
            return qpi.pod_info.priority <= priority

        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None, lower_or_equal)

    def _on_pod_add(self, pod: dict[str, Any]) -> str | None:
        if self._terminated(pod):
            return None
        if self._assigned(pod):
            pi = PodInfo(pod)
            self.cache.add_pod(pi)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)
            return "AssignedPodAdd"
        if self.responsible_for(pod):
            label = self._unscheduled_label("Add")
            self.queue.add(pod, label)
            if self._unscheduled_pod_add_events:
                # Upstream addPodToSchedulingQueue under the GangScheduling feature gate.
                self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, pod)
            return label
        return None  # upstream's informer filter never hands over another scheduler's pod

    def _on_pod_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
        """The update's ``event`` labels, as upstream observes them: the handler's own
        (AssignedPodUpdate / UnschedulablePodUpdate) and one per specific event."""
        if self._terminated(new):
            self._on_pod_delete(new)
        elif self._assigned(new):
            was_assigned = old is not None and self._assigned(old)
            if not was_assigned:
                self.queue.delete(new)  # bound (by us or someone else): out of the queue
            pi = PodInfo(new)
            prev = self.cache.get_pod(pi.uid)
            if prev is not None:
                if same_parse_inputs(prev.pod, new):
                    pi.inherit_parses(prev)  # e.g. the echo of our own binding: nothing to parse again
                elif same_spec_inputs(prev.pod, new):
                    pi.inherit_parses(prev, spec_only=True)  # a binding whose PreBind annotated the pod
            self.cache.update_pod(pi)
            if not was_assigned:
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, old, new)
                return ["AssignedPodUpdate"]
            # Upstream updateAssignedPodInCache: one move per specific event, each observed.
            labels = ["AssignedPodUpdate"]
            for event in self._pod_events(old, new, target=False):
                self.queue.move_all_to_active_or_backoff(event, old, new)
                labels.append(event_label(event, False))
            return labels
        # Upstream updatePodInSchedulingQueue: an assumed pod (its binding cycle patching it, e.g.
        # at PreBind) is not scheduled again.
        elif self.responsible_for(new) and not self.cache.is_assumed(str((new.get("metadata") or {}).get("uid") or "")):
            # The queue asks about the pod's own update (TargetPod from v1.37); the handler's labels
            # are of the same changes as UnscheduledPod events (upstream passes isTargetPod=false).
            events = self._pod_events(old, new, target=True)
            self.queue.update(old, new, events)
            split = self._split_pod_events()
            base = self._unscheduled_label("Update")
            labels = [base]
            for event in events:
                label = event_label(ClusterEvent(EventResource.UNSCHEDULED_POD, event.action), split)
                if label != base:
                    labels.append(label)
            old_nominated = ((old or {}).get("status") or {}).get("nominatedNodeName")
            if old_nominated and old_nominated != (new.get("status") or {}).get("nominatedNodeName"):
                self._nominated_pod_gone(old or {})
            return labels
        return ["AssignedPodUpdate" if self._assigned(new) else self._unscheduled_label("Update")]

    def _on_pod_delete(self, pod: dict[str, Any]) -> str:
        pi = PodInfo(pod)
        if self._assigned(pod) or (self.cache.get_pod(pi.uid) is not None and not self.cache.is_assumed(pi.uid)):
            self.cache.remove_pod(pi)
            with self._lock:
                # Gone for good: a pod created again under the same UID is a new pod to schedule.
                self._bound_uids.discard(pi.uid)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
            return "AssignedPodDelete"
        # Upstream deletePodFromSchedulingQueue: an unbound pod leaves the queue; if it was waiting
        # at Permit it is rejected now (its binding cycle then unreserves and forgets it), and its
        # resources are as good as freed.
        self.queue.delete(pod)
        rejected = [fw.reject_waiting_pod(pi.uid) for fw in self.frameworks.values()]
        if any(rejected):
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
        elif (pod.get("status") or {}).get("nominatedNodeName"):
            self._nominated_pod_gone(pod)
        return self._unscheduled_label("Delete")

    def _on_node_add(self, node: dict[str, Any]) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def _on_node_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        self.cache.update_node(new)
        action = _node_update_action(
            old, new, declared_features=self.config.release.has(NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE)
        )
        if action:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE, action), old, new)

    def _on_node_delete(self, node: dict[str, Any]) -> None:
        self.cache.remove_node(node["metadata"]["name"])
        self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE, ActionType.DELETE), node, None)

    def _on_object_event(self, kind: str, action: ActionType, old: Any, new: Any) -> str:
        """Any other kind (Namespace, PriorityClass, PDB, storage objects, custom resources) changed;
        returns the event's label (storage kinds as upstream: ``storage.k8s.io/StorageClassAdd``)."""
        event = object_event(kind, action)
        self.queue.move_all_to_active_or_backoff(event, old, new)
        return str(event)

    # -- the handlers, timed as upstream's (scheduler_event_handling_duration_seconds{event}) -------
    def _observe(self, label: str | None, start: float) -> None:
        if label is not None:
            self.metrics.observe_event_handling(label, time.perf_counter() - start)

    def on_pod_add(self, pod: dict[str, Any]) -> None:
        start = time.perf_counter()
        self._observe(self._on_pod_add(pod), start)

    def on_pod_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        start = time.perf_counter()
        for label in self._on_pod_update(old, new):
            self._observe(label, start)

    def on_pod_delete(self, pod: dict[str, Any]) -> None:
        start = time.perf_counter()
        self._observe(self._on_pod_delete(pod), start)

    def on_node_add(self, node: dict[str, Any]) -> None:
        start = time.perf_counter()
        self._on_node_add(node)
        self._observe("NodeAdd", start)

    def on_node_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        start = time.perf_counter()
        self._on_node_update(old, new)
        self._observe("NodeUpdate", start)

    def on_node_delete(self, node: dict[str, Any]) -> None:
        start = time.perf_counter()
        self._on_node_delete(node)
        self._observe("NodeDelete", start)

    def on_object_event(self, kind: str, action: ActionType, old: Any, new: Any) -> None:
        """Any other kind (Namespace, PriorityClass, PDB, custom resources) changed."""
        start = time.perf_counter()
        self._observe(self._on_object_event(kind, action, old, new), start)

def _node_update_action(
    old: Mapping[str, Any] | None, new: Mapping[str, Any], *, declared_features: bool = False
) -> ActionType:
    """Upstream ``NodeSchedulingPropertiesChange``; ``declared_features``: the NodeDeclaredFeatures
    gate is on (from v1.36), which adds ``extractNodeFeaturesChange``."""
    if old is None:
        return ActionType.UPDATE_OTHER
    action = ActionType(0)
    ost, nst = old.get("status") or {}, new.get("status") or {}
    if ost.get("allocatable") != nst.get("allocatable"):
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    if om.get("labels") != nm.get("labels"):
        action |= ActionType.UPDATE_NODE_LABEL
    if om.get("annotations") != nm.get("annotations"):
        action |= ActionType.UPDATE_NODE_ANNOTATION
    os_, ns = old.get("spec") or {}, new.get("spec") or {}
    if os_.get("taints") != ns.get("taints") or os_.get("unschedulable") != ns.get("unschedulable"):
        action |= ActionType.UPDATE_NODE_TAINT
    if ost.get("conditions") != nst.get("conditions"):
        action |= ActionType.UPDATE_NODE_CONDITION
    if declared_features and (ost.get("declaredFeatures") or []) != (nst.get("declaredFeatures") or []):
        action |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return action
