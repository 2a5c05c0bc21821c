"""``UnscheduledPod``/``Add`` events: raised only while an enabled plugin asks for them.

Upstream (v1.35, pkg/scheduler/eventhandlers.go ``addPodToSchedulingQueue``) raises the event
for every arriving pod to schedule only under the GangScheduling feature gate; kubesched turns it
on with the plugin class attribute ``unscheduled_pod_add_events`` (framework/runtime.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.events import (
    UNSCHEDULED_POD_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.testing import make_node, make_pod, new_framework

GROUP = "example.com/group"


class NeedsSibling:
    """Parks a pod at PreEnqueue until another pod with the same group label exists."""

    name = "NeedsSibling"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.hints: list[tuple[str, str]] = []

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        group = pod.labels.get(GROUP)
        pods = self.handle.client().list_objects("v1", "Pod")
        if sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(GROUP) == group) < 2:
            return Status.unresolvable("waiting for a sibling")
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), self._hint)]

    def _hint(self, pod: Mapping[str, Any], old: Any, new: Any) -> QueueingHint:
        self.hints.append((pod["metadata"]["name"], new["metadata"]["name"]))
        return QueueingHint.QUEUE


class NeedsSiblingWithEvents(NeedsSibling):
    name = "NeedsSiblingWithEvents"
    unscheduled_pod_add_events = True


def _pods() -> tuple[dict[str, Any], dict[str, Any]]:
    return make_pod("a").label(GROUP, "g").obj(), make_pod("b").label(GROUP, "g").obj()


def test_the_event_lets_a_parked_pod_in_when_its_sibling_arrives() -> None:
    fw = new_framework([NeedsSiblingWithEvents], nodes=[make_node("n1").capacity(cpu="4").obj()])
    a, b = _pods()
    fw.add_pod(a)
    assert fw.scheduler.queue.counts()["gated"] == 1
    fw.add_pod(b)
    # As upstream (Add, then MoveAllToActiveOrBackoffQueue), a parked pod's own arrival is an event
    # too; then b's arrival lets a in. b passed PreEnqueue and never was in the pool.
    assert fw.plugin("NeedsSiblingWithEvents").hints == [("a", "a"), ("a", "b")]
    assert fw.scheduler.queue.counts()["gated"] == 0
    fw.schedule()
    assert set(fw.scheduler.stats.bound_at) == {a["metadata"]["uid"], b["metadata"]["uid"]}


def test_no_event_without_a_plugin_asking_for_it() -> None:
    fw = new_framework([NeedsSibling], nodes=[make_node("n1").capacity(cpu="4").obj()])
    a, b = _pods()
    fw.add_pod(a)
    fw.add_pod(b)
    assert fw.plugin("NeedsSibling").hints == []
    assert fw.scheduler.queue.counts()["gated"] == 1
    # Only b's binding (an AssignedPod add) is an event then.
    fw.schedule()
    assert fw.plugin("NeedsSibling").hints == [("a", "b")]


def test_the_event_is_an_unscheduled_pod_add() -> None:
    assert ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD) == UNSCHEDULED_POD_ADD
    assert ClusterEvent(EventResource.POD, ActionType.ADD).matches(UNSCHEDULED_POD_ADD)
    assert not ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD).matches(UNSCHEDULED_POD_ADD)
