"""``kubesched completion bash|zsh|fish``: the script click generates, and that it completes in a
real bash (subcommands and flags), as ``kubectl completion`` is used."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import cli


def _kubesched_on_path(tmp_path: Path) -> dict[str, str]:
    """A ``kubesched`` command for this interpreter, first on PATH (the installed console script
    may live in a directory the test's PATH does not name)."""
    exe = tmp_path / "bin" / "kubesched"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from kubesched.cli import main; main()" "$@"\n')
    exe.chmod(0o755)
    return {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize(("shell", "marker"), [
    ("bash", "complete -o nosort -F _kubesched_completion kubesched"),
    ("zsh", "#compdef kubesched"),
    ("fish", "complete --no-files --command kubesched"),
])
def test_the_script_for_each_shell(shell: str, marker: str) -> None:
    res = CliRunner().invoke(cli, ["completion", shell])
    assert res.exit_code == 0, res.output
    assert marker in res.output and "_KUBESCHED_COMPLETE" in res.output


def test_an_unknown_shell_exits_2() -> None:
    res = CliRunner().invoke(cli, ["completion", "tcsh"])
    assert res.exit_code == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in res.output


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize(("words", "cword", "want"), [
    ("kubesched sim", 1, {"simulate"}),
    ("kubesched simulate --emul", 2, {"--emulated-version"}),
    ("kubesched completion ", 2, {"bash", "zsh", "fish"}),
])
def test_bash_completes_subcommands_and_flags(tmp_path: Path, words: str, cword: int, want: set[str]) -> None:
    env = _kubesched_on_path(tmp_path)
    script = (
        'source <(kubesched completion bash)\n'
        f'COMP_WORDS=({words}); COMP_CWORD={cword}\n'
        '[ "${COMP_WORDS[*]}" != "" ] && [ ' + str(cword) + ' -ge ${#COMP_WORDS[@]} ] && COMP_WORDS+=("")\n'
        '_kubesched_completion kubesched\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == want, (out.stdout, out.stderr)
