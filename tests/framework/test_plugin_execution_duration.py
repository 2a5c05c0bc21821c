"""``scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}``, recorded for a
sample of scheduling cycles as kube-scheduler v1.35 does.

Upstream: pkg/scheduler/schedule_one.go (``pluginMetricsSamplePercent = 10``,
``state.SetRecordPluginMetrics(rand.Intn(100) < pluginMetricsSamplePercent)``),
pkg/scheduler/framework/runtime/framework.go (each ``run<Point>Plugin`` observes
``ObservePluginDurationAsync(point, plugin, status.Code().String(), seconds)`` when
``state.ShouldRecordPluginMetrics()``; PostBind and Unreserve always as Success, NormalizeScore as
``ScoreExtensionNormalize``), pkg/scheduler/backend/queue/scheduling_queue.go (PreEnqueue, its own
draw). The expected counts are worked out by hand from the cluster of each test.
"""

from __future__ import annotations

from typing import Any

from fw_fakes import fake

from kubesched.config.feature_gates import parse_feature_gates
from kubesched.config.releases import DEFAULT_RELEASE
from kubesched.framework.status import Code, Status
from kubesched.metrics import PLUGIN_METRICS_SAMPLE_PERCENT, SchedulerMetrics
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NODES = ["n1", "n2", "n3"]


def samples(fw: TestFramework) -> dict[tuple[str, str, str], float]:
    """(plugin, extension_point, status) -> number of observations."""
    registry = fw.scheduler.metrics.registry
    out: dict[tuple[str, str, str], float] = {}
    for fam in registry.collect():
        if fam.name != "scheduler_plugin_execution_duration_seconds":
            continue
        for s in fam.samples:
            if s.name.endswith("_count"):
                out[(s.labels["plugin"], s.labels["extension_point"], s.labels["status"])] = s.value
    return out


def cluster(*plugins: Any, percent: int) -> TestFramework:
    # Batching off: a batched pod is filtered and scored on its hint alone, which would change the
    # counts worked out below (tests/scheduler/test_opportunistic_batching.py covers batching).
    fw = new_framework(
        list(plugins),
        nodes=[make_node(n).capacity(cpu="4", memory="8Gi").obj() for n in NODES],
        feature_gates=parse_feature_gates(["OpportunisticBatching=false"], str(DEFAULT_RELEASE)),
    )
    fw.scheduler.metrics.plugin_metrics_sample_percent = percent
    return fw


def test_upstreams_sample_rate() -> None:
    assert PLUGIN_METRICS_SAMPLE_PERCENT == 10
    m = SchedulerMetrics()
    drawn = sum(m.sample_plugin_metrics() for _ in range(4000))
    # Binomial(4000, 0.1): mean 400, standard deviation 19; the bounds are 5 deviations away.
    assert 305 <= drawn <= 495
    m.plugin_metrics_sample_percent = 0
    assert not any(m.sample_plugin_metrics() for _ in range(1000))


def test_every_plugin_call_of_a_sampled_cycle_is_timed() -> None:
    fw = cluster("NodeResourcesFit", percent=100)
    for name in ("a", "b"):
        fw.add_pod(make_pod(name).req(cpu="1").obj())
    fw.schedule()
    got = samples(fw)
    # Two pods, three nodes (all are evaluated below 100 nodes): Filter and Score once per node
    # and pod, PreFilter, PreScore and Bind once per pod; NodeResourcesFit has no NormalizeScore.
    assert got[("NodeResourcesFit", "Filter", "Success")] == 6
    assert got[("NodeResourcesFit", "Score", "Success")] == 6
    assert got[("NodeResourcesFit", "PreFilter", "Success")] == 2
    assert got[("NodeResourcesFit", "PreScore", "Success")] == 2
    assert got[("DefaultBinder", "Bind", "Success")] == 2
    assert ("NodeResourcesFit", "ScoreExtensionNormalize", "Success") not in got


def test_nothing_is_timed_outside_sampled_cycles() -> None:
    fw = cluster("NodeResourcesFit", percent=0)
    fw.add_pod(make_pod("a").req(cpu="1").obj())
    fw.schedule()
    assert fw.cluster.pods and all(p["spec"].get("nodeName") for p in fw.cluster.pods.values())
    assert samples(fw) == {}


def test_a_rejecting_batch_filter_is_labelled_unschedulable() -> None:
    fw = cluster("NodeResourcesFit", percent=100)
    fw.add_pod(make_pod("huge").req(cpu="64").obj())
    fw.schedule(until=fw.clock.now() + 1)
    got = samples(fw)
    assert got.get(("NodeResourcesFit", "Filter", "Unschedulable"), 0) >= 3
    assert ("NodeResourcesFit", "Filter", "Success") not in got
    assert ("DefaultBinder", "Bind", "Success") not in got


def test_status_labels_of_per_node_plugins_and_the_other_extension_points() -> None:
    def filt(state: Any, pod: Any, ni: Any) -> Status | None:
        if ni.name == "n2":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no")
        if ni.name == "n3":
            raise RuntimeError("boom")
        return None

    plugin = fake(
        "P",
        filter=filt,
        reserve=lambda state, pod, node: None,
        unreserve=lambda state, pod, node: None,
        permit=lambda state, pod, node: (Status(Code.WAIT), 5.0),
        pre_bind=lambda state, pod, node: None,
        post_bind=lambda state, pod, node: None,
        score=lambda state, pod, ni: (7, None),
        normalize_score=lambda state, pod, scores: None,
    )
    fw = cluster(plugin, percent=0)
    fw.new_cycle().record_plugin_metrics = True
    pod = make_pod("p").obj()
    labels = [fw.framework.run_filter_plugins(fw.state, fw.pod_info(pod), fw.node_info(n)).code for n in NODES]
    assert labels == [Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR]
    fw.framework.run_score_plugins(fw.state, fw.pod_info(pod), fw.nodes())
    assert fw.run_reserve(pod, "n1").is_success()
    assert fw.run_permit(pod, "n1").is_wait()
    fw.run_unreserve(pod, "n1")
    assert fw.run_pre_bind(pod, "n1").is_success()
    fw.framework.run_post_bind_plugins(fw.state, fw.pod_info(pod), "n1")
    got = samples(fw)
    assert got[("P", "Filter", "Success")] == 1
    assert got[("P", "Filter", "UnschedulableAndUnresolvable")] == 1
    assert got[("P", "Filter", "Error")] == 1  # a plugin that raises: upstream's Error code
    assert got[("P", "Score", "Success")] == 3
    assert got[("P", "ScoreExtensionNormalize", "Success")] == 1
    assert got[("P", "Reserve", "Success")] == 1
    assert got[("P", "Permit", "Wait")] == 1
    assert got[("P", "Unreserve", "Success")] == 1
    assert got[("P", "PreBind", "Success")] == 1
    assert got[("P", "PostBind", "Success")] == 1


def test_sampling_does_not_change_decisions() -> None:
    """The sample is drawn from its own generator: the seeded tie-breaks are the same with and
    without timing (three equal nodes, so every placement is a tie)."""

    def placements(percent: int) -> dict[str, str]:
        fw = cluster("NodeResourcesFit", percent=percent)
        for i in range(12):
            fw.add_pod(make_pod(f"p{i}").req(cpu="100m").obj())
        fw.schedule()
        return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in fw.cluster.pods.values()}

    timed, untimed = placements(100), placements(0)
    assert timed == untimed
    assert len(set(timed.values())) > 1  # the ties were really broken more than one way
