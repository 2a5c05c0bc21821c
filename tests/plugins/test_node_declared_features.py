"""NodeDeclaredFeatures: PreFilter, Filter, events and queueing hints, per release.

Ported from pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go at
v1.37.2 (TestPreFilter, TestFilter, TestEnqueueExtensionsNodeUpdate,
TestIsSchedulableAfterTargetPodUpdate, TestEventsToRegister) and v1.36.3
(TestEnqueueExtensionsPodUpdate's "Updated pod not the same as target pod"). Upstream's mock
features (component-helpers nodedeclaredfeatures/testing) are DeclaredFeatures with a fixed
answer. The plugin's factory per release follows nodedeclaredfeatures.go ``New`` (disabled while
the NodeDeclaredFeatures gate is off: v1.35) and the registries of component-helpers v0.36.3 and
v0.37.2 (features/registry.go); the node event follows framework/events.go
``extractNodeFeaturesChange``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from plugin_builders import make_node, make_pod, node_info

from kubesched import testing
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
from kubesched.plugins.nodedeclaredfeatures.featureset import DeclaredFeature, FeatureFramework, Version
from kubesched.plugins.nodedeclaredfeatures.plugin import PRE_FILTER_STATE_KEY
from kubesched.scheduler.eventhandlers import _node_update_action

REASON = "node(s) didn't match Pod's required features"


def mock(name: str, infer: bool | Callable[[Any], bool], max_version: Version | None = None) -> DeclaredFeature:
    """``createMockFeature``: a feature whose InferForScheduling gives a fixed answer."""
    fn = infer if callable(infer) else (lambda spec, answer=infer: answer)
    return DeclaredFeature(name, fn, max_version)


def declaring(name: str, features: list[str] | None) -> dict[str, Any]:
    """``st.MakeNode().Name(name).DeclaredFeatures(features)``."""
    node = make_node(name)
    if features is not None:
        node["status"]["declaredFeatures"] = list(features)
    return node


# -- TestPreFilter -----------------------------------------------------------------------------------
PRE_FILTER_CASES: list[dict[str, Any]] = [
    {"name": "plugin disabled", "enabled": False, "version": (1, 35, 0),
     "features": [mock("TestFeature1", True), mock("TestFeature2", False)], "want": "Skip", "state": None},
    {"name": "Pod with feature requirements", "enabled": True, "version": (1, 35, 0),
     "features": [mock("TestFeature1", True), mock("TestFeature2", False)], "want": "Success",
     "state": ["TestFeature1"]},
    {"name": "Pod with multiple feature requirements", "enabled": True, "version": (1, 35, 0),
     "features": [mock("TestFeature1", True, (1, 38, 0)), mock("TestFeature2", True, (1, 38, 0))],
     "want": "Success", "state": ["TestFeature1", "TestFeature2"]},
    {"name": "Pod with no requirements", "enabled": True, "version": (1, 35, 0),
     "features": [mock("TestFeature1", False), mock("TestFeature2", False)], "want": "Skip", "state": None},
    {"name": "Feature not required, version > MaxVersion", "enabled": True, "version": (1, 34, 0),
     "features": [mock("TestFeature1", True, (1, 33, 0)), mock("TestFeature2", False)], "want": "Skip",
     "state": None},
]


@pytest.mark.parametrize("case", PRE_FILTER_CASES, ids=lambda c: c["name"])
def test_pre_filter(case: dict[str, Any]) -> None:
    fw = FeatureFramework(case["features"])
    plugin = NodeDeclaredFeatures.with_framework(fw, case["version"], enabled=case["enabled"])
    state = CycleState()
    result, status = plugin.pre_filter(state, PodInfo(make_pod("test-pod")), [])
    assert result is None
    code = "Success" if status is None else status.code.upstream_name
    assert code == case["want"]
    if case["state"] is None:
        assert PRE_FILTER_STATE_KEY not in state
    else:
        assert fw.unmap(state.read(PRE_FILTER_STATE_KEY).reqs) == case["state"]  # type: ignore[attr-defined]


# -- TestFilter --------------------------------------------------------------------------------------
FILTER_FEATURES = ["FeatureA", "FeatureB", "FeatureC"]
FILTER_CASES: list[dict[str, Any]] = [
    {"name": "plugin disabled", "enabled": False, "node": ["FeatureA", "FeatureB"], "reqs": None, "want": None},
    {"name": "Node matches requirements", "enabled": True, "node": ["FeatureA", "FeatureB"],
     "reqs": ["FeatureA"], "want": None},
    {"name": "Node does not match requirements", "enabled": True, "node": ["FeatureB"], "reqs": ["FeatureA"],
     "want": ("UnschedulableAndUnresolvable", REASON)},
    # Upstream leaves pluginEnabled unset (false) here; enabled gives the same Success, and means more.
    {"name": "Node with multiple features, pod requires subset", "enabled": True,
     "node": ["FeatureA", "FeatureB", "FeatureC"], "reqs": ["FeatureA", "FeatureC"], "want": None},
    {"name": "Node has no declared features", "enabled": True, "node": None, "reqs": ["FeatureA"],
     "want": ("UnschedulableAndUnresolvable", REASON)},
    {"name": "Node with some but not all required features", "enabled": True, "node": ["FeatureA"],
     "reqs": ["FeatureA", "FeatureB"], "want": ("UnschedulableAndUnresolvable", REASON)},
    {"name": "Error getting pre-filter state", "enabled": True, "node": None, "reqs": None,
     "want": ("Error", 'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found')},
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c["name"])
def test_filter(case: dict[str, Any]) -> None:
    fw = FeatureFramework([mock(n, False) for n in FILTER_FEATURES])
    plugin = NodeDeclaredFeatures.with_framework(fw, (1, 35, 0), enabled=case["enabled"])
    state = CycleState()
    if case["reqs"] is not None:
        # What PreFilter writes: run it with features answering as the case requires.
        wanted = FeatureFramework([mock(n, n in case["reqs"]) for n in FILTER_FEATURES])
        NodeDeclaredFeatures.with_framework(wanted, (1, 35, 0)).pre_filter(state, PodInfo(make_pod("p")), [])
    status = plugin.filter(state, PodInfo(make_pod("test-pod")), node_info(declaring("node-1", case["node"])))
    if case["want"] is None:
        assert status is None
    else:
        assert status is not None and (status.code.upstream_name, status.message()) == case["want"]


def test_filter_ignores_features_the_registry_does_not_know() -> None:
    """NodeInfo.SetNode maps with TryMap: an unknown declared feature neither helps nor hurts."""
    fw = FeatureFramework([mock("FeatureA", True), mock("FeatureC", False)])
    plugin = NodeDeclaredFeatures.with_framework(fw, (1, 36, 3))
    state = CycleState()
    plugin.pre_filter(state, PodInfo(make_pod("p")), [])
    pod = PodInfo(make_pod("p"))
    assert plugin.filter(state, pod, node_info(declaring("n1", ["FeatureA", "FeatureB", "Zeta"]))) is None
    status = plugin.filter(state, pod, node_info(declaring("n2", ["FeatureB", "FeatureC"])))
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# -- TestEnqueueExtensionsNodeUpdate -----------------------------------------------------------------
NODE_HINTS: list[dict[str, Any]] = [
    {"name": "Node Add with feature", "old": None, "new": declaring("node-1", ["FeatureA"]), "want": "QUEUE"},
    {"name": "Node Update (Features Added)", "old": declaring("node-1", None),
     "new": declaring("node-1", ["FeatureA"]), "want": "QUEUE"},
    {"name": "Node Update (Features Unchanged)", "old": declaring("node-1", ["FeatureA"]),
     "new": declaring("node-1", ["FeatureA"]), "want": "QUEUE_SKIP"},
]


@pytest.mark.parametrize("case", NODE_HINTS, ids=lambda c: c["name"])
def test_node_change_hint(case: dict[str, Any]) -> None:
    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([]), (1, 35, 0))
    hint = plugin.is_schedulable_after_node_change(make_pod("test-pod"), case["old"], case["new"])
    assert hint == QueueingHint[case["want"]]


def test_node_change_hint_wrong_objects_raise() -> None:
    """``util.As`` fails on other types; a hint's error means Queue."""
    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([]), (1, 35, 0))
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_node_change(make_pod("p"), "not-a-node", declaring("n", None))


