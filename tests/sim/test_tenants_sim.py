"""examples/tenants in whole runs: TenantIsolation and CapacityScheduling with the queue, both cycles,
preemption and pod completions on the virtual clock.

The scenario (examples/tenants/*.yaml), worked out by hand:

* 4 shared nodes of 4 CPU (16 CPU = the sum of the two quotas' min, 8 each) and sandbox-1 (4 CPU),
  dedicated to the sandbox namespace, which has no tenant label: it is its own tenant.
* t=0: team-a's 6 workers (2 CPU each, 12 = its max) go to the shared nodes only, borrowing 4 CPU
  of team-b's idle guarantee; worker-7 would exceed the max (14 > 12). The notebook (1 CPU) takes
  the empty sandbox-1.
* t=10m: team-b's 4 jobs (8 CPU, its min) arrive: the shared nodes have 4 CPU free, so 2 fit and
  2 preempt one borrowed team-a worker each (team-a: 12 -> 8, back to its min). sandbox-1's free
  room is not theirs. worker-7 now fails on the sum of mins (8 + 8 + 2 > 16).
* t=40m: the jobs complete (30m); worker-7 borrows again and runs: team-a uses 10 CPU.

The unit-level tests are tests/plugins/test_capacity_scheduling.py and test_tenant_isolation.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.config.load import load_config
from kubesched.plugins.capacityscheduling.elasticquota import parse_elastic_quota
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import load_manifests
from kubesched.sim.runner import SimResult, simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tenants"
CONFIG = EXAMPLE / "scheduler-config.yaml"
MINUTE = 60.0
SHARED = {"shared-1", "shared-2", "shared-3", "shared-4"}


def run(seed: int = 0) -> SimResult:
    reg = default_registry(entry_points=False)
    config = load_config(str(CONFIG), args_types=reg.args_types())
    objects = load_manifests([EXAMPLE], skip={CONFIG.resolve()})
    return simulate(objects, config, reg, seed=seed)


@pytest.fixture(scope="module", params=[0, 1, 2])
def result(request: pytest.FixtureRequest) -> SimResult:
    return run(seed=request.param)


def pods(r: SimResult) -> dict[str, dict[str, Any]]:
    return {f"{p['namespace']}/{p['name']}": p for p in r.pods}


def at(r: SimResult, p: dict[str, Any], key: str) -> float | None:
    return None if p[key] is None else p[key] - r.start


def failures(r: SimResult, key: str) -> list[tuple[float, str]]:
    ns, name = key.split("/")
    return [
        (e.time - r.start, e.note)
        for e in r.events
        if e.reason == "FailedScheduling" and (e.namespace, e.name) == (ns, name)
    ]


def test_team_a_borrows_the_idle_guarantee_on_shared_nodes_only(result: SimResult) -> None:
    ps = pods(result)
    for i in range(1, 7):
        p = ps[f"team-a/worker-{i}"]
        assert p["node"] in SHARED and at(result, p, "boundAt") == 0.0
    assert ps["sandbox/notebook"]["node"] == "sandbox-1"
    assert not [p for k, p in ps.items() if p["node"] == "sandbox-1" and not k.startswith("sandbox/")]


def test_team_b_reclaims_its_guarantee_by_preempting_two_borrowed_workers(result: SimResult) -> None:
    ps = pods(result)
    preempted = sorted(k for k, p in ps.items() if p["deletedReason"] == "Preempted")
    assert len(preempted) == 2 and all(k.startswith("team-a/worker-") for k in preempted)
    assert all(at(result, ps[k], "deletedAt") == 10 * MINUTE for k in preempted)
    for i in range(1, 5):
        p = ps[f"team-b/job-{i}"]
        assert p["node"] in SHARED
        assert at(result, p, "boundAt") == 10 * MINUTE
        assert (at(result, p, "deletedAt"), p["deletedReason"]) == (40 * MINUTE, "Completed")
    # The two jobs that did not fit: no room on the shared nodes, sandbox-1 not theirs.
    reclaimers = [k for k in ps if k.startswith("team-b/") and failures(result, k)]
    assert len(reclaimers) == 2
    for k in reclaimers:
        assert failures(result, k) == [
            (10 * MINUTE, "0/5 nodes are available: 1 node(s) are dedicated to another tenant, 4 Insufficient cpu.")
        ]
    # Each preemption is recorded on its victim, naming the job that took its place.
    uids = {e.name: e for e in result.events if e.reason == "Preempted"}
    assert sorted(f"team-a/{n}" for n in uids) == preempted


def test_worker_7_waits_for_max_then_for_the_min_sum_then_runs(result: SimResult) -> None:
    ps = pods(result)
    notes = failures(result, "team-a/worker-7")
    head = "0/5 nodes are available: Pod team-a/worker-7 is rejected in PreFilter because "
    max_msg = head + "ElasticQuota team-a is more than Max."
    min_msg = head + "total ElasticQuota used is more than min."
    assert notes[0][0] == 0.0 and notes[0][1].startswith(max_msg)
    assert all(n.startswith(max_msg) for t, n in notes if t < 10 * MINUTE)
    after = [n for t, n in notes if t >= 10 * MINUTE]
    assert after and all(n.startswith(min_msg) for n in after)
    p = ps["team-a/worker-7"]
    assert p["node"] in SHARED and at(result, p, "boundAt") == 40 * MINUTE


def test_status_used_at_the_end(result: SimResult) -> None:
    used = {
        o["metadata"]["namespace"]: o["status"]["used"]
        for o in result.cluster.list_objects("scheduling.x-k8s.io/v1alpha1", "ElasticQuota")
    }
    assert used == {"team-a": {"cpu": "10", "memory": "10Gi"}, "team-b": {"cpu": "0", "memory": "0"}}
    # At the end: 4 of team-a's 6 workers, worker-7 and the notebook run; 2 workers were preempted and
    # team-b's 4 jobs completed (the scenario in the module docstring).
    assert result.summary() == {"pods": 12, "bound": 6, "pending": 0, "preempted": 2, "completed": 4, "deleted": 0}


def test_readable_with_kubesched_simulate() -> None:
    out = CliRunner().invoke(cli, ["simulate", str(EXAMPLE), "--config", str(CONFIG), "-o", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["summary"] == {
        "pods": 12, "bound": 6, "pending": 0, "preempted": 2, "completed": 4, "deleted": 0}
    table = CliRunner().invoke(cli, ["simulate", str(EXAMPLE), "--config", str(CONFIG)])
    assert table.exit_code == 0, table.output
    assert "team-a/worker-7" in table.stdout and "00:40:00 ✓" in table.stdout  # job-3 completed at 00:40
    # Why the victims went and why worker-7 waited, in full below the table.
    text = " ".join(table.stdout.split())
    assert "team-a/worker-2 (preempted, 1 attempt) 00:10:00 preempted by team-b/job-4" in text
    assert "ElasticQuota team-a is more than Max" in text


def test_docs_quote_the_example() -> None:
    """docs/tenancy.md shows the example's configuration and a valid ElasticQuota."""
    doc = (EXAMPLE.parents[1] / "docs" / "tenancy.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, re.S)]
    assert blocks[0] == yaml.safe_load(CONFIG.read_text())
    info = parse_elastic_quota(blocks[1])
    assert (info.namespace, info.min.milli_cpu, info.max.memory) == ("team-a", 8000, 24 * 2**30)
