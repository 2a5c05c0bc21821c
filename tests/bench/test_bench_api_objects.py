"""How the apiserver harness turns workload objects into what a client may create."""

from __future__ import annotations

from kubesched.bench.apiserver import api_object, priority_class, priority_classes
from kubesched.bench.workloads import WORKLOADS


def test_pod_priority_becomes_a_priority_class() -> None:
    # The Priority admission plugin forbids spec.priority on create
    # (plugin/pkg/admission/priority/admission.go): the harness names a PriorityClass instead.
    pod = WORKLOADS["PreemptionBasic"].measured_pod("default", "p")
    assert pod["spec"]["priority"] == 10
    out = api_object(pod)
    assert "priority" not in out["spec"]
    assert out["spec"]["priorityClassName"] == "kubesched-bench-10"
    assert "uid" not in out["metadata"]
    assert pod["spec"]["priority"] == 10  # the workload's object is left as it was


def test_pods_without_priority_are_unchanged() -> None:
    pod = WORKLOADS["SchedulingBasic"].measured_pod("default", "p")
    assert api_object(pod)["spec"] == pod["spec"]


def test_one_class_per_distinct_value() -> None:
    w = WORKLOADS["PreemptionBasic"]
    pods = [w.init_pod("default", "a"), w.measured_pod("default", "b"), w.measured_pod("default", "c")]
    assert priority_classes(pods) == [priority_class(10)]
    assert priority_class(10)["value"] == 10
    assert priority_class(-5)["metadata"]["name"] == "kubesched-bench-minus-5"
