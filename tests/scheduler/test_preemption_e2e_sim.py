"""Preemption end to end: the default profile on the simulated cluster, with a virtual clock.

What a user of kube-scheduler v1.35 sees (pkg/scheduler/schedule_one.go, handleSchedulingFailure;
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go;
pkg/scheduler/framework/preemption/preemption.go): the preemptor's FailedScheduling message, the
victims' ``Preempted`` events and DisruptionTarget condition, ``status.nominatedNodeName``, and the
preemptor bound to the nominated node once the victims are gone. Expectations are hand-derived
from the cluster each test builds.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import pytest
from rich.console import Console
from sched_fakes import bound_at, condition, node_of, notes, queued

from kubesched.config.load import load_config
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.sim.report import print_simulation
from kubesched.sim.runner import collect
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

T0 = 1767225600.0
DEFAULT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return make_node(name).capacity(cpu=cpu, memory="8Gi").obj()


def pod(name: str, cpu: str, prio: int, node_name: str = "", **labels: str) -> dict[str, Any]:
    w = make_pod(name).req(cpu=cpu).priority(prio)
    if node_name:
        w.node(node_name)
    for k, v in labels.items():
        w.label(k, v)
    return w.obj()


def default_profile(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], **kw: Any) -> TestFramework:
    return new_framework(load_config(DEFAULT), nodes=nodes, pods=pods, **kw)


def record_patches(fw: TestFramework) -> list[tuple[str, dict[str, Any]]]:
    """Every status patch the scheduler sends, in order (the simulator applies them too)."""
    log: list[tuple[str, dict[str, Any]]] = []
    real = fw.cluster.patch_pod_status

    def patch(p: Mapping[str, Any], body: Mapping[str, Any]) -> None:
        log.append((p["metadata"]["name"], dict(body)))
        real(p, body)

    fw.cluster.patch_pod_status = patch  # type: ignore[method-assign]
    return log


def deleted(fw: TestFramework) -> dict[str, str]:
    return {h["name"]: h["deletedReason"] for h in fw.cluster.history.values() if h["deletedReason"]}


def uid(fw: TestFramework, name: str) -> str:
    return str(fw.cluster.pods[f"default/{name}"]["metadata"]["uid"])


def three_nodes() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """a: four 1-cpu pods at priority 10; b: two 2-cpu pods at 10; c: one 4-cpu pod at 50."""
    pods = [pod(f"a{i}", "1", 10, "a") for i in range(4)]
    pods += [pod("b0", "2", 10, "b"), pod("b1", "2", 10, "b")]
    pods[-2]["status"]["startTime"] = "2025-12-31T00:00:00Z"  # b0 is older, hence more important
    pods[-1]["status"]["startTime"] = "2025-12-31T12:00:00Z"
    pods.append(pod("c0", "4", 50, "c"))
    return [node("a"), node("b"), node("c")], pods


def test_preempts_the_fewest_lowest_priority_pods_then_binds_to_the_nominated_node() -> None:
    # A 2-cpu pod at priority 100 fits nowhere. Dry runs: a needs 2 victims at 10, b one at 10
    # (the newer b1; b0 is reprieved), c one at 50. Lowest highest priority: a or b; then the
    # smaller sum of priorities: b.
    nodes, pods = three_nodes()
    fw = default_profile(nodes, pods)
    patches = record_patches(fw)
    fw.add_pod(pod("hi", "2", 100))
    fw.schedule()

    assert deleted(fw) == {"b1": "Preempted"}
    assert node_of(fw, "hi") == "b"
    # Preemption succeeded, so the FailedScheduling message has no "preemption:" part.
    assert notes(fw, "hi") == ["0/3 nodes are available: 3 Insufficient cpu."]
    # The victim: DisruptionTarget condition first, then the deletion, then the event.
    assert patches[0][0] == "b1"
    (cond,) = patches[0][1]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "DisruptionTarget", "True", "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod",
    )
    (ev,) = [e for e in fw.cluster.events if e.reason == "Preempted"]
    assert (ev.name, ev.type, ev.action, ev.reporting_controller) == ("b1", "Normal", "Preempting", "default-scheduler")
    assert ev.note == f"Preempted by pod {uid(fw, 'hi')} on node b"
    # The preemptor was nominated to b (status and nominator), and the binding cleared it.
    assert ("hi", {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                   "message": "0/3 nodes are available: 3 Insufficient cpu."}],
                   "nominatedNodeName": "b"}) in patches
    assert "nominatedNodeName" not in fw.cluster.pods["default/hi"]["status"]
    assert fw.scheduler.queue.nominated_pods_for_node("b") == []
    # Everyone else is where they were.
    for name, where in [("a0", "a"), ("a1", "a"), ("a2", "a"), ("a3", "a"), ("b0", "b"), ("c0", "c")]:
        assert node_of(fw, name) == where
        assert f"default/{name}" in fw.cluster.pods
    reg = fw.scheduler.metrics.registry
    assert reg.get_sample_value("scheduler_preemption_attempts_total") == 1
    assert reg.get_sample_value("scheduler_preemption_victims_sum") == 1


def test_preemption_policy_never() -> None:
    nodes, pods = three_nodes()
    fw = default_profile(nodes, pods)
    fw.add_pod(make_pod("hi").req(cpu="2").priority(100).preemption_policy("Never").obj())
    fw.schedule()
    want = ("0/3 nodes are available: 3 Insufficient cpu. "
            "preemption: not eligible due to preemptionPolicy=Never.")
    assert notes(fw, "hi") == [want]
    assert condition(fw, "hi")["message"] == want
    assert deleted(fw) == {}
    assert node_of(fw, "hi") is None
    where = queued(fw, "hi")
    assert where is not None and where[0] == "unschedulable"
    assert "nominatedNodeName" not in fw.cluster.pods["default/hi"]["status"]


def test_no_lower_priority_pods_message() -> None:
    nodes, pods = three_nodes()
    fw = default_profile(nodes, pods)
    fw.add_pod(pod("peer", "2", 10))
    fw.schedule()
    assert notes(fw, "peer") == [
        "0/3 nodes are available: 3 Insufficient cpu. "

        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    ]
    assert deleted(fw) == {}


def pdb(app: str, allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    }


def test_pdb_is_respected_when_another_node_will_do() -> None:
    # One 4-cpu pod per node at the same priority: equal on every criterion but the PDB.
    fw = default_profile(
        [node("a"), node("b")],
        [pod("db", "4", 10, "a", app="db"), pod("web", "4", 10, "b", app="web")],
        objects=[pdb("db", 0)],
    )
    fw.add_pod(pod("hi", "4", 100))
    fw.schedule()
    assert deleted(fw) == {"web": "Preempted"}
    assert node_of(fw, "hi") == "b"
    assert "default/db" in fw.cluster.pods


def test_pdb_is_best_effort_when_it_is_the_only_way() -> None:
    fw = default_profile([node("a")], [pod("db", "4", 10, "a", app="db")], objects=[pdb("db", 0)])
    fw.add_pod(pod("hi", "4", 100))
    fw.schedule()
    assert deleted(fw) == {"db": "Preempted"}
    assert node_of(fw, "hi") == "a"


def test_victim_deletion_failure_requeues_the_preemptor_and_loses_no_pod() -> None:
    fw = default_profile([node("a")], [pod("v", "4", 10, "a")])
    real_delete = fw.cluster.delete_pod
    calls: list[str] = []

    def flaky_delete(p: Mapping[str, Any], reason: str = "") -> None:
        calls.append(p["metadata"]["name"])
        if len(calls) == 1:
            raise RuntimeError("etcdserver: request timed out")
        real_delete(p, reason)

    fw.cluster.delete_pod = flaky_delete  # type: ignore[method-assign]
    fw.add_pod(pod("hi", "4", 100))
    patches = record_patches(fw)
    fw.schedule(until=T0)
    # First attempt: the deletion failed; PostFilter's Error is reported, nothing is nominated,
    # and the pod backs off as an Error (1 s), not waiting for a cluster event.
    first = "0/1 nodes are available: 1 Insufficient cpu. preemption: etcdserver: request timed out"
    assert notes(fw, "hi") == [first]
    assert condition(fw, "hi") == {"type": "PodScheduled", "status": "False", "reason": "SchedulerError",
                                   "message": first}
    assert "nominatedNodeName" not in fw.cluster.pods["default/hi"]["status"]
    where = queued(fw, "hi")
    assert where is not None and where[0] == "backoff" and where[1].consecutive_errors == 1
    assert [name for name, _ in patches] == ["v", "hi"]  # the victim was marked, not deleted
    # After the backoff the second attempt preempts; the pod binds to the nominated node.
    fw.schedule()
    assert notes(fw, "hi") == [first, "0/1 nodes are available: 1 Insufficient cpu."]
    assert bound_at(fw, "hi") == T0 + 1
    assert calls == ["v", "v"]
    assert deleted(fw) == {"v": "Preempted"}
    assert node_of(fw, "hi") == "a"
    assert [e.name for e in fw.cluster.events if e.reason == "Preempted"] == ["v"]
    assert fw.scheduler.metrics.registry.get_sample_value("scheduler_preemption_attempts_total") == 2


def test_victim_deletion_failure_without_recovery_keeps_everything() -> None:
    fw = default_profile([node("a")], [pod("v", "4", 10, "a")])

    def broken_delete(p: Mapping[str, Any], reason: str = "") -> None:
        raise RuntimeError("forbidden")

    fw.cluster.delete_pod = broken_delete  # type: ignore[method-assign]
    fw.add_pod(pod("hi", "4", 100))
    fw.schedule(until=T0 + 120)
    assert node_of(fw, "v") == "a" and "default/v" in fw.cluster.pods
    assert node_of(fw, "hi") is None and "default/hi" in fw.cluster.pods
    assert queued(fw, "hi") is not None
    # Retried with the Error backoff (1, 2, 4, 8 s...), each time reporting the failure.
    times = [e.time - T0 for e in fw.cluster.events if e.name == "hi" and e.reason == "FailedScheduling"]
    assert times[:5] == [0, 1, 3, 7, 15]
    assert set(notes(fw, "hi")) == {"0/1 nodes are available: 1 Insufficient cpu. preemption: forbidden"}


class Hold:
    """Permit: pods labelled ``hold`` wait (for an approval that never comes)."""

    name = "Hold"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def permit(self, state: CycleState, p: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return (Status(Code.WAIT), 600.0) if "hold" in p.labels else (None, 0.0)


def test_waiting_pod_victim_is_rejected_and_requeued_not_deleted() -> None:
    """v1.35 (preemption.go PreemptPod): the waiting victim is rejected, never deleted."""
    fw = new_framework(["NodeResourcesFit", Hold, "DefaultPreemption"], nodes=[node("a")], release=V1_35)
    fw.add_pod(pod("w", "4", 10, hold="yes"))
    fw.schedule(until=T0 + 1)
    assert fw.framework.get_waiting_pod(uid(fw, "w")) is not None
    fw.add_pod(pod("hi", "4", 100))
    fw.schedule(until=T0 + 2)
    assert node_of(fw, "hi") == "a"
    assert deleted(fw) == {}
    assert "default/w" in fw.cluster.pods and node_of(fw, "w") is None
    assert [e.note for e in fw.cluster.events if e.reason == "Preempted"] == [
        f"Preempted by pod {uid(fw, 'hi')} on node a"
    ]
    assert notes(fw, "w")[0] == "0/1 nodes are available: 1 preempted."
    assert queued(fw, "w") is not None


@pytest.mark.parametrize("release", [V1_36, V1_37])
def test_waiting_pod_victim_backs_off_in_memory_from_v1_36(release: Release) -> None:
    """framework/preemption/executor.go (v1.36.3): ``waitingPod.Preempt`` stops the wait with an
    Error (framework/runtime/waiting_pods_map.go), so the victim goes to backoffQ as a
    SchedulerError, is not deleted, and its Preempted event says it happened in memory."""
    fw = new_framework(["NodeResourcesFit", Hold, "DefaultPreemption"], nodes=[node("a")], release=release)
    fw.add_pod(pod("w", "4", 10, hold="yes"))
    fw.schedule(until=T0 + 1)
    assert fw.framework.get_waiting_pod(uid(fw, "w")) is not None
    fw.add_pod(pod("hi", "4", 100))
    fw.schedule(until=T0 + 1.5)
    assert node_of(fw, "hi") == "a"
    assert deleted(fw) == {}
    assert [e.note for e in fw.cluster.events if e.reason == "Preempted"] == [
        f"Preempted by pod {uid(fw, 'hi')} on node a (in kube-scheduler memory)."
    ]
    assert notes(fw, "w") == ["preempted"]
    [cond] = [c for c in fw.cluster.pods["default/w"]["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["reason"], cond["message"]) == ("SchedulerError", "preempted")
    where = queued(fw, "w")
    assert where is not None and where[0] == "backoff" and where[1].consecutive_errors == 1


def test_simulate_report_shows_preempted_pods() -> None:
    nodes, pods = three_nodes()
    fw = default_profile(nodes, pods)
    fw.add_pod(pod("hi", "2", 100))
    fw.add_pod(make_pod("never").req(cpu="2").priority(100).preemption_policy("Never").obj())
    fw.schedule()
    result = collect(fw.scheduler, fw.cluster, T0, fw.clock.now())
    out = io.StringIO()
    print_simulation(result, Console(file=out, width=250, color_system=None))
    text = out.getvalue()
    (row,) = [line for line in text.splitlines() if "│ default/b1" in line]
    assert "b ✗" in row and "00:00:00 ✗" in row
    # Below the table, by name (the event names the preemptor by UID).
    assert "default/b1 (preempted, 0 attempts)" in text
    assert "00:00:00 preempted by default/hi" in text
    # 9 pods: the victim b1 is preempted (no longer counted as bound), "never" stays pending.
    assert "9 pods: 7 bound, 1 pending, 1 preempted;" in " ".join(text.split())
    # In JSON the victim keeps the node it ran on, and its state says it is gone (issue 11).
    (victim,) = [p for p in result.to_json()["pods"] if p["name"] == "b1"]
    assert (victim["state"], victim["node"], victim["preemptedBy"]) == ("preempted", "b", "default/hi")


def test_lower_priority_pod_does_not_take_the_room_freed_for_the_preemptor() -> None:
    # b is full (two 2-cpu pods at 10). "lp" (priority 5) fails at T0 and waits; at T0+30 "hi"
    # (priority 100) preempts b1 and is nominated to b. The deletion requeues both; lp, whose
    # backoff is long over, is tried first, but the filters count the nominated hi on b.
    fw = default_profile([node("b")], [pod("b0", "2", 10, "b"), pod("b1", "2", 10, "b")])
    fw.add_pod(pod("lp", "2", 5))
    fw.schedule()
    fw.clock.advance_to(T0 + 30)
    fw.add_pod(pod("hi", "2", 100))
    fw.schedule()
    assert deleted(fw) == {"b1": "Preempted"}
    assert node_of(fw, "hi") == "b"
    assert node_of(fw, "lp") is None
    no_victims = ("0/1 nodes are available: 1 Insufficient cpu. "

                  "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    lp_attempts = [e.time - T0 for e in fw.cluster.events if e.name == "lp" and e.reason == "FailedScheduling"]
    hi_bound = bound_at(fw, "hi")
    assert hi_bound is not None
    # lp was retried after the preemption and before hi bound, and still did not fit.
    assert lp_attempts == [0, 30] and hi_bound == T0 + 30
    lp_retry, hi_bind = (
        next(i for i, e in enumerate(fw.cluster.events) if e.name == n and e.reason == r and e.time == T0 + 30)
        for n, r in (("lp", "FailedScheduling"), ("hi", "Scheduled"))
    )
    assert lp_retry < hi_bind
    assert set(notes(fw, "lp")) == {no_victims}
