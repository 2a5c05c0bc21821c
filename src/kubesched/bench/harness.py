"""``kubesched bench``: one workload, one backend, one scheduler, one JSON result."""

from __future__ import annotations

from collections.abc import Callable

from .errors import BenchError
from .result import BenchResult
from .workloads import get_workload

__all__ = ["BACKENDS", "SCHEDULERS", "BenchError", "run_bench"]

BACKENDS = ("sim", "apiserver")
SCHEDULERS = ("kubesched", "kube-scheduler")

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
) -> BenchResult:
    """Run ``workload`` at the given size (its scheduler_perf size for what is left out)."""
    try:
        w = get_workload(workload)
    except KeyError as err:
        raise BenchError(str(err.args[0])) from None
    size = w.default_size
    n = size.nodes if nodes is None else nodes
    k = size.init_pods if init_pods is None else init_pods
    m = size.pods if pods is None else pods
    if n < 1 or k < 0 or m < 1:
        raise BenchError(f"need at least 1 node and 1 measured pod (got --nodes {n}, --init-pods {k}, --pods {m})")
    if backend not in BACKENDS:
        raise BenchError(f"unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
    if scheduler not in SCHEDULERS:
        raise BenchError(f"unknown scheduler {scheduler!r}; one of {', '.join(SCHEDULERS)}")
    if backend == "sim":
        if scheduler != "kubesched":
            raise BenchError("--scheduler kube-scheduler needs --backend apiserver")
        from .sim import run_sim

        return run_sim(w, n, k, m, seed=seed, progress=progress)
    from .apiserver import run_apiserver

    return run_apiserver(w, n, k, m, scheduler=scheduler, seed=seed, progress=progress)
