"""``kubesched run --legacy-metrics`` against a real kube-apiserver: kube-scheduler v1.14's two
deprecated microsecond histograms, for dashboards of that time (issue 13).

Upstream (pkg/scheduler/metrics/metrics.go at v1.14.10, the last release with both):
``scheduler_e2e_scheduling_latency_microseconds`` ("(Deprecated) E2e scheduling latency in
microseconds (scheduling algorithm + binding)") and ``scheduler_binding_latency_microseconds``
("(Deprecated) Binding latency in microseconds"), histograms without labels on
``ExponentialBuckets(1000, 2, 15)``, observed (pkg/scheduler/scheduler.go) once per pod bound,
next to their seconds successors. Today's successors are
``scheduler_scheduling_attempt_duration_seconds{result="scheduled"}`` and
``scheduler_framework_extension_point_duration_seconds{extension_point="Bind",status="Success"}``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_kube_support import Api, SubprocessScheduler, api, eventually, ns, scheduler_config, subprocesses, unique

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "ns"]  # fixtures

#: prometheus ExponentialBuckets(1000, 2, 15), in microseconds.
LEGACY_BOUNDS = [1000.0 * 2**i for i in range(15)]
PODS = 3


def _histogram(text: str, name: str, **labels: str) -> tuple[list[float], float, float]:
    """(bucket bounds without +Inf, count, sum) of one histogram series."""
    for fam in text_string_to_metric_families(text):
        if fam.name != name:
            continue
        series = [s for s in fam.samples if all(s.labels.get(k) == v for k, v in labels.items())]
        bounds = [float(s.labels["le"]) for s in series if s.name.endswith("_bucket") and s.labels["le"] != "+Inf"]
        [count] = [s.value for s in series if s.name.endswith("_count")]
        [total] = [s.value for s in series if s.name.endswith("_sum")]
        return bounds, count, total
    raise AssertionError(f"{name} not exposed")


def _metrics_once(sched: SubprocessScheduler, needle: str) -> str:
    """The scheduler's /metrics text once it contains ``needle``."""

    def scrape() -> str | None:
        text = sched.metrics()
        return text if needle in text else None

    return str(eventually(scrape, f"/metrics to show {needle!r}"))


def test_legacy_histograms_are_fed_by_their_successors(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path
) -> None:
    name = unique("kubesched")
    api.node("n1", cpu="4")
    legacy = SubprocessScheduler(scheduler_config(name), control_plane.kubeconfig_path, tmp_path, "--legacy-metrics")
    with subprocesses(legacy):
        eventually(legacy.ready, "kubesched ready")
        for i in range(PODS):
            api.pod(ns, f"p{i}", scheduler=name)
        eventually(lambda: all(api.node_of(ns, f"p{i}") for i in range(PODS)), "every pod bound")
        text = _metrics_once(legacy, f"scheduler_e2e_scheduling_latency_microseconds_count {PODS}.0")
    bounds, e2e_count, e2e_sum = _histogram(text, "scheduler_e2e_scheduling_latency_microseconds")
    assert bounds == LEGACY_BOUNDS
    assert e2e_count == PODS
    _, attempts, attempt_seconds = _histogram(
        text, "scheduler_scheduling_attempt_duration_seconds", result="scheduled", profile=name
    )
    assert attempts == PODS
    assert e2e_sum == pytest.approx(attempt_seconds * 1e6)  # the same observations, in microseconds

    bounds, bind_count, bind_sum = _histogram(text, "scheduler_binding_latency_microseconds")
    assert bounds == LEGACY_BOUNDS
    assert bind_count == PODS
    _, binds, bind_seconds = _histogram(
        text, "scheduler_framework_extension_point_duration_seconds", extension_point="Bind", status="Success",
        profile=name,
    )
    assert binds == PODS
    assert bind_sum == pytest.approx(bind_seconds * 1e6)
    assert "# HELP scheduler_binding_latency_microseconds (Deprecated) Binding latency in microseconds" in text


def test_without_the_flag_they_are_not_exposed(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path
) -> None:
    name = unique("kubesched")
    api.node("n1", cpu="4")
    plain = SubprocessScheduler(scheduler_config(name), control_plane.kubeconfig_path, tmp_path)
    with subprocesses(plain):
        eventually(plain.ready, "kubesched ready")
        api.pod(ns, "p0", scheduler=name)
        eventually(lambda: api.node_of(ns, "p0"), "the pod bound")
        text = _metrics_once(plain, 'result="scheduled"')
    assert "_latency_microseconds" not in text
