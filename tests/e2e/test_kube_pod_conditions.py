"""The PodScheduled=False condition next to kube-scheduler's, in one cluster (issue 13).

kube-scheduler v1.35 writes ``observedGeneration`` on the condition of a failed attempt
(pkg/scheduler/schedule_one.go ``handleSchedulingFailure``:
``podutil.CalculatePodConditionObservedGeneration``, which is the pod's generation with
PodObservedGenerationTracking GA in v1.35) and patches the condition only when its status, reason
or message changed (pkg/api/v1/pod/util.go ``UpdatePodCondition``: the generation alone is not
compared). Both schedulers get the same pod; their conditions must agree at every step.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_kube_support import (
    MERGE,
    Api,
    InProcessScheduler,
    api,
    condition,
    eventually,
    kube_scheduler,
    ns,
    scheduler_config,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kube_scheduler", "ns"]  # fixtures


def _state(api: Api, ns: str, name: str) -> tuple[int, dict[str, Any]] | None:
    pod = api.get_pod(ns, name)
    cond = condition(pod or {}, "PodScheduled")
    if pod is None or cond is None or cond.get("status") != "False":
        return None
    return int(pod["metadata"].get("generation", 0)), cond


def _tolerate(api: Api, ns: str, name: str) -> None:
    """A spec change the API server allows on a pending pod (tolerations may be added): the
    pod's generation goes up."""
    body = {"spec": {"tolerations": [{"key": "example.com/any", "operator": "Exists", "effect": "NoSchedule"}]}}
    api.ok(api.c.patch(f"/api/v1/namespaces/{ns}/pods/{name}", json=body, headers=MERGE))


def test_observed_generation_as_kube_scheduler_writes_it(
    control_plane: ControlPlane, api: Api, ns: str, kube_scheduler: tuple[str, int]
) -> None:
    ks_name, _ = kube_scheduler
    ours_name = unique("kubesched")
    api.node("n1", cpu="2")
    sched = InProcessScheduler(scheduler_config(ours_name), control_plane.kubeconfig_path).start()
    try:
        for who in (ks_name, ours_name):
            api.pod(ns, f"{who}-big", scheduler=who, cpu="3")
        first = {w: eventually(lambda w=w: _state(api, ns, f"{w}-big"), f"{w}: PodScheduled=False") for w in
                 (ks_name, ours_name)}
        for generation, cond in first.values():
            assert generation == 1
            assert cond["observedGeneration"] == 1
        assert first[ours_name][1]["message"] == first[ks_name][1]["message"]

        # Generation 2 with the same outcome: the condition is not rewritten (same message).
        for who in (ks_name, ours_name):
            _tolerate(api, ns, f"{who}-big")
        eventually(lambda: all((_state(api, ns, f"{w}-big") or (0, {}))[0] == 2 for w in (ks_name, ours_name)),
                   "generation 2")
        # A node large enough (NodeResourcesFit's queueing hint requeues the pods) but tainted: a
        # new attempt with a new message, which observes generation 2.
        api.node("n2", cpu="4", taints=[{"key": "example.com/dedicated", "value": "x", "effect": "NoSchedule"}])
        second = {
            w: eventually(
                lambda w=w: (s := _state(api, ns, f"{w}-big")) and "0/2 nodes" in s[1]["message"] and s,
                f"{w}: the condition rewritten after the new node",
            )
            for w in (ks_name, ours_name)
        }
        for generation, cond in second.values():
            assert generation == 2
            assert cond["observedGeneration"] == 2
        assert second[ours_name][1]["message"] == second[ks_name][1]["message"]
    finally:
        sched.stop()