# -- TestIsSchedulableAfterTargetPodUpdate (v1.37.2), TestEnqueueExtensionsPodUpdate (v1.36.3) -------
def answers(*values: bool) -> Callable[[Any], bool]:
    """A mock whose InferForScheduling answers ``values`` in turn (old pod first), and no more."""
    it: Iterator[bool] = iter(values)

    def infer(spec: Any) -> bool:
        return next(it)

    return infer


TARGET = {"name": "test-pod", "uid": "123"}
POD_HINTS: list[dict[str, Any]] = [
    {"name": "Pod Update adds requirement", "old": make_pod(**TARGET),
     "new": make_pod(**TARGET), "infer": answers(False, True), "version": (1, 35, 0), "want": "QUEUE"},
    {"name": "Pod Update removes requirement", "old": make_pod(**TARGET),
     "new": make_pod(**TARGET), "infer": answers(True, False), "version": (1, 35, 0), "want": "QUEUE"},
    {"name": "Pod Update with no change in requirements", "old": make_pod(**TARGET), "new": make_pod(**TARGET),
     "infer": False, "version": (1, 35, 0), "want": "QUEUE_SKIP"},
    # v1.36.3 only: v1.37.2 registers TargetPod/Update, which carries the pod's own updates alone.
    {"name": "Updated pod not the same as target pod", "old": make_pod("another-test-pod", uid="456"),
     "new": make_pod("another-test-pod", uid="456"), "infer": False, "version": (1, 35, 0), "want": "QUEUE_SKIP",
     "v1_36": True},
]


