"""Gang scheduling end to end on the simulated cluster (Coscheduling, docs/gang.md).

Expected times are hand-computed on the virtual clock (start 2026-01-01T00:00:00Z) from the
manifests: requests, durations, arrivals and the PodGroups' minMember and scheduleTimeoutSeconds.
The invariant every test checks: a gang is never half-started, i.e. the members of a PodGroup are
bound in one go, at least minMember of them, or not at all.
"""

from __future__ import annotations

import copy
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kubesched.config.load import load_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.plugins.coscheduling import POD_GROUP_LABEL
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, ClusterObjects, admit_pod, load_manifests
from kubesched.sim.runner import DEFAULT_START, SimResult, simulate
from kubesched.testing import make_node, make_pod, new_framework

T0 = DEFAULT_START
REGISTRY = default_registry(entry_points=False)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gang"
PG_API = "scheduling.x-k8s.io/v1alpha1"


def config(**args: Any) -> KubeSchedulerConfiguration:
    return load_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                    },
                    "pluginConfig": [{"name": "Coscheduling", "args": args}],
                }
            ]
        },
        args_types=REGISTRY.args_types(),
    )


def pod_group(name: str, min_member: int, timeout: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {"apiVersion": PG_API, "kind": "PodGroup", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod(
    name: str,
    cpu: str,
    group: str | None = None,
    duration: str | None = None,
    arrival: str | None = None,
    node: str | None = None,
) -> dict[str, Any]:
    w = make_pod(name).req(cpu=cpu)
    if node:
        w = w.node(node)
    if group:
        w = w.label(POD_GROUP_LABEL, group)
    if duration:
        w = w.annotation(DURATION_ANNOTATION, duration)
    if arrival:
        w = w.annotation(ARRIVAL_ANNOTATION, arrival)
    p = w.obj()
    admit_pod(p, {}, 0)
    return p


def run(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], groups: list[dict[str, Any]], **args: Any
) -> SimResult:
    objs = ClusterObjects(nodes=nodes, pods=pods, others={(PG_API, "PodGroup"): groups})
    return simulate(objs, config(**args), REGISTRY, progress=_guard)


def _guard(sched: Any) -> None:
    """Fail, rather than hang, if a gang loops (one member waiting while the next fails, forever)."""
    if sched.stats.attempts > 1000:
        raise AssertionError(f"{sched.stats.attempts} scheduling attempts: a gang is looping")


def bound_at(result: SimResult) -> dict[str, float | None]:
    return {p["name"]: (None if p["boundAt"] is None else p["boundAt"] - T0) for p in result.pods}


def assert_never_half_started(result: SimResult, min_members: dict[str, int]) -> None:
    """Every instant at which members of a group were bound binds at least minMember of them, and
    no member is left waiting at Permit. Members are named ``<group>-<i>``."""
    binds: dict[str, dict[float, int]] = defaultdict(lambda: defaultdict(int))
    for p in result.pods:
        group = p["name"].rsplit("-", 1)[0]
        if group in min_members and p["boundAt"] is not None:
            binds[group][p["boundAt"]] += 1
    for group, at in binds.items():
        for t, n in at.items():
            assert n >= min_members[group], f"{group}: {n} members bound at {t - T0}s, minMember {min_members[group]}"
    assert not [wp for fw in result.scheduler.frameworks.values() for wp in _waiting(fw)], "members left waiting"


def _waiting(fw: Any) -> list[Any]:
    out: list[Any] = []
    fw.waiting_pods.iterate(out.append)
    return out


def pod_groups(result: SimResult) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o.get("status") or {} for o in result.cluster.list_objects(PG_API, "PodGroup")}


