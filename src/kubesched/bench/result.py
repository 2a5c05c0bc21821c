"""What one benchmark run reports, and the arithmetic behind it."""

from __future__ import annotations

import math
import resource
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class BenchResult:
    """One run. ``pods_per_second`` = measured pods bound / (last binding - first arrival)."""

    workload: str
    backend: str
    scheduler: str
    nodes: int
    init_pods: int
    pods: int
    #: From the first measured pod's arrival to the last one's binding (wall clock).
    seconds: float
    pods_per_second: float
    attempt_p50_ms: float
    attempt_p99_ms: float
    peak_rss_mb: float
    #: Measured pods bound (``pods`` when the run completed).
    bound: int = 0
    #: CPU time the scheduler spent in that window (user + system): on a busy machine the wall
    #: clock also counts other processes' time slices, this does not.
    cpu_seconds: float = 0.0
    #: kube-apiserver's CPU time in the window (``--backend apiserver``; 0 on the simulator).
    apiserver_cpu_seconds: float = 0.0
    #: The kube-scheduler release the scheduler behaved as (``--emulated-version``).
    release: str = ""
    #: The bare numpy kernel (``--kernel``), not a scheduler: only then in the JSON.
    kernel: bool = False
    #: ``--feature-gates`` as given: only then in the JSON.
    feature_gates: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.kernel:
            del out["kernel"]
        if self.feature_gates:
            out["feature_gates"] = list(self.feature_gates)
        else:
            del out["feature_gates"]
        for k in ("seconds", "cpu_seconds", "apiserver_cpu_seconds"):
            out[k] = round(out[k], 6)
        for k in ("pods_per_second", "peak_rss_mb"):
            out[k] = round(out[k], 1)
        for k in ("attempt_p50_ms", "attempt_p99_ms"):  # the kernel's take tens of microseconds
            out[k] = round(out[k], 3)
        return out


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of raw samples; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return float(ordered[min(k, len(ordered) - 1)])


def histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    """Prometheus ``histogram_quantile``: ``buckets`` are cumulative (upper bound, count) pairs,
    sorted, ending with +Inf; linear interpolation inside the bucket, as PromQL does."""
    if not buckets:
        return 0.0
    total = buckets[-1][1]
    if total <= 0:
        return 0.0
    rank = q * total
    prev_bound, prev_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return prev_bound
            if count == prev_count:
                return bound
            return prev_bound + (bound - prev_bound) * (rank - prev_count) / (count - prev_count)
        prev_bound, prev_count = bound, count
    return prev_bound


def own_peak_rss_mb() -> float:
    """This process's peak resident set size (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def process_peak_rss_mb(pid: int) -> float:
    """Another process's peak RSS from ``/proc/PID/status`` (``VmHWM``); 0 if unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0
