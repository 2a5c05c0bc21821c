"""The benchmark workloads, modelled on kube-scheduler's scheduler_perf test cases.

Shapes come from ``test/integration/scheduler_perf`` (``misc/``, ``affinity/`` and the older
monolithic ``config/performance-config.yaml``, with ``templates/``): every node is
``node-default.yaml`` (4 CPU, 32Gi, 110 pods; no taints, no images), every pod a ``pause`` container
requesting ``100m``/``500Mi`` unless the test case says otherwise, and each workload creates
nodes, then *init* pods (scheduled before the clock starts), then the *measured* pods.

Where we differ, and why:

* Nodes carry ``kubernetes.io/hostname`` (as a kubelet would set it), so the hostname-keyed
  (anti-)affinity terms have a topology to act on. ``labelNodePrepareStrategy`` zones are given
  round-robin rather than at random, so runs are reproducible.
* **Unschedulable**: upstream injects a high-priority 9-CPU pod every 200 ms while the measured pods
  flow; we interleave one such pod after every ``UNSCHEDULABLE_EVERY`` measured pods, so the pool
  of pods that never fit grows with the run (1000 pending pods by the end of a 10000-pod run) on
  the simulator's virtual clock as on a real one.
* **GpuTrace** is not in scheduler_perf: the Alibaba GPU trace replayed with the GpuShare plugin
  (:class:`TraceWorkload`).
* **HostPortReplicas** is not in scheduler_perf either: the replicas of one Deployment with a host
  port (one pod a node) under a profile whose PodTopologySpread has ``defaultingType: List``, the
  shape where OpportunisticBatching applies (:class:`BatchableWorkload`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.registry import Registry

Obj = dict[str, Any]
#: ``factory(namespace, name) -> pod``: a fresh object each call (plugins cache parses per object).
PodFactory = Callable[[str, str], Obj]

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
#: One never-schedulable pod after this many measured pods (Unschedulable workload).
UNSCHEDULABLE_EVERY = 10


@dataclass(frozen=True)
class Size:
    nodes: int
    init_pods: int
    pods: int


@dataclass(frozen=True)
class Workload:
    """One test case: how to build its nodes and pods, and the size upstream measures it at."""

    name: str
    summary: str
    default_size: Size
    measured_pod: PodFactory
    init_pod: PodFactory
    init_namespace: str = "default"
    measured_namespace: str = "default"
    #: Namespaces to create first (besides ``default``).
    namespaces: tuple[str, ...] = ()
    #: Zone label values given to the nodes round-robin (none: no zone label).
    zones: tuple[str, ...] = ()
    #: A pod that never fits, created after every ``interleave_every`` measured pods; not measured.
    interleave_pod: PodFactory | None = None
    interleave_every: int = 0
    #: Extra (api_version, kind, object) to create before the nodes (PriorityClasses...).
    objects: tuple[tuple[str, str, Obj], ...] = field(default=())

    #: Only the simulator can run it (a profile kube-scheduler does not have).
    sim_only = False

    def scheduler_config(
        self, registry: Registry, release: Release = DEFAULT_RELEASE
    ) -> KubeSchedulerConfiguration | None:
        """The configuration to schedule with (as ``release`` loads it); None: kube-scheduler's defaults."""
        return None

    def node(self, i: int) -> Obj:
        return make_node(f"node-{i}", self.zones[i % len(self.zones)] if self.zones else None)

    def nodes(self, n: int) -> Iterator[Obj]:
        for i in range(n):
            yield self.node(i)

    def init_pods(self, n: int) -> Iterator[Obj]:
        for i in range(n):
            yield self.init_pod(self.init_namespace, f"init-{i}")

    def measured_pods(self, n: int, *, after: int = 0) -> Iterator[tuple[Obj, bool]]:
        """(pod, measured) in creation order: the measured pods with the interleaved ones
        (``after``: how many init pods came first, for workloads that draw both from one sequence)."""
        for i in range(n):
            yield self.measured_pod(self.measured_namespace, f"pod-{i}"), True
            if self.interleave_pod is not None and self.interleave_every and (i + 1) % self.interleave_every == 0:
                yield self.interleave_pod(self.measured_namespace, f"unschedulable-{i // self.interleave_every}"), False


