"""``kubesched trace sweep`` (issue 17): the grid of replays on a process pool (and on a real local
Ray instance), resumable, as a tidy table (CSV and Parquet) whose values are the single replays'
own (checked against ``trace alibaba-gpu -o json`` of the same cell), and an HTML report."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_trace_framework import write_trace

from kubesched.cli import cli
from kubesched.sim.sweep import COLUMNS, cells_of, run_sweep

LEVELS = [str(x) for x in range(10, 140, 10)]


def _sweep(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["trace", "sweep", *args, "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def _direct(nodes: Path, pods: Path, policy: str, seed: int) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["trace", "alibaba-gpu", "--nodes", str(nodes), "--pods", str(pods),
                                      "--policy", policy, "--seed", str(seed), "-o", "json"])
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_a_sweep_is_a_tidy_table_of_the_replays_and_resumes(tmp_path: Path) -> None:
    nodes, pods = write_trace(tmp_path)
    pods_b = tmp_path / "pods_b.csv"
    pods_b.write_text(pods.read_text().replace(",LS,", ",BE,"))  # same pods, another list (file)
    out = tmp_path / "out"
    args = ["--nodes", str(nodes), "--pods", str(pods), "--pods", str(pods_b), "--policy", "FGD,BestFit",
            "--seeds", "1..2", "--workers", "2", "--out", str(out)]
    first = _sweep(*args)
    assert (first["cells"], first["ran"], first["skipped"]) == (8, 8, 0)  # 2 lists x 2 policies x 2 seeds
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == 8 * len(LEVELS)
    # Every value is the single replay's.
    direct = _direct(nodes, pods, "FGD", 2)
    mine = {r["arrived"]: r for r in rows if (r["trace"], r["policy"], r["seed"]) == ("pods", "FGD", "2")}
    for level in LEVELS:
        want = direct["allocation"][level]
        assert (mine[level]["allocation"] or None) == (None if want is None else str(want))
        assert int(mine[level]["failed_pods"]) == direct["failed_pods"]
    # Parquet: the same rows, typed.
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(out / "sweep.parquet")
    assert table.column_names == list(COLUMNS) and table.num_rows == len(rows)
    assert str(table.schema.field("seed").type) == "int64"
    # The report names tune, seeds and engine, and has a zoomed panel per pod list.
    page = (out / "sweep.html").read_text()
    assert "tune 1.3, seeds 1..2 (2), engine framework" in page
    assert 'id="pods-zoom"' in page and 'id="pods_b-full"' in page
    # Resumable: a second run finds every cell done; a lost cell is run again, alone.
    again = _sweep(*args)
    assert (again["ran"], again["skipped"]) == (0, 8)
    cell_files = sorted((out / "cells").glob("*.json"))
    assert len(cell_files) == 8
    cell_files[0].unlink()
    third = _sweep(*args)
    assert (third["ran"], third["skipped"]) == (1, 7)
    with (out / "sweep.csv").open() as f:
        rerun = list(csv.DictReader(f))
    # The same table (the rerun cell's wall time aside).
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in rerun] == [
        {k: v for k, v in r.items() if k != "seconds"} for r in rows]


@pytest.mark.parametrize(("args", "error"), [
    (["--policy", "Nope"], "--policy: unknown policy 'Nope'"),
    (["--policy", "FGD", "--tune", "0"], "--tune:"),
    (["--policy", "FGD", "--seeds", "9..1"], "--seeds: empty range '9..1'"),
])
def test_bad_arguments_exit_2(tmp_path: Path, args: list[str], error: str) -> None:
    nodes, pods = write_trace(tmp_path)
    result = CliRunner().invoke(cli, ["trace", "sweep", "--nodes", str(nodes), "--pods", str(pods), *args,
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert error in result.output and "Traceback" not in result.output


def test_missing_pod_list_exits_2(tmp_path: Path) -> None:
    nodes, _ = write_trace(tmp_path)
    result = CliRunner().invoke(cli, ["trace", "sweep", "--nodes", str(nodes), "--pods", str(tmp_path / "x.csv"),
                                      "--policy", "FGD", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and f"{tmp_path / 'x.csv'}: no such file" in result.output


@pytest.mark.slow
def test_the_ray_executor_gives_the_same_table(tmp_path: Path) -> None:
    """A real local Ray instance (ray.init in this process) runs the same cells."""
    pytest.importorskip("ray")
    nodes, pods = write_trace(tmp_path)
    cells = cells_of(str(nodes), [str(pods)], ["FGD", "Random"], [3, 4], 1.3)
    local = run_sweep(cells, tmp_path / "local", workers=2)
    on_ray = run_sweep(cells, tmp_path / "ray", executor="ray")
    assert on_ray.ran == 4

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return r["trace"], r["policy"], r["seed"], r["arrived"]

    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in sorted(local.rows, key=key)]
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in sorted(on_ray.rows, key=key)] == strip


def test_the_report_draws_the_bound_on_each_panel() -> None:
    """The bound is a dashed line on both panels of its pod list and a row of its table; a list
    without a bound (and a report without bounds) has none."""
    from kubesched.sim.sweep_report import render_sweep_report

    rows = [{"trace": t, "policy": "FGD", "seed": 1, "arrived": lvl, "allocation": a}
            for t in ("a", "b") for lvl, a in ((90, 90.0), (100, 95.0), (130, 95.5))]
    page = render_sweep_report(rows, tune=1.3, seeds=[1], engine="framework",
                               bounds={"a": {90: 90.0, 100: 97.0, 130: 99.5}})
    a_part, b_part = page.split('data-trace="b"')
    assert a_part.count('class="bound"') == 3  # full panel, zoomed panel, table row
    assert '<tr class="bound"><td>upper bound</td><td>97.00</td><td>99.50</td></tr>' in a_part
    assert 'class="bound"' not in b_part
    assert 'class="bound"' not in render_sweep_report(rows, tune=1.3, seeds=[1], engine="framework")


def test_a_sweep_with_bound_draws_trace_bounds_mean(tmp_path: Path) -> None:
    nodes, pods = write_trace(tmp_path)
    out = tmp_path / "out"
    args = ["--nodes", str(nodes), "--pods", str(pods), "--policy", "FGD", "--seeds", "1..2", "--workers", "1",
            "--out", str(out), "--bound"]
    _sweep(*args)
    res = CliRunner().invoke(cli, ["trace", "bound", "--nodes", str(nodes), "--pods", str(pods), "--seeds", "1..2",
                                   "-o", "json"])
    want = json.loads(res.stdout)["bound"]
    page = (out / "sweep.html").read_text()
    assert page.count('class="bound"') == 3
    zoom = [lvl for lvl in LEVELS if int(lvl) >= 100 and want[lvl] is not None]
    assert "<td>upper bound</td>" + "".join(f"<td>{want[lvl]:.2f}</td>" for lvl in zoom) in page
    (cached,) = (out / "bounds").glob("*.json")
    stamp = cached.stat().st_mtime_ns
    _sweep(*args)  # resumed: the bound is read back, not solved again
    assert cached.stat().st_mtime_ns == stamp
