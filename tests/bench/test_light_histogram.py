"""LightHistogram (the scheduler's hot-path histogram) is exposed exactly as prometheus_client's
Histogram: same families, bucket boundaries (``le`` with Go's float formatting), cumulative counts,
``_count`` and ``_sum``, including values on a boundary (Prometheus buckets are ``<=``) and above
the last one (+Inf)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram, generate_latest

from kubesched.metrics import LightHistogram, SchedulerMetrics

BUCKETS = [0.001 * 2**i for i in range(15)]
VALUES = [0.0, 0.0005, 0.001, 0.0015, 0.002, 0.1, 0.128, 3.0, 16.384, 17.0, 1e6]


def _exposition(cls: type) -> str:
    reg = CollectorRegistry()
    h = cls("x_seconds", "help text", ["result", "profile"], buckets=BUCKETS, registry=reg)
    for i, v in enumerate(VALUES):
        h.labels("scheduled" if i % 3 else "error", "default-scheduler").observe(v)
    return "\n".join(line for line in generate_latest(reg).decode().splitlines() if "_created" not in line)


def test_same_exposition_as_prometheus_histogram() -> None:
    assert _exposition(LightHistogram) == _exposition(Histogram)


def test_scheduler_metrics_samples() -> None:
    m = SchedulerMetrics()
    m.observe_attempt("scheduled", "p", 0.0015)
    m.observe_attempt("scheduled", "p", 0.5)
    get = m.registry.get_sample_value
    assert get("scheduler_scheduling_attempt_duration_seconds_count", {"result": "scheduled", "profile": "p"}) == 2
    assert get("scheduler_scheduling_attempt_duration_seconds_bucket",
               {"result": "scheduled", "profile": "p", "le": "0.002"}) == 1
    assert get("scheduler_schedule_attempts_total", {"result": "scheduled", "profile": "p"}) == 2
