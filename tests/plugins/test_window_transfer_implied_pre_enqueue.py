"""``implied_pre_enqueue``: a plugin whose PreEnqueue belongs to its other points runs there too.

kubesched extension of ``runtime/framework.go`` (upstream has no such attribute, so every upstream
plugin keeps upstream's rule: a plugin runs only at the points it is configured for). WindowTransfer
needs it: issue 5's configuration enables it at filter/score/permit only, yet it must gate pods at
PreEnqueue outside its window. These cases pin the rule with stand-in plugins.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.runtime import FrameworkError
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.testing import make_node, make_pod, new_framework

GATE_EVENT = ClusterEvent(EventResource.TIMER, ActionType.ALL, "GateOpened")


class Gate:
    """A Filter whose PreEnqueue keeps pods labelled ``held`` out of the scheduling cycles."""

    name = "Gate"
    implied_pre_enqueue = True

    def __init__(self, args: Any, handle: Any) -> None:
        self.filtered: list[str] = []

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        return Status.unresolvable("held") if "held" in pod.labels else None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        self.filtered.append(pod.name)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(GATE_EVENT)]


class PlainGate(Gate):
    """The same plugin without the attribute: upstream's rule applies."""

    name = "PlainGate"
    implied_pre_enqueue = False


class NotAGate:
    name = "NotAGate"
    implied_pre_enqueue = True

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return None


def config(**points: Any) -> dict[str, Any]:
    """The default profile plus the given plugin sets (YAML-shaped)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": points}],
    }


def build(plugin: type, **points: Any) -> Any:
    from kubesched.plugins.registry import default_registry

    reg = default_registry(entry_points=False)
    reg.register(plugin.name, plugin)
    return new_framework(config(**points), nodes=[make_node("n1").obj()], registry=reg)


#: The default profile's PreEnqueue plugins (v1.35 ``getDefaultPlugins`` multiPoint, in order).
#: DefaultPreemption has PreEnqueue (async preemption), so multiPoint enables it there too:
#: upstream cmd/kube-scheduler/app/server_test.go ``TestSetup`` expects three PreEnqueue plugins
#: of ``defaults.ExpandedPluginsV1`` (it swaps DynamicResources and DefaultPreemption, [1] and [2],
#: for a config that lists DynamicResources after DefaultPreemption).
DEFAULT_PRE_ENQUEUE = ["SchedulingGates", "DynamicResources", "DefaultPreemption"]


def pre_enqueue_names(fw: Any) -> list[str]:
    return [p.name for p in fw.framework.points["pre_enqueue"]]


def test_enabled_at_filter_only_also_runs_at_pre_enqueue_after_the_configured_ones() -> None:
    fw = build(Gate, filter={"enabled": [{"name": "Gate"}]})
    assert pre_enqueue_names(fw) == [*DEFAULT_PRE_ENQUEUE, "Gate"]
    assert fw.framework.list_plugins()["PreEnqueue"] == [*DEFAULT_PRE_ENQUEUE, "Gate"]
    status = fw.run_pre_enqueue(make_pod("p").label("held", "yes").obj())
    assert (status.code, status.message(), status.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "held", "Gate")
    assert fw.run_pre_enqueue(make_pod("q").obj()).is_success()


def test_without_the_attribute_a_plugin_runs_only_where_configured() -> None:
    fw = build(PlainGate, filter={"enabled": [{"name": "PlainGate"}]})
    assert pre_enqueue_names(fw) == DEFAULT_PRE_ENQUEUE
    assert fw.run_pre_enqueue(make_pod("p").label("held", "yes").obj()).is_success()


@pytest.mark.parametrize(
    "points",
    [
        {"preEnqueue": {"enabled": [{"name": "Gate"}]}, "filter": {"enabled": [{"name": "Gate"}]}},
        {"multiPoint": {"enabled": [{"name": "Gate"}]}},
    ],
    ids=["explicit", "multiPoint"],
)
def test_configured_at_pre_enqueue_it_runs_once(points: dict[str, Any]) -> None:
    assert pre_enqueue_names(build(Gate, **points)) == [*DEFAULT_PRE_ENQUEUE, "Gate"]


@pytest.mark.parametrize("disabled", ["Gate", "*"])
def test_explicitly_disabled_at_pre_enqueue_it_does_not_run_there(disabled: str) -> None:
    fw = build(Gate, filter={"enabled": [{"name": "Gate"}]}, preEnqueue={"disabled": [{"name": disabled}]})
    assert "Gate" not in pre_enqueue_names(fw)
    assert [p.name for p in fw.framework.points["filter"]][-1] == "Gate"


def test_the_attribute_on_a_plugin_without_pre_enqueue_is_a_construction_error() -> None:
    with pytest.raises(FrameworkError, match="plugin 'NotAGate' sets implied_pre_enqueue but does not extend"):
        build(NotAGate, filter={"enabled": [{"name": "NotAGate"}]})


def test_a_gated_pod_costs_no_cycle_and_the_gating_plugins_event_releases_it() -> None:
    fw = build(Gate, filter={"enabled": [{"name": "Gate"}]})
    pod = make_pod("p").label("held", "yes").obj()
    fw.add_pod(pod)
    fw.schedule()
    assert fw.scheduler.queue.counts()["gated"] == 1
    assert fw.scheduler.stats.attempts == 0
    assert fw.plugin("Gate").filtered == []

    fw.cluster.patch_pod_metadata(pod, labels={"held": None})  # an update of a gated pod re-runs PreEnqueue
    fw.schedule()
    assert fw.scheduler.stats.bound_at.keys() == {pod["metadata"]["uid"]}
    assert fw.plugin("Gate").filtered == ["p"]
