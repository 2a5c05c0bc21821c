"""Several profiles in one scheduler, chosen by ``spec.schedulerName``.

Ported from pkg/scheduler/schedule_one_test.go ``TestSchedulerMultipleProfilesScheduling``: two
profiles whose FakeNodeSelector (configured through pluginConfig args) allows one node each; the
events name the profile as their reporting controller. Pods for a scheduler name no profile has
are not ours: never queued, never bound, no event.
"""

from __future__ import annotations

from typing import Any

from sched_fakes import node_of, notes

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.registry import default_registry
from kubesched.testing import make_node, make_pod, new_framework


class FakeNodeSelector:
    """Allows only the node named in its args (UnschedulableAndUnresolvable elsewhere)."""

    name = "FakeNodeSelector"

    def __init__(self, args: Any, handle: Any) -> None:
        self.node_name = args["nodeName"]

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Status | None:
        if node_info.name != self.node_name:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        return None


def _profile(name: str, node: str) -> dict[str, Any]:
    return {
        "schedulerName": name,
        "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "filter": {"enabled": [{"name": "FakeNodeSelector"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
        },
        "pluginConfig": [{"name": "FakeNodeSelector", "args": {"nodeName": node}}],
    }


def test_multiple_profiles_scheduling() -> None:
    reg = default_registry(entry_points=False)
    reg.register(FakeNodeSelector.name, FakeNodeSelector)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [_profile("match-node2", "node2"), _profile("match-node3", "node3")],
    }
    fw = new_framework(config, nodes=[make_node(n).obj() for n in ("node1", "node2", "node3")], registry=reg)
    assert sorted(fw.scheduler.frameworks) == ["match-node2", "match-node3"]
    pods = {"pod1": "match-node3", "pod2": "match-node2", "pod3": "match-node2", "pod4": "match-node3",
            "stranger": "someone-else"}
    for name, scheduler in pods.items():
        fw.add_pod(make_pod(name).scheduler_name(scheduler).obj())
    fw.schedule()

    want_bindings = {"pod1": "node3", "pod2": "node2", "pod3": "node2", "pod4": "node3"}
    assert {p: node_of(fw, p) for p in want_bindings} == want_bindings
    controllers = {e.name: e.reporting_controller for e in fw.cluster.events if e.reason == "Scheduled"}
    assert controllers == {"pod1": "match-node3", "pod2": "match-node2", "pod3": "match-node2",
                           "pod4": "match-node3"}

    # Not ours: ignored entirely.
    assert node_of(fw, "stranger") is None
    assert notes(fw, "stranger") == []
    assert all(qpi.pod_info.name != "stranger" for qpi, _ in fw.scheduler.queue.pending_pods())
    assert fw.scheduler.stats.attempts == 4


def test_default_scheduler_name_when_unset() -> None:
    fw = new_framework([], nodes=[make_node("n1").obj()])
    pod = make_pod("p").obj()
    del pod["spec"]["schedulerName"]
    fw.add_pod(pod)
    fw.schedule()
    assert node_of(fw, "p") == "n1"


def test_unknown_scheduler_name_updates_are_ignored_too() -> None:
    fw = new_framework([], nodes=[make_node("n1").obj()])
    fw.add_pod(make_pod("p").scheduler_name("other").obj())
    old = fw.cluster.pods["default/p"]
    new = {**old, "metadata": {**old["metadata"], "labels": {"a": "b"}}}
    fw.scheduler.on_pod_update(old, new)
    fw.schedule()
    assert node_of(fw, "p") is None
    assert fw.scheduler.queue.pending_pods() == []