# ------------------------------------------------------------------------------------------------
def test_example() -> None:
    """examples/gang: 16 CPUs. etl (2 x 2 CPUs, 10 min) and the inference gang (3 x 1 CPU) start at
    once; the training gang (10 x 1 CPU, timeout 30 s) finds 9 CPUs: nine members wait, the tenth is
    within 10 % of the quorum, the wait times out at 00:00:30 and all nine are released; the gang is
    bound together at 00:10 when etl completes. analytics (4 x 3 CPUs, arriving at 00:20) finds 3
    CPUs split over two nodes, is rejected at once, and is bound together at 00:30 when training
    completes (20 min)."""
    cfg_path = EXAMPLE / "scheduler-config.yaml"
    cfg = load_config(cfg_path, args_types=REGISTRY.args_types())
    objs = load_manifests([EXAMPLE], skip={cfg_path.resolve()})
    result = simulate(objs, cfg, REGISTRY, progress=_guard)
    expected = {"etl-1": 0, "etl-2": 0} | {f"inference-{i}": 0 for i in range(3)}
    expected |= {f"training-{i}": 600 for i in range(10)} | {f"analytics-{i}": 1800 for i in range(4)}
    assert bound_at(result) == expected
    assert all(n == 1 for n in result.cluster.bind_count.values())
    timeouts = sorted(
        e.name for e in result.events
        if e.reason == "FailedScheduling" and e.time == T0 + 30
        and e.note == "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Coscheduling."
    )  # fmt: skip
    assert timeouts == [f"training-{i}" for i in range(9)]
    assert pod_groups(result) == {
        "inference": {"phase": "Scheduled", "scheduled": 3, "scheduleStartTime": "2026-01-01T00:00:00Z"},
        "training": {"phase": "Scheduled", "scheduled": 10, "scheduleStartTime": "2026-01-01T00:00:00Z"},
        "analytics": {"phase": "Scheduled", "scheduled": 4, "scheduleStartTime": "2026-01-01T00:30:00Z"},
    }


def test_a_gang_that_cannot_fit_never_half_starts() -> None:
    """Two nodes of 4 CPUs hold two of three 3-CPU members: the first waits, the second fits
    nowhere, PostFilter releases the first; nothing is bound and the run ends (no endless retry of
    one member waiting while the next fails)."""
    nodes = [make_node(f"n{i}").capacity(cpu="4").obj() for i in range(2)]
    result = run(nodes, [pod(f"gang-{i}", "3", "gang") for i in range(3)], [pod_group("gang", 3)])
    assert bound_at(result) == {"gang-0": None, "gang-1": None, "gang-2": None}
    assert result.cluster.bind_count == {}
    assert result.scheduler.stats.attempts <= 6
    result.scheduler.cache.update_snapshot(result.scheduler.snapshot)
    assert [ni.requested.milli_cpu for ni in result.scheduler.snapshot.list()] == [0, 0]
    assert pod_groups(result)["gang"]["phase"] == "Scheduling"
    assert_never_half_started(result, {"gang": 3})


def test_a_released_gang_fits_when_capacity_frees() -> None:
    """A 6-CPU node running a 2-CPU pod for 60 s: gang a (2 x 3 CPUs) cannot fit and is parked;
    when the pod completes it is bound, both members at 60 s."""
    nodes = [make_node("n").capacity(cpu="6").obj()]
    pods = [pod("other", "2", duration="60s", node="n"), pod("a-0", "3", "a"), pod("a-1", "3", "a")]
    result = run(nodes, pods, [pod_group("a", 2)])
    assert bound_at(result) == {"other": None, "a-0": 60, "a-1": 60}
    assert_never_half_started(result, {"a": 2})


def test_two_stuck_gangs_do_not_wake_each_other_forever() -> None:
    """Gangs a and b each need the whole 6-CPU node; while a 2-CPU pod runs neither fits. At 60 s a
    (the first PodGroup by name, both created at once) is bound; b waits for a to complete."""
    nodes = [make_node("n").capacity(cpu="6").obj()]
    pods = [pod("other", "2", duration="60s", node="n")]
    pods += [pod(f"{g}-{i}", "3", g, duration="100s") for g in ("a", "b") for i in range(2)]
    result = run(nodes, pods, [pod_group("a", 2), pod_group("b", 2)])
    assert bound_at(result) == {"other": None, "a-0": 60, "a-1": 60, "b-0": 160, "b-1": 160}
    assert result.scheduler.stats.attempts <= 30
    assert_never_half_started(result, {"a": 2, "b": 2})


