"""WindowTransfer (issue 5) against a real kube-apiserver: the issue's profile, the real clock.

The profile is the issue's configuration verbatim (``ISSUE_PROFILE``); only ``windowStart`` and
``windowEnd`` are chosen relative to the wall clock, since the real backend reads time from
``RealClock``. Expectations are hand-computed from the plugin's contract (docs/window-transfer.md,
issue 5) and from upstream where upstream defines the behaviour:

* the FitError note ``0/N nodes are available: <count> <reason>, ...`` with reasons sorted as
  strings, and DefaultPreemption's ``preemption: ...`` suffix (pkg/scheduler/framework/types.go,
  pkg/scheduler/framework/preemption/preemption.go: nodes rejected as UnschedulableAndUnresolvable
  get "Preemption is not helpful for scheduling", nodes with no lower-priority pod get "No
  preemption victims found for incoming pod");
* NodeResourcesFit's ``Insufficient <resource>`` for extended resources
  (pkg/scheduler/framework/plugins/noderesources/fit.go);
* the ``Scheduled`` event and the ``PodScheduled=True`` condition the API server sets when the
  Binding is created (pkg/scheduler/schedule_one.go, pkg/registry/core/pod/storage/storage.go);
* ``scheduler_pending_pods{queue="gated"}`` and ``scheduler_schedule_attempts_total``
  (pkg/scheduler/metrics/metrics.go).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_kube_support import (
    MERGE,
    Api,
    InProcessScheduler,
    PodWatch,
    api,
    condition,
    eventually,
    in_process,
    kubeconfig,
    metric_value,
    ns,
    scheduler_config,
)

from kubesched.api.quantity import parse_quantity
from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kubeconfig", "ns"]  # fixtures

SCHED = "window-transfer-scheduler"
BANDWIDTH = "kubesched.io/bandwidth"
THRESHOLD = 1000
#: Issue 5's profile, word for word except the two times.
ISSUE_PROFILE = """
profiles:
  - schedulerName: window-transfer-scheduler
    plugins:
      filter: {{enabled: [{{name: WindowTransfer}}]}}
      score: {{enabled: [{{name: WindowTransfer, weight: 3}}]}}
      permit: {{enabled: [{{name: WindowTransfer}}]}}
    pluginConfig:
      - name: WindowTransfer
        args: {{windowStart: "{start}", windowEnd: "{end}", bandwidthThreshold: 1000}}
"""
#: A pre-opening check must finish this many seconds before the opening to be conclusive.
MARGIN = 2.0


def hh_mm(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M")


def rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> float:
    """A Kubernetes Time (``...Z``) or MicroTime (``....000000Z``) as epoch seconds."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def window_config(start: float, end: float) -> dict[str, Any]:
    profile = yaml.safe_load(ISSUE_PROFILE.format(start=hh_mm(start), end=hh_mm(end)))
    return scheduler_config(SCHED, extra=profile)


def bandwidth_node(api: Api, name: str, mbits: int) -> None:
    """A node declaring the bandwidth resource in its status, as a device plugin would."""
    api.node(name)
    res = {BANDWIDTH: str(mbits)}
    status = {"status": {"capacity": res, "allocatable": res}}
    api.ok(api.c.patch(f"/api/v1/nodes/{name}/status", json=status, headers=MERGE))


def transfer_pod(api: Api, ns: str, name: str, mbits: int, *, scheduler: str = SCHED, node: str | None = None) -> None:
    container = {
        "name": "transfer",
        "image": "registry.invalid/rsync",
        "resources": {"requests": {"cpu": "100m", BANDWIDTH: str(mbits)}, "limits": {BANDWIDTH: str(mbits)}},
    }
    api.pod(ns, name, scheduler=scheduler, node_name=node, extra_spec={"containers": [container]})


def bound(api: Api, ns: str, name: str) -> str | None:
    return api.node_of(ns, name)


def free_bandwidth(api: Api, ns: str) -> dict[str, int]:
    """Allocatable minus the requests of the pods bound to each node, read back from the API."""
    free = {
        n["metadata"]["name"]: int(parse_quantity(n["status"]["allocatable"].get(BANDWIDTH, "0")))
        for n in api.ok(api.c.get("/api/v1/nodes"))["items"]
    }
    for pod in api.pods(ns):
        node = pod["spec"].get("nodeName")
        if node:
            for c in pod["spec"]["containers"]:
                free[node] -= int(parse_quantity(c["resources"].get("requests", {}).get(BANDWIDTH, "0")))
    return free


