"""SchedulingGates: pods with ``spec.schedulingGates`` wait at PreEnqueue until every gate is removed
(upstream ``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, pod_uid
from kubesched.plugins import names


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    name = names.SCHEDULING_GATES

    def __init__(self, args: Any = None, handle: Any = None) -> None:
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
    def _is_schedulable_after_update_pod(pod: Mapping[str, Any], old: Any, new: Any) -> QueueingHint:
        if new is None or pod_uid(new) != pod_uid(pod):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
