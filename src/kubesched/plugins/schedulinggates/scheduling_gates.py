"""SchedulingGates: pods with ``spec.schedulingGates`` wait at PreEnqueue until every gate is removed
(upstream ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``)."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, Handle, PreEnqueuePlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, PodInfo, pod_uid
from kubesched.plugins import names
from kubesched.plugins.jsonview import as_object


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    name = names.SCHEDULING_GATES

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        pass

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        gates = pod.scheduling_gates
        if not gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{' '.join(gates)}]")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self._is_schedulable_after_update_pod,
            )
        ]

    @staticmethod
    def _is_schedulable_after_update_pod(pod: JSONObj, old: object, new: object) -> QueueingHint:
        modified = as_object(new, "Pod")
        if modified is None or pod_uid(modified) != pod_uid(pod):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
