"""``new_framework``: a plugin (or a whole config) on a small cluster, ready to call extension points.

    fw = new_framework([MyPlugin], nodes=[make_node("n1").capacity(cpu="4").obj()])
    pod = make_pod("p").req(cpu="1").obj()
    assert fw.run_filter(pod, "n1").is_success()

The test framework is the real runtime, with a simulated cluster and a virtual clock underneath, so
what passes here behaves the same inside ``kubesched simulate`` and against a real cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.config.feature_gates import FeatureGates
from kubesched.config.load import load_config
from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.registry import PluginFactory, Registry
from kubesched.framework.runtime import Framework, ScoreResult
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins.registry import default_registry
from kubesched.scheduler import Scheduler
from kubesched.sim.cluster import SimCluster
from kubesched.sim.manifests import admit_pod
from kubesched.sim.simulation import DEFAULT_START, Simulation, new_simulation

#: Plugins every test profile needs but a plugin author does not care about.
_PLUMBING = ("PrioritySort", "DefaultBinder")


@dataclass
class PreFilterOutcome:
    result: PreFilterResult | None
    status: Status


class TestFramework:
    """A profile, its scheduler and cluster. Each ``run_*`` takes pod dicts or PodInfos."""

    __test__ = False  # not a pytest test class

    def __init__(self, scheduler: Scheduler, cluster: SimCluster, clock: VirtualClock, profile: str) -> None:
        self.scheduler = scheduler
        self.cluster = cluster
        self.clock = clock
        self.framework: Framework = scheduler.frameworks[profile]
        self.state = CycleState()
        self._pod_infos: dict[str, PodInfo] = {}

    # -- plumbing ---------------------------------------------------------------------------------
    def pod_info(self, pod: Mapping[str, Any] | PodInfo) -> PodInfo:
        if isinstance(pod, PodInfo):
            return pod
        d = dict(pod)
        admit_pod(d, {}, 0)
        uid = d["metadata"]["uid"]
        pi = self._pod_infos.get(uid)
        if pi is None or (pi.pod is not d and pi.pod != d):
            pi = PodInfo(d)
            self._pod_infos[uid] = pi
        return pi

    def plugin(self, name: str) -> Any:
        return self.framework.plugins[name]

    def refresh(self) -> None:
        self.scheduler.cache.update_snapshot(self.scheduler.snapshot)

    def node_info(self, name: str) -> NodeInfo:
        self.refresh()
        ni = self.scheduler.snapshot.get(name)
        if ni is None:
            raise KeyError(f"no node {name!r} in the test cluster")
        return ni

    def nodes(self) -> list[NodeInfo]:
        self.refresh()
        return self.scheduler.snapshot.list()

    def new_cycle(self) -> CycleState:
        self.state = CycleState()
        return self.state

    # -- extension points -------------------------------------------------------------------------
    def run_pre_enqueue(self, pod: Mapping[str, Any] | PodInfo) -> Status:
        return self.framework.run_pre_enqueue_plugins(self.pod_info(pod))

    def run_pre_filter(self, pod: Mapping[str, Any] | PodInfo) -> PreFilterOutcome:
        """Starts a new cycle (fresh CycleState), as the scheduler does."""
        self.new_cycle()
        res, st, _ = self.framework.run_pre_filter_plugins(self.state, self.pod_info(pod), self.nodes())
        return PreFilterOutcome(res, st)

    def run_filter(self, pod: Mapping[str, Any] | PodInfo, node_name: str, *, pre_filter: bool = True) -> Status:
        """Filter on one node; runs PreFilter first unless told not to (then the current state is used)."""
        if pre_filter:
            pf = self.run_pre_filter(pod)
            if not pf.status.is_success():
                return pf.status
        return self.framework.run_filter_plugins(self.state, self.pod_info(pod), self.node_info(node_name))

    def run_score(self, pod: Mapping[str, Any] | PodInfo, node_names: Sequence[str] | None = None) -> ScoreResult:
        """PreFilter, PreScore, Score and NormalizeScore over the given (default: all) nodes."""
        pi = self.pod_info(pod)
        self.run_pre_filter(pi)
        nodes = self.nodes() if node_names is None else [self.node_info(n) for n in node_names]
        st = self.framework.run_pre_score_plugins(self.state, pi, nodes)
        if not st.is_success():
            raise AssertionError(f"PreScore failed: {st!r}")
        snap = self.scheduler.snapshot
        idx = np.array([snap.index[n.name] for n in nodes], dtype=np.intp)
        res = self.framework.run_score_plugins(self.state, pi, nodes, snap, idx)
        if isinstance(res, Status):
            raise AssertionError(f"Score failed: {res!r}")
        return res

    def run_reserve(self, pod: Mapping[str, Any] | PodInfo, node_name: str) -> Status:
        return self.framework.run_reserve_plugins_reserve(self.state, self.pod_info(pod), node_name)

    def run_unreserve(self, pod: Mapping[str, Any] | PodInfo, node_name: str) -> None:
        self.framework.run_reserve_plugins_unreserve(self.state, self.pod_info(pod), node_name)

    def run_permit(self, pod: Mapping[str, Any] | PodInfo, node_name: str) -> Status:
        return self.framework.run_permit_plugins(self.state, self.pod_info(pod), node_name, self.clock)

    def run_pre_bind(self, pod: Mapping[str, Any] | PodInfo, node_name: str) -> Status:
        return self.framework.run_pre_bind_plugins(self.state, self.pod_info(pod), node_name)

    def run_bind(self, pod: Mapping[str, Any] | PodInfo, node_name: str) -> Status:
        return self.framework.run_bind_plugins(self.state, self.pod_info(pod), node_name)

    # -- the cluster ------------------------------------------------------------------------------
    def add_node(self, node: dict[str, Any]) -> None:
        self.cluster.add_node(node)

    def add_pod(self, pod: dict[str, Any]) -> None:
        admit_pod(pod, {}, 0)
        self.cluster.create_pod(pod)

    def schedule(self, *, until: float | None = None) -> None:
        """Run the whole scheduler (queue, cycles, binding) until nothing more can happen: the
        simulator's own loop, so a test ends where ``kubesched simulate`` would."""
        Simulation(self.clock, self.cluster, self.scheduler).run(until=until)


