"""CycleState, cluster events, PreFilterResult merging and the virtual clock.

Pinned against staging/src/k8s.io/kube-scheduler/framework (``cycle_state.go`` Clone,
``types.go`` ``ClusterEvent.Match`` / ``PreFilterResult.Merge``) and the framework's virtual clock
contract (timers fire in time order, then creation order; daemon timers never keep a run alive).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubesched.framework.clock import VirtualClock, rfc3339
from kubesched.framework.cycle_state import CycleState, StateNotFoundError
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.types import PreFilterResult


@dataclass
class Counter:
    n: int

    def clone(self) -> Counter:
        return Counter(self.n)


def test_cycle_state_read_write_clone() -> None:
    s = CycleState()
    s.write("PreFilterX", Counter(1))
    s.skip_filter_plugins = frozenset({"A"})
    c = s.clone()
    c.read_as("PreFilterX", Counter).n = 5
    assert s.read_as("PreFilterX", Counter).n == 1  # values are cloned for preemption's dry runs
    assert c.skip_filter_plugins == frozenset({"A"})
    with pytest.raises(StateNotFoundError):
        s.read("missing")
    with pytest.raises(TypeError):
        s.read_as("PreFilterX", str)
    s.delete("PreFilterX")
    assert "PreFilterX" not in s


NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)


@pytest.mark.parametrize(("registered", "incoming", "want"), [
    (NODE_ADD, NODE_ADD, True),
    (NODE_ADD, ClusterEvent(EventResource.NODE, ActionType.DELETE), False),
    (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
     ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL), True),
    (ClusterEvent(EventResource.NODE, ActionType.UPDATE), ClusterEvent(EventResource.NODE,
                                                                       ActionType.UPDATE_NODE_TAINT), True),
    # Pod matches both AssignedPod and UnscheduledPod (they are only used for incoming events).
    (ClusterEvent(EventResource.POD, ActionType.DELETE), ClusterEvent(EventResource.ASSIGNED_POD,
                                                                      ActionType.DELETE), True),
    (ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL),
     ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL), True),
    (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
     ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE), False),
    (ClusterEvent(EventResource.WILDCARD, ActionType.ALL), NODE_ADD, True),
    (ClusterEvent(EventResource.CUSTOM, ActionType.ALL, "ElasticQuota"),
     ClusterEvent(EventResource.CUSTOM, ActionType.ADD, "ElasticQuota"), True),
    (ClusterEvent(EventResource.CUSTOM, ActionType.ALL, "ElasticQuota"),
     ClusterEvent(EventResource.CUSTOM, ActionType.ADD, "PodGroup"), False),
])
def test_cluster_event_match(registered: ClusterEvent, incoming: ClusterEvent, want: bool) -> None:
    assert registered.matches(incoming) is want


@pytest.mark.parametrize(("a", "b", "want"), [
    (None, None, None),
    (None, {"n1"}, {"n1"}),
    ({"n1", "n2"}, None, {"n1", "n2"}),
    ({"n1", "n2"}, {"n2", "n3"}, {"n2"}),
    ({"n1"}, {"n2"}, set()),
    (set(), None, set()),  # an empty set is not "all nodes"
])
def test_pre_filter_result_merge(a: set[str] | None, b: set[str] | None, want: set[str] | None) -> None:
    merged = PreFilterResult(a).merge(PreFilterResult(b))
    assert merged.node_names == want
    assert merged.all_nodes() is (want is None)


def test_virtual_clock_fires_in_time_then_creation_order() -> None:
    clock = VirtualClock(100.0)
    fired: list[tuple[float, str]] = []
    clock.call_later(5, lambda: fired.append((clock.now(), "b")))
    clock.call_later(2, lambda: fired.append((clock.now(), "a")))
    clock.call_later(5, lambda: fired.append((clock.now(), "c")))
    cancelled = clock.call_later(3, lambda: fired.append((clock.now(), "x")))
    cancelled.cancel()
    clock.step(4)
    assert fired == [(102.0, "a")]
    assert clock.now() == 104.0
    clock.step(1)
    assert fired == [(102.0, "a"), (105.0, "b"), (105.0, "c")]


def test_virtual_clock_daemon_timers_do_not_count_as_live() -> None:
    clock = VirtualClock(0.0)
    clock.call_later(30, lambda: None, daemon=True)
    assert not clock.has_live_timers()
    assert clock.next_time() == 30.0
    clock.call_later(60, lambda: None)
    assert clock.has_live_timers()


def test_timer_scheduled_for_now_by_a_timer_runs_in_the_same_step() -> None:
    clock = VirtualClock(0.0)
    fired: list[str] = []
    clock.call_later(1, lambda: clock.call_later(0, lambda: fired.append("chained")))
    clock.step(1)
    assert fired == ["chained"]


def test_rfc3339() -> None:
    assert rfc3339(1767225600.0) == "2026-01-01T00:00:00Z"
