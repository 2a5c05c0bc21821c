"""When OpportunisticBatching signs a pod, per release, as the Sign metrics show it.

- v1.35.4: ``GetNodeHint`` signs in every scheduling attempt (framework/runtime/batch.go
  ``signUsingFramework``); ``SignPod(ctx, pod, recordPluginStats)`` observes the Sign extension
  point only in sampled cycles (framework/runtime/framework.go).
- v1.36.3 and v1.37.2: the queue signs a pod when it is added and when a queued pod is updated
  (backend/queue/scheduling_queue.go ``signPod`` in ``newQueuedPodInfo`` and ``Update``), and
  ``SignPod`` observes the extension point every time; the cycles reuse that signature.

Each signer's call is observed into ``scheduler_plugin_execution_duration_seconds`` in every
release. Hand-counted: one 2-CPU pod on a 1-CPU node is attempted when added and again after each
of two 5-minute unschedulable flushes (three attempts), and updated once while it waits (v1.36+:
signed twice, at the add and at the update; v1.35: three times, once an attempt).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.feature_gates import parse_feature_gates
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}}],
}


def _run(release: Release, sample_percent: int, gates: tuple[str, ...] = ()) -> TestFramework:
    fw = new_framework(CONFIG, nodes=[make_node("n1").capacity(cpu="1").obj()], release=release,
                       feature_gates=parse_feature_gates(gates, str(release)) if gates else None)
    assert fw.scheduler.metrics is not None
    fw.scheduler.metrics.plugin_metrics_sample_percent = sample_percent
    fw.add_pod(make_pod("big").req(cpu="2").obj())
    fw.schedule(until=fw.clock.now() + 1)  # the first attempt: unschedulable
    stored = fw.cluster.pods[next(iter(fw.cluster.pods))]
    # An annotation: no plugin's event, so the pod stays in the unschedulable pool.
    updated: dict[str, Any] = {**stored, "metadata": {**stored["metadata"], "annotations": {"touched": "yes"}}}
    fw.cluster.update_pod(updated)
    fw.schedule(until=fw.clock.now() + 1)
    for _ in range(2):  # the leftover flush (a daemon timer the simulation does not wait for)
        fw.clock.advance_to(fw.clock.now() + 301)
        fw.scheduler.queue.flush_unschedulable_leftover()
        fw.schedule(until=fw.clock.now() + 20)
    return fw


def _count(fw: TestFramework, name: str, labels: dict[str, str]) -> float:
    m = fw.scheduler.metrics
    assert m is not None
    return m.registry.get_sample_value(name, labels) or 0.0


def _attempts(fw: TestFramework) -> float:
    return _count(fw, "scheduler_schedule_attempts_total",
                  {"result": "unschedulable", "profile": "default-scheduler"})


def _plugin_signs(fw: TestFramework) -> float:
    return _count(fw, "scheduler_plugin_execution_duration_seconds_count",
                  {"plugin": "NodeResourcesFit", "extension_point": "Sign", "status": "Success"})


def _point_signs(fw: TestFramework) -> float:
    return _count(fw, "scheduler_framework_extension_point_duration_seconds_count",
                  {"extension_point": "Sign", "status": "Success", "profile": "default-scheduler"})


@pytest.mark.parametrize("sample_percent", [0, 100])
def test_v1_35_signs_in_every_attempt(sample_percent: int) -> None:
    fw = _run(V1_35, sample_percent)
    assert _attempts(fw) == 3
    assert _plugin_signs(fw) == 3
    assert _point_signs(fw) == (3 if sample_percent else 0)


@pytest.mark.parametrize("release", [V1_36, V1_37])
@pytest.mark.parametrize("sample_percent", [0, 100])
def test_v1_36_on_the_queue_signs_on_add_and_update(release: Release, sample_percent: int) -> None:
    fw = _run(release, sample_percent)
    assert _attempts(fw) == 3
    assert _plugin_signs(fw) == 2  # the add and the update, not the attempts
    assert _point_signs(fw) == 2


@pytest.mark.parametrize("release", [V1_35, V1_37])
def test_nothing_is_signed_with_the_gate_off(release: Release) -> None:
    fw = _run(release, 100, ("OpportunisticBatching=false",))
    assert _attempts(fw) == 3
    assert _plugin_signs(fw) == 0
    assert _point_signs(fw) == 0
