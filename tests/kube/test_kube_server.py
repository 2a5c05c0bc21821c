"""/healthz, /livez, /readyz and /metrics in kube-apiserver/kube-scheduler's format
(staging/src/k8s.io/apiserver/pkg/server/healthz: ``ok``; ``[+]name ok`` / ``[-]name failed``
lines and ``<kind> check passed|failed`` with ``?verbose``; per-check paths)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry, Counter

from kubesched.kube.server import HealthServer, parse_address


def get(server: HealthServer, path: str) -> tuple[str, str]:
    path, _, query = path.partition("?")
    got: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        got["status"] = status

    body = b"".join(server.app({"PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": "GET"}, start_response))
    return got["status"], body.decode()


def make() -> tuple[HealthServer, dict[str, str | None]]:
    reg = CollectorRegistry()
    Counter("scheduler_schedule_attempts", "x", ["result"], registry=reg).labels("scheduled").inc(3)
    state: dict[str, str | None] = {"sync": "not synced", "leader": None}
    s = HealthServer("127.0.0.1:0", reg)
    s.add_liveness("leaderElection", lambda: state["leader"])
    s.add_readiness("sched-handler-sync", lambda: state["sync"])
    return s, state


def test_health_endpoints() -> None:
    s, state = make()
    assert get(s, "/healthz") == ("200 OK", "ok")
    assert get(s, "/livez") == ("200 OK", "ok")
    status, text = get(s, "/readyz")
    assert status.startswith("500")
    assert "[-]sched-handler-sync failed: not synced" in text
    assert text.rstrip().endswith("readyz check failed")
    state["sync"] = None
    assert get(s, "/readyz?verbose") == (
        "200 OK",
        "[+]ping ok\n[+]leaderElection ok\n[+]sched-handler-sync ok\nreadyz check passed\n",
    )
    state["leader"] = "failed election to renew leadership"
    assert get(s, "/healthz")[0].startswith("500")
    assert get(s, "/healthz/ping") == ("200 OK", "ok")
    assert get(s, "/readyz/sched-handler-sync") == ("200 OK", "ok")
    assert get(s, "/nope")[0].startswith("404")


def test_metrics_over_http() -> None:
    s, _ = make()
    s.start()
    try:
        text = httpx.get(f"http://127.0.0.1:{s.port}/metrics").text
        assert 'scheduler_schedule_attempts_total{result="scheduled"} 3.0' in text
        assert httpx.get(f"http://127.0.0.1:{s.port}/healthz").text == "ok"
    finally:
        s.stop()


@pytest.mark.parametrize(
    ("address", "want"),
    [("0.0.0.0:10251", ("0.0.0.0", 10251)), (":10251", ("0.0.0.0", 10251)), ("[::1]:9", ("::1", 9))],
)
def test_parse_address(address: str, want: tuple[str, int]) -> None:
    assert parse_address(address) == want


def test_parse_address_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="expected HOST:PORT"):
        parse_address("localhost")
