"""Preemption against a real kube-apiserver: victims deleted through the API, the preemptor
nominated, then bound.

Expectations from upstream: the victim gets the ``DisruptionTarget`` condition with reason
``PreemptionByScheduler`` before it is deleted, and a ``Preempted``/``Preempting`` event
"Preempted by pod <preemptor UID> on node <node>" regarding the victim and related to the
preemptor (pkg/scheduler/framework/preemption/preemption.go ``PreemptPod``); the preemptor's
attempt fails with the plain FitError (a successful PostFilter adds no message,
pkg/scheduler/framework/types.go) and ``status.nominatedNodeName`` is written
(pkg/scheduler/schedule_one.go ``updatePod``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_kube_support import (
    Api,
    PodWatch,
    api,
    condition,
    eventually,
    in_process,
    kubeconfig,
    ns,
    scheduler_config,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kubeconfig", "ns"]  # fixtures


def test_preemption_deletes_victims_and_binds_the_preemptor(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path
) -> None:
    sched = unique("sched")
    low, high = unique("low"), unique("high")
    api.priority_class(low, 100)
    api.priority_class(high, 1000)
    api.node("n-1", cpu="2")
    with PodWatch(control_plane, ns) as watch, in_process(scheduler_config(sched), kubeconfig) as ks:
        victim = api.pod(ns, "victim", scheduler=sched, cpu="1500m", priority_class=low)
        eventually(lambda: api.node_of(ns, "victim") == "n-1", "the low-priority pod bound")
        preemptor = api.pod(ns, "preemptor", scheduler=sched, cpu="1500m", priority_class=high)

        eventually(lambda: api.get_pod(ns, "victim") is None, "the victim deleted")
        eventually(lambda: api.node_of(ns, "preemptor") == "n-1", "the preemptor bound to the freed node")

        [preempted] = api.events(ns, reason="Preempted")
        assert preempted["note"] == f"Preempted by pod {preemptor['metadata']['uid']} on node n-1"
        assert (preempted["type"], preempted["action"]) == ("Normal", "Preempting")
        assert preempted["regarding"]["uid"] == victim["metadata"]["uid"]
        assert preempted["related"]["uid"] == preemptor["metadata"]["uid"]
        assert preempted["reportingController"] == sched

        [failed] = api.events(ns, reason="FailedScheduling", regarding="preemptor")
        assert failed["note"] == "0/1 nodes are available: 1 Insufficient cpu."
        eventually(lambda: watch.nominated.get("preemptor") == {"n-1"}, "nominatedNodeName n-1 seen on the preemptor")
        [scheduled] = api.events(ns, reason="Scheduled", regarding="preemptor")
        assert scheduled["note"] == f"Successfully assigned {ns}/preemptor to n-1"
        eventually(
            lambda: ("DisruptionTarget", "True", "PreemptionByScheduler") in watch.conditions.get("victim", set()),
            "the victim marked as a disruption target before its deletion",
        )
        # Each pod was only ever on one node.
        watch.wait_seen(["victim", "preemptor"])
        assert watch.nodes == {"victim": {"n-1"}, "preemptor": {"n-1"}}
        assert ks.app.cluster.bindings == 2
        pod = api.get_pod(ns, "preemptor")
        assert pod is not None and condition(pod, "PodScheduled") is not None
