"""The scheduling queue: activeQ order, backoff, the unschedulable pool, hints, in-flight events.

Pinned against pkg/scheduler/backend/queue/scheduling_queue.go and backoff_queue.go (upstream's
scheduling_queue_test.go: ``TestPriorityQueue_Pop``, ``TestBackOffFlow``,
``TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint``,
``TestPriorityQueue_flushUnschedulablePodsLeftover``, ``TestPopFromBackoffQ``, in-flight event tests):
backoff initial × 2^(n−1) capped at max (1, 2, 4, 8, 10, 10 s with the defaults), Error pods
backing off in their own queue, 5 minutes in the pool at most.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.clock import VirtualClock
from kubesched.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    WILDCARD_EVENT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.plugins.queuesort import PrioritySort
from kubesched.testing import make_node, make_pod

T0 = 1000.0
NODE_LABEL_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
POD_LABEL_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)


def good_node_hint(pod: Mapping[str, Any], old: Any, new: Any) -> QueueingHint:
    """Queue only for nodes labelled good=true (a plugin's QueueingHintFn)."""
    labels = ((new or {}).get("metadata") or {}).get("labels") or {}
    return QueueingHint.QUEUE if labels.get("good") == "true" else QueueingHint.QUEUE_SKIP


class Profile:
    """The queue's view of a profile: PrioritySort, an optional gate, registered events."""

    def __init__(self, events: dict[str, list[ClusterEventWithHint]] | None = None) -> None:
        self._sort = PrioritySort()
        self._events = events or {}

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self._sort.less(a, b)

    def run_pre_enqueue_plugins(self, pod: PodInfo) -> Status:
        if pod.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin="Gate")
        return Status()

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        return self._events


EVENTS = {
    "A": [ClusterEventWithHint(NODE_ADD, good_node_hint)],
    "B": [ClusterEventWithHint(ASSIGNED_POD_DELETE)],
    "L": [ClusterEventWithHint(POD_LABEL_UPDATE)],
    "Gate": [ClusterEventWithHint(
        ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))],
}


def new_queue(clock: VirtualClock | None = None, **kw: Any) -> tuple[SchedulingQueue, VirtualClock]:
    clock = clock or VirtualClock(T0)
    return SchedulingQueue({"default-scheduler": Profile(EVENTS)}, clock, **kw), clock


def fail(q: SchedulingQueue, name: str, *, plugins: set[str] | None = None, pending: set[str] | None = None,
         error: bool = False) -> QueuedPodInfo:
    """Pop ``name`` and hand it back as a failed attempt rejected by ``plugins``."""
    qpi = q.pop()
    assert qpi is not None and qpi.pod_info.name == name
    qpi.unschedulable_plugins = set(plugins or ())
    qpi.pending_plugins = set(pending or ())
    q.add_unschedulable_if_not_present(qpi, error=error)
    return qpi


def where(q: SchedulingQueue, name: str) -> str | None:
    for qpi, queue in q.pending_pods():
        if qpi.pod_info.name == name:
            return queue
    return None


# ---------------------------------------------------------------------------------------------
# backoff
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("count", "want"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0),
                                             (30, 10.0)])
def test_backoff_durations_with_default_settings(count: int, want: float) -> None:
    q, _ = new_queue()
    qpi = QueuedPodInfo(PodInfo(make_pod("p").obj()), unschedulable_count=count)
    assert q.backoff_duration(qpi) == want
    # Errors count on their own and take precedence.
    err = QueuedPodInfo(PodInfo(make_pod("p").obj()), unschedulable_count=1, consecutive_errors=count)
    assert q.backoff_duration(err) == want


def test_backoff_with_custom_initial_and_max() -> None:
    q, _ = new_queue(pod_initial_backoff=2.0, pod_max_backoff=5.0)
    got = [q.backoff_duration(QueuedPodInfo(PodInfo(make_pod("p").obj()), unschedulable_count=n))
           for n in range(1, 5)]
    assert got == [2.0, 4.0, 5.0, 5.0]


