"""``simulate -o json`` tells each pod's end state (issue 11, "Output that tells the truth").

Hand-built scenario on one 2-CPU node, from the start S = 2026-01-01T00:00:00Z:
- ``short`` (1 CPU, priority 0) runs 30 s and completes at S+30s;
- ``victim`` (1 CPU, priority 0) arrives with ``short`` and keeps running;
- ``big`` (2 CPUs, priority 100) arrives at S+60s: only ``victim`` is left on the node, so
  DefaultPreemption deletes it and ``big`` is bound after it;
- ``never`` (4 CPUs) fits nowhere and stays pending;
- ``late`` arrives after --until and is not in the report at all.
So: bound 1 (big), pending 1 (never), preempted 1 (victim), completed 1 (short), deleted 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.testing import make_node, make_pod

ARRIVAL = "sim.kubesched.io/arrival"
DURATION = "sim.kubesched.io/duration"


def test_states_and_summary_add_up(tmp_path: Path) -> None:
    objs = [
        make_node("n1").capacity(cpu="2", memory="8Gi").obj(),
        make_pod("short").req(cpu="1").annotation(DURATION, "30s").obj(),
        make_pod("victim").req(cpu="1").obj(),
        make_pod("big").req(cpu="2").priority(100).annotation(ARRIVAL, "60s").obj(),
        make_pod("never").req(cpu="4").obj(),
        make_pod("late").req(cpu="1").annotation(ARRIVAL, "2h").obj(),
    ]
    f = tmp_path / "scenario.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    result = CliRunner().invoke(cli, ["simulate", str(f), "-o", "json", "--until", "1h"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    pods = {p["name"]: p for p in out["pods"]}
    assert {name: p["state"] for name, p in pods.items()} == {
        "short": "completed", "victim": "preempted", "big": "bound", "never": "pending",
    }
    # A victim keeps the node it ran on, so a script can tell where it was preempted from.
    assert pods["victim"]["node"] == "n1" and pods["victim"]["boundAt"] == "2026-01-01T00:00:00Z"
    assert pods["big"]["node"] == "n1" and pods["big"]["boundAt"] == "2026-01-01T00:01:00Z"
    assert pods["never"]["node"] is None
    assert out["summary"] == {"pods": 4, "bound": 1, "pending": 1, "preempted": 1, "completed": 1, "deleted": 0}
    s = out["summary"]
    assert s["bound"] + s["pending"] + s["preempted"] + s["completed"] + s["deleted"] == s["pods"]
