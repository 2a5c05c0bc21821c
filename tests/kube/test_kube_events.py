"""The events.k8s.io/v1 recorder, against client-go's tools/events (event_broadcaster.go,
event_recorder.go) and the API's validation (pkg/apis/core/validation/events.go).

* An event: name ``<regarding name>.<hex nanoseconds>``, namespace of the regarding object,
  ``eventTime`` MicroTime, ``reportingInstance`` ``<controller>-<hostname>`` (at most 128).
* Isomorphic repeats (same type, action, reason, controllers, regarding and related references;
  the note does not count) become a series: the first repeat PATCHes ``series.count = 2`` at
  once, later repeats are written by the periodic refresh (here: ``flush``).
* A patch that finds the event gone (events expire) writes it again with its series.
* Failed writes are retried; invalid events are dropped.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from kube_fakes import FakeApi, body, status

from kubesched.framework.clock import VirtualClock
from kubesched.kube.events import EventRecorder, reporting_instance, truncate_note

T0 = 1767225600.0
EVENTS = "/apis/events.k8s.io/v1/namespaces/ns/events"


def pod(rv: str = "7", name: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": "u-1", "resourceVersion": rv},
    }


def recorder(api: FakeApi, clock: VirtualClock, **kw: Any) -> EventRecorder:
    api.route("POST", EVENTS, lambda r: httpx.Response(201, json=body(r)))
    api.route("PATCH", EVENTS + "/.*", lambda r: httpx.Response(200, json={}))
    return EventRecorder(api.client(), clock, hostname="host-1", **kw)


def test_event_fields_as_client_go_writes_them() -> None:
    api, clock = FakeApi(), VirtualClock(T0 + 0.5)
    rec = recorder(api, clock)
    rec.eventf(pod(), None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available.", "my-sched")
    assert rec.flush()
    [post] = api.sent("POST")
    ev = body(post)
    assert ev == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"p.{int((T0 + 0.5) * 1e9):x}", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.500000Z",
        "reportingController": "my-sched",
        "reportingInstance": "my-sched-host-1",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "regarding": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "p",
            "namespace": "ns",
            "uid": "u-1",
            "resourceVersion": "7",
        },
        "note": "0/1 nodes are available.",
        "type": "Warning",
    }
    rec.stop()


def test_repeats_become_a_series() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    rec = recorder(api, clock)
    for i in range(4):
        clock.advance_to(T0 + i)
        # The note differs: client-go's isomorphism ignores it.
        rec.eventf(pod(), None, "Warning", "FailedScheduling", "Scheduling", f"attempt {i}", "s")
    assert rec.flush()
    assert len(api.sent("POST")) == 1
    patches = [json.loads(r.content) for r in api.sent("PATCH")]
    assert patches[0] == {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}}
    # Repeats 3 and 4 are written together by the refresh.
    assert patches[1:] == [{"series": {"count": 4, "lastObservedTime": "2026-01-01T00:00:03.000000Z"}}]
    assert all(r.headers["content-type"] == "application/strategic-merge-patch+json" for r in api.sent("PATCH"))
    rec.stop()


def test_different_regarding_version_related_or_reason_is_a_new_event() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    rec = recorder(api, clock)
    rec.eventf(pod("7"), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    rec.eventf(pod("8"), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    rec.eventf(pod("8"), pod("1", "other"), "Warning", "FailedScheduling", "Scheduling", "n", "s")
    rec.eventf(pod("8"), None, "Normal", "Scheduled", "Binding", "n", "s")
    rec.eventf(pod("8"), None, "Normal", "Scheduled", "Binding", "n", "other-profile")
    assert rec.flush()
    assert len(api.sent("POST")) == 5
    assert api.sent("PATCH") == []
    rec.stop()


def test_a_series_ends_after_six_minutes_without_repeat() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    rec = recorder(api, clock)
    rec.eventf(pod(), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    clock.advance_to(T0 + 6 * 60 + 1)
    rec.eventf(pod(), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    assert rec.flush()
    assert len(api.sent("POST")) == 2
    rec.stop()


def test_an_expired_event_is_written_again_with_its_series() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    api.route("POST", EVENTS, lambda r: httpx.Response(201, json=body(r)))
    api.route("PATCH", EVENTS + "/.*", status(404, "NotFound"))
    rec = EventRecorder(api.client(), clock, hostname="h")
    rec.eventf(pod(), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    rec.eventf(pod(), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    assert rec.flush()
    posts = [body(r) for r in api.sent("POST")]
    assert len(posts) == 2
    assert posts[1]["series"] == {"count": 2, "lastObservedTime": "2026-01-01T00:00:00.000000Z"}
    rec.stop()


def test_server_errors_are_retried_and_invalid_events_dropped() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    api.route("POST", EVENTS, status(500, "InternalError"), lambda r: httpx.Response(201, json=body(r)))
    api.route("POST", "/apis/events.k8s.io/v1/namespaces/bad/events", status(422, "Invalid"))
    rec = EventRecorder(api.client(), clock, hostname="h", retry_after=0.01)
    rec.eventf(pod(), None, "Normal", "Scheduled", "Binding", "n", "s")
    bad = {"kind": "Pod", "metadata": {"name": "x", "namespace": "bad"}}
    rec.eventf(bad, None, "Normal", "Scheduled", "Binding", "n", "s")
    import time

    deadline = time.monotonic() + 10
    while rec.created < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rec.created == 1
    assert len(api.sent("POST", EVENTS)) == 2  # the 500, then the retry
    assert len(api.sent("POST", "/apis/events.k8s.io/v1/namespaces/bad/events")) == 1  # not retried
    rec.stop()


def test_cluster_scoped_objects_get_events_in_default() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    api.route("POST", "/apis/events.k8s.io/v1/namespaces/default/events", lambda r: httpx.Response(201, json=body(r)))
    rec = EventRecorder(api.client(), clock, hostname="h")
    rec.eventf(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u"}}, None, "Normal", "R", "A", "n", "s"
    )
    assert rec.flush()
    [post] = api.sent("POST")
    assert body(post)["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u"}
    rec.stop()


def test_note_is_truncated_to_1024_bytes() -> None:
    assert truncate_note("x" * 1024) == "x" * 1024
    cut = truncate_note("x" * 2000)
    assert len(cut.encode()) == 1024 and cut.endswith(" ...")
    # Multi-byte characters are never split.
    cut = truncate_note("é" * 1000)
    assert len(cut.encode()) <= 1024 and cut.endswith(" ...")
    assert cut[:-4] == "é" * ((1024 - 4) // 2)


def test_reporting_instance_is_bounded() -> None:
    assert reporting_instance("default-scheduler", "node-1") == "default-scheduler-node-1"
    assert len(reporting_instance("s" * 100, "h" * 100)) == 128
