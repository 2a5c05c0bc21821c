"""Option values of ``kubesched simulate`` (issue 11, "Option values"): every value either works or
exits 2 with one line naming the option; none hangs (a NaN start made the event loop spin for ever)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.testing import make_node, make_pod

RANGE = "0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z"


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump_all([
        make_node("n1").capacity(cpu="2", memory="4Gi").obj(),
        make_pod("p").req(cpu="1").annotation("sim.kubesched.io/duration", "1h").obj(),
    ]))
    return f


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize(("value", "message"), [
    ("nan", "error: --start: invalid time 'nan' (use RFC 3339, e.g. 2026-01-01T21:00:00Z)"),
    ("inf", "error: --start: invalid time 'inf' (use RFC 3339, e.g. 2026-01-01T21:00:00Z)"),
    ("1e300", "error: --start: invalid time '1e300' (use RFC 3339, e.g. 2026-01-01T21:00:00Z)"),
    ("90s", "error: --start: invalid time '90s' (use RFC 3339, e.g. 2026-01-01T21:00:00Z)"),
    ("2026-02-30T00:00:00Z", "error: --start: invalid time '2026-02-30T00:00:00Z': day is out of range for month"),
    ("0000-01-01T00:00:00Z", f"error: --start: time '0000-01-01T00:00:00Z' is outside the supported range {RANGE}"),
])
def test_bad_start(scenario: Path, value: str, message: str) -> None:
    code, out, err = invoke("simulate", str(scenario), "--start", value)
    assert (code, err, out) == (2, message + "\n", "")


@pytest.mark.parametrize(("value", "message"), [
    ("nan", "error: --until: invalid time 'nan' (use RFC 3339, e.g. 2026-01-01T21:00:00Z, or a duration such as 2h)"),
    ("-1h", "error: --until: invalid duration '-1h': must not be negative"),
    ("1e300", f"error: --until: duration '1e300' is longer than the supported time range {RANGE}"),
    ("2025-12-31T00:00:00Z", "error: --until: '2025-12-31T00:00:00Z' is before --start (2026-01-01T00:00:00Z)"),
])
def test_bad_until(scenario: Path, value: str, message: str) -> None:
    code, out, err = invoke("simulate", str(scenario), "--until", value)
    assert (code, err, out) == (2, message + "\n", "")


def test_the_ends_of_the_time_range_are_accepted(scenario: Path) -> None:
    # RFC 3339 allows year 0001; the old check refused it as "not an RFC 3339 time".
    code, out, _ = invoke("simulate", str(scenario), "--start", "0001-01-01T00:00:00Z", "-o", "json")
    assert code == 0
    assert json.loads(out)["pods"][0]["boundAt"] == "0001-01-01T00:00:00Z"
    # At the last second of year 9999 a pod with a 1 h duration would complete past the range: the
    # run still ends, and no time is printed out of range (this crashed with "year 10000 is out of range").
    code, out, _ = invoke("simulate", str(scenario), "--start", "9999-12-31T23:59:59Z", "-o", "json")
    assert code == 0
    [p] = json.loads(out)["pods"]
    assert p["boundAt"] == "9999-12-31T23:59:59Z"


@pytest.mark.parametrize(("duration", "problem"), [
    ("1e12", f"duration '1e12' is longer than the supported time range {RANGE}"),
    ("nan", "invalid duration 'nan' (use e.g. 90s, 2h, 1h30m, or seconds)"),
    ("-5s", "invalid duration '-5s': must not be negative"),
    ("soon", "invalid duration 'soon' (use e.g. 90s, 2h, 1h30m, or seconds)"),
])
def test_bad_duration_annotation(tmp_path: Path, duration: str, problem: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump_all([
        make_node("n1").capacity(cpu="2").obj(),
        make_pod("p").req(cpu="1").annotation("sim.kubesched.io/duration", duration).obj(),
    ]))
    code, _, err = invoke("simulate", str(f))
    assert code == 2
    # line 20 of safe_dump_all's output holds the annotation (checked by hand)
    field = "metadata.annotations[sim.kubesched.io/duration]"
    assert err == f"error: {f}:20: document 2 (Pod default/p): {field}: {problem}\n"


def test_errors_are_never_wrapped_or_read_as_markup(tmp_path: Path) -> None:
    # A long path and console markup in the message: one line, written as is.
    deep = tmp_path / ("d" * 150) / "[bold]x[/]"
    deep.mkdir(parents=True)
    f = deep / "s.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n")
    code, _, err = invoke("simulate", str(f))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and str(f) in err and "invalid YAML" in err


@pytest.mark.parametrize(("args", "line"), [
    (["simulate"], "error: Missing argument 'PATHS...'. (see 'kubesched simulate --help')"),
    (["nope"], "error: No such command 'nope'. (see 'kubesched --help')"),
    (["simulate", ".", "--seed", "x"],
     "error: Invalid value for '--seed': 'x' is not a valid integer. (see 'kubesched simulate --help')"),
    (["simulate", ".", "--bogus"], "error: No such option '--bogus'. (see 'kubesched simulate --help')"),
])
def test_usage_errors_are_one_line(args: list[str], line: str) -> None:
    # click's own usage block is several lines with the problem on the last: ours is that one line.
    r = CliRunner().invoke(cli, args, prog_name="kubesched")
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", line + "\n")
