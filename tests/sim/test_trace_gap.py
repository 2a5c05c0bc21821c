"""``kubesched trace alibaba-gpu --bound`` (``kubesched.sim.trace_gap``, docs/gpu.md "An upper bound"):
the share of the baseline's gap to the bound a policy closes, and the gap it leaves, on hand-computed
numbers and on the tiny trace of test_trace_framework against the separate ``trace bound`` and
``trace alibaba-gpu`` outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("scipy")

from click.testing import CliRunner
from test_trace_framework import write_trace

from kubesched.cli import cli
from kubesched.sim.trace_gap import gap_closed, with_gaps


def test_gap_closed_by_hand() -> None:
    # FGD 95.39, Random 87.53, bound 99.89: 100 * 7.86 / 12.36 = 63.59 %.
    assert gap_closed(95.39, 87.53, 99.89) == 63.59
    assert gap_closed(87.53, 87.53, 99.89) == 0.0  # the baseline itself
    assert gap_closed(99.89, 87.53, 99.89) == 100.0  # at the bound
    assert gap_closed(80.0, 90.0, 100.0) == -100.0  # worse than the baseline by its whole gap
    assert gap_closed(50.0, 50.0, 50.0) is None  # no gap to close
    assert gap_closed(None, 50.0, 60.0) is None


def _obj(policy: str, seed: int, alloc: dict[str, float | None]) -> dict[str, Any]:
    return {"policy": policy, "seed": seed, "allocation": alloc}


def test_with_gaps_means_and_runs() -> None:
    """Two seeds: the top level from the means, each run from its own seed's bound and baseline."""
    bounds = {
        "bound": {"100": 97.0, "130": 99.5},
        "runs": [{"seed": 1, "bound": {"100": 96.0, "130": 99.0}}, {"seed": 2, "bound": {"100": 98.0, "130": 100.0}}],
    }
    rnd = {
        **_obj("Random", 0, {"100": 87.0, "130": 89.5}),
        "seed": [1, 2],
        "runs": [_obj("Random", 1, {"100": 86.0, "130": 89.0}), _obj("Random", 2, {"100": 88.0, "130": 90.0})],
    }
    fgd = {
        **_obj("FGD", 0, {"100": 95.0, "130": 95.5}),
        "seed": [1, 2],
        "runs": [_obj("FGD", 1, {"100": 94.0, "130": 95.0}), _obj("FGD", 2, {"100": 96.0, "130": None})],
    }
    got = {s["policy"]: s for s in with_gaps([fgd, rnd], bounds, "Random")}
    f = got["FGD"]
    assert f["gap_baseline"] == "Random" and f["bound"] == {"100": 97.0, "130": 99.5}
    assert f["gap_to_bound"] == {"100": 2.0, "130": 4.0}
    # 100 * (95 - 87) / (97 - 87) = 80; 100 * (95.5 - 89.5) / (99.5 - 89.5) = 60.
    assert f["gap_closed"] == {"100": 80.0, "130": 60.0}
    run1, run2 = f["runs"]
    # Seed 1: (94 - 86) / (96 - 86) = 80 %, (95 - 89) / (99 - 89) = 60 %; seed 2: (96 - 88) / (98 - 88).
    assert run1["gap_closed"] == {"100": 80.0, "130": 60.0} and run1["gap_to_bound"] == {"100": 2.0, "130": 4.0}
    assert run2["gap_closed"] == {"100": 80.0, "130": None} and run2["gap_to_bound"] == {"100": 2.0, "130": None}
    assert got["Random"]["gap_closed"] == {"100": 0.0, "130": 0.0}
    assert list(f)[:3] == ["policy", "seed", "allocation"]  # the old keys first, unchanged


def _cli(*args: str) -> Any:
    res = CliRunner().invoke(cli, ["trace", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_cli_bound_adds_the_gaps(tmp_path: Path) -> None:
    """On the tiny trace: --bound keeps every key of the plain output and adds the bound of ``trace
    bound`` and the gaps computed from it, the baseline (replayed even when not asked for)."""
    nodes, pods = write_trace(tmp_path)
    common = ["--nodes", str(nodes), "--pods", str(pods), "--seeds", "1..2"]
    plain = {s["policy"]: s for s in _cli("alibaba-gpu", *common, "--policy", "FGD,Random", "-o", "json")}
    bound = _cli("bound", *common, "-o", "json")
    with_bound = _cli("alibaba-gpu", *common, "--policy", "FGD", "--bound", "-o", "json")
    assert [s["policy"] for s in with_bound] == ["FGD", "Random"]
    for s in with_bound:
        old = plain[s["policy"]]
        assert {k: v for k, v in s.items() if k not in ("seconds", "runs")} == {
            **{k: v for k, v in old.items() if k not in ("seconds", "runs")},
            "gap_baseline": "Random",
            "bound": bound["bound"],
            "gap_to_bound": s["gap_to_bound"],
            "gap_closed": s["gap_closed"],
        }
        for level, b in bound["bound"].items():
            p, r = old["allocation"][level], plain["Random"]["allocation"][level]
            if p is None or b is None:
                continue
            assert s["gap_to_bound"][level] == pytest.approx(round(b - p, 2))
            want = None if b - r <= 1e-9 else round(100 * (p - r) / (b - r), 2)
            assert s["gap_closed"][level] == want
    table = CliRunner().invoke(cli, ["trace", "alibaba-gpu", *common, "--policy", "FGD", "--bound"])
    assert table.exit_code == 0, table.output
    assert "bound" in table.output and "closed@130 %" in table.output and "to bound@130" in table.output
    bad = CliRunner().invoke(cli, ["trace", "alibaba-gpu", *common, "--policy", "FGD", "--bound", "--baseline", "nope"])
    assert bad.exit_code == 2 and "--baseline: unknown policy 'nope'" in bad.output
