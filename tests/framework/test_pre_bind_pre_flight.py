"""PreBindPreFlight, and the nominatedNodeName it makes the binding cycle write.

Upstream (v1.35.4 and later): pkg/scheduler/framework/runtime/framework.go ``RunPreBindPreFlights``
(Success as soon as one plugin returns Success, Skip when all skip, an Error wrapped as
``running PreBindPreFlight "X": ...``, any other code unsupported; the skipped plugins' PreBind is
not run) and pkg/scheduler/schedule_one.go ``bindingCycle`` (NominatedNodeNameForExpectation, on
since v1.35: when a preflight succeeds or the pod waits at Permit, ``status.nominatedNodeName`` is
set to the chosen node before WaitOnPermit and PreBind; the binding clears it,
ClearingNominatedNodeNameAfterBinding). framework_test.go ``TestRunPreBindPreFlights``'s cases
are the table below.
"""

from __future__ import annotations

from typing import Any

import pytest
from fw_fakes import fake

from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.pods_in_pre_bind import PodsInPreBindMap
from kubesched.framework.status import Code, Status
from kubesched.testing import make_node, make_pod, new_framework

T0 = 1767225600.0


def _plugin(name: str, flight: Status | None, calls: list[str]) -> type:
    def pre_bind(state: Any, pod: Any, node: str) -> None:
        calls.append(name)

    return fake(name, pre_bind_pre_flight=lambda state, pod, node: flight, pre_bind=pre_bind)


@pytest.mark.parametrize(
    ("flights", "code", "message", "pre_bound"),
    [
        # TestRunPreBindPreFlights: "Skip when there's no PreBind Plugin" has no plugin at all
        ([], Code.SKIP, "", []),
        ([Status(Code.SUCCESS)], Code.SUCCESS, "", ["A"]),
        ([Status(Code.SKIP)], Code.SKIP, "", []),
        ([Status(Code.SUCCESS), Status(Code.SKIP)], Code.SUCCESS, "", ["A"]),
        ([Status(Code.SKIP), Status(Code.SKIP)], Code.SKIP, "", []),
        ([Status(Code.ERROR, "boom"), Status(Code.SUCCESS)], Code.ERROR, 'running PreBindPreFlight "A": boom', None),
        ([Status(Code.UNSCHEDULABLE, "no")], Code.ERROR,
         'PreBindPreFlight A returned "Unschedulable", which is unsupported. It is supposed to return Success, '
         "Skip, or Error status", None),
    ],
)
def test_run_pre_bind_pre_flights(flights: list[Status], code: Code, message: str, pre_bound: list[str] | None) -> None:
    calls: list[str] = []
    plugins = [_plugin(n, f, calls) for n, f in zip("AB", flights, strict=False)]
    fw = new_framework(plugins, nodes=[make_node("n1").obj()])
    pod = make_pod("p").obj()
    got = fw.framework.run_pre_bind_pre_flights(fw.new_cycle(), fw.pod_info(pod), "n1")
    assert (got.code, got.message()) == (code, message)
    if pre_bound is not None:
        assert fw.run_pre_bind(pod, "n1").is_success()
        assert calls == pre_bound  # the skipped plugins' PreBind is not called


def test_a_pre_bind_plugin_without_a_preflight_counts_as_success() -> None:
    calls: list[str] = []

    def pre_bind(state: Any, pod: Any, node: str) -> None:
        calls.append("Old")

    fw = new_framework([fake("Old", pre_bind=pre_bind)], nodes=[make_node("n1").obj()])
    pod = make_pod("p").obj()
    assert fw.framework.run_pre_bind_pre_flights(fw.new_cycle(), fw.pod_info(pod), "n1").is_success()
    assert fw.run_pre_bind(pod, "n1").is_success() and calls == ["Old"]


class Hold:
    """Permit: pods labelled ``hold`` wait up to 60 s, then time out."""

    name = "Hold"

    def __init__(self, args: object = None, handle: object = None) -> None:
        pass

    def permit(self, state: object, pod: Any, node: str) -> tuple[Status | None, float]:
        return (Status(Code.WAIT), 60.0) if "hold" in pod.labels else (None, 0.0)


def _nominated(fw: Any, name: str) -> str | None:
    [pod] = [p for p in fw.cluster.pods.values() if p["metadata"]["name"] == name]
    return (pod.get("status") or {}).get("nominatedNodeName")


