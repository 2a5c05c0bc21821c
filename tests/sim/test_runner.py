"""The simulation runner: arrivals, durations, determinism, the end of a run, ``--until``.

Expected times are hand-computed on the virtual clock (start 2026-01-01T00:00:00Z); scheduling
behaviour follows upstream's NodeResourcesFit and backoff (pkg/scheduler/backend/queue).
"""

from __future__ import annotations

from typing import Any

from kubesched.config.load import load_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import ARRIVAL_ANNOTATION, DURATION_ANNOTATION, ClusterObjects, admit_pod
from kubesched.sim.runner import DEFAULT_START, SimResult, simulate
from kubesched.testing import make_node, make_pod

T0 = DEFAULT_START  # 2026-01-01T00:00:00Z
REGISTRY = default_registry(entry_points=False)


def config() -> KubeSchedulerConfiguration:
    enabled = [{"name": n} for n in ("PrioritySort", "DefaultBinder", "NodeResourcesFit")]
    return load_config({"profiles": [{"plugins": {"multiPoint": {"enabled": enabled,
                                                                 "disabled": [{"name": "*"}]}}}]},
                       args_types=REGISTRY.args_types())


def pod(name: str, cpu: str = "1", arrival: str | None = None, duration: str | None = None) -> dict[str, Any]:
    w = make_pod(name).req(cpu=cpu)
    if arrival is not None:
        w = w.annotation(ARRIVAL_ANNOTATION, arrival)
    if duration is not None:
        w = w.annotation(DURATION_ANNOTATION, duration)
    p = w.obj()
    admit_pod(p, {}, 0)
    return p


def objects(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> ClusterObjects:
    return ClusterObjects(nodes=nodes, pods=pods)


def run(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], **kw: Any) -> SimResult:
    return simulate(objects(nodes, pods), config(), REGISTRY, **kw)


def by_name(result: SimResult) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result.pods}


def test_arrival_offsets_and_absolute_times() -> None:
    nodes = [make_node("n1").capacity(cpu="8").obj()]
    pods = [pod("now"), pod("later", arrival="30s"), pod("much-later", arrival="2m"),
            pod("absolute", arrival="2026-01-01T00:05:00Z")]
    res = by_name(run(nodes, pods))
    assert {n: p["createdAt"] - T0 for n, p in res.items()} == {
        "now": 0, "later": 30, "much-later": 120, "absolute": 300}
    assert {n: p["boundAt"] - T0 for n, p in res.items()} == {
        "now": 0, "later": 30, "much-later": 120, "absolute": 300}


def test_durations_free_nodes_for_waiting_pods() -> None:
    nodes = [make_node("n1").capacity(cpu="1").obj()]
    pods = [pod("a", duration="60s"), pod("b", arrival="10s", duration="1m")]
    result = run(nodes, pods)
    res = by_name(result)
    assert res["a"]["boundAt"] - T0 == 0
    assert (res["a"]["deletedAt"] - T0, res["a"]["deletedReason"]) == (60, "Completed")
    # b waits for a's cpu, told why, and is bound the moment a completes.
    assert [(e.time - T0, e.note) for e in result.events if e.name == "b" and e.reason == "FailedScheduling"] == [
        (10, "0/1 nodes are available: 1 Insufficient cpu.")]
    assert (res["b"]["node"], res["b"]["boundAt"] - T0) == ("n1", 60)
    assert res["b"]["deletedAt"] - T0 == 120
    # The run ends with the last thing that happened: b's completion.
    assert result.end - T0 == 120
    # Both ran and completed: neither is bound at the end (issue 11: bound counts only those).
    assert result.summary() == {"pods": 2, "bound": 0, "pending": 0, "preempted": 0, "completed": 2, "deleted": 0}


def _many() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [make_node(f"n{i}").capacity(cpu="1").obj() for i in range(8)]
    pods = [pod(f"p{i}", arrival=f"{i}s", duration=f"{5 + 3 * i}s") for i in range(12)]
    return nodes, pods