# ------------------------------------------------------------------------------------------------
# objects


def make_node(name: str, zone: str | None = None, *, cpu: str = "4", memory: str = "32Gi", pods: str = "110") -> Obj:
    """``templates/node-default.yaml`` with allocatable = capacity (no kubelet reservations)."""
    labels = {HOSTNAME_LABEL: name}
    if zone is not None:
        labels[ZONE_LABEL] = zone
    resources = {"pods": pods, "cpu": cpu, "memory": memory}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def pause_pod(
    namespace: str,
    name: str,
    *,
    cpu: str = "100m",
    memory: str = "500Mi",
    limits: bool = True,
    labels: dict[str, str] | None = None,
    priority: int | None = None,
    affinity: Obj | None = None,
    spread: list[Obj] | None = None,
) -> Obj:
    """A ``pause`` pod as scheduler_perf's templates write them (one container, port 80)."""
    resources: Obj = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        resources["limits"] = {"cpu": cpu, "memory": memory}
    spec: Obj = {
        "containers": [
            {"name": "pause", "image": PAUSE_IMAGE, "ports": [{"containerPort": 80}], "resources": resources}
        ],
        "schedulerName": "default-scheduler",
    }
    if priority is not None:
        spec["priority"] = priority
    if affinity is not None:
        spec["affinity"] = affinity
    if spread is not None:
        spec["topologySpreadConstraints"] = spread
    metadata: Obj = {"name": name, "namespace": namespace, "uid": f"{namespace}.{name}"}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _default_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-default.yaml``."""
    return pause_pod(namespace, name)


def _term(color: str, topology_key: str) -> Obj:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": topology_key,
        "namespaces": ["sched-1", "sched-0"],
    }


def _anti_affinity_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-with-pod-anti-affinity.yaml``."""
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOSTNAME_LABEL)]}}
    return pause_pod(namespace, name, labels={"color": "green"}, affinity=affinity)


def _affinity_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-with-pod-affinity.yaml``."""
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE_LABEL)]}}
    return pause_pod(namespace, name, labels={"color": "blue"}, affinity=affinity)


def _preferred_affinity_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-with-preferred-pod-affinity.yaml``."""
    term = {"podAffinityTerm": _term("red", HOSTNAME_LABEL), "weight": 1}
    affinity = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pause_pod(namespace, name, labels={"color": "red"}, affinity=affinity)