def test_a_pod_waiting_at_permit_is_nominated_to_its_node_while_it_waits() -> None:
    writes: list[dict[str, Any]] = []
    fw = new_framework(["NodeResourcesFit", Hold], nodes=[make_node("n1").capacity(cpu="4").obj()])
    patch = fw.cluster.patch_pod_status

    def recording(pod: Any, body: Any) -> None:
        writes.append(dict(body))
        patch(pod, body)

    fw.cluster.patch_pod_status = recording  # type: ignore[method-assign]
    fw.add_pod(make_pod("w").label("hold", "yes").obj())
    fw.schedule(until=T0 + 1)
    assert fw.framework.get_waiting_pod(next(iter(fw.cluster.pods.values()))["metadata"]["uid"]) is not None
    assert _nominated(fw, "w") == "n1"
    assert writes == [{"nominatedNodeName": "n1"}]
    # The wait times out: the failure clears the nomination (handleBindingCycleError's
    # clearNominatedNode), as upstream.
    fw.schedule(until=T0 + 61.5)
    assert _nominated(fw, "w") is None


def test_no_write_when_no_plugin_works_at_pre_bind_and_the_pod_does_not_wait() -> None:
    writes: list[Any] = []
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node("n1").capacity(cpu="4").obj()])
    fw.cluster.patch_pod_status = lambda pod, body: writes.append(body)  # type: ignore[method-assign]
    fw.add_pod(make_pod("p").obj())
    fw.schedule()
    [pod] = fw.cluster.pods.values()
    assert pod["spec"]["nodeName"] == "n1" and writes == []


def test_a_preflight_error_fails_the_binding_cycle() -> None:
    calls: list[str] = []
    fw = new_framework([_plugin("A", Status(Code.ERROR, "no volume"), calls)], nodes=[make_node("n1").obj()])
    fw.add_pod(make_pod("p").obj())
    fw.schedule(until=T0 + 0.5)
    [pod] = fw.cluster.pods.values()
    assert not pod["spec"].get("nodeName") and calls == []
    [cond] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["reason"], cond["message"]) == ("SchedulerError", 'running PreBindPreFlight "A": no volume')


# -- v1.36+: a pod in PreBind is cancelled by preemption instead of deleted ------------------------
# Upstream: framework/runtime/pods_in_prebind_map.go (CancelPod, MarkPrebound), schedule_one.go
# bindingCycle (``bindingPod != nil && !bindingPod.MarkPrebound()`` -> the cancellation as Error),
# framework/preemption/executor.go PreemptPod (``podInPreBind.CancelPod("preempted by <plugin>")``,
# no API call, the event ends with " (in kube-scheduler memory).").


def _self_cancelling(holder: dict[str, Any]) -> type:
    """A PreBind plugin with work to do; while it works, a preemption cancels the pod's binding."""

    def pre_bind(state: Any, pod: Any, node: str) -> None:
        entry = holder["fw"].framework.pods_in_pre_bind.get(pod.uid)
        holder["registered"] = entry is not None
        if entry is not None:
            holder["cancelled"] = entry.cancel_pod("preempted by DefaultPreemption")

    return fake("Slow", pre_bind_pre_flight=lambda state, pod, node: None, pre_bind=pre_bind)


@pytest.mark.parametrize(("release", "bound"), [(V1_35, True), (V1_36, False), (V1_37, False)])
def test_a_binding_cancelled_in_pre_bind_backs_off(release: Release, bound: bool) -> None:
    holder: dict[str, Any] = {}
    fw = holder["fw"] = new_framework([_self_cancelling(holder)], nodes=[make_node("n1").obj()], release=release)
    fw.add_pod(make_pod("p").obj())
    fw.schedule(until=T0 + 0.5)
    [pod] = fw.cluster.pods.values()
    assert holder["registered"] is not bound  # v1.35 has no such registry
    assert bool(pod["spec"].get("nodeName")) is bound
    if not bound:
        [cond] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert (cond["reason"], cond["message"]) == ("SchedulerError", "preempted by DefaultPreemption")
        assert not fw.framework.pods_in_pre_bind.get(pod["metadata"]["uid"])  # removed when it left PreBind


def test_cancel_after_prebound_fails_and_the_victim_is_deleted() -> None:
    entry = PodsInPreBindMap().add("uid")
    assert entry.mark_prebound()
    assert not entry.cancel_pod("preempted by DefaultPreemption")  # too late: PreemptPod deletes it
    other = PodsInPreBindMap().add("uid")
    assert other.cancel_pod("first") and other.cancel_pod("second")
    assert not other.mark_prebound() and other.cause == "first"
