"""kubesched against a real kube-apiserver: bindings, events, pod conditions, metrics.

Expectations come from Kubernetes, not from our code: the Binding subresource and the
``PodScheduled=True`` condition the API server sets on it
(pkg/registry/core/pod/storage/storage.go), event reasons, actions and notes of
pkg/scheduler/schedule_one.go (``Scheduled``/``Binding``/"Successfully assigned <ns>/<name> to
<node>", ``FailedScheduling``/``Scheduling``), the FitError message format
(``0/N nodes are available: ...``, pkg/scheduler/framework/types.go) with DefaultPreemption's
suffix (pkg/scheduler/framework/preemption/preemption.go), events.k8s.io validation
(pkg/apis/core/validation/events.go: MicroTime eventTime, reportingInstance <= 128), and
metric names of pkg/scheduler/metrics/metrics.go.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from test_kube_support import (
    Api,
    SubprocessScheduler,
    api,
    condition,
    eventually,
    in_process,
    kubeconfig,
    metric_value,
    ns,
    scheduler_config,
    subprocesses,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kubeconfig", "ns"]  # fixtures

MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
#: DynamicResources' PostFilter reason: in every v1.35.4 and v1.36.3 FailedScheduling message, gone in
#: v1.37.2 (dynamicresources.go), the control plane's release and kubesched's default.
NO_CLAIMS = ""
NO_VICTIMS = "preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."
#: A request above the node's allocatable is UnschedulableAndUnresolvable (noderesources/fit.go,
#: ``Unresolvable``), so preemption does not consider the node (preemption.go, ``findCandidates``).
NOT_HELPFUL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."


def _cpu_millis(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def test_binds_pods_and_records_events(api: Api, ns: str, kubeconfig: Path) -> None:
    sched = unique("sched")
    nodes = {"n-a": "2", "n-b": "2"}
    for name, cpu in nodes.items():
        api.node(name, cpu=cpu)
    names = [f"p{i}" for i in range(6)]
    with in_process(scheduler_config(sched), kubeconfig) as ks:
        uids = {n: api.pod(ns, n, scheduler=sched, cpu="500m")["metadata"]["uid"] for n in names}
        eventually(lambda: all(api.node_of(ns, n) for n in names), "all pods bound")
        eventually(lambda: len(api.events(ns, reason="Scheduled")) == len(names), "one Scheduled event per pod")

        placed: dict[str, int] = {}
        for n in names:
            pod = api.get_pod(ns, n)
            assert pod is not None
            node = pod["spec"]["nodeName"]
            placed[node] = placed.get(node, 0) + 500
            scheduled = condition(pod, "PodScheduled")
            assert scheduled is not None and scheduled["status"] == "True"
            [event] = api.events(ns, reason="Scheduled", regarding=n)
            assert event["note"] == f"Successfully assigned {ns}/{n} to {node}"
            assert event["type"] == "Normal"
            assert event["action"] == "Binding"
            assert event["reportingController"] == sched
            assert event["reportingInstance"].startswith(f"{sched}-")
            assert event["regarding"]["kind"] == "Pod"
            assert event["regarding"]["uid"] == uids[n]
            assert MICRO_TIME.match(event["eventTime"]), event["eventTime"]
        # Nothing over-committed: 2 CPUs per node, 500m per pod.
        assert all(used <= 2000 for used in placed.values()), placed

        assert ks.app.cluster.bindings == len(names)
        assert ks.app.cluster.bind_conflicts == 0
        text = ks.metrics()
        assert metric_value(text, "scheduler_pod_scheduling_attempts_count") == len(names)
        assert metric_value(text, "rest_client_requests_total", code="403") is None
        port = ks.metrics_port
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").text == "ok"
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz?verbose")
        assert ready.status_code == 200
        assert "[+]sched-handler-sync ok" in ready.text
        assert ready.text.rstrip().endswith("readyz check passed")


def test_other_schedulers_pods_left_alone_but_accounted(api: Api, ns: str, kubeconfig: Path) -> None:
    sched = unique("sched")
    api.node("n-1", cpu="2")
    with in_process(scheduler_config(sched), kubeconfig) as ks:
        # Bound by someone else (no scheduler involved): its 1500m count on n-1.
        api.pod(ns, "theirs-bound", scheduler="someone-else", cpu="1500m", node_name="n-1")
        # Pending for another scheduler: never ours to schedule.
        api.pod(ns, "theirs-pending", scheduler="someone-else", cpu="100m")
        api.pod(ns, "ours", scheduler=sched, cpu="1")

        failed = eventually(lambda: api.events(ns, reason="FailedScheduling", regarding="ours"), "FailedScheduling")
        assert failed[0]["note"] == "0/1 nodes are available: 1 Insufficient cpu. " + NO_CLAIMS + NO_VICTIMS.format(n=1)
        assert api.node_of(ns, "ours") is None

        # Freeing the room bound by the other scheduler lets ours in (an AssignedPod delete event).
        api.ok(api.c.delete(f"/api/v1/namespaces/{ns}/pods/theirs-bound"))
        eventually(lambda: api.node_of(ns, "ours") == "n-1", "our pod bound once the other pod is gone")

        assert api.node_of(ns, "theirs-pending") is None
        assert api.events(ns, regarding="theirs-pending") == []
        assert api.events(ns, regarding="theirs-bound") == []
        assert ks.app.cluster.bindings == 1


def test_unschedulable_pod_is_scheduled_when_a_fitting_node_arrives(api: Api, ns: str, kubeconfig: Path) -> None:
    sched = unique("sched")
    api.node("small", cpu="1")
    with in_process(scheduler_config(sched), kubeconfig) as ks:
        api.pod(ns, "big", scheduler=sched, cpu="3")
        expected = "0/1 nodes are available: 1 Insufficient cpu. " + NO_CLAIMS + NOT_HELPFUL.format(n=1)

        def unschedulable() -> dict[str, object] | None:
            pod = api.get_pod(ns, "big")
            cond = condition(pod or {}, "PodScheduled")
            return cond if cond and cond["status"] == "False" else None

        cond = eventually(unschedulable, "PodScheduled=False")
        assert cond["reason"] == "Unschedulable"
        assert cond["message"] == expected
        [event] = api.events(ns, reason="FailedScheduling", regarding="big")
        assert event["note"] == expected
        assert (event["type"], event["action"], event["reportingController"]) == ("Warning", "Scheduling", sched)
        eventually(
            lambda: metric_value(ks.metrics(), "scheduler_pending_pods", queue="unschedulable") == 1,
            "the pending-pods gauge to count the pod as unschedulable",
        )
        text = ks.metrics()
        assert metric_value(text, "scheduler_schedule_attempts_total", result="unschedulable", profile=sched) == 1

        api.node("large", cpu="4")
        eventually(lambda: api.node_of(ns, "big") == "large", "the pod bound to the new node")
        [scheduled] = eventually(lambda: api.events(ns, reason="Scheduled", regarding="big"), "Scheduled event")
        assert scheduled["note"] == f"Successfully assigned {ns}/big to large"
        pod = api.get_pod(ns, "big")
        assert pod is not None
        assert condition(pod, "PodScheduled")["status"] == "True"  # type: ignore[index]


def test_repeated_failures_become_an_event_series(api: Api, ns: str, kubeconfig: Path) -> None:
    """With no nodes at all the pod is retried with backoff (1 s, 2 s, ...) and fails the same
    way each time: after the condition is written (which changes the pod's resourceVersion) the
    repeats are isomorphic events and become one series (client-go tools/events)."""
    sched = unique("sched")
    with in_process(scheduler_config(sched), kubeconfig):
        api.pod(ns, "lonely", scheduler=sched)

        def series() -> list[dict[str, object]]:
            return [e for e in api.events(ns, reason="FailedScheduling", regarding="lonely") if e.get("series")]

        [event] = eventually(series, "a FailedScheduling series", timeout=60)
        assert event["note"] == "no nodes available to schedule pods"
        assert event["series"]["count"] >= 2  # type: ignore[index]
        assert MICRO_TIME.match(event["series"]["lastObservedTime"])  # type: ignore[index]
        # The first failure (before the condition changed the pod) and the series: no more.
        assert len(api.events(ns, reason="FailedScheduling", regarding="lonely")) == 2


def test_kubesched_run_logs_each_decision_as_json(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path, tmp_path: Path
) -> None:
    sched = unique("sched")
    api.node("n-1", cpu="2")
    ks = SubprocessScheduler(scheduler_config(sched), kubeconfig, tmp_path, "--logging-format=json")
    with subprocesses(ks):
        eventually(ks.ready, "kubesched run to be ready")
        api.pod(ns, "fits", scheduler=sched, cpu="1")
        api.pod(ns, "too-big", scheduler=sched, cpu="3")
        eventually(lambda: api.node_of(ns, "fits") == "n-1", "the pod bound")
        eventually(lambda: api.events(ns, reason="FailedScheduling", regarding="too-big"), "FailedScheduling")
        assert ks.terminate() == 0
    lines = [json.loads(line) for line in ks.log().splitlines() if line.startswith("{")]
    bound = [e for e in lines if e["msg"] == "Successfully bound pod to node"]
    assert [(e["pod"], e["node"], e["v"]) for e in bound] == [(f"{ns}/fits", "n-1", 2)]
    failed = [e for e in lines if e["msg"] == "Unable to schedule pod"]
    assert [(e["pod"], e["v"]) for e in failed] == [(f"{ns}/too-big", 2)]
    assert failed[0]["err"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert all({"ts", "caller", "msg", "v"} <= e.keys() for e in lines)
    assert any(e["msg"] == "kubesched stopped" and e["exitCode"] == 0 for e in lines)
