"""One factory builds a simulation and one loop runs it (issue 12, step 1).

``kubesched simulate`` and ``kubesched bench`` once ran copies of the loop that differed (bench's did
not set ``skip_futile_early_pops``). Here both stop the same simulation the same way: its only pod
fails at Filter with an error forever, and is tried at 0, 1, 3, 7 and 15 s (backoff 1 s doubling to
10 s, pkg/scheduler/backend/queue) before the stop rule ends the run. And the factory is the only
place in src/ that builds a SimCluster, so no front end wires a simulation by hand again.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from kubesched.bench.sim import run_sim
from kubesched.bench.workloads import Size, Workload, pause_pod
from kubesched.config.load import load_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import default_registry
from kubesched.sim.cluster import SimCluster
from kubesched.sim.manifests import ClusterObjects, admit_pod
from kubesched.sim.runner import DEFAULT_START, simulate
from kubesched.sim.simulation import Simulation, new_simulation
from kubesched.testing import make_node, make_pod

SRC = Path(__file__).resolve().parents[2] / "src"
FACTORY = SRC / "kubesched" / "sim" / "simulation.py"
ATTEMPTS_AT = [0.0, 1.0, 3.0, 7.0, 15.0]


class Boom:
    """A Filter plugin that raises for every pod: each attempt ends in an error."""

    name = "Boom"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.args = args

    def filter(self, *args: Any) -> Any:
        raise RuntimeError("boom")


def registry() -> Registry:
    reg = default_registry(entry_points=False)
    reg.register("Boom", Boom, origin="test")
    return reg


def config(reg: Registry) -> KubeSchedulerConfiguration:
    enabled = [{"name": n} for n in ("PrioritySort", "DefaultBinder", "Boom")]
    return load_config({"profiles": [{"plugins": {"multiPoint": {"enabled": enabled,
                                                                 "disabled": [{"name": "*"}]}}}]},
                       args_types=reg.args_types())


def _pod(namespace: str, name: str) -> dict[str, Any]:
    return pause_pod(namespace, name)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, list[float], bool]]:
    """Every Simulation.run: (where the clock stopped after the start, attempt times, whether the
    queue skipped futile early pops)."""
    seen: list[tuple[float, list[float], bool]] = []
    original = Simulation.run

    def spy(self: Simulation[Any], **kw: Any) -> None:
        original(self, **kw)
        failed = [e.time - DEFAULT_START for e in self.cluster.events if e.reason == "FailedScheduling"]
        seen.append((self.clock.now() - DEFAULT_START, failed, self.scheduler.queue.skip_futile_early_pops))

    monkeypatch.setattr(Simulation, "run", spy)
    return seen


def test_simulate_and_bench_stop_a_pod_failing_forever_with_the_same_loop(
        runs: list[tuple[float, list[float], bool]]) -> None:
    reg = registry()
    pod = make_pod("pod-0").req(cpu="100m").obj()
    admit_pod(pod, {}, 0)
    result = simulate(ClusterObjects(nodes=[make_node("node-0").capacity(cpu="4").obj()], pods=[pod]),
                      config(reg), reg)
    assert result.summary()["pending"] == 1
    assert result.pods[0]["message"] == 'running "Boom" filter plugin: boom'  # upstream's RunFilterPlugins

    workload = Workload("Boom", "a pod that fails at Filter forever", Size(1, 0, 1),
                        measured_pod=_pod, init_pod=_pod)
    bench = run_sim(workload, 1, 0, 1, registry=reg, config=config(reg))
    assert bench.bound == 0

    # simulate: one run; bench: the init phase (nothing to do), then the measured pods.
    assert runs == [(15.0, ATTEMPTS_AT, True), (0.0, [], True), (15.0, ATTEMPTS_AT, True)]


def test_the_factory_wires_clock_cluster_and_scheduler() -> None:
    reg = registry()

    class Noting(SimCluster):
        pass

    sim = new_simulation(config(reg), reg, start=DEFAULT_START + 60, seed=1, cluster_factory=Noting)
    assert isinstance(sim.cluster, Noting)
    assert sim.clock.now() == DEFAULT_START + 60
    assert sim.scheduler.cluster is sim.cluster and sim.scheduler.clock is sim.clock
    assert type(new_simulation(config(reg), reg).cluster) is SimCluster


def _sim_cluster_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """SimCluster and the names of the classes in src/ derived from it (transitively)."""
    names = {"SimCluster"}
    grew = True
    while grew:
        grew = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in names and any(
                        (b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "")
                        in names for b in node.bases):
                    names.add(node.name)
                    grew = True
    return names


def test_only_the_factory_builds_a_sim_cluster() -> None:
    trees = {p: ast.parse(p.read_text()) for p in sorted(SRC.rglob("*.py"))}
    classes = _sim_cluster_classes(trees)
    assert "_BenchCluster" in classes
    calls = []
    for path, tree in trees.items():
        if path == FACTORY:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in classes:
                calls.append(f"{path.relative_to(SRC)}:{node.lineno}: {name}(...)")
    assert calls == [], "build simulations with kubesched.sim.simulation.new_simulation " \
                        "(a subclass goes in as cluster_factory):\n" + "\n".join(calls)
