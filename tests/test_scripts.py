"""The shell scripts CI runs (issue 11, "The README's test command on a fresh machine"), and what
scripts/controlplane.sh and scripts/ci-controlplane.sh promise their callers (releases, one line).

Under ``set -o pipefail`` a pipeline into a reader that exits early (``head``, ``grep -q``) kills the
writer with SIGPIPE and fails the script with 141: that is how a cold build of the control plane
failed at its very last line (``etcd --version | head -n1``). No script may pipe into one."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("scripts/*.sh"), ROOT / ".ci" / "run"])
EARLY_EXIT_READERS = re.compile(r"\|\s*(head\b|grep\s+(-\w*q|--quiet)|sed\s+-n\s*['\"]?\d+q)")


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_no_pipe_into_a_reader_that_exits_early(script: Path) -> None:
    offending = [
        f"{script.name}:{n}: {line.strip()}"
        for n, line in enumerate(script.read_text().splitlines(), 1)
        if not line.lstrip().startswith("#") and EARLY_EXIT_READERS.search(line)
    ]
    assert offending == []


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_scripts_parse(script: Path) -> None:
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_the_trap_is_real() -> None:
    # What the test above guards against, on this machine's bash: a writer that outlives head.
    r = subprocess.run(["bash", "-c", "set -o pipefail; yes | head -n1 >/dev/null"], check=False)
    assert r.returncode == 141


# --- scripts/controlplane.sh: one Kubernetes release per run, chosen by --k8s-version ----------------

CONTROLPLANE = ROOT / "scripts" / "controlplane.sh"
CI_CONTROLPLANE = ROOT / "scripts" / "ci-controlplane.sh"
SUPPORTED = ["v1.37.2", "v1.35.4"]  # the default first


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=60, check=False)


def test_controlplane_lists_the_supported_releases_default_first() -> None:
    r = _run("bash", str(CONTROLPLANE), "--list-versions")
    assert (r.returncode, r.stdout.splitlines()) == (0, SUPPORTED)


@pytest.mark.parametrize("argv", [
    ["--k8s-version", "v1.36.3"],
    ["--k8s-version=1.37.2"],  # the v is part of the version
    ["--k8s-version"],
])
def test_controlplane_refuses_an_unsupported_release_before_building(argv: list[str]) -> None:
    r = _run("bash", str(CONTROLPLANE), *argv)
    assert r.returncode == 2 and r.stdout == ""
    assert "unsupported Kubernetes version" in r.stderr or "needs a value" in r.stderr


def test_controlplane_reads_the_release_from_the_environment(tmp_path: Path) -> None:
    env = {**os.environ, "KUBESCHED_K8S_VERSION": "v1.34.0", "KUBESCHED_CONTROLPLANE_CACHE": str(tmp_path)}
    r = _run("bash", str(CONTROLPLANE), "--print-dir", env=env)
    assert r.returncode == 2
    assert "unsupported Kubernetes version: 'v1.34.0' (supported: v1.37.2 v1.35.4)" in r.stderr
    assert list(tmp_path.iterdir()) == []


FAKE_CONTROLPLANE = """#!/usr/bin/env bash
# Stands in for controlplane.sh: records its arguments, makes the release's directory.
echo "$*" >>"$CALLS"
version=v1.35.4 print=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --list-versions) printf 'v1.35.4\\nv1.37.2\\n'; exit 0 ;;
    --k8s-version) version=$2; shift ;;
    --print-dir) print=1 ;;
  esac
  shift
done
dir=$CACHE/$version
mkdir -p "$dir"
for b in etcd kube-apiserver kube-scheduler; do printf '#!/bin/sh\\necho Kubernetes %s\\n' "$version" >"$dir/$b"; done
chmod +x "$dir"/*
echo "progress on stdout is not allowed through ci-controlplane.sh" >&2
[[ $print == 1 ]] && echo "$dir"
exit 0
"""


def test_ci_controlplane_builds_every_release_and_prints_only_the_default_directory(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "ci-controlplane.sh").write_text(CI_CONTROLPLANE.read_text())
    (scripts / "controlplane.sh").write_text(FAKE_CONTROLPLANE)
    (scripts / "controlplane.sh").chmod(0o755)
    calls = tmp_path / "calls"
    env = {**os.environ, "CALLS": str(calls), "CACHE": str(tmp_path / "cache")}
    env.pop("KUBESCHED_K8S_VERSION", None)
    r = _run("bash", str(scripts / "ci-controlplane.sh"), "--with-kwok", "--with-helm", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{tmp_path / 'cache' / 'v1.35.4'}\n"  # exactly one line: the default release
    assert calls.read_text().splitlines() == [
        "--print-dir --with-kwok --with-helm",
        "--list-versions",
        "--print-dir --k8s-version v1.37.2 --with-kwok --with-helm",
    ]
    assert "Kubernetes v1.37.2" in r.stderr


def test_ci_controlplane_fails_when_a_release_lacks_a_binary(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "ci-controlplane.sh").write_text(CI_CONTROLPLANE.read_text())
    # the v1.37.2 build "succeeds" without kube-scheduler
    (scripts / "controlplane.sh").write_text(
        FAKE_CONTROLPLANE.replace(
            'chmod +x "$dir"/*', 'chmod +x "$dir"/*; [[ $version == v1.35.4 ]] || rm "$dir/kube-scheduler"'
        )
    )
    (scripts / "controlplane.sh").chmod(0o755)
    env = {**os.environ, "CALLS": str(tmp_path / "calls"), "CACHE": str(tmp_path / "cache")}
    r = _run("bash", str(scripts / "ci-controlplane.sh"), env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert f"missing {tmp_path / 'cache' / 'v1.37.2' / 'kube-scheduler'}" in r.stderr