def test_error_pods_wait_out_their_backoff_in_order() -> None:
    q, clock = new_queue()
    q.add(make_pod("p").obj())
    attempts_at = []
    while len(attempts_at) < 7:
        clock.run_due()
        qpi = q.pop()
        if qpi is None:
            nxt = clock.next_time()
            assert nxt is not None, "an Error pod in backoff must have a timer that releases it"
            clock.advance_to(nxt)
            continue
        attempts_at.append(clock.now() - T0)
        q.add_unschedulable_if_not_present(qpi, error=True)
    # 1, 2, 4, 8, 10, 10 seconds between attempts.
    assert attempts_at == [0, 1, 3, 7, 15, 25, 35]


def test_error_pods_are_not_popped_early() -> None:
    q, clock = new_queue()
    q.add(make_pod("err").obj())
    fail(q, "err", error=True)
    assert where(q, "err") == "backoff"
    assert not q.has_active()
    assert q.pop() is None
    clock.step(0.999)
    assert q.pop() is None
    clock.step(0.001)
    assert where(q, "err") == "active"


def requeued_by_event(q: SchedulingQueue, name: str) -> None:
    """Pop ``name``, reject it by plugin A, and let a node it may fit on arrive: backoffQ."""
    fail(q, name, plugins={"A"})
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    assert where(q, name) == "backoff"


def test_rejected_pods_in_backoff_are_popped_early() -> None:
    q, _ = new_queue()
    q.add(make_pod("rej").obj())
    requeued_by_event(q, "rej")
    assert q.has_active()
    qpi = q.pop()  # SchedulerPopFromBackoffQ: activeQ is empty, so backoffQ is popped early
    assert qpi is not None and qpi.pod_info.name == "rej"


def test_failure_without_rejecting_plugin_counts_as_an_error() -> None:
    q, _ = new_queue()
    q.add(make_pod("p").obj())
    qpi = fail(q, "p")  # e.g. "no nodes available": no plugin to wait for
    assert (qpi.consecutive_errors, qpi.unschedulable_count) == (1, 0)
    assert where(q, "p") == "backoff"
    assert q.pop() is None  # never retried at once, even with activeQ empty


def test_pop_from_backoff_q_only_when_active_q_is_empty() -> None:
    q, _ = new_queue()
    q.add(make_pod("b").obj())
    requeued_by_event(q, "b")
    q.add(make_pod("a").obj())
    first, second = q.pop(), q.pop()
    assert first is not None and second is not None
    assert [first.pod_info.name, second.pod_info.name] == ["a", "b"]
    assert second.attempts == 2


def test_pop_from_backoff_q_disabled() -> None:
    q, clock = new_queue(pop_from_backoff_q=False)
    q.add(make_pod("b").obj())
    requeued_by_event(q, "b")
    assert q.pop() is None
    clock.step(1)
    qpi = q.pop()
    assert qpi is not None and qpi.pod_info.name == "b"


def test_stale_backoff_entry_does_not_release_a_pod_early() -> None:
    q, clock = new_queue(pop_from_backoff_q=False)
    q.add(make_pod("p").obj())
    fail(q, "p")  # backoff 1 s: expires at T0+1
    clock.step(0.5)
    q.activate([make_pod("p").obj()])  # moved to activeQ before its backoff ended
    fail(q, "p")  # second failure at T0+0.5: backoff 2 s, expires at T0+2.5
    clock.step(0.5)  # T0+1: the first backoff's timer fires
    assert where(q, "p") == "backoff"
    clock.step(1.5)
    assert where(q, "p") == "active"


# ---------------------------------------------------------------------------------------------
# activeQ order (PrioritySort)
# ---------------------------------------------------------------------------------------------
def test_priority_sort_order_then_timestamp() -> None:
    q, clock = new_queue()
    q.add(make_pod("low").priority(1).obj())
    q.add(make_pod("high").priority(10).obj())
    q.add(make_pod("mid").priority(5).obj())
    clock.step(1)
    q.add(make_pod("high-later").priority(10).obj())
    q.add(make_pod("none").obj())
    order = []
    while (qpi := q.pop()) is not None:
        order.append(qpi.pod_info.name)
    assert order == ["high", "high-later", "mid", "low", "none"]


def test_add_twice_is_a_no_op() -> None:
    q, _ = new_queue()
    q.add(make_pod("p").obj())
    q.add(make_pod("p").obj())
    assert q.counts()["active"] == 1


