"""The shell scripts CI runs (issue 11, "The README's test command on a fresh machine").

Under ``set -o pipefail`` a pipeline into a reader that exits early (``head``, ``grep -q``) kills the
writer with SIGPIPE and fails the script with 141: that is how a cold build of the control plane
failed at its very last line (``etcd --version | head -n1``). No script may pipe into one."""

from __future__ import annotations

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