def _node_affinity_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-with-node-affinity.yaml``."""
    expr = {"key": ZONE_LABEL, "operator": "In", "values": ["zone1", "zone2"]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}
        }
    }
    return pause_pod(namespace, name, affinity=affinity)


def _spreading_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-with-topology-spreading.yaml``."""
    spread = [
        {
            "maxSkew": 5,
            "topologyKey": ZONE_LABEL,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ]
    return pause_pod(namespace, name, labels={"color": "blue"}, spread=spread)


def _low_priority_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-low-priority.yaml``: four of them fill 3.6 of a node's 4 CPUs; no grace
    period, so a preempted one is gone at once even without a kubelet."""
    pod = pause_pod(namespace, name, cpu="900m")
    pod["spec"]["terminationGracePeriodSeconds"] = 0
    return pod


def _high_priority_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-high-priority.yaml``: needs 3 CPUs, so three low-priority victims per node."""
    return pause_pod(namespace, name, cpu="3000m", priority=10)


def _high_priority_large_cpu_pod(namespace: str, name: str) -> Obj:
    """``templates/pod-high-priority-large-cpu.yaml``: 9 CPUs, more than any node has."""
    return pause_pod(namespace, name, cpu="9", limits=False, priority=10)


def _host_port_pod(namespace: str, name: str) -> Obj:
    """A replica of a Deployment that takes host port 8080: at most one a node."""
    pod = pause_pod(namespace, name, labels={"app": "web"})
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return pod


def _unused_pod(namespace: str, name: str) -> Obj:
    raise NotImplementedError("trace workloads build their pods from the trace")


#: Where the Alibaba GPU trace is (``KUBESCHED_ALIBABA_TRACE`` overrides): ../shared/data next to the repository.
TRACE_ENV = "KUBESCHED_ALIBABA_TRACE"
TRACE_NODES = "openb_node_list_gpu_node.csv"
TRACE_PODS = "openb_pod_list_default.csv"
TRACE_SEED = 42
TRACE_POLICY = "FGD"


def trace_dir() -> Path:
    env = os.environ.get(TRACE_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[4] / "shared" / "data" / "alibaba-gpu-v2023"


@dataclass(frozen=True)
class TraceWorkload(Workload):
    """GpuTrace: the Alibaba GPU trace (FGD paper's default workload, ``openb_pod_list_default``) in
    its arrival order for seed 42 with tune 1.3, scheduled by GpuShare's FGD policy (the profile of
    ``kubesched trace alibaba-gpu``: NodeResourcesFit + GpuShare). Nodes are the trace's GPU nodes in
    their tie-break order (``--nodes`` takes the first ones); init pods are the first arrivals,
    measured pods the next ones. A pod that fits nowhere stays pending (the paper deletes it)."""

    sim_only = True

    def _arrival(self) -> Any:
        return _load_arrival()

    def scheduler_config(
        self, registry: Registry, release: Release = DEFAULT_RELEASE
    ) -> KubeSchedulerConfiguration | None:
        from kubesched.sim.trace import replay_config, typical_pod_args

        return replay_config(TRACE_POLICY, typical_pod_args(self._arrival().trace), registry, release=release)

    def nodes(self, n: int) -> Iterator[Obj]:
        from kubesched.sim.alibaba import manifests

        node_objs, _ = manifests(self._arrival())
        ordered = sorted(node_objs, key=lambda o: str(o["metadata"]["name"]))
        if n > len(ordered):
            raise ValueError(f"{self.name}: the trace has {len(ordered)} nodes, not {n}")
        yield from ordered[:n]

    def _pods(self, start: int, n: int) -> list[Obj]:
        from kubesched.sim.alibaba import pod_manifest

        seq = self._arrival().sequence
        if start + n > len(seq):
            raise ValueError(f"{self.name}: the trace's arrival has {len(seq)} pods, not {start + n}")
        out = []
        for p in seq[start : start + n]:
            obj = pod_manifest(p)
            md = obj["metadata"]
            md["uid"] = f"trace-{md['name']}"
            obj["spec"]["priority"] = 0
            obj["spec"].setdefault("schedulerName", "default-scheduler")
            out.append(obj)
        return out

    def init_pods(self, n: int) -> Iterator[Obj]:
        yield from self._pods(0, n)

    def measured_pods(self, n: int, *, after: int = 0) -> Iterator[tuple[Obj, bool]]:
        for pod in self._pods(after, n):
            yield pod, True


_ARRIVAL: list[Any] = []


class BatchableWorkload(Workload):
    """A workload whose pods OpportunisticBatching can sign: kube-scheduler's default profile with
    PodTopologySpread's ``defaultingType: List`` and no default constraints (the system defaults
    make every pod unsignable). Simulator only: the API-server harness runs the default profile."""

    sim_only = True

    def scheduler_config(
        self, registry: Registry, release: Release = DEFAULT_RELEASE
    ) -> KubeSchedulerConfiguration | None:
        from kubesched.config.load import load_config

        return load_config(BATCHABLE_CONFIG, args_types=registry.args_types(), release=release)


#: The profile of :class:`BatchableWorkload`.
BATCHABLE_CONFIG: Obj = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}],
    }],
}