# ---------------------------------------------------------------------------------------------
# unschedulable pool, events and queueing hints
# ---------------------------------------------------------------------------------------------
def test_rejected_pod_waits_for_an_event_its_plugin_registered() -> None:
    q, clock = new_queue()
    q.add(make_pod("p").obj())
    fail(q, "p", plugins={"A"})
    assert where(q, "p") == "unschedulable"
    # B registered AssignedPod/Delete, but B did not reject the pod.
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("x").node("n1").obj(), None)
    assert where(q, "p") == "unschedulable"
    # A registered Node/Add, but its hint says QueueSkip for this node.
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("plain").obj())
    assert where(q, "p") == "unschedulable"
    # A did not register node label updates.
    q.move_all_to_active_or_backoff(NODE_LABEL_UPDATE, make_node("n").obj(), make_node("n").label("good", "true").obj())
    assert where(q, "p") == "unschedulable"
    # Queue: the pod still has 1 s of backoff to serve.
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    assert where(q, "p") == "backoff"
    clock.step(1)
    assert where(q, "p") == "active"


def test_queue_hint_after_backoff_expired_goes_straight_to_active() -> None:
    q, clock = new_queue()
    q.add(make_pod("p").obj())
    fail(q, "p", plugins={"A"})
    clock.step(5)
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    assert where(q, "p") == "active"


def test_hint_that_raises_counts_as_queue() -> None:
    def broken(pod: Any, old: Any, new: Any) -> QueueingHint:
        raise RuntimeError("bug in a hint")

    q = SchedulingQueue({"default-scheduler": Profile({"A": [ClusterEventWithHint(NODE_ADD, broken)]})},
                        VirtualClock(T0))
    q.add(make_pod("p").obj())
    fail(q, "p", plugins={"A"})
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n").obj())
    assert where(q, "p") == "backoff"


def test_queue_from_a_pending_plugin_skips_backoff() -> None:
    q, _ = new_queue()
    q.add(make_pod("p").obj())
    fail(q, "p", pending={"A"})
    assert where(q, "p") == "unschedulable"
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    assert where(q, "p") == "active"


def test_wildcard_event_requeues_every_rejected_pod() -> None:
    q, _ = new_queue()
    q.add(make_pod("p").obj())
    fail(q, "p", plugins={"A"})
    q.move_all_to_active_or_backoff(WILDCARD_EVENT)
    assert where(q, "p") == "backoff"


def test_unschedulable_pod_update_checked_with_hints() -> None:
    q, _ = new_queue()
    old = make_pod("p").obj()
    q.add(old)
    fail(q, "p", plugins={"L"})
    q.update(old, make_pod("p").annotation("a", "b").obj(), ClusterEvent(EventResource.UNSCHEDULED_POD,
                                                                          ActionType.UPDATE_OTHER))
    assert where(q, "p") == "unschedulable"
    q.update(old, make_pod("p").label("app", "web").obj(), POD_LABEL_UPDATE)
    assert where(q, "p") == "backoff"


def test_leftover_flush_after_five_minutes() -> None:
    q, clock = new_queue()
    q.add(make_pod("p").obj())
    fail(q, "p", plugins={"A"})
    clock.step(299)
    assert where(q, "p") == "unschedulable"
    clock.step(31)  # flushUnschedulablePodsLeftover runs every 30 s
    assert where(q, "p") == "active"


def test_leftover_flush_leaves_gated_pods_gated() -> None:
    q, clock = new_queue()
    q.add(make_pod("g").scheduling_gates("wait").obj())
    assert where(q, "g") == "gated"
    clock.step(400)
    assert where(q, "g") == "gated"


# ---------------------------------------------------------------------------------------------
# gated pods
# ---------------------------------------------------------------------------------------------
def test_gated_pod_enters_active_q_when_its_gates_are_removed() -> None:
    q, _ = new_queue()
    gated = make_pod("g").scheduling_gates("wait").obj()
    q.add(gated)
    assert q.counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert q.pop() is None
    # Another update that keeps the gate: still gated.
    still = make_pod("g").scheduling_gates("wait").label("x", "y").obj()
    q.update(gated, still, POD_LABEL_UPDATE)
    assert where(q, "g") == "gated"
    ungated = make_pod("g").obj()
    q.update(still, ungated, ClusterEvent(EventResource.UNSCHEDULED_POD,
                                          ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))
    assert where(q, "g") == "active"
    qpi = q.pop()
    assert qpi is not None and qpi.pod_info.scheduling_gates == []