def test_window_open_binds_to_most_free_bandwidth_and_keeps_the_threshold(api: Api, ns: str, kubeconfig: Path) -> None:
    # gw-a: 10000 with 4000 held by another scheduler's transfer -> 6000 free; gw-b 7000; gw-c 5500.
    bandwidth_node(api, "gw-a", 10000)
    bandwidth_node(api, "gw-b", 7000)
    bandwidth_node(api, "gw-c", 5500)
    transfer_pod(api, ns, "old-backup", 4000, scheduler="someone-else", node="gw-a")
    now = time.time()
    start = now - now % 60 - 3600  # opened an hour ago, closes in three hours
    with in_process(window_config(start, start + 4 * 3600), kubeconfig) as ks:
        # Each pod requests 3000; free bandwidth after placement (the WindowTransfer score) and the
        # node it must go to ("x": Filter rejects it, as it would keep less than the 1000 threshold).
        #   p1: a 3000, b 4000, c 2500        -> gw-b (most left)
        #   p2: a 3000, b 1000, c 2500        -> gw-a
        #   p3: a 0 x,  b 1000, c 2500        -> gw-c (gw-a would keep 0 < 1000)
        expected = {"p1": "gw-b", "p2": "gw-a", "p3": "gw-c"}
        for name, node in expected.items():
            transfer_pod(api, ns, name, 3000)
            got = eventually(lambda n=name: bound(api, ns, n), f"{name} bound")  # type: ignore[misc]
            assert got == node, f"{name} went to {got}, expected {node}"
        assert free_bandwidth(api, ns) == {"gw-a": 3000, "gw-b": 4000, "gw-c": 2500}

        # 3500 fits nowhere: gw-b has 4000 free (NodeResourcesFit passes) but would keep 500 < 1000;
        # gw-a (3000) and gw-c (2500) lack it. Without the threshold it would go to gw-b.
        transfer_pod(api, ns, "stuck", 3500)
        [failed] = eventually(lambda: api.events(ns, reason="FailedScheduling", regarding="stuck"), "FailedScheduling")
        assert failed["note"] == (
            f"0/3 nodes are available: 1 node(s) had insufficient free bandwidth, 2 Insufficient {BANDWIDTH}. "

            "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
            "2 No preemption victims found for incoming pod."
        )
        assert (failed["type"], failed["action"], failed["reportingController"]) == ("Warning", "Scheduling", SCHED)
        assert bound(api, ns, "stuck") is None

        # Every node kept at least the threshold free; the window was open, so nobody waited.
        assert all(free >= THRESHOLD for free in free_bandwidth(api, ns).values())
        assert api.events(ns, reason="WaitingForTransferWindow") == []
        assert ks.app.cluster.bindings == 3
        text = ks.metrics()
        assert metric_value(text, "kubesched_window_transfer_waiting_pods", profile=SCHED) == 0
        assert metric_value(text, "kubesched_window_transfer_window_openings_total", profile=SCHED) == 0


def _gated(ks: InProcessScheduler, key: str) -> str | None:
    """The message of the pod's PreEnqueue rejection while it is parked as gated in the queue."""
    for qpi, queue in ks.app.scheduler.queue.pending_pods():
        if qpi.pod_info.key == key and queue == "gated" and qpi.gating_plugin == "WindowTransfer":
            return qpi.last_failure
    return None


def _metrics_when(ks: InProcessScheduler, metric: str, value: float, **labels: str) -> str | None:
    """The scheduler's /metrics text once ``metric`` has ``value`` (gauges refresh every second)."""
    text = ks.metrics()
    return text if metric_value(text, metric, **labels) == value else None


def _before(opening: float, what: str) -> None:
    """Fail loudly if a check meant to observe the closed window ran too late to prove anything."""
    assert time.time() < opening - MARGIN, f"{what}: checked too late, the window was about to open"


