"""NodeResourcesFit Filter batch form and queueing hints.

The hints are hand-written cases following fit.go (isSchedulableAfterPodEvent,
isSchedulableAfterPodScaleDown, isSchedulableAfterNodeChange) at v1.35, where
InPlacePodVerticalScaling is GA. The property test proves ``filter_batch`` agrees with ``filter``
on random clusters. Scoring tables: test_node_resources_fit_score.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from plugin_builders import make_node, make_pod, make_snapshot
from random_cluster import clusters

from kubesched.config.releases import V1_35
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint, object_event
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.fit_hints import (
    is_schedulable_after_device_class_event,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_event,
)
from kubesched.testing import FakeHandle


@settings(max_examples=200, deadline=None)
@given(clusters())
def test_filter_batch_equals_filter(cluster: dict[str, Any]) -> None:
    nodes = [make_node(name, cap) for name, cap in cluster["nodes"]]
    snap = make_snapshot(nodes, [make_pod(node=n, requests=r) for n, r in cluster["pods"]])
    pl = Fit()
    pod = PodInfo(make_pod(requests=cluster["pod"]))
    state = CycleState()
    pl.pre_filter(state, pod, snap.list())
    mask = pl.filter_batch(state, pod, snap, np.arange(snap.num_nodes()))
    assert mask.tolist() == [pl.filter(state, pod, ni) is None for ni in snap.list()]


def test_events_to_register() -> None:
    pod_ev, node_ev, class_ev = Fit().events_to_register()  # v1.37: DRAExtendedResource on
    assert str(class_ev.event) == str(object_event("DeviceClass", ActionType.ADD | ActionType.UPDATE))
    assert class_ev.hint is is_schedulable_after_device_class_event
    assert len(Fit(handle=FakeHandle(release=V1_35)).events_to_register()) == 2
    assert (pod_ev.event.resource, pod_ev.event.action) == (
        EventResource.POD,
        ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN,
    )
    assert (node_ev.event.resource, node_ev.event.action) == (
        EventResource.NODE,
        ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE,
    )
    assert pod_ev.hint is is_schedulable_after_pod_event
    # v1.37: the node hint also leaves DRA-backed resources to DRA (a closure over the classes).
    assert node_ev.hint is not None
    assert Fit(handle=FakeHandle(release=V1_35)).events_to_register()[1].hint is is_schedulable_after_node_change


TARGET = make_pod("target", uid="t", requests=[{"cpu": "1"}])


def _placed(cpu: str, mem: str = "1Gi", uid: str = "other") -> dict[str, Any]:
    return make_pod("other", uid=uid, node="n1", requests=[{"cpu": cpu, "memory": mem}])


POD_EVENTS: list[dict[str, Any]] = [
    {"name": "backoff-wrong-old-object", "old": "not-a-pod", "new": None, "raises": True},
    {"name": "skip-queue-on-unscheduled-pod-deleted", "old": make_pod("x", uid="x"), "new": None, "want": "QUEUE_SKIP"},
    {"name": "queue-on-other-pod-deleted", "old": _placed("1"), "new": None, "want": "QUEUE"},
    {
        "name": "queue-on-nominated-pod-deleted",
        "old": {**make_pod("x", uid="x"), "status": {"nominatedNodeName": "n1"}},
        "new": None,
        "want": "QUEUE",
    },
    {"name": "queue-on-target-pod-scaled-down", "old": TARGET, "new": TARGET, "want": "QUEUE"},
    {"name": "queue-on-other-pod-cpu-scaled-down", "old": _placed("2"), "new": _placed("1"), "want": "QUEUE"},
    {
        "name": "skip-queue-on-unrelated-resource-scaled-down",
        "old": _placed("1", "2Gi"),
        "new": _placed("1", "1Gi"),
        "want": "QUEUE_SKIP",
    },
    {
        "name": "skip-queue-on-unscheduled-pod-scaled-down",
        "old": make_pod("x", uid="x", requests=[{"cpu": "2"}]),
        "new": make_pod("x", uid="x", requests=[{"cpu": "1"}]),
        "want": "QUEUE_SKIP",
    },
]


@pytest.mark.parametrize("case", POD_EVENTS, ids=lambda c: c["name"])
def test_pod_event_hint(case: dict[str, Any]) -> None:
    if case.get("raises"):
        with pytest.raises(TypeError):
            is_schedulable_after_pod_event(TARGET, case["old"], case["new"])
        return
    assert is_schedulable_after_pod_event(TARGET, case["old"], case["new"]) == QueueingHint[case["want"]]


def _node(cpu: str, pods: str = "110", **extra: str) -> dict[str, Any]:
    return make_node("n1", {"cpu": cpu, "memory": "4Gi", "pods": pods, **extra})


NODE_EVENTS: list[dict[str, Any]] = [
    {"name": "backoff-wrong-new-object", "old": None, "new": "not-a-node", "raises": True},
    {
        "name": "skip-queue-on-node-add-without-sufficient-resources",
        "old": None,
        "new": _node("500m"),
        "want": "QUEUE_SKIP",
    },
    {"name": "queue-on-node-add-with-sufficient-resources", "old": None, "new": _node("2"), "want": "QUEUE"},
    {"name": "skip-queue-on-node-without-pod-capacity", "old": None, "new": _node("2", pods="0"), "want": "QUEUE_SKIP"},
    {"name": "queue-on-node-cpu-increase", "old": _node("500m"), "new": _node("2"), "want": "QUEUE"},
    {"name": "skip-queue-on-node-changes-without-increase", "old": _node("2"), "new": _node("2"), "want": "QUEUE_SKIP"},
    {
        "name": "skip-queue-on-unrelated-resource-increase",
        "old": _node("2"),
        "new": _node("2", **{"example.com/gpu": "4"}),
        "want": "QUEUE_SKIP",
    },
    {
        "name": "queue-on-pod-capacity-increase",
        "old": _node("2", pods="1"),
        "new": _node("2", pods="2"),
        "want": "QUEUE",
    },
]


@pytest.mark.parametrize("case", NODE_EVENTS, ids=lambda c: c["name"])
def test_node_change_hint(case: dict[str, Any]) -> None:
    if case.get("raises"):
        with pytest.raises(TypeError):
            is_schedulable_after_node_change(TARGET, case["old"], case["new"])
        return
    assert is_schedulable_after_node_change(TARGET, case["old"], case["new"]) == QueueingHint[case["want"]]