def test_gang_released_after_its_timeout_then_bound() -> None:
    """Member m2 is held back by a scheduling gate: m0 and m1 wait at Permit and are released when
    the group's 20 s timeout expires, on the virtual clock. Once the gate is removed (at 100 s) the
    gang is bound, all three at once."""
    node = make_node("n").capacity(cpu="8").obj()
    gated = make_pod("m2").label(POD_GROUP_LABEL, "pg").scheduling_gates("example.com/hold").obj()
    fw = new_framework(
        config(),
        nodes=[node],
        objects=[pod_group("pg", 3, timeout=20)],
        pods=[make_pod(f"m{i}").label(POD_GROUP_LABEL, "pg").obj() for i in range(2)] + [gated],
    )
    fw.schedule(until=T0 + 19)
    assert sorted(_name(wp) for wp in _waiting(fw.framework)) == ["m0", "m1"]
    fw.schedule(until=T0 + 20)
    assert _waiting(fw.framework) == []
    notes = {e.name: e.note for e in fw.cluster.events if e.reason == "FailedScheduling" and e.time == T0 + 20}
    assert notes == {
        "m0": "0/1 nodes are available: 1 rejected due to timeout after waiting 20s at plugin Coscheduling.",
        "m1": "0/1 nodes are available: 1 rejected due to timeout after waiting 20s at plugin Coscheduling.",
    }
    fw.schedule(until=T0 + 100)
    assert fw.cluster.bind_count == {}
    fw.clock.advance_to(T0 + 100)
    old = fw.cluster.pods["default/m2"]
    new = copy.deepcopy(old)
    del new["spec"]["schedulingGates"]
    fw.cluster.pods["default/m2"] = new
    fw.scheduler.on_pod_update(old, new)
    fw.schedule()
    assert {k: v - T0 for k, v in fw.scheduler.stats.bound_at.items()} == {
        p["metadata"]["uid"]: 100 for p in fw.cluster.pods.values()
    }
    assert len(fw.scheduler.stats.bound_at) == 3


def _name(wp: Any) -> str:
    return str(wp.pod_info.name)


def test_group_backoff_ends_with_a_timer() -> None:
    """podGroupBackoffSeconds 20: gang a fails at 0 s and is backed off; the 2-CPU pod completes at
    10 s, inside the window, where PreFilter still turns the gang away; the window's end (a timer
    event) brings it back and it is bound at 20 s."""
    nodes = [make_node("n").capacity(cpu="4").obj()]
    pods = [pod("other", "3", duration="10s", node="n"), pod("a-0", "1", "a"), pod("a-1", "1", "a")]
    result = run(nodes, pods, [pod_group("a", 2)], podGroupBackoffSeconds=20)
    assert bound_at(result) == {"other": None, "a-0": 20, "a-1": 20}
    notes = [e.note for e in result.events if e.reason == "FailedScheduling" and e.time == T0 + 10]
    assert notes and all("podGroup default/a failed recently" in n for n in notes)
    assert_never_half_started(result, {"a": 2})


def test_gang_members_arriving_over_time() -> None:
    """Members arrive at 0, 30 and 60 s; the first two wait outside activeQ (PreEnqueue) until the
    third arrives, then all three are bound at 60 s."""
    nodes = [make_node("n").capacity(cpu="4").obj()]
    pods = [pod(f"pg-{i}", "1", "pg", arrival=f"{30 * i}s") for i in range(3)]
    result = run(nodes, pods, [pod_group("pg", 3)])
    assert bound_at(result) == {"pg-0": 60, "pg-1": 60, "pg-2": 60}
    assert result.scheduler.stats.attempts == 3


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_gangs_never_half_start(seed: int) -> None:
    """Random gangs (exactly minMember pods each, random sizes, arrivals and durations) on a small
    cluster: each gang is bound all at once or not at all, and the run ends."""
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}").capacity(cpu="8").obj() for i in range(3)]
    pods, groups, mins = [], [], {}
    for g in range(8):
        size = rng.randint(2, 6)
        cpu = rng.choice(["1", "2", "3"])
        arrival = f"{rng.randint(0, 300)}s"
        duration = f"{rng.randint(30, 600)}s"
        name = f"g{g}"
        groups.append(pod_group(name, size, timeout=rng.choice([None, 10, 60])))
        mins[name] = size
        pods += [pod(f"{name}-{i}", cpu, name, duration=duration, arrival=arrival) for i in range(size)]
    pods += [pod(f"solo-{i}", "2", duration="120s", arrival=f"{rng.randint(0, 300)}s") for i in range(4)]
    result = run(nodes, pods, groups)
    assert_never_half_started(result, mins)
    assert all(n == 1 for n in result.cluster.bind_count.values())
    # Every gang fits the empty cluster, and pods complete: all are bound eventually.
    assert all(p["boundAt"] is not None for p in result.pods)