def test_pod_waits_for_the_window_and_is_bound_once_when_it_opens(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path
) -> None:
    bandwidth_node(api, "gw-1", 10000)
    now = time.time()
    opening = now - now % 60 + 60  # the next full minute, or the one after if it is too close
    if opening - now < 30:
        opening += 60
    window = f"{hh_mm(opening)}-{hh_mm(opening + 3 * 3600)} UTC"
    opens_at = rfc3339(opening)
    with PodWatch(control_plane, ns) as watch, in_process(window_config(opening, opening + 3 * 3600), kubeconfig) as ks:
        transfer_pod(api, ns, "nightly", 4000)
        uid = api.get_pod(ns, "nightly")["metadata"]["uid"]  # type: ignore[index]

        # Closed: gated at PreEnqueue with the next opening, no scheduling cycle spent.
        [waiting] = eventually(
            lambda: api.events(ns, reason="WaitingForTransferWindow", regarding="nightly"),
            "the WaitingForTransferWindow event",
            timeout=max(opening - time.time() - MARGIN, 1.0),
        )
        assert waiting["note"] == f"Waiting for the transfer window {window}, which opens at {opens_at}"
        assert (waiting["type"], waiting["action"], waiting["reportingController"]) == ("Normal", "Scheduling", SCHED)
        assert waiting["regarding"]["uid"] == uid
        message = eventually(lambda: _gated(ks, f"{ns}/nightly"), "the pod gated", timeout=5)
        assert message == f"waiting for the transfer window {window}, which opens at {opens_at}"
        text = eventually(
            lambda: _metrics_when(ks, "scheduler_pending_pods", 1, queue="gated"),
            "the pending-pods gauge to count the pod as gated",
            timeout=max(opening - time.time() - MARGIN, 1.0),
        )
        pod = api.get_pod(ns, "nightly")
        # Every observation above was made while the window was still closed.
        _before(opening, "the pod pending, gated and unbound")
        assert metric_value(text, "kubesched_window_transfer_waiting_pods", profile=SCHED) == 1
        assert metric_value(text, "kubesched_window_transfer_window_openings_total", profile=SCHED) == 0
        assert pod is not None and pod["status"].get("phase") == "Pending"
        assert not pod["spec"].get("nodeName")
        assert ks.app.attempts == 0

        # Open: released by the plugin's timer and bound without delay.
        assert (
            eventually(
                lambda: bound(api, ns, "nightly"), "the pod bound after the opening", timeout=opening - time.time() + 45
            )
            == "gw-1"
        )
        pod = api.get_pod(ns, "nightly")
        assert pod is not None
        scheduled = condition(pod, "PodScheduled")
        assert scheduled is not None and scheduled["status"] == "True"
        # Set by the API server when the Binding was created (whole seconds): not before the opening.
        assert parse_time(scheduled["lastTransitionTime"]) >= opening
        [opened] = eventually(
            lambda: api.events(ns, reason="TransferWindowOpened", regarding="nightly"), "TransferWindowOpened"
        )
        assert opened["note"] == f"The transfer window {window} opened at {opens_at}"
        assert (opened["type"], opened["action"], opened["regarding"]["uid"]) == ("Normal", "Scheduling", uid)
        [event] = eventually(lambda: api.events(ns, reason="Scheduled", regarding="nightly"), "the Scheduled event")
        assert event["note"] == f"Successfully assigned {ns}/nightly to gw-1"
        assert parse_time(event["eventTime"]) >= opening

        # Bound exactly once, in one scheduling cycle.
        eventually(lambda: watch.nodes.get("nightly"), "the watch to see the binding")
        assert watch.nodes == {"nightly": {"gw-1"}}
        assert ks.app.cluster.bindings == 1
        assert ks.app.cluster.bind_conflicts == 0
        assert [e["reason"] for e in api.events(ns, regarding="nightly") if e["reason"] == "FailedScheduling"] == []
        text = eventually(
            lambda: _metrics_when(ks, "kubesched_window_transfer_window_openings_total", 1, profile=SCHED),
            "the openings counter",
        )
        assert metric_value(text, "kubesched_window_transfer_waiting_pods", profile=SCHED) == 0
        assert metric_value(text, "scheduler_schedule_attempts_total", result="scheduled", profile=SCHED) == 1
        assert metric_value(text, "scheduler_schedule_attempts_total", result="unschedulable", profile=SCHED) in (
            None,
            0,
        )
        assert ks.app.attempts == 1
