"""Each pod's story in ``kubesched simulate -o json`` (issue 16): arrival, attempts, why it waited
(even when it was bound in the end), the end, the preemptor's name. Hand-traced from
examples/window-transfer (docs/window-transfer.md: the window is 22:00-06:00 UTC, pods outside it
are held at PreEnqueue) and a small preemption scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.testing import make_node, make_pod

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["simulate", *args, "-o", "json"])
    assert result.exit_code == 0, result.output
    return {p["name"]: p for p in json.loads(result.stdout)["pods"]}


def test_a_transfer_held_until_its_window_says_so_though_it_was_bound() -> None:
    pods = _run(str(EXAMPLES / "window-transfer"), "--config", str(EXAMPLES / "window-transfer/scheduler-config.yaml"),
                "--start", "2026-01-01T21:00:00Z")
    db = pods["backup-db"]
    assert (db["state"], db["arrivedAt"], db["boundAt"]) == (
        "completed", "2026-01-01T21:00:00Z", "2026-01-01T22:00:00Z")
    # Held at PreEnqueue (never attempted) until the window opened; then one attempt, bound.
    assert (db["attempts"], db["firstAttemptAt"]) == (1, "2026-01-01T22:00:00Z")
    assert db["waited"] == [{
        "at": "2026-01-01T21:00:00Z", "kind": "gated", "plugins": ["WindowTransfer"],
        "message": "waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z",
        "times": 1,
    }]
    # Arrived inside the window: no wait at all.
    media = pods["sync-media"]
    assert (media["arrivedAt"], media["boundAt"], media["waited"]) == (
        "2026-01-01T23:00:00Z", "2026-01-01T23:00:00Z", [])


def test_a_victim_names_its_preemptor_and_the_preemptor_its_wait(tmp_path: Path) -> None:
    objs = [
        make_node("n1").capacity(cpu="2", memory="8Gi").obj(),
        make_pod("low").req(cpu="2").priority(1).obj(),
        make_pod("high").req(cpu="2").priority(100).annotation("sim.kubesched.io/arrival", "60s").obj(),
    ]
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    pods = _run(str(f))
    low, high = pods["low"], pods["high"]
    assert (low["state"], low["preemptedBy"], low["endedAt"]) == ("preempted", "default/high", "2026-01-01T00:01:00Z")
    # high failed once (no room; preemption nominated n1 and deleted the victim), then was bound.
    assert (high["state"], high["node"], high["attempts"]) == ("bound", "n1", 2)
    [wait] = high["waited"]
    assert (wait["at"], wait["kind"], wait["plugins"]) == (
        "2026-01-01T00:01:00Z", "unschedulable", ["NodeResourcesFit"])
    assert wait["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def _table(*args: str) -> str:
    result = CliRunner().invoke(cli, ["simulate", *args], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_node_tables_show_what_the_scenario_is_about() -> None:
    """Bandwidth for WindowTransfer, GPUs per card for GpuShare, quota use for CapacityScheduling,
    each only where the scenario has it. Expected values follow the examples' own comments: the
    two transfers in the window (backup-db, backup-logs: 4000 Mbit/s each) take 4000 of gw-10g's
    10000 and of gw-7g's 7000; the four 250m
    inference pods share t4-0's first card; team-a holds 10 cores of its 8-12 at the end."""
    wt = EXAMPLES / "window-transfer"
    window = _table(str(wt), "--config", str(wt / "scheduler-config.yaml"), "--start", "2026-01-01T21:00:00Z",
                    "--until", "1h")
    assert "bandwidth" in window and "4000/10000" in window and "4000/7000" in window
    assert "GPUs at the end" not in window and "Elastic quotas" not in window
    gpu = _table(str(EXAMPLES / "gpu"), "--config", str(EXAMPLES / "gpu/scheduler-config.yaml"))
    (card0,) = [line for line in gpu.splitlines() if line.startswith("│ t4-0") and "infer-0" in line]
    assert all(f"infer-{i} 250m" in card0 for i in range(4)) and "│ 0 " in card0
    tenants = _table(str(EXAMPLES / "tenants"), "--config", str(EXAMPLES / "tenants/scheduler-config.yaml"))
    (team_a,) = [line for line in tenants.splitlines() if line.startswith("│ team-a ")]
    assert [c.strip() for c in team_a.strip("│").split("│")] == ["team-a", "8 / 16.0", "12 / 24.0", "10 / 10.0"]
    assert all(len(line) <= 80 for text in (window, gpu, tenants) for line in text.splitlines())


def test_report_to_an_unwritable_place_exits_2_with_one_line(tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "r.html"
    result = CliRunner().invoke(cli, ["simulate", str(EXAMPLES / "quickstart"), "--report", str(target)])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == f"error: --report: {target}: No such file or directory"
