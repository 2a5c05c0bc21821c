"""Two ``kubesched run`` replicas with leader election on a coordination.k8s.io/v1 Lease.

What must hold, as for kube-scheduler (client-go tools/leaderelection): only the Lease holder
schedules; when it dies (SIGKILL: no release) the standby takes over once the lease expires,
``leaseTransitions`` counts the hand-over; a clean shutdown (SIGTERM) releases the Lease; a
holder that loses the Lease stops scheduling at once and exits 1. Across all of it every pod is
bound exactly once: one ``Scheduled`` event per pod, and no pod ever seen on two nodes.
Short timings (4 s lease, 3 s renew deadline, 1 s retry) keep the tests quick; the slowed-renewal
and frozen-connection cases, with kube-scheduler's timings, are in test_kube_leader_no_overlap.py.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from test_kube_support import (
    Api,
    PodWatch,
    SubprocessScheduler,
    api,
    eventually,
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


def _leading(s: SubprocessScheduler, lease: str) -> bool:
    assert s.alive(), f"replica exited:\n{s.log()[-3000:]}"
    try:
        return metric_value(s.metrics(), "leader_election_master_status", name=lease) == 1
    except httpx.HTTPError:  # not serving yet
        return False


def _scheduled(s: SubprocessScheduler) -> float:
    return metric_value(s.metrics(), "scheduler_pod_scheduling_attempts_count") or 0.0


def _create(api: Api, ns: str, sched: str, names: list[str]) -> None:
    for n in names:
        api.pod(ns, n, scheduler=sched, cpu="100m")


def _assert_bound_exactly_once(api: Api, ns: str, names: list[str], watch: PodWatch) -> None:
    eventually(lambda: all(api.node_of(ns, n) for n in names), "every pod bound", timeout=90)
    eventually(
        lambda: sorted(e["regarding"]["name"] for e in api.events(ns, reason="Scheduled")) == sorted(names),
        "exactly one Scheduled event per pod",
    )
    watch.wait_seen(names)
    assert all(len(watch.nodes.get(n, ())) == 1 for n in names), watch.nodes


def test_standby_takes_over_when_the_leader_is_killed(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path, tmp_path: Path
) -> None:
    sched, lease = unique("sched"), unique("lease")
    config = scheduler_config(sched, leader_elect=True, lease_namespace=ns, lease_name=lease)
    api.node("n-1", cpu="64")
    a = SubprocessScheduler(config, kubeconfig, tmp_path)
    b = SubprocessScheduler(config, kubeconfig, tmp_path)
    with PodWatch(control_plane, ns) as watch, subprocesses(a):
        eventually(lambda: _leading(a, lease), "replica A to lead")
        b.start()
        eventually(b.ready, "replica B ready (informers synced) while standing by")
        assert metric_value(b.metrics(), "leader_election_master_status", name=lease) == 0

        before = [f"before-{i}" for i in range(5)]
        _create(api, ns, sched, before)
        eventually(lambda: all(api.node_of(ns, n) for n in before), "the leader binds the first pods")
        held = api.lease(ns, lease)
        assert held is not None
        assert _scheduled(a) == 5
        assert _scheduled(b) == 0  # the standby never schedules

        a.kill()
        after = [f"after-{i}" for i in range(5)]
        _create(api, ns, sched, after)
        eventually(lambda: _leading(b, lease), "replica B to take over the expired lease", timeout=60)
        _assert_bound_exactly_once(api, ns, before + after, watch)
        assert _scheduled(b) == 5

        taken = api.lease(ns, lease)
        assert taken is not None
        assert taken["spec"]["holderIdentity"] != held["spec"]["holderIdentity"]
        assert taken["spec"]["leaseTransitions"] == held["spec"]["leaseTransitions"] + 1
        assert taken["spec"]["leaseDurationSeconds"] == 4

        assert b.terminate() == 0
        released = api.lease(ns, lease)
        assert released is not None
        assert not released["spec"].get("holderIdentity")  # released on clean shutdown
        b.proc = None


def test_clean_shutdown_hands_over_without_losing_a_pod(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path, tmp_path: Path
) -> None:
    sched, lease = unique("sched"), unique("lease")
    config = scheduler_config(sched, leader_elect=True, lease_namespace=ns, lease_name=lease)
    api.node("n-1", cpu="64")
    a = SubprocessScheduler(config, kubeconfig, tmp_path)
    b = SubprocessScheduler(config, kubeconfig, tmp_path)
    with PodWatch(control_plane, ns) as watch, subprocesses(a):
        eventually(lambda: _leading(a, lease), "replica A to lead")
        b.start()
        eventually(b.ready, "replica B ready")
        names = [f"p-{i}" for i in range(20)]
        _create(api, ns, sched, names[:10])
        assert a.terminate() == 0  # SIGTERM while pods are pending or binding
        assert "released lease" in a.log()
        _create(api, ns, sched, names[10:])
        eventually(lambda: _leading(b, lease), "replica B to take over the released lease")
        _assert_bound_exactly_once(api, ns, names, watch)
        assert b.terminate() == 0


def test_leader_that_loses_the_lease_stops_scheduling(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path, tmp_path: Path
) -> None:
    sched, lease = unique("sched"), unique("lease")
    config = scheduler_config(sched, leader_elect=True, lease_namespace=ns, lease_name=lease)
    api.node("n-1", cpu="64")
    a = SubprocessScheduler(config, kubeconfig, tmp_path)
    with subprocesses(a):
        eventually(lambda: _leading(a, lease), "replica A to lead")
        held = api.lease(ns, lease)
        assert held is not None
        # Someone else takes the Lease (as another candidate would after a partition).
        stolen = {**held, "spec": {**held["spec"], "holderIdentity": "intruder", "leaseDurationSeconds": 3600}}
        path = f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{lease}"
        api.ok(api.c.put(path, json=stolen))
        assert a.proc is not None
        assert a.proc.wait(60) == 1
        assert "leaderelection lost" in a.log()
        api.pod(ns, "orphan", scheduler=sched)
        assert api.node_of(ns, "orphan") is None
