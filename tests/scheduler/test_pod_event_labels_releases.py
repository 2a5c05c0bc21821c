"""The ``event`` labels of pod events, by release, as upstream's handlers and queue set them.

Ported from pkg/scheduler/eventhandlers.go (addPodToSchedulingQueue, updatePodInSchedulingQueue,
deletePodFromSchedulingQueue: EventUnscheduledPod*.Label() and, for an update, the label of each
PodSchedulingPropertiesChange(newPod, oldPod, isTargetPod=false) event) and
backend/queue/scheduling_queue.go (Add: EventUnscheduledPodAdd; Update: the pod moves under the
label of PodSchedulingPropertiesChange(newPod, oldPod, isTargetPod=true)'s event), v1.35.4 and
v1.37.2 (SplitPodEvents: UnschedulablePod -> UnscheduledPod, the pod's own update TargetPod).
"""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.config import load_config
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.status import Code, Status
from kubesched.plugins.registry import default_registry
from kubesched.testing import TestFramework, make_node, make_pod, new_framework


class Blocker:
    """Rejects pods labelled blocked=yes; a label change of any pod may help (no hint: Queue)."""

    name = "Blocker"

    def __init__(self, args: object, handle: object) -> None:
        pass

    def filter(self, state: object, pod: Any, node_info: object) -> Status | None:
        if pod.labels.get("blocked") == "yes":
            return Status(Code.UNSCHEDULABLE, "blocked")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL))]


def _framework(release: Release) -> TestFramework:
    reg = default_registry(entry_points=False)
    reg.register("Blocker", Blocker, origin="test")
    config = load_config({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Blocker"}]}}}]},
                         release=release)
    return new_framework(config, nodes=[make_node("n1").capacity(cpu="4").obj()], registry=reg)


def _samples(fw: TestFramework, family: str, suffix: str = "") -> dict[tuple[str, ...], float]:
    text = generate_latest(fw.scheduler.metrics.registry).decode()
    return {
        tuple(v for k, v in sorted(s.labels.items()) if k in ("event", "queue")): s.value
        for fam in text_string_to_metric_families(text)
        if fam.name == family
        for s in fam.samples
        if s.name.endswith(suffix) and s.value
    }


def _pod(fw: TestFramework) -> dict[str, Any]:
    [pod] = [p for p in fw.cluster.pods.values() if p["metadata"]["name"] == "p"]
    return pod


#: (unscheduled resource in the handlers' labels, resource of the pod's own update in the queue's)
NAMES = {V1_35: ("UnschedulablePod", "UnschedulablePod"), V1_36: ("UnschedulablePod", "UnschedulablePod"),
         V1_37: ("UnscheduledPod", "TargetPod")}


@pytest.mark.parametrize("release", [V1_35, V1_36, V1_37], ids=str)
def test_unscheduled_pod_add_update_delete_labels(release: Release) -> None:
    unscheduled, target = NAMES[release]
    fw = _framework(release)
    fw.cluster.create_pod(make_pod("p").label("blocked", "yes").req(cpu="1").obj())
    fw.schedule()
    assert _samples(fw, "scheduler_queue_incoming_pods")[(f"{unscheduled}Add", "active")] == 1

    updated = _pod(fw)
    updated = {**updated, "metadata": {**updated["metadata"], "labels": {"blocked": "no"}}}
    fw.cluster.update_pod(updated)
    handled = _samples(fw, "scheduler_event_handling_duration_seconds", "_count")
    assert handled[(f"{unscheduled}Update",)] == 1
    assert handled[(f"{unscheduled}UpdatePodLabel",)] == 1
    incoming = _samples(fw, "scheduler_queue_incoming_pods")
    moved = {k: v for k, v in incoming.items() if k[0].endswith("UpdatePodLabel")}
    assert moved == {(f"{target}UpdatePodLabel", "backoff"): 1} or moved == {(f"{target}UpdatePodLabel", "active"): 1}

    fw.cluster.create_pod(make_pod("q").label("blocked", "yes").req(cpu="1").obj())
    [q] = [p for p in fw.cluster.pods.values() if p["metadata"]["name"] == "q"]
    fw.cluster.delete_pod(q)
    handled = _samples(fw, "scheduler_event_handling_duration_seconds", "_count")
    assert handled[(f"{unscheduled}Add",)] == 2
    assert handled[(f"{unscheduled}Delete",)] == 1
    assert not [k for k in handled if k[0].startswith(("Unschedulable", "Unscheduled", "Target"))
                and not k[0].startswith(unscheduled)]


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
def test_assigned_pod_update_labels(release: Release) -> None:
    """updateAssignedPodInCache: AssignedPodUpdate, then each event's label (same in every release)."""
    fw = _framework(release)
    fw.cluster.create_pod(make_pod("p").req(cpu="1").obj())
    fw.schedule()
    bound = _pod(fw)
    fw.cluster.update_pod({**bound, "metadata": {**bound["metadata"], "labels": {"a": "b"}}})
    handled = _samples(fw, "scheduler_event_handling_duration_seconds", "_count")
    assert handled[("AssignedPodUpdatePodLabel",)] == 1
    assert handled[("AssignedPodUpdate",)] == 2  # the binding's echo, and this update
