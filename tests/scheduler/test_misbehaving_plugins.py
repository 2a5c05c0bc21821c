"""Plugins that misbehave (issue 11): only the pods a failing plugin handles fail, and a simulation ends.

Messages are upstream's: pkg/scheduler/framework/runtime/framework.go wraps a plugin's error per
point (``running PreBind plugin "X": <err>``, ``running Bind plugin "X": <err>``, ``running Permit
plugin "X": <err>``, ``running Reserve plugin "X": <err>``, ``running PreFilter plugin "X": <err>``,
``running Score plugins: plugin "X" failed with: <err>``) and clamps a Permit timeout to maxTimeout
(15 min); runtime/waiting_pods_map.go rejects at a timeout with ``rejected due to timeout after
waiting <Duration> at plugin <name>`` (a Go ``time.Duration`` printed by its ``String``); PostBind and
Unreserve errors are only logged. pkg/scheduler/scheduler.go ``buildQueueingHintMap``: an error from
``EventsToRegister`` makes ``scheduler.New`` fail. Backoff as pkg/scheduler/backend/queue: 1 s
doubling to 10 s for consecutive errors, so an always failing pod is tried at 0, 1, 3, 7 and 15 s.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
from sched_fakes import condition, fake, node_of, notes, queued

from kubesched.framework.runtime import FrameworkError
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import _go_duration
from kubesched.plugins.registry import default_registry
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

T0 = 1767225600.0
ATTEMPTS_AT = [0.0, 1.0, 3.0, 7.0, 15.0]  # backoff 1, 2, 4, 8 s, then 10 s is the maximum


def cluster(*plugins: Any, nodes: int = 1) -> TestFramework:
    return new_framework(list(plugins), nodes=[make_node(f"n{i + 1}").capacity(cpu="4").obj() for i in range(nodes)])


def add(fw: TestFramework, *names: str) -> None:
    for n in names:
        fw.add_pod(make_pod(n).req(cpu="1").obj())


def failure_times(fw: TestFramework, pod: str) -> list[float]:
    return [e.time - T0 for e in fw.cluster.events if e.name == pod and e.reason == "FailedScheduling"]


def boom_for(pod: str, result: Any = None) -> Any:
    """A plugin method that raises for ``pod`` only."""

    def method(*args: Any) -> Any:
        if any(getattr(a, "name", None) == pod for a in args):
            raise RuntimeError("boom")
        return result

    return method


# ---------------------------------------------------------------------------------------------
# a binding cycle that always fails: the simulation ends, the pods are pending with their error
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("point", "extra", "message"), [
    ("pre_bind", {}, 'running PreBind plugin "X": boom'),
    ("bind", {}, 'running Bind plugin "X": boom'),
])
def test_always_raising_binding_plugin_ends_with_its_pods_pending(point: str, extra: dict[str, Any],
                                                                  message: str) -> None:
    ok = Status(Code.SKIP) if point == "bind" else None
    fw = cluster(fake("X", **{point: boom_for("bad", ok)}, **extra))
    add(fw, "bad", "good")
    fw.schedule()  # before the fix: retried every 10 s of virtual time, forever
    assert node_of(fw, "good") is not None
    assert node_of(fw, "bad") is None
    assert notes(fw, "bad") == [message] * 5
    assert failure_times(fw, "bad") == ATTEMPTS_AT
    assert condition(fw, "bad") == {"type": "PodScheduled", "status": "False", "reason": "SchedulerError",
                                    "message": message}
    where = queued(fw, "bad")
    assert where is not None and where[1].last_failure == message
    assert fw.clock.now() - T0 == 15.0
    assert fw.scheduler.cache.assumed_count() == 0


def test_many_pods_with_an_always_raising_bind_plugin_end_quickly() -> None:
    fw = cluster(fake("B", bind=lambda *a: (_ for _ in ()).throw(RuntimeError("api down"))), nodes=3)
    names = [f"p{i}" for i in range(20)]
    add(fw, *names)
    fw.schedule()
    for n in names:
        assert node_of(fw, n) is None
        assert notes(fw, n) == ['running Bind plugin "B": api down'] * 5
    assert fw.clock.now() - T0 == 15.0


def test_a_transient_bind_error_still_binds_after_backoff() -> None:
    left = [RuntimeError("conflict"), RuntimeError("conflict")]

    def bind(*a: Any) -> Status:
        if left:
            raise left.pop()
        return Status(Code.SKIP)  # DefaultBinder binds

    fw = cluster(fake("B", bind=bind))
    add(fw, "p")
    fw.schedule()
    assert failure_times(fw, "p") == [0.0, 1.0]
    assert fw.cluster.history["default/p"]["boundAt"] - T0 == 3.0


def test_a_rejecting_pre_bind_is_not_retried_at_one_instant_forever() -> None:
    """A PreBind rejection goes to backoffQ (not the pool); with activeQ empty upstream pops it
    early. On the virtual clock that repeated at one instant without end."""
    fw = cluster(fake("PB", pre_bind=lambda *a: Status(Code.UNSCHEDULABLE, "volume not ready")))
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p")[0] == "0/1 nodes are available: 1 volume not ready."
    assert len(notes(fw, "p")) == 5
    assert node_of(fw, "p") is None


# ---------------------------------------------------------------------------------------------
# Permit timeouts
# ---------------------------------------------------------------------------------------------
def permit_waiting(timeout: Any) -> Any:
    return fake("P", permit=lambda s, p, n: (Status(Code.WAIT), timeout))


def test_permit_nan_timeout_is_that_plugins_error() -> None:
    fw = cluster(permit_waiting(math.nan))
    add(fw, "a", "b")
    fw.schedule()  # before the fix: ValueError from the timer, the whole run lost
    want = 'running Permit plugin "P": invalid timeout nan: not a duration in seconds'
    for pod in ("a", "b"):
        assert notes(fw, pod) == [want] * 5
        assert condition(fw, pod)["reason"] == "SchedulerError"
    assert fw.scheduler.cache.assumed_count() == 0
    assert len(fw.framework.waiting_pods) == 0


@pytest.mark.parametrize(("timeout", "printed"), [(-5, "-5s"), (0, "0s"), (-math.inf, "-2562047h47m16.854775808s")])
def test_permit_zero_or_negative_timeout_rejects_at_once(timeout: float, printed: str) -> None:
    fw = cluster(permit_waiting(timeout))
    add(fw, "a", "b")
    fw.schedule()  # before the fix: a and b requeued each other at one instant forever
    want = f"0/1 nodes are available: 1 rejected due to timeout after waiting {printed} at plugin P."
    for pod in ("a", "b"):
        assert notes(fw, pod)[0] == want
        assert node_of(fw, pod) is None
    assert fw.clock.now() == T0


def test_permit_infinite_timeout_waits_max_timeout() -> None:
    fw = cluster(permit_waiting(math.inf))
    add(fw, "a", "b")
    fw.schedule()
    want = "0/1 nodes are available: 1 rejected due to timeout after waiting 15m0s at plugin P."
    assert failure_times(fw, "a")[0] == 900.0
    for pod in ("a", "b"):
        assert set(notes(fw, pod)) == {want}
        # each gets the attempts of one backoff ramp without a cluster event, then waits for one
        assert len(notes(fw, pod)) == 5
    assert len(fw.framework.waiting_pods) == 0


@pytest.mark.parametrize(("seconds", "go"), [
    (0, "0s"), (900, "15m0s"), (1.5, "1.5s"), (0.5, "500ms"), (90, "1m30s"), (3600, "1h0m0s"),
    (3661.25, "1h1m1.25s"), (1.5e-6, "1.5µs"), (1e-9, "1ns"), (-5, "-5s"),
    (math.inf, "2562047h47m16.854775807s"),  # Go's maximum Duration
])
def test_go_duration_string(seconds: float, go: str) -> None:
    assert _go_duration(seconds) == go


# ---------------------------------------------------------------------------------------------
# QueueSort and EventsToRegister
# ---------------------------------------------------------------------------------------------
class BrokenSort:
    name = "BrokenSort"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def less(self, a: Any, b: Any) -> bool:
        raise ValueError("cannot compare")


def test_raising_queue_sort_keeps_every_pod_in_priority_order(caplog: pytest.LogCaptureFixture) -> None:
    reg = default_registry(entry_points=False)
    reg.register("BrokenSort", BrokenSort, origin="test")
    cfg = {"profiles": [{"plugins": {"multiPoint": {
        "enabled": [{"name": "BrokenSort"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}}}]}
    fw = new_framework(cfg, nodes=[make_node("n1").capacity(cpu="8").obj()], registry=reg)
    for name, prio in [("low", 1), ("high", 30), ("mid", 20), ("mid2", 20)]:
        fw.add_pod(make_pod(name).req(cpu="1").priority(prio).obj())
    with caplog.at_level(logging.WARNING):
        fw.schedule()  # before the fix: the ValueError escaped heapq and the run was lost
    bound = [e.name for e in fw.cluster.events if e.reason == "Scheduled"]
    assert bound == ["high", "mid", "mid2", "low"]  # PrioritySort: priority, then arrival
    warnings = [r.getMessage() for r in caplog.records if "QueueSort" in r.getMessage()]
    assert warnings == ['plugin "BrokenSort" failed at QueueSort: cannot compare; comparing by priority and '
                        "timestamp (PrioritySort) instead"]
    assert not any(r.exc_info for r in caplog.records)


class BadEvents:
    name = "BadEvents"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, *a: Any) -> None:
        return None

    def events_to_register(self) -> list[Any]:
        raise RuntimeError("no informer for widgets")


def test_raising_events_to_register_fails_the_profile_naming_plugin_and_point() -> None:
    with pytest.raises(FrameworkError) as err:
        cluster(BadEvents)
    assert str(err.value) == ('profiles[0] (default-scheduler): plugin "BadEvents": EventsToRegister failed: '
                              "no informer for widgets")


def test_events_to_register_returning_garbage_fails_the_profile() -> None:
    bad = fake("Junk", filter=lambda *a: None, events_to_register=lambda: ["Node/Add"])
    with pytest.raises(FrameworkError, match=r"plugin \"Junk\": EventsToRegister returned 'Node/Add', "
                                             r"not a ClusterEventWithHint"):
        cluster(bad)


# ---------------------------------------------------------------------------------------------
# every other point: only the pod the plugin fails for
# ---------------------------------------------------------------------------------------------
def _unres(*a: Any) -> None:
    return None


@pytest.mark.parametrize(("point", "extra", "message"), [
    ("pre_filter", {"pre_filter": boom_for("bad", (None, None))}, 'running PreFilter plugin "X": boom'),
    ("filter", {"filter": boom_for("bad")}, 'running "X" filter plugin: boom'),
    ("reserve", {"reserve": boom_for("bad"), "unreserve": _unres}, 'running Reserve plugin "X": boom'),
    ("permit", {"permit": boom_for("bad", (None, 0))}, 'running Permit plugin "X": boom'),
    ("score", {"score": boom_for("bad", (1, None))}, 'running Score plugins: plugin "X" failed with: boom'),
])
def test_a_raising_plugin_fails_only_its_pod(point: str, extra: dict[str, Any], message: str,
                                             caplog: pytest.LogCaptureFixture) -> None:
    fw = cluster(fake("X", **extra), nodes=3)
    add(fw, "bad", "good")
    with caplog.at_level(logging.WARNING):
        fw.schedule()
    assert node_of(fw, "good") is not None
    assert node_of(fw, "bad") is None
    assert notes(fw, "bad") == [message] * 5
    assert fw.clock.now() - T0 == 15.0
    # one line per failure, no traceback at the default verbosity
    assert not any(r.exc_info for r in caplog.records)


def test_the_traceback_of_a_plugin_error_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    fw = cluster(fake("X", filter=boom_for("bad")))
    add(fw, "bad")
    with caplog.at_level(logging.DEBUG):
        fw.schedule(until=T0 + 0.5)
    assert [r for r in caplog.records if r.exc_info and r.levelno == logging.DEBUG]


def test_raising_post_filter_fails_only_its_pod() -> None:
    fw = cluster(fake("F", filter=lambda s, p, n: Status(Code.UNSCHEDULABLE, "no") if p.name == "bad" else None),
                 fake("PF", post_filter=boom_for("bad", (None, Status(Code.UNSCHEDULABLE)))))
    add(fw, "bad", "good")
    fw.schedule()
    assert node_of(fw, "good") is not None
    assert node_of(fw, "bad") is None
    assert notes(fw, "bad")[0] == "0/1 nodes are available: 1 no. boom"


def test_raising_post_bind_is_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    fw = cluster(fake("PB", post_bind=boom_for("p")))
    add(fw, "p")
    with caplog.at_level(logging.WARNING):
        fw.schedule()
    assert node_of(fw, "p") == "n1"
    assert notes(fw, "p") == []
    assert [r.getMessage() for r in caplog.records] == ['plugin "PB" failed at PostBind of pod default/p: boom']


@pytest.mark.parametrize(("value", "why"), [
    (math.nan, "returned score nan, not an integer"),
    ("7", "returned score '7', not an integer"),
    (None, "returned score None, not an integer"),
])
def test_score_that_is_no_number_is_that_plugins_error(value: Any, why: str) -> None:
    fw = cluster(fake("S", score=lambda s, p, n: (value, None) if p.name == "bad" else (5, None)), nodes=3)
    add(fw, "bad", "good")
    fw.schedule()
    assert node_of(fw, "good") is not None
    assert notes(fw, "bad")[0] == f'running Score plugins: plugin "S" failed with: {why}'


def test_normalize_score_writing_nan_is_that_plugins_error() -> None:
    def normalize(state: Any, pod: Any, scores: list[Any]) -> None:
        for ns in scores:
            ns.score = math.nan

    fw = cluster(fake("S", score=lambda *a: (5, None), normalize_score=normalize), nodes=3)
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p")[0] == 'running Normalize on Score plugins: plugin "S" failed with: returned score nan, ' \
                                "not an integer"
