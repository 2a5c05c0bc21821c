"""``kubesched examples list|copy`` (issue 16: the quickstart from an installed wheel): every
example folder of the checkout is listed, a copy runs as the README says, bad input exits 2 with
one line. The wheel itself is built, installed into a fresh virtual environment outside the
checkout and run there by ``test_quickstart_from_a_wheel`` (slow: it installs the dependencies)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_every_example_folder_is_listed() -> None:
    res = CliRunner().invoke(cli, ["examples", "list", "-o", "json"])
    assert res.exit_code == 0, res.output
    names = [e["name"] for e in json.loads(res.stdout)]
    assert names == sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir())
    assert all(e["summary"] for e in json.loads(res.stdout))


def test_a_copy_runs_as_the_readme_says(tmp_path: Path) -> None:
    dest = tmp_path / "qs"
    res = CliRunner().invoke(cli, ["examples", "copy", "quickstart", str(dest)])
    assert res.exit_code == 0, res.output
    want = sorted(p.name for p in (ROOT / "examples" / "quickstart").iterdir())
    assert sorted(p.name for p in dest.iterdir()) == want
    out = CliRunner().invoke(cli, ["simulate", str(dest), "--seed", "1", "-o", "json"])
    ref = CliRunner().invoke(cli, ["simulate", str(ROOT / "examples" / "quickstart"), "--seed", "1", "-o", "json"])
    assert out.exit_code == 0 and ref.exit_code == 0
    assert json.loads(out.stdout) == json.loads(ref.stdout)


@pytest.mark.parametrize(("args", "message"), [
    (["copy", "nope", "{tmp}/x"], "error: unknown example 'nope'; one of affinity-spread, "),
    (["copy", "quickstart", "{tmp}/full"], "exists and is not an empty folder"),
    (["copy", "quickstart", "{tmp}/file"], "is a file"),
])
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.yaml").write_text("x: 1\n")
    (tmp_path / "file").write_text("not a folder\n")
    res = CliRunner().invoke(cli, ["examples", *(a.format(tmp=tmp_path) for a in args)])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.output
    assert (tmp_path / "full" / "keep.yaml").read_text() == "x: 1\n"  # nothing overwritten


@pytest.mark.slow
def test_quickstart_from_a_wheel(tmp_path: Path) -> None:
    """Build the wheel, install it (with its dependencies) into a fresh virtual environment in a
    temporary folder, and run the quickstart from there, outside the checkout."""
    # Built from a copy of what the project's build reads, so no build/ is left in the checkout.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("src", "examples"):
        shutil.copytree(ROOT / name, source / name, ignore=junk)
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(source)],
                   check=True, timeout=600)
    (wheel,) = dist.glob("kubesched-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # Without PYTHONPATH: a checkout on it would make pip think kubesched is installed already.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=900, env=clean)
    work = tmp_path / "elsewhere"
    work.mkdir()
    kubesched = str(env_dir / "bin" / "kubesched")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kubesched, *args], cwd=work, env=clean, capture_output=True, text=True, timeout=300,
                              check=False)

    listed = run("examples", "list", "-o", "yaml")
    assert listed.returncode == 0, listed.stderr
    assert "quickstart" in [e["name"] for e in yaml.safe_load(listed.stdout)]
    copied = run("examples", "copy", "quickstart", "qs")
    assert copied.returncode == 0, copied.stderr
    sim = run("simulate", "qs", "--seed", "1", "-o", "json")
    assert sim.returncode == 0, sim.stderr
    ref = CliRunner().invoke(cli, ["simulate", str(ROOT / "examples" / "quickstart"), "--seed", "1", "-o", "json"])
    assert json.loads(sim.stdout) == json.loads(ref.stdout)
    # The installed package is the wheel's, not this checkout.
    where = subprocess.run([str(py), "-c", "import kubesched; print(kubesched.__file__)"], cwd=work, env=clean,
                           capture_output=True, text=True, check=True)
    assert str(env_dir) in where.stdout