@pytest.mark.parametrize("case", POD_HINTS, ids=lambda c: c["name"])
def test_target_pod_update_hint(case: dict[str, Any]) -> None:
    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([mock("TestFeature", case["infer"])]),
                                                 case["version"], target_pod_events=not case.get("v1_36"))
    hint = plugin.is_schedulable_after_target_pod_update(make_pod(**TARGET), case["old"], case["new"])
    assert hint == QueueingHint[case["want"]]


def test_target_pod_update_hint_infer_error() -> None:
    """"Infer returns error": Queue with the error; in kubesched a hint that raises means Queue."""
    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([mock("TestFeature", True)]), None)
    with pytest.raises(ValueError, match="target version cannot be nil"):
        plugin.is_schedulable_after_target_pod_update(make_pod(**TARGET), make_pod(**TARGET), make_pod(**TARGET))


# -- TestEventsToRegister ----------------------------------------------------------------------------
@pytest.mark.parametrize(("enabled", "length"), [(False, 0), (True, 2)])
def test_events_to_register(enabled: bool, length: int) -> None:
    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([]), (1, 35, 0), enabled=enabled)
    assert len(plugin.events_to_register()) == length


@pytest.mark.parametrize(("release", "pod_resource"), [(V1_36, EventResource.POD), (V1_37, EventResource.TARGET_POD)])
def test_events_of_each_release(release: Release, pod_resource: EventResource) -> None:
    events = NodeDeclaredFeatures(handle=testing.FakeHandle(release=release)).events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        ClusterEvent(pod_resource, ActionType.UPDATE),
    ]


# -- the factory per release ---------------------------------------------------------------------------
RESTART_ALL = {"name": "c", "image": "pause", "restartPolicy": "Never", "restartPolicyRules": [
    {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}]}
BIND_MOUNT = {"name": "c", "image": "pause", "volumeMounts": [
    {"name": "v", "mountPath": "/data", "bindMountOptions": ["nosuid"]}]}