# ---------------------------------------------------------------------------------------------
# in-flight events
# ---------------------------------------------------------------------------------------------
def test_event_during_the_attempt_is_replayed() -> None:
    q, _ = new_queue()
    q.add(make_pod("p").obj())
    qpi = q.pop()
    assert qpi is not None
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    qpi.unschedulable_plugins = {"A"}
    q.add_unschedulable_if_not_present(qpi)
    assert where(q, "p") == "backoff"  # not parked: the node that may fit it arrived meanwhile


def test_irrelevant_event_during_the_attempt_does_not_requeue() -> None:
    q, _ = new_queue()
    q.add(make_pod("p").obj())
    qpi = q.pop()
    assert qpi is not None
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("plain").obj())  # hint: QueueSkip
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("x").node("n").obj(), None)
    qpi.unschedulable_plugins = {"A"}
    q.add_unschedulable_if_not_present(qpi)
    assert where(q, "p") == "unschedulable"


def test_event_before_the_attempt_is_not_replayed() -> None:
    q, _ = new_queue()
    q.add(make_pod("other").obj())
    other = q.pop()  # keeps an attempt in flight, so events are recorded
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    q.add(make_pod("p").obj())
    qpi = q.pop()
    assert qpi is not None and other is not None
    qpi.unschedulable_plugins = {"A"}
    q.add_unschedulable_if_not_present(qpi)
    assert where(q, "p") == "unschedulable"


def test_update_of_the_pod_during_its_attempt_is_replayed() -> None:
    q, _ = new_queue()
    old = make_pod("p").obj()
    q.add(old)
    qpi = q.pop()
    assert qpi is not None
    q.update(old, make_pod("p").label("app", "web").obj(), POD_LABEL_UPDATE)
    qpi.unschedulable_plugins = {"L"}
    q.add_unschedulable_if_not_present(qpi)
    assert where(q, "p") == "backoff"


def test_activate_in_flight_pod_only_requeues_that_pod() -> None:
    q, _ = new_queue()
    q.add(make_pod("a").obj())
    q.add(make_pod("b").obj())
    a, b = q.pop(), q.pop()
    assert a is not None and b is not None
    q.activate([a.pod])
    for qpi in (a, b):
        qpi.unschedulable_plugins = {"A"}
        q.add_unschedulable_if_not_present(qpi)
    assert where(q, "a") == "backoff"
    assert where(q, "b") == "unschedulable"


def test_activate_moves_parked_and_backing_off_pods_to_active() -> None:
    q, _ = new_queue(pop_from_backoff_q=False)
    for n in ("u", "b"):
        q.add(make_pod(n).obj())
    fail(q, "u", plugins={"A"})
    fail(q, "b")
    q.activate([make_pod("u").obj(), make_pod("b").obj()])
    assert (where(q, "u"), where(q, "b")) == ("active", "active")


def test_events_are_forgotten_when_no_attempt_is_in_flight() -> None:
    q, _ = new_queue()
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("good").label("good", "true").obj())
    q.add(make_pod("p").obj())
    fail(q, "p", plugins={"A"})
    assert where(q, "p") == "unschedulable"


# ---------------------------------------------------------------------------------------------
# deletes and the nominator
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("park", [
    lambda q: None,
    lambda q: fail(q, "p", plugins={"A"}),
    lambda q: fail(q, "p"),
])
def test_delete_removes_the_pod_wherever_it_is(park: Callable[[SchedulingQueue], Any]) -> None:
    q, clock = new_queue(pop_from_backoff_q=False)
    q.add(make_pod("p").obj())
    park(q)
    q.delete(make_pod("p").obj())
    assert where(q, "p") is None
    clock.step(400)
    assert q.pop() is None


