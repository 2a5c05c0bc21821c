"""scheduler_unschedulable_pods, scheduler_inflight_events and scheduler_cache_size, as kube-scheduler
exposes them (pkg/scheduler/metrics/metrics.go; the unschedulable count incremented per rejecting
or gating plugin when a pod goes back to the queue and decremented when it is popped again:
backend/queue/scheduling_queue.go and active_queue.go, v1.35)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.backend.metrics import register
from kubesched.testing import make_node, make_pod, new_framework


def _samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def test_gauges_follow_the_queue_and_the_cache() -> None:
    fw = new_framework(
        ["NodeResourcesFit", "TaintToleration"],
        nodes=[make_node("small").capacity(cpu="1", memory="1Gi").obj(),
               make_node("tainted").capacity(cpu="8", memory="8Gi").taint("k", "v", "NoSchedule").obj()],
        pods=[make_pod("big").req(cpu="4").obj(), make_pod("fits").req(cpu="500m").obj(),
              make_pod("bound").req(cpu="100m").node("small").obj()],
    )
    registry = CollectorRegistry()
    register(registry, fw.scheduler)
    before = _samples(registry)
    # Nothing attempted yet: no plugin has rejected anything, nothing is in flight.
    assert not [k for k in before if k[0] == "scheduler_unschedulable_pods"]
    assert before[("scheduler_inflight_events", (("event", "PodPopped"),))] == 0
    assert before[("scheduler_cache_size", (("type", "nodes"),))] == 2
    assert before[("scheduler_cache_size", (("type", "pods"),))] == 1

    fw.schedule()
    after = _samples(registry)
    # "big" fits nowhere: NodeResourcesFit rejects it on "small", TaintToleration on "tainted".
    profile = fw.scheduler.config.profiles[0].scheduler_name
    assert after[("scheduler_unschedulable_pods", (("plugin", "NodeResourcesFit"), ("profile", profile)))] == 1
    assert after[("scheduler_unschedulable_pods", (("plugin", "TaintToleration"), ("profile", profile)))] == 1
    assert after[("scheduler_cache_size", (("type", "pods"),))] == 2  # "bound" and "fits"
    assert after[("scheduler_cache_size", (("type", "assumed_pods"),))] == 0
    assert after[("scheduler_inflight_events", (("event", "PodPopped"),))] == 0

    # Activated and popped, "big" is in its attempt: in flight, and no longer counted as unschedulable.
    [big] = [q for q, _ in fw.scheduler.queue.pending_pods() if q.pod_info.name == "big"]
    fw.scheduler.queue.activate([big.pod_info.pod])
    assert fw.scheduler.queue.pop() is big
    during = _samples(registry)
    assert during[("scheduler_inflight_events", (("event", "PodPopped"),))] == 1
    assert not [k for k, v in during.items() if k[0] == "scheduler_unschedulable_pods" and v]