@pytest.mark.parametrize(("release", "container", "want"), [
    # v1.35.4: the gate is off, New returns the plugin disabled: every pod skips it.
    (V1_35, RESTART_ALL, None),
    (V1_35, BIND_MOUNT, None),
    # v1.36.3: component-helpers v0.36.3 has no VolumeBindMountOptions.
    (V1_36, RESTART_ALL, ["RestartAllContainersOnContainerExits"]),
    (V1_36, BIND_MOUNT, None),
    (V1_37, RESTART_ALL, ["RestartAllContainersOnContainerExits"]),
    (V1_37, BIND_MOUNT, ["VolumeBindMountOptions"]),
])
def test_requirements_by_release(release: Release, container: dict[str, Any], want: list[str] | None) -> None:
    plugin = NodeDeclaredFeatures(handle=testing.FakeHandle(release=release))
    pod = make_pod("p")
    pod["spec"]["containers"] = [container]
    state = CycleState()
    _, status = plugin.pre_filter(state, PodInfo(pod), [])
    if want is None:
        assert status is not None and status.code == Code.SKIP
        assert PRE_FILTER_STATE_KEY not in state
    else:
        assert status is None
        reqs = state.read(PRE_FILTER_STATE_KEY).reqs  # type: ignore[attr-defined]
        assert plugin._framework is not None and plugin._framework.unmap(reqs) == want
    assert (plugin.events_to_register() == []) is (release == V1_35)


def test_an_ordinary_pod_skips_it_in_every_release() -> None:
    for release in (V1_35, V1_36, V1_37):
        plugin = NodeDeclaredFeatures(handle=testing.FakeHandle(release=release))
        _, status = plugin.pre_filter(CycleState(), PodInfo(make_pod("p", requests=[{"cpu": "1"}])), [])
        assert status is not None and status.code == Code.SKIP


def test_requirements_are_inferred_once_per_pod_version() -> None:
    calls: list[object] = []

    def infer(spec: Any) -> bool:
        calls.append(spec)
        return False

    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([mock("F", infer)]), (1, 37, 2))
    pod = PodInfo(make_pod("p"))
    for _ in range(3):
        plugin.pre_filter(CycleState(), pod, [])
    assert len(calls) == 1
    pod.update(make_pod("p", hostNetwork=True))  # a newer copy of the pod: inferred again
    plugin.pre_filter(CycleState(), pod, [])
    assert len(calls) == 2


# -- extractNodeFeaturesChange --------------------------------------------------------------------------
@pytest.mark.parametrize(("old", "new", "gate", "want"), [
    (None, ["A"], True, ActionType.UPDATE_NODE_DECLARED_FEATURE),
    (["A"], ["A", "B"], True, ActionType.UPDATE_NODE_DECLARED_FEATURE),
    (["A"], None, True, ActionType.UPDATE_NODE_DECLARED_FEATURE),
    (["A"], ["A"], True, ActionType(0)),
    (None, [], True, ActionType(0)),
    # v1.35: the gate is off, the extractor is not registered.
    (None, ["A"], False, ActionType(0)),
])
def test_node_update_event(old: list[str] | None, new: list[str] | None, gate: bool, want: ActionType) -> None:
    assert _node_update_action(declaring("n", old), declaring("n", new), declared_features=gate) == want


def test_pods_of_one_spec_share_one_inference() -> None:
    # New pods whose spec is the same (a workload's replicas) reuse the first one's requirements;
    # a spec differing anywhere, even where it looks alike ("1" for 1), is inferred on its own.
    calls: list[object] = []

    def infer(spec: Any) -> bool:
        calls.append(spec)
        return bool(spec.get("hostNetwork"))

    plugin = NodeDeclaredFeatures.with_framework(FeatureFramework([mock("F", infer)]), (1, 37, 2))
    for name in ("a", "b", "c"):
        _, status = plugin.pre_filter(CycleState(), PodInfo(make_pod(name)), [])
        assert status is not None and status.code == Code.SKIP
    assert len(calls) == 1
    state = CycleState()
    _, status = plugin.pre_filter(state, PodInfo(make_pod("d", hostNetwork=True)), [])
    assert status is None and plugin._framework is not None
    assert plugin._framework.unmap(state.read(PRE_FILTER_STATE_KEY).reqs) == ["F"]  # type: ignore[attr-defined]
    _, status = plugin.pre_filter(CycleState(), PodInfo(make_pod("e", hostNetwork="1")), [])
    assert len(calls) == 3
