"""scheduler_event_handling_duration_seconds{event}: one observation per handled event, labelled as
upstream's event handlers label them (pkg/scheduler/eventhandlers.go: the event's Label(), e.g.
NodeAdd, AssignedPodUpdate, and UnschedulablePodAdd/Delete at v1.35.4, UnscheduledPodAdd/Delete at
v1.37.2 where the pod events were split; tests/scheduler/test_pod_event_labels_releases.py has more)."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.testing import make_node, make_pod, new_framework


def _counts(fw: object) -> dict[str, float]:
    text = generate_latest(fw.scheduler.metrics.registry).decode()  # type: ignore[attr-defined]
    return {
        s.labels["event"]: s.value
        for fam in text_string_to_metric_families(text)
        if fam.name == "scheduler_event_handling_duration_seconds"
        for s in fam.samples
        if s.name.endswith("_count")
    }


@pytest.mark.parametrize(("release", "unscheduled"), [(V1_35, "UnschedulablePod"), (V1_37, "UnscheduledPod")])
def test_each_event_is_counted_under_upstreams_label(release: Release, unscheduled: str) -> None:
    fw = new_framework(
        ["NodeResourcesFit"],
        nodes=[make_node("n1").capacity(cpu="2", memory="4Gi").obj()],
        pods=[make_pod("fits").req(cpu="1").obj(), make_pod("huge").req(cpu="64").obj(),
              make_pod("other").req(cpu="1").scheduler_name("someone-else").obj()],
        release=release,
    )
    assert _counts(fw) == {"NodeAdd": 1, f"{unscheduled}Add": 2}  # another scheduler's pod: not ours
    fw.schedule()
    # The binding's echo is an update of a now assigned pod.
    assert _counts(fw)["AssignedPodUpdate"] == 1
    [huge] = [p for p in fw.cluster.pods.values() if p["metadata"]["name"] == "huge"]
    fw.cluster.delete_pod(huge)
    assert _counts(fw)[f"{unscheduled}Delete"] == 1
