"""The default profile on examples/affinity-spread: zone spread, pod anti-affinity, pod affinity,
taints and node affinity together, checked against hand-derived outcomes (issue 3's larger example)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "affinity-spread"


def _run(seed: int) -> dict[str, dict[str, object]]:
    result = CliRunner().invoke(cli, ["simulate", str(EXAMPLE), "-o", "json", "--seed", str(seed)])
    assert result.exit_code == 0, result.output
    return {p["name"]: p for p in json.loads(result.stdout)["pods"]}


def test_affinity_spread_example_places_every_pod_as_its_constraints_require() -> None:
    for seed in (0, 1, 2):
        pods = _run(seed)
        zone = {p["name"]: str(p["node"])[0] for p in pods.values() if p["node"]}
        # 6 web pods, maxSkew 1 over 3 zones (DoNotSchedule): exactly 2 per zone.
        assert Counter(zone[f"web-{i}"] for i in range(6)) == {"a": 2, "b": 2, "c": 2}
        # Required hostname anti-affinity: 3 db pods on 3 different nodes.
        assert len({pods[f"db-{i}"]["node"] for i in range(3)}) == 3
        # Required hostname affinity to db: every cache pod shares a node with a db pod.
        db_nodes = {pods[f"db-{i}"]["node"] for i in range(3)}
        assert all(pods[f"cache-{i}"]["node"] in db_nodes for i in range(3))
        # Only the pod tolerating the gpu taint lands on the tainted *-3 nodes.
        on_tainted = {n for n, p in pods.items() if p["node"] and str(p["node"]).endswith("-3")}
        assert on_tainted == {"gpu-job"}
        # Anti-affinity to web in every zone leaves no node: upstream's message, counted by hand
        # (3 tainted nodes reject it first, 9 fail anti-affinity; equal priorities give no victims).
        assert pods["loner"]["node"] is None
        assert pods["loner"]["message"] == (
            "0/12 nodes are available: 3 node(s) had untolerated taint(s), "
            "9 node(s) didn't match pod anti-affinity rules. "
            "preemption: 0/12 nodes are available: "
            "3 Preemption is not helpful for scheduling, 9 No preemption victims found for incoming pod."
        )
