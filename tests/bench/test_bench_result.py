"""The arithmetic behind ``kubesched bench``'s numbers, against hand-computed values: nearest-rank
percentiles of raw samples, PromQL's ``histogram_quantile`` interpolation (promql/quantile.go:
linear inside the bucket, the lower bound of +Inf returned as is), and reading the attempt
histogram of one profile out of a /metrics page, whatever the order of its labels."""

from __future__ import annotations

import math

import pytest

from kubesched.bench.apiserver import attempt_buckets, window_quantiles
from kubesched.bench.result import histogram_quantile, percentile


@pytest.mark.parametrize(
    "q, want", [(50, 3.0), (99, 5.0), (100, 5.0), (1, 1.0), (20, 1.0), (21, 2.0)]
)
def test_percentile_nearest_rank(q: float, want: float) -> None:
    assert percentile([5.0, 1.0, 4.0, 2.0, 3.0], q) == want


def test_percentile_of_nothing() -> None:
    assert percentile([], 50) == 0.0


BUCKETS = [(0.001, 0.0), (0.002, 4.0), (0.004, 8.0), (math.inf, 10.0)]


@pytest.mark.parametrize(
    "q, want",
    [
        (0.5, 0.0025),  # rank 5 in (0.002, 0.004]: 0.002 + 0.002 * (5 - 4) / 4
        (0.2, 0.0015),  # rank 2 in (0.001, 0.002]: 0.001 + 0.001 * 2 / 4
        (0.99, 0.004),  # rank 9.9 falls in +Inf: the last finite bound
    ],
)
def test_histogram_quantile(q: float, want: float) -> None:
    assert histogram_quantile(q, BUCKETS) == pytest.approx(want)


METRICS = """\
# TYPE scheduler_scheduling_attempt_duration_seconds histogram
scheduler_scheduling_attempt_duration_seconds_bucket{le="0.001",profile="default-scheduler",result="scheduled"} 1
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="0.002"} 3
scheduler_scheduling_attempt_duration_seconds_bucket{result="scheduled",profile="default-scheduler",le="+Inf"} 4
scheduler_scheduling_attempt_duration_seconds_bucket{le="+Inf",profile="default-scheduler",result="error"} 7
scheduler_scheduling_attempt_duration_seconds_bucket{le="+Inf",profile="other",result="scheduled"} 9
scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 4
"""


def test_attempt_buckets_reads_one_profiles_scheduled_attempts() -> None:
    assert attempt_buckets(METRICS) == {0.001: 1.0, 0.002: 3.0, math.inf: 4.0}


def test_window_quantiles_subtract_the_first_scrape() -> None:
    before = {0.001: 1.0, 0.002: 1.0, math.inf: 1.0}
    after = {0.001: 1.0, 0.002: 3.0, math.inf: 5.0}
    # Window: 0 in (0, 0.001], 2 in (0.001, 0.002], 2 above: median rank 2 -> 0.002.
    assert window_quantiles(before, after, [0.5]) == [pytest.approx(0.002)]