def test_nominator() -> None:
    q, _ = new_queue()
    pi = PodInfo(make_pod("p").obj())
    q.add_nominated_pod(pi, "n1")
    assert [p.name for p in q.nominated_pods_for_node("n1")] == ["p"]
    q.add_nominated_pod(pi, "n2")
    assert q.nominated_pods_for_node("n1") == []
    assert q.nominated_node_of(pi.uid) == "n2"
    q.delete_nominated_pod_if_exists(pi.uid)
    assert q.nominated_pods_for_node("n2") == []


def test_retry_may_help_until_the_backoff_saturates_or_the_cluster_changes() -> None:
    """What lets a simulation end: a failing pod keeps no run alive once retrying cannot help."""
    q, clock = new_queue()
    q.add(make_pod("p").obj())
    got = []
    for _ in range(5):
        fail(q, "p", error=True)
        got.append(q.retry_may_help())
        clock.step(q.backoff_duration(where_qpi(q, "p")))
    # backoffs 1, 2, 4, 8 s may still hide a transient failure; at 10 s (the maximum) it stops,
    assert got == [True, True, True, True, False]
    assert not clock.has_live_timers()  # backoff timers alone do not keep a run going
    # unless something in the cluster changed since the last attempt.
    fail_again = q.pop()
    assert fail_again is not None
    q.add_unschedulable_if_not_present(fail_again, error=True)
    assert not q.retry_may_help()
    q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("n").obj())
    assert q.retry_may_help()


def where_qpi(q: SchedulingQueue, name: str) -> QueuedPodInfo:
    for qpi, _ in q.pending_pods():
        if qpi.pod_info.name == name:
            return qpi
    raise AssertionError(f"{name} is not queued")


class KeyedProfile(Profile):
    """A profile as the Framework is: its QueueSort plugin reachable, so the queue uses its sort_key."""

    def __init__(self, events: dict[str, list[ClusterEventWithHint]] | None = None) -> None:
        super().__init__(events)
        self.queue_sort = self._sort


@pytest.mark.parametrize("seed", range(5))
def test_sort_key_pops_in_the_order_of_less(seed: int) -> None:
    # PrioritySort's sort_key puts activeQ in the order its less (with the sequence number as the
    # last tie-break) gives: same pods, same arrivals, same pops, ties of timestamp and priority
    # included; pods popped and failed in between come back with new timestamps.
    import random

    rng = random.Random(seed)
    plain, clock = new_queue()
    keyed = SchedulingQueue({"default-scheduler": KeyedProfile(EVENTS)}, clock)
    assert keyed._sort_keys is not None and plain._sort_keys is None
    popped: list[list[str]] = [[], []]
    for step in range(300):
        action = rng.random()
        if action < 0.6:
            pod = make_pod(f"p{step}").priority(rng.choice([0, 0, 1, 7])).obj()
            plain.add(pod)
            keyed.add(pod)
        elif action < 0.8:
            clock.advance_to(clock.now() + rng.choice([0.0, 0.5, 2.0]))
        else:
            requeue = rng.random() < 0.3
            for i, q in enumerate((plain, keyed)):
                qpi = q.pop()
                if qpi is not None:
                    popped[i].append(qpi.pod_info.name)
                    if requeue:
                        qpi.unschedulable_plugins = {"B"}
                        q.add_unschedulable_if_not_present(qpi)
                        q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)
                    else:
                        q.done(qpi.pod_info.uid)
    clock.advance_to(clock.now() + 100)
    for i, q in enumerate((plain, keyed)):
        while (qpi := q.pop()) is not None:
            popped[i].append(qpi.pod_info.name)
            q.done(qpi.pod_info.uid)
    assert popped[0] == popped[1] and len(popped[0]) > 100


def test_sort_key_follows_a_priority_update() -> None:
    # An update that changes a pending pod's place in activeQ moves it (upstream's heap Update).
    clock = VirtualClock(T0)
    q = SchedulingQueue({"default-scheduler": KeyedProfile(EVENTS)}, clock)
    for name in ("a", "b", "c"):
        q.add(make_pod(name).obj())
    q.update(make_pod("c").obj(), make_pod("c").priority(10).obj())
    order = []
    while (qpi := q.pop()) is not None:
        order.append(qpi.pod_info.name)
    assert order == ["c", "a", "b"]