def _profile_config(
    plugins: Sequence[Any],
    args: Mapping[str, Any] | None,
    scheduler_name: str,
    registry: Registry,
    release: Release,
) -> KubeSchedulerConfiguration:
    names: list[str] = []
    for p in plugins:
        if isinstance(p, str):
            name = p
        else:
            name = str(getattr(p, "name", None) or getattr(p, "__name__", ""))
            if name not in registry:
                registry.register(name, p, origin="test")
        names.append(name)
    enabled = [{"name": n} for n in names] + [{"name": n} for n in _PLUMBING if n not in names]
    raw: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": scheduler_name,
                "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
                "pluginConfig": [{"name": n, "args": a} for n, a in (args or {}).items()],
            }
        ],
    }
    return load_config(raw, args_types=registry.args_types(), release=release)


def new_framework(
    plugins: Sequence[PluginFactory | str] | KubeSchedulerConfiguration | Mapping[str, Any] | str,
    nodes: Sequence[dict[str, Any]] = (),
    pods: Sequence[dict[str, Any]] = (),
    *,
    args: Mapping[str, Any] | None = None,
    objects: Sequence[dict[str, Any]] = (),
    clock: VirtualClock | None = None,
    start: float = DEFAULT_START,
    profile: str | None = None,
    registry: Registry | None = None,
    seed: int = 0,
    release: Release | None = None,
    feature_gates: FeatureGates | None = None,
) -> TestFramework:
    """Build a framework from plugin classes/factories (or names), or from a whole configuration.

    ``plugins``: plugin classes or factories (registered under their ``name``), names of registered
    plugins, a KubeSchedulerConfiguration, a config dict, or a config file path. PrioritySort and
    DefaultBinder are added for you. ``args``: plugin name -> args dict. ``pods`` with
    ``spec.nodeName`` are bound; others are queued. ``objects``: any other kinds (Namespaces, ...).
    ``release``: the kube-scheduler release to behave as (``--emulated-version``; default
    :data:`~kubesched.config.releases.DEFAULT_RELEASE`); a KubeSchedulerConfiguration passed in
    keeps the release it was loaded for. ``feature_gates``: as ``--feature-gates`` (e.g.
    ``parse_feature_gates(["OpportunisticBatching=false"], "1.37")``); every gate at its default if None.
    """
    reg = registry.copy() if registry is not None else default_registry(entry_points=False)
    rel = release or DEFAULT_RELEASE
    if isinstance(plugins, KubeSchedulerConfiguration):
        config = plugins
    elif isinstance(plugins, Mapping | str):
        config = load_config(plugins, args_types=reg.args_types(), release=rel)
    else:
        config = _profile_config(plugins, args, profile or "default-scheduler", reg, rel)
    sim = new_simulation(config, reg, start=start, seed=seed, clock=clock, feature_gates=feature_gates)
    cluster = sim.cluster
    for o in objects:
        cluster.create_object(str(o.get("apiVersion", "")), str(o.get("kind", "")), o)
    for n in nodes:
        cluster.add_node(n)
    for p in pods:
        admit_pod(p, {}, 0)
        cluster.create_pod(p)
    return TestFramework(sim.scheduler, cluster, sim.clock, profile or config.profiles[0].scheduler_name)
