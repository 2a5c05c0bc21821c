"""The simulator backend of ``kubesched bench``: the scheduler and the cluster in one process.

Nodes and init pods are created and scheduled first; then the clock starts, the measured pods
(built beforehand, as a test client would have them ready) arrive all at once, and the run ends
with the binding of the last measured pod. Time is the wall clock (and the process's CPU time):
the simulator's virtual clock only orders events, and backoffs cost nothing on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.config.feature_gates import FeatureGates
from kubesched.config.load import load_config
from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import VirtualClock
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import default_registry
from kubesched.scheduler import Scheduler
from kubesched.sim.cluster import SimCluster
from kubesched.sim.simulation import new_simulation

from .errors import BenchError
from .result import BenchResult, own_peak_rss_mb, percentile
from .workloads import Workload, namespace

#: ``progress(bound, total)``: measured pods bound so far.
Progress = Callable[[int, int], None]


#: Attempts between two progress reports (the bar needs no more, and each costs a call).
PROGRESS_EVERY = 256


class _BenchCluster(SimCluster):
    """A SimCluster that notes when each measured pod is bound (wall clock); given to
    :func:`new_simulation` as its ``cluster_factory``."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__(clock)
        self.measured: set[str] = set()
        self.bound = 0
        self.last_bound_at = 0.0
        self.last_bound_cpu = 0.0

    def bind(self, pod: Mapping[str, Any], node_name: str) -> None:
        super().bind(pod, node_name)
        md = pod.get("metadata") or {}
        if f"{md.get('namespace')}/{md.get('name')}" in self.measured:
            self.bound += 1
            self.last_bound_at = time.perf_counter()
            if self.bound == len(self.measured):
                # Once, at the last one: reading the process CPU clock is a system call.
                self.last_bound_cpu = time.process_time()


def run_sim(
    workload: Workload,
    nodes: int,
    init_pods: int,
    pods: int,
    *,
    seed: int = 0,
    config: KubeSchedulerConfiguration | None = None,
    registry: Registry | None = None,
    progress: Progress | None = None,
    release: Release = DEFAULT_RELEASE,
    feature_gates: FeatureGates | None = None,
) -> BenchResult:
    """One run; the scheduler behaves as ``release`` unless ``config`` is given (then as its own),
    with ``feature_gates`` (every gate at the release's default when None)."""
    registry = registry or default_registry()
    try:
        config = (
            config
            or workload.scheduler_config(registry, release)
            or load_config(None, args_types=registry.args_types(), release=release)
        )
        node_objs = list(workload.nodes(nodes))
        init_objs = list(workload.init_pods(init_pods))
        arrivals = list(workload.measured_pods(pods, after=init_pods))
    except ValueError as err:
        raise BenchError(str(err)) from None
    sim = new_simulation(
        config, registry, seed=seed, cluster_factory=_BenchCluster, feature_gates=feature_gates, stories=False
    )
    cluster = sim.cluster

    for ns in workload.namespaces:
        cluster.create_object("v1", "Namespace", namespace(ns))
    for api_version, kind, obj in workload.objects:
        cluster.create_object(api_version, kind, obj)
    for node in node_objs:
        cluster.add_node(node)
    for pod in init_objs:
        cluster.create_pod(pod)
    sim.run()

    cluster.measured = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p, m in arrivals if m}
    attempts: list[float] = []

    def done() -> bool:
        return cluster.bound >= pods

    def report(_: Scheduler | None = None) -> None:
        if progress is not None:
            progress(cluster.bound, pods)

    cpu0 = time.process_time()
    t0 = time.perf_counter()
    for pod, _ in arrivals:
        cluster.create_pod(pod)
    # The simulator's loop, stop rule and all; it times each attempt with its binding.
    sim.run(done=done, attempts=attempts, progress=report, progress_every=PROGRESS_EVERY)
    end = cluster.last_bound_at if cluster.bound else time.perf_counter()
    cpu = (cluster.last_bound_cpu if cluster.bound == len(cluster.measured) else time.process_time()) - cpu0
    report()
    seconds = max(end - t0, 1e-9)
    return BenchResult(
        workload=workload.name,
        backend="sim",
        scheduler="kubesched",
        nodes=nodes,
        init_pods=init_pods,
        pods=pods,
        seconds=seconds,
        pods_per_second=cluster.bound / seconds,
        attempt_p50_ms=percentile(attempts, 50) * 1000,
        attempt_p99_ms=percentile(attempts, 99) * 1000,
        peak_rss_mb=own_peak_rss_mb(),
        bound=cluster.bound,
        cpu_seconds=cpu,
        release=str(config.release),
    )
