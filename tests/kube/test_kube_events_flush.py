"""Events are written concurrently and flushed on exit within a bounded grace period.

A leader that exits (lost Lease, SIGTERM, an API server that stopped answering) must not take
the events of the pods it bound with it: the writes run on a pool (client-go writes each event
from its own goroutine), and ``stop`` waits up to the grace period, retrying failed writes every
``flush_retry_after`` instead of every 10 s. A server that never answers bounds ``stop`` by the
grace period, not by the client's 30 s timeout.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
from kube_fakes import FakeApi, body, status

from kubesched.framework.clock import VirtualClock
from kubesched.kube.events import EventRecorder

T0 = 1767225600.0
EVENTS = "/apis/events.k8s.io/v1/namespaces/ns/events"


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}"}}


class SlowServer:
    """POSTs take ``delay`` seconds; records how many ran at once."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.names: list[str] = []

    def post(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(self.delay)
        with self.lock:
            self.running -= 1
            self.names.append(body(request)["regarding"]["name"])
        return httpx.Response(201, json=body(request))


def test_events_are_written_concurrently_and_all_flushed() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    server = SlowServer(0.1)
    api.route("POST", EVENTS, server.post)
    rec = EventRecorder(api.client(), clock, hostname="h", workers=8)
    names = [f"p-{i}" for i in range(40)]
    start = time.monotonic()
    for n in names:
        rec.eventf(pod(n), None, "Normal", "Scheduled", "Binding", f"assigned {n}", "s")
    rec.stop(timeout=5.0)
    took = time.monotonic() - start
    assert sorted(server.names) == sorted(names)  # every event written before stop returned
    assert server.peak > 1  # concurrently: one writer would need 4 s
    assert took < 2.5, took


def test_flush_retries_failed_writes_quickly_within_the_grace_period() -> None:
    """The API server is down (503) for the first attempts: the 10 s retry would lose the event
    at exit; while flushing, it is retried every ``flush_retry_after``."""
    api, clock = FakeApi(), VirtualClock(T0)
    api.route(
        "POST",
        EVENTS,
        status(503, "ServiceUnavailable"),
        status(503, "ServiceUnavailable"),
        lambda r: httpx.Response(201, json=body(r)),
    )
    rec = EventRecorder(api.client(), clock, hostname="h", retry_after=10.0, flush_retry_after=0.05)
    rec.eventf(pod("p"), None, "Normal", "Scheduled", "Binding", "n", "s")
    start = time.monotonic()
    assert rec.flush(timeout=5.0)
    assert time.monotonic() - start < 3.0
    assert rec.created == 1
    assert len(api.sent("POST", EVENTS)) == 3
    rec.stop()


def test_stop_is_bounded_by_the_grace_period_when_the_server_hangs() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    gate = threading.Event()

    def hang(request: httpx.Request) -> httpx.Response:
        gate.wait(30)
        return httpx.Response(201, json=body(request))

    api.route("POST", EVENTS, hang)
    rec = EventRecorder(api.client(), clock, hostname="h")
    for i in range(20):
        rec.eventf(pod(f"p-{i}"), None, "Normal", "Scheduled", "Binding", "n", "s")
    start = time.monotonic()
    try:
        rec.stop(timeout=0.5)
        assert time.monotonic() - start < 2.0
    finally:
        gate.set()


def test_writes_of_one_event_never_overlap_and_the_series_opens_at_two() -> None:
    """The POST of an event and the PATCH opening its series are serialised even though other
    events are written concurrently."""
    api, clock = FakeApi(), VirtualClock(T0)
    server = SlowServer(0.1)
    api.route("POST", EVENTS, server.post)
    patches: list[Any] = []

    def patch(request: httpx.Request) -> httpx.Response:
        patches.append(body(request))
        return httpx.Response(200, json={})

    api.route("PATCH", EVENTS + "/.*", patch)
    rec = EventRecorder(api.client(), clock, hostname="h")
    for _ in range(3):
        rec.eventf(pod("same"), None, "Warning", "FailedScheduling", "Scheduling", "n", "s")
    assert rec.flush(timeout=5.0)
    assert server.names == ["same"]
    assert [p["series"]["count"] for p in patches] == [2, 3]  # series opened, then the refresh
    rec.stop()
