"""``kubesched run`` flag values (issue 11, "Option values"): refused with one line and exit 2 before
anything connects; flags override the file and the result is validated again, as kube-scheduler does
(cmd/kube-scheduler/app/options: ApplyTo, then Validate)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import cli

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.parametrize(("flags", "line"), [
    (["--kube-api-qps", "nan"], "Invalid value for '--kube-api-qps': nan is not a finite number"),
    (["--kube-api-qps", "inf"], "Invalid value for '--kube-api-qps': inf is not a finite number"),
    (["--kube-api-burst", "-1"], "Invalid value for '--kube-api-burst': -1 is not in the range 0<=x<=2147483647."),
    (["--leader-elect-lease-duration", "5s"],
     "error: leaderElection.leaseDuration: must be greater than renewDeadline (5s <= 10s)"),
    (["--leader-elect-retry-period", "0s"], "error: leaderElection.retryPeriod: must be greater than zero, got \"0s\""),
    (["--metrics-bind-address", "127.0.0.1:99999"],
     "error: invalid address '127.0.0.1:99999': expected HOST:PORT with a port from 0 to 65535"),
    (["-v", "99999999999999999999"],
     "Invalid value for '-v' / '--v': '99999999999999999999' is not a verbosity level (0 to 2147483647)"),
])
def test_bad_flag_values_exit_2(tmp_path: Path, flags: list[str], line: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    result = CliRunner().invoke(cli, ["run", "--kubeconfig", str(kubeconfig), "--leader-elect=true", *flags])
    assert result.exit_code == 2
    assert line in result.stderr.splitlines() or any(line in x for x in result.stderr.splitlines())
    assert "Traceback" not in result.output
