"""Option values of ``kubesched trace alibaba-gpu`` and ``kubesched bench`` (issue 11): a value out of
its documented bounds (the options' help) exits 2 with one ``error: --option: ...`` line per problem,
before any work starts, and a bad trace CSV names its file, line and column; never a traceback.

The bounds are the ones the help states: --tune in (0, 10], at most 100 seeds of Go's int64, the
policies Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, FGDPlus, FGDOnline, RatioDelta
(docs/gpu.md), bench --nodes 1..50000, --init-pods 0..100000, --pods 1..100000.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kubesched.cli import cli

POLICIES = "Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, FGDPlus, FGDOnline, RatioDelta"
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-0,64000,262144,2,P100\nn-1,96000,786432,8,V100M32\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
        "p-0,4000,8192,1,500\np-1,8000,16384,1,1000\np-2,2000,4096,0,0\np-3,16000,32768,2,1000\n")


def _invoke(args: list[str]) -> Result:
    # Wide enough that the console does not wrap a long message over several lines.
    return CliRunner(env={"COLUMNS": "1000"}).invoke(cli, args)


def _errors(result: Result) -> list[str]:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.stderr.splitlines()


@pytest.fixture
def csvs(tmp_path: Path) -> tuple[Path, Path]:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text(NODES)
    pods.write_text(PODS)
    return nodes, pods


def _trace(csvs: tuple[Path, Path], *args: str) -> Result:
    nodes, pods = csvs
    return _invoke(["trace", "alibaba-gpu", "--nodes", str(nodes), "--pods", str(pods), *args])


@pytest.mark.parametrize(("value", "shown"), [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("0", "0.0"),
                                             ("-1", "-1.0"), ("10.5", "10.5"), ("1e400", "inf")])
def test_tune_out_of_bounds(csvs: tuple[Path, Path], value: str, shown: str) -> None:
    assert _errors(_trace(csvs, "--policy", "FGD", "--tune", value)) == [
        f"error: --tune: must be a finite number > 0 and <= 10, got {shown}"]


def test_tune_that_is_not_a_number_is_clicks_usage_error(csvs: tuple[Path, Path]) -> None:
    result = _trace(csvs, "--policy", "FGD", "--tune", "abc")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--tune': 'abc' is not a valid float." in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "1..100000000"],
         "--seeds: '1..100000000' is 100000000 seeds, more than the 100 one command may run"),
        (["--seeds", "0..100"], "--seeds: '0..100' is 101 seeds, more than the 100 one command may run"),
        (["--seed", "0", "--seeds", "1..100"], "--seed/--seeds: 101 seeds, more than the 100 one command may run"),
        (["--seeds", "51..42"], "--seeds: empty range '51..42'"),
        (["--seeds", "ten"], "--seeds: 'ten' is not a range like 42..51"),
        (["--seeds", ""], "--seeds: '' is not a range like 42..51"),
        (["--seeds", "1..9223372036854775808"], "--seeds: 9223372036854775808 is not a 64-bit integer"),
        (["--seed", "-9223372036854775809"], "--seed: -9223372036854775809 is not a 64-bit integer"),
    ],
)
def test_seeds_out_of_bounds(csvs: tuple[Path, Path], args: list[str], message: str) -> None:
    assert _errors(_trace(csvs, "--policy", "FGD", *args)) == [f"error: {message}"]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (",", f"--policy: no policy named; one or more of {POLICIES}, or all"),
        (" , ,", f"--policy: no policy named; one or more of {POLICIES}, or all"),
        ("FGD,nope,Nope2", f"--policy: unknown policy 'nope', 'Nope2'; known: {POLICIES}, or all"),
    ],
)
def test_policy_names(csvs: tuple[Path, Path], policy: str, message: str) -> None:
    assert _errors(_trace(csvs, "--policy", policy)) == [f"error: {message}"]


def test_every_bad_option_is_a_line(csvs: tuple[Path, Path], tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "r.html"
    assert _errors(_trace(csvs, "--policy", ",", "--tune", "nan", "--seeds", "9..1", "--report", str(missing))) == [
        f"error: --policy: no policy named; one or more of {POLICIES}, or all",
        "error: --tune: must be a finite number > 0 and <= 10, got nan",
        "error: --seeds: empty range '9..1'",
        f"error: --report: {missing}: no such directory {str(missing.parent)!r}",
    ]


def test_a_bad_cell_names_file_line_and_column(tmp_path: Path) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text(NODES)
    pods.write_text(PODS.replace("p-2,2000", "p-2,1e400").replace("p-3,16000,32768,2,1000", "p-3,16000,32768,two,1000"))
    assert _errors(_trace((nodes, pods), "--policy", "FGD")) == [
        f'error: {pods}:4: column "cpu_milli": "1e400" is not in 0..1000000000',
        f'error: {pods}:5: column "num_gpu": "two" is not a number',
    ]


def test_empty_and_special_files(tmp_path: Path) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text("")
    pods.write_text("name,cpu_milli,num_gpu,gpu_milli\n")
    assert _errors(_trace((nodes, pods), "--policy", "FGD")) == [
        f"error: {nodes}: empty file: no header line (required columns: sn, cpu_milli, memory_mib, gpu)",
        f"error: {pods}:1: only a header line: the pod list has no rows",
    ]
    if Path("/dev/null").exists():
        assert _errors(_trace((Path("/dev/null"), pods), "--policy", "FGD"))[0] == (
            "error: /dev/null: is a device, not a regular file")


def test_a_run_within_the_bounds(csvs: tuple[Path, Path]) -> None:
    result = _trace(csvs, "--policy", "fgd, bestfit", "--policy", "FGD", "--seeds", "1-2", "--tune", "10", "-o", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [(s["policy"], s["seed"], s["tune"]) for s in out] == [("FGD", [1, 2], 10.0), ("BestFit", [1, 2], 10.0)]


def test_a_subprocess_prints_one_line_per_problem(tmp_path: Path) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text(NODES)
    pods.write_text(PODS + "p-4,abc,1,1,1\n")
    done = subprocess.run(
        [sys.executable, "-c", "from kubesched.cli import main; main()", "trace", "alibaba-gpu", "--nodes", str(nodes),
         "--pods", str(pods), "--policy", "FGD"],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "1000"},
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [f'error: {pods}:6: column "cpu_milli": "abc" is not a number']


# ---- kubesched bench -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "messages"),
    [
        (["--nodes", "100000000"], ["--nodes: must be an integer in 1..50000, got 100000000"]),
        (["--nodes", "0"], ["--nodes: must be an integer in 1..50000, got 0"]),
        (["--init-pods", "-1"], ["--init-pods: must be an integer in 0..500000, got -1"]),
        (["--pods", "100001"], ["--pods: must be an integer in 1..100000, got 100001"]),
        (["--nodes", "-5", "--init-pods", "100000000", "--pods", "0"],
         ["--nodes: must be an integer in 1..50000, got -5",
          "--init-pods: must be an integer in 0..500000, got 100000000",
          "--pods: must be an integer in 1..100000, got 0"]),
    ],
)
def test_bench_sizes_out_of_bounds(args: list[str], messages: list[str]) -> None:
    assert _errors(_invoke(["bench", "--workload", "SchedulingBasic", *args])) == [f"error: {m}" for m in messages]


def test_bench_within_the_bounds() -> None:
    result = _invoke(["bench", "--workload", "SchedulingBasic", "--nodes", "3", "--init-pods", "0", "--pods", "5"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["bound"] == 5
