"""``kubesched bench``: one workload, one backend, one scheduler, one JSON result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from kubesched.config.feature_gates import FeatureGateError, parse_feature_gates
from kubesched.config.releases import DEFAULT_RELEASE, Release

from .errors import BenchError
from .result import BenchResult
from .workloads import get_workload

__all__ = ["BACKENDS", "MAX_INIT_PODS", "MAX_NODES", "MAX_PODS", "SCHEDULERS", "BenchError", "run_bench", "size_errors"]

BACKENDS = ("sim", "apiserver")
SCHEDULERS = ("kubesched", "kube-scheduler")
#: Upper bounds of the sizes: every node and pod is kept in memory (about 6 KB a bound pod on the
#: simulator: 321 MB with 5000 nodes and 50000 pods, 2.7 GB with 50000 nodes and 510000 pods,
#: docs/performance.md); the scale matrix binds 10 pods a node at 50000 nodes before measuring.
MAX_NODES = 50_000
MAX_INIT_PODS = 500_000
MAX_PODS = 100_000

#: ``progress(bound, total)``.
Progress = Callable[[int, int], None]


def run_bench(
    workload: str,
    *,
    nodes: int | None = None,
    init_pods: int | None = None,
    pods: int | None = None,
    backend: str = "sim",
    scheduler: str = "kubesched",
    seed: int = 0,
    progress: Progress | None = None,
    release: Release | None = None,
    kernel: bool = False,
    feature_gates: Sequence[str] = (),
) -> BenchResult:
    """Run ``workload`` at the given size (its scheduler_perf size for what is left out), with the
    scheduler behaving as ``release`` (None: the default release) with ``feature_gates``
    (``--feature-gates`` values), or the bare numpy kernel of the workload instead of a scheduler
    (``kernel``: SchedulingBasic on the simulator only)."""
    try:
        w = get_workload(workload)
    except KeyError as err:
        raise BenchError(str(err.args[0])) from None
    size = w.default_size
    n = size.nodes if nodes is None else nodes
    k = size.init_pods if init_pods is None else init_pods
    m = size.pods if pods is None else pods
    errors = size_errors(n, k, m)
    if errors:
        raise BenchError(*errors)
    if backend not in BACKENDS:
        raise BenchError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
    if scheduler not in SCHEDULERS:
        raise BenchError(f"unknown scheduler {scheduler!r}; one of {', '.join(SCHEDULERS)}")
    if kernel:
        from .kernel import KERNEL_WORKLOAD, run_kernel

        if w.name != KERNEL_WORKLOAD:
            raise BenchError(f"--kernel: only {KERNEL_WORKLOAD} has a kernel, not {w.name}")
        if backend != "sim" or scheduler != "kubesched" or feature_gates:
            raise BenchError(
                "--kernel runs on its own: no --backend apiserver, no --scheduler kube-scheduler, no --feature-gates"
            )
        return run_kernel(w, n, k, m, release=release or DEFAULT_RELEASE, progress=progress)
    try:
        gates = parse_feature_gates(feature_gates, str(release or DEFAULT_RELEASE)) if feature_gates else None
    except FeatureGateError as err:
        raise BenchError(*(f"--feature-gates: {e}" for e in err.errors)) from None
    if backend == "sim":
        if scheduler != "kubesched":
            raise BenchError("--scheduler kube-scheduler needs --backend apiserver")
        from .sim import run_sim

        result = run_sim(w, n, k, m, seed=seed, progress=progress, release=release or DEFAULT_RELEASE,
                         feature_gates=gates)
        return replace(result, feature_gates=tuple(feature_gates))
    from .apiserver import run_apiserver

    result = run_apiserver(
        w, n, k, m, scheduler=scheduler, seed=seed, progress=progress, release=release, feature_gates=feature_gates
    )
    return replace(result, feature_gates=tuple(feature_gates))


def size_errors(nodes: int, init_pods: int, pods: int) -> list[str]:
    """One message per size outside its bounds (1..MAX_NODES, 0..MAX_INIT_PODS, 1..MAX_PODS)."""
    out = []
    for flag, value, low, high in (("--nodes", nodes, 1, MAX_NODES), ("--init-pods", init_pods, 0, MAX_INIT_PODS),
                                   ("--pods", pods, 1, MAX_PODS)):
        if not low <= value <= high:
            out.append(f"{flag}: must be an integer in {low}..{high}, got {value}")
    return out
