"""The PodScheduled=False condition of a failed attempt carries ``observedGeneration``.

Upstream: pkg/scheduler/schedule_one.go (v1.35, ``handleSchedulingFailure``: the condition's
``ObservedGeneration`` is ``podutil.CalculatePodConditionObservedGeneration(&pod.Status,
pod.Generation, PodScheduled)``), pkg/api/v1/pod/util.go (that is ``pod.Generation`` while the
PodObservedGenerationTracking gate is on; GA and locked on in v1.35), and Go's ``omitempty``
leaving out a zero generation. The real API server's side is tests/e2e/test_kube_pod_conditions.py.
"""

from __future__ import annotations

from typing import Any

from kubesched.testing import make_node, make_pod, new_framework


def _condition(generation: Any) -> dict[str, Any]:
    pod = make_pod("big").req(cpu="64").obj()
    if generation is not None:
        pod["metadata"]["generation"] = generation
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node("n1").capacity(cpu="2").obj()], pods=[pod])
    fw.schedule(until=fw.clock.now() + 1)
    [stored] = fw.cluster.pods.values()
    [cond] = [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"]
    return dict(cond)


def test_the_condition_observes_the_pods_generation() -> None:
    cond = _condition(3)
    assert (cond["status"], cond["reason"], cond["observedGeneration"]) == ("False", "Unschedulable", 3)


def test_no_generation_is_left_out() -> None:
    assert "observedGeneration" not in _condition(None)
    assert "observedGeneration" not in _condition(0)
