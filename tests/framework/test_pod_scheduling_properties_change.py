"""Pod update events and their labels, by release.

Ported from pkg/scheduler/framework/events_test.go (Test_podSchedulingPropertiesChange, v1.35.4 and
v1.37.2) and kube-scheduler framework/types.go (``ClusterEvent.Label``, ``matchEventResources``).
v1.35/v1.36 call an unscheduled pod's events ``UnschedulablePod``; v1.37 (SplitPodEvents) calls
them ``UnscheduledPod``, or ``TargetPod`` when the pending pod itself is updated (isTargetPod).
Rows not ported: v1.37's ``UpdatePodScaleUp`` (extractPodScaleUp, KEP-5836) and the DRA
``UpdatePodGeneratedResourceClaim`` rows (kubesched has no DRA).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    EventResource,
    event_label,
    pod_scheduling_properties_change,
)

A, U, T = EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD


def _pod(labels: dict[str, str] | None = None, node: str = "", cpu: str = "", gates: list[str] | None = None,
         tolerations: int = 0, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app"}]}
    if cpu:
        spec["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    if node:
        spec["nodeName"] = node
    if gates is not None:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if tolerations:
        spec["tolerations"] = [{"key": f"key{i}", "operator": "Exists"} for i in range(tolerations)]
    meta: dict[str, Any] = {"name": "p", "namespace": "default", "uid": "p"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec, "status": {}}


BIG, SMALL = _pod(cpu="101m"), _pod(cpu="100m")
SMALL_LABELLED = _pod(cpu="100m", labels={"foo": "bar"})

# (name, new, old, isTargetPod, want with v1.37's resources as (resource, action)).
CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool, list[tuple[EventResource, ActionType]]]] = [
    ("assigned pod is updated", _pod({"foo": "bar"}, node="node"), _pod({"foo": "bar2"}, node="node"), False,
     [(A, ActionType.UPDATE_POD_LABEL)]),
    ("unscheduled pod label is updated", _pod({"foo": "bar"}), _pod({"foo": "bar2"}), False,
     [(U, ActionType.UPDATE_POD_LABEL)]),
    ("pod's resource request is scaled down", SMALL, BIG, False, [(U, ActionType.UPDATE_POD_SCALE_DOWN)]),
    ("both pod's resource request and label are updated", SMALL_LABELLED, BIG, False,
     [(U, ActionType.UPDATE_POD_LABEL), (U, ActionType.UPDATE_POD_SCALE_DOWN)]),
    ("untracked properties of pod is updated", _pod(annotations={"foo": "bar"}), _pod(annotations={"foo": "bar2"}),
     False, [(U, ActionType.UPDATE_OTHER)]),
    ("scheduling gate is eliminated", _pod(gates=[]), _pod(gates=["foo"]), True,
     [(T, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
    ("scheduling gate is removed, but not completely eliminated", _pod(gates=["foo"]), _pod(gates=["foo", "bar"]),
     True, [(T, ActionType.UPDATE_OTHER)]),
    ("pod's tolerations are updated", _pod(tolerations=2), _pod(tolerations=1), True,
     [(T, ActionType.UPDATE_POD_TOLERATION)]),
    ("scheduling gate is eliminated for an assigned pod, it takes precedence over target pod resource type",
     _pod(gates=[], node="node"), _pod(gates=["foo"], node="node"), True,
     [(A, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]),
]


@pytest.mark.parametrize(("name", "new", "old", "target", "want"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("split", [False, True], ids=["v1.35", "v1.37"])
def test_pod_scheduling_properties_change(
    name: str, new: dict[str, Any], old: dict[str, Any], target: bool,
    want: list[tuple[EventResource, ActionType]], split: bool,
) -> None:
    # Before v1.37 there is no TargetPod: the pending pod's own update is an UnschedulablePod event.
    expected = [ClusterEvent(U if r == T and not split else r, a) for r, a in want]
    assert pod_scheduling_properties_change(new, old, target=target, split_pod_events=split) == expected


@pytest.mark.parametrize(("event", "v135", "v137"), [
    (ClusterEvent(U, ActionType.ADD), "UnschedulablePodAdd", "UnscheduledPodAdd"),
    (ClusterEvent(U, ActionType.UPDATE_OTHER), "UnschedulablePodUpdate", "UnscheduledPodUpdate"),
    (ClusterEvent(U, ActionType.DELETE), "UnschedulablePodDelete", "UnscheduledPodDelete"),
    (ClusterEvent(U, ActionType.UPDATE_POD_LABEL), "UnschedulablePodUpdatePodLabel", "UnscheduledPodUpdatePodLabel"),
    (ClusterEvent(T, ActionType.UPDATE_POD_LABEL), "UnschedulablePodUpdatePodLabel", "TargetPodUpdatePodLabel"),
    (ClusterEvent(T, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
     "UnschedulablePodUpdatePodSchedulingGatesEliminated", "TargetPodUpdatePodSchedulingGatesEliminated"),
    (ClusterEvent(A, ActionType.UPDATE_POD_TOLERATION), "AssignedPodUpdatePodToleration",
     "AssignedPodUpdatePodToleration"),
    (ClusterEvent(A, ActionType.DELETE), "AssignedPodDelete", "AssignedPodDelete"),
])
def test_event_label(event: ClusterEvent, v135: str, v137: str) -> None:
    """types.go Label(): Resource + ActionType.String() (events.go v1.35.4 unschedulablePod = "UnschedulablePod")."""
    assert (event_label(event, False), event_label(event, True)) == (v135, v137)


@pytest.mark.parametrize("incoming", [A, U, T])
def test_pod_matches_every_pod_resource(incoming: EventResource) -> None:
    """types.go matchEventResources (v1.37.2): Pod matches AssignedPod, UnscheduledPod and TargetPod."""
    registered = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    assert registered.matches(ClusterEvent(incoming, ActionType.UPDATE_POD_LABEL))
    assert not ClusterEvent(A, ActionType.UPDATE_POD_LABEL).matches(ClusterEvent(T, ActionType.UPDATE_POD_LABEL))
    assert not ClusterEvent(T, ActionType.UPDATE_POD_LABEL).matches(ClusterEvent(U, ActionType.UPDATE_POD_LABEL))