def test_deterministic_for_a_seed() -> None:
    first = run(*_many(), seed=7)
    second = run(*_many(), seed=7)
    assert first.to_json() == second.to_json()
    assert [(e.time, e.name, e.reason, e.note) for e in first.events] == [
        (e.time, e.name, e.reason, e.note) for e in second.events]


def test_the_seed_drives_tie_breaks() -> None:
    placements = {seed: tuple(p["node"] for p in run(*_many(), seed=seed).pods) for seed in range(4)}
    assert len(set(placements.values())) > 1
    node_order = run(*_many(), seed=1, tie_break="node-order")
    assert node_order.pods[0]["node"] == "n0"


def test_ends_when_nothing_can_change() -> None:
    nodes = [make_node("n1").capacity(cpu="1").obj()]
    result = run(nodes, [pod("fits"), pod("too-big", cpu="2", arrival="5s")])
    res = by_name(result)
    assert res["fits"]["node"] == "n1"
    assert res["too-big"]["node"] is None
    assert res["too-big"]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    # Only the unschedulable pool's housekeeping is left: the run stops at the last event.
    assert result.end - T0 == 5
    assert result.summary() == {"pods": 2, "bound": 1, "pending": 1, "preempted": 0, "completed": 0, "deleted": 0}


def test_ends_without_nodes() -> None:
    result = run([], [pod("p")])
    assert result.summary() == {"pods": 1, "bound": 0, "pending": 1, "preempted": 0, "completed": 0, "deleted": 0}
    assert by_name(result)["p"]["message"] == "no nodes available to schedule pods"
    # retried after 1, 2, 4 and 8 s of error backoff, then nothing can change any more
    assert result.end - T0 == 15


def test_until_stops_the_clock() -> None:
    nodes = [make_node("n1").capacity(cpu="2").obj()]
    pods = [pod("a", duration="30m"), pod("b", arrival="10m"), pod("c", arrival="2h")]
    result = run(nodes, pods, until=T0 + 3600)
    res = by_name(result)
    assert result.end == T0 + 3600
    assert set(res) == {"a", "b"}  # c arrives after the end
    assert res["a"]["deletedAt"] - T0 == 1800
    assert (res["b"]["boundAt"] - T0, res["b"]["deletedAt"]) == (600, None)


def test_until_before_the_first_event() -> None:
    result = run([make_node("n1").capacity(cpu="1").obj()], [pod("late", arrival="1h")], until=T0 + 60)
    assert result.pods == []
    assert result.end == T0 + 60


def test_to_json_reports_rfc3339_times() -> None:
    result = run([make_node("n1").capacity(cpu="1").obj()], [pod("p", arrival="90s")])
    assert result.to_json()["pods"] == [{
        "namespace": "default", "name": "p", "state": "bound", "node": "n1", "boundAt": "2026-01-01T00:01:30Z",
        "message": None, "arrivedAt": "2026-01-01T00:01:30Z", "attempts": 1,
        "firstAttemptAt": "2026-01-01T00:01:30Z", "lastAttemptAt": "2026-01-01T00:01:30Z", "endedAt": None,
        "preemptedBy": None, "waited": [],
    }]


def test_a_pod_name_reused_after_completion_is_scheduled_again() -> None:
    # Same namespace/name, so the simulator gives both the same UID, as a controller re-creating
    # a finished pod under its old name would; the second one must still be scheduled.
    nodes = [make_node("n1").capacity(cpu="1").obj()]
    result = run(nodes, [pod("job", duration="10s"), pod("job", arrival="20s", duration="10s")])
    scheduled = [(e.time - T0, e.name) for e in result.events if e.reason == "Scheduled"]
    assert scheduled == [(0, "job"), (20, "job")]
    assert result.end - T0 == 30
