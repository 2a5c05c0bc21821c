"""The control-plane harness needs ``cryptography`` (issue 12): nothing but the harness and the
self-signed serving certificate may import it, and where it is missing (it is a core dependency
since ``kubesched run`` serves HTTPS, but an install may lack it) ``kubesched bench --backend
apiserver`` says in one line which extra to install (exit 2), never a traceback.

Each case runs in a child interpreter, where ``cryptography`` is made unimportable by a package of
that name first on ``PYTHONPATH`` whose ``__init__`` raises ImportError, as a missing install would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.bench.apiserver import ApiserverBenchError, SchedulerProcess
from kubesched.bench.errors import BenchError

EXPECTED_LINE = (
    "error: kubesched bench --backend apiserver needs the control-plane harness: pip install 'kubesched[controlplane]'"
)


def _python(
    code: str, *args: str, shim: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    child_env = {**os.environ, **(env or {})}
    if shim is not None:
        child_env["PYTHONPATH"] = os.pathsep.join([str(shim), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=child_env,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture
def no_cryptography(tmp_path: Path) -> Path:
    shim = tmp_path / "shim"
    (shim / "cryptography").mkdir(parents=True)
    (shim / "cryptography" / "__init__.py").write_text('raise ImportError("No module named \'cryptography\'")\n')
    return shim


def test_shim_hides_cryptography(no_cryptography: Path) -> None:
    # The premise of the tests below: in the child, cryptography cannot be imported.
    res = _python("import cryptography", shim=no_cryptography)
    assert res.returncode == 1 and "ImportError" in res.stderr


def test_bench_apiserver_without_the_extra_names_it(no_cryptography: Path, tmp_path: Path) -> None:
    # An empty binaries directory: were the extra not checked first, the run would stop at "not built"
    # (another message) instead of starting a control plane.
    empty = tmp_path / "bin"
    empty.mkdir()
    res = _python(
        "import sys; from kubesched.cli import main; main(sys.argv[1:])",
        "bench", "--workload", "SchedulingBasic", "--backend", "apiserver",
        "--nodes", "1", "--init-pods", "0", "--pods", "1", "--no-progress",
        shim=no_cryptography, env={"KUBESCHED_CONTROLPLANE_BIN": str(empty)},
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == [EXPECTED_LINE]
    assert res.stdout == ""


def test_harness_import_without_the_extra_names_it(no_cryptography: Path) -> None:
    res = _python(
        "import kubesched.kube.controlplane",
        shim=no_cryptography,
    )
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: kubesched.kube.controlplane needs the controlplane extra")
    assert last.endswith(": pip install 'kubesched[controlplane]'")


@pytest.mark.parametrize(
    "modules",
    [
        ["kubesched.cli"],
        ["kubesched.bench.apiserver"],
        ["kubesched.bench.harness", "kubesched.bench.sim", "kubesched.kube.run", "kubesched.testing"],
    ],
)
def test_importing_does_not_import_cryptography(modules: list[str]) -> None:
    # With cryptography installed (the test extra): it must still not be loaded at import time.
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cryptography'))\n"
    )
    res = _python(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_kube_scheduler_not_built_is_a_bench_error(tmp_path: Path) -> None:
    # Raised from inside a started control plane, so it must be a BenchError (one line, exit 2), not
    # the harness's FileNotFoundError, which the CLI would show as a traceback.
    cp: Any = SimpleNamespace(workdir=tmp_path, kubeconfig_path=tmp_path / "kubeconfig",
                              binaries=SimpleNamespace(kube_scheduler=None))
    with pytest.raises(ApiserverBenchError) as info:
        SchedulerProcess("kube-scheduler", cp, {})
    assert isinstance(info.value, BenchError)
    assert str(info.value) == "kube-scheduler not built: run scripts/controlplane.sh"
