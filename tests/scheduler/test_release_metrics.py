"""Metric families by release (pkg/scheduler/metrics/metrics.go at v1.35.4, v1.36.3, v1.37.2).

- ``scheduler_pod_scheduled_after_flush_total`` (v1.36, kubernetes#135126): a pod bound after the
  flush of pods left unschedulable for 5 minutes (backend/queue/scheduling_queue.go
  ``flushUnschedulableEntitiesLeftover`` sets WasFlushedFromUnschedulable; schedule_one.go
  ``bindingCycle`` counts it; a failed attempt clears it).
- ``scheduler_queued_entities{queue,type}`` and ``scheduler_queue_incoming_entities_total{queue,event,type}``
  (v1.37): the queue's pods as entities of type ``pod``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.status import Code, Status
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

T0 = 1767225600.0  # 2026-01-01T00:00:00Z, the test kit's start


class Later:
    """Filter: rejects until T0 + 100 s, and registers no event that could requeue the pod, so
    only the 5-minute flush of the unschedulable pods retries it."""

    name = "Later"

    def __init__(self, args: object = None, handle: Any = None) -> None:
        self.handle = handle

    def filter(self, state: object, pod: object, node: object) -> Status | None:
        if self.handle.clock.now() < T0 + 100:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not yet")
        return None

    def events_to_register(self) -> list[object]:
        return []


def _run(release: Release) -> TestFramework:
    fw = new_framework([Later], nodes=[make_node("n1").capacity(cpu="2").obj()], release=release)
    fw.add_pod(make_pod("p").obj())
    # Something still to happen at T0 + 500 keeps the simulation going past the flush (its timer
    # alone is housekeeping, which does not).
    fw.clock.call_at(T0 + 500, lambda: None)
    fw.schedule(until=T0 + 600)
    return fw


def _value(fw: TestFramework, name: str, **labels: str) -> float | None:
    return fw.scheduler.metrics.registry.get_sample_value(name, labels)


def test_a_pod_bound_after_the_flush_is_counted_from_v1_36() -> None:
    for release in (V1_36, V1_37):
        fw = _run(release)
        [pod] = fw.cluster.pods.values()
        assert pod["spec"]["nodeName"] == "n1"
        assert _value(fw, "scheduler_pod_scheduled_after_flush_total") == 1.0


def test_v1_35_has_no_such_family() -> None:
    fw = _run(V1_35)
    assert _value(fw, "scheduler_pod_scheduled_after_flush_total") is None
    assert fw.scheduler.metrics.pod_scheduled_after_flush is None


def test_a_pod_bound_by_an_event_is_not_counted() -> None:
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node("n1").capacity(cpu="1").obj()], release=V1_37)
    fw.add_pod(make_pod("p").req(cpu="2").obj())
    fw.schedule(until=T0 + 10)
    fw.add_node(make_node("n2").capacity(cpu="4").obj())  # NodeAdd: NodeResourcesFit's hint requeues it
    fw.schedule(until=T0 + 20)
    assert [p["spec"].get("nodeName") for p in fw.cluster.pods.values()] == ["n2"]
    assert _value(fw, "scheduler_pod_scheduled_after_flush_total") == 0.0


@pytest.mark.parametrize(("release", "present"), [(V1_35, False), (V1_36, False), (V1_37, True)])
def test_queued_entities_families(release: Release, present: bool) -> None:
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node("n1").capacity(cpu="1").obj()], release=release)
    fw.add_pod(make_pod("p").req(cpu="2").obj())
    fw.schedule(until=T0 + 10)
    metrics = fw.scheduler.metrics
    metrics.set_pending(fw.scheduler.queue.counts())
    add = "UnscheduledPodAdd" if release == V1_37 else "UnschedulablePodAdd"  # the event's Label()
    incoming = _value(fw, "scheduler_queue_incoming_pods_total", queue="active", event=add)
    entities = _value(fw, "scheduler_queue_incoming_entities_total", queue="active", event=add, type="pod")
    queued = _value(fw, "scheduler_queued_entities", queue="unschedulable", type="pod")
    if present:
        assert incoming == entities == 1.0
        assert queued == _value(fw, "scheduler_pending_pods", queue="unschedulable") == 1.0
    else:
        assert entities is None and queued is None