def _load_arrival() -> Any:
    """The trace's arrival sequence, loaded once per process."""
    if not _ARRIVAL:
        from kubesched.sim.alibaba import prepare

        d = trace_dir()
        if not (d / TRACE_PODS).is_file():
            raise ValueError(f"GpuTrace: Alibaba trace not found in {d} (set {TRACE_ENV})")
        _ARRIVAL.append(prepare(d / TRACE_NODES, d / TRACE_PODS, TRACE_SEED))
    return _ARRIVAL[0]


_SCHED_NS = ("sched-0", "sched-1")

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "SchedulingBasic",
            "pod-default pods on node-default nodes (misc/performance-config.yaml)",
            Size(5000, 1000, 10000),
            measured_pod=_default_pod,
            init_pod=_default_pod,
        ),
        Workload(
            "SchedulingPodAntiAffinity",
            "required anti-affinity on hostname among all pods (affinity/performance-config.yaml)",
            Size(5000, 1000, 2000),
            measured_pod=_anti_affinity_pod,
            init_pod=_anti_affinity_pod,
            init_namespace="sched-0",
            measured_namespace="sched-1",
            namespaces=_SCHED_NS,
        ),
        Workload(
            "SchedulingPodAffinity",
            "required affinity to the pods' zone, every node in zone1",
            Size(5000, 5000, 5000),
            measured_pod=_affinity_pod,
            init_pod=_affinity_pod,
            init_namespace="sched-0",
            measured_namespace="sched-1",
            namespaces=_SCHED_NS,
            zones=("zone1",),
        ),
        Workload(
            "SchedulingPreferredPodAffinity",
            "preferred affinity (weight 1) to the pods' hostname",
            Size(5000, 5000, 5000),
            measured_pod=_preferred_affinity_pod,
            init_pod=_preferred_affinity_pod,
            init_namespace="sched-0",
            measured_namespace="sched-1",
            namespaces=_SCHED_NS,
        ),
        Workload(
            "SchedulingNodeAffinity",
            "required node affinity zone In (zone1, zone2), every node in zone1",
            Size(5000, 5000, 10000),
            measured_pod=_node_affinity_pod,
            init_pod=_node_affinity_pod,
            zones=("zone1",),
        ),
        Workload(
            "TopologySpreading",
            "maxSkew 5 DoNotSchedule over three zones, after pod-default init pods",
            Size(5000, 5000, 2000),
            measured_pod=_spreading_pod,
            init_pod=_default_pod,
            zones=("moon-1", "moon-2", "moon-3"),
        ),
        Workload(
            "PreemptionBasic",
            "each high-priority pod preempts three of a node's four low-priority pods",
            Size(1000, 4000, 1000),
            measured_pod=_high_priority_pod,
            init_pod=_low_priority_pod,
        ),
        Workload(
            "Unschedulable",
            f"pod-default pods flowing past a growing pool of 9-CPU pods (one per {UNSCHEDULABLE_EVERY})",
            Size(5000, 100, 10000),
            measured_pod=_default_pod,
            init_pod=_default_pod,
            interleave_pod=_high_priority_large_cpu_pod,
            interleave_every=UNSCHEDULABLE_EVERY,
        ),
        BatchableWorkload(
            "HostPortReplicas",
            "one Deployment's replicas with a host port, one a node; batchable (simulator only)",
            Size(3000, 0, 3000),
            measured_pod=_host_port_pod,
            init_pod=_host_port_pod,
        ),
        TraceWorkload(
            "GpuTrace",
            "the Alibaba GPU trace (FGD paper) with GpuShare's FGD policy (simulator only)",
            Size(1213, 2000, 4000),
            measured_pod=_unused_pod,
            init_pod=_unused_pod,
        ),
    )
}


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
