"""``kubesched run`` with its metrics address already in use (two replicas on one host, both on the
default 0.0.0.0:10251): one clear line and exit 2 before connecting, never a traceback (issue 11)."""

from __future__ import annotations

import socket
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli import cli

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def test_metrics_port_in_use_exits_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        result = CliRunner().invoke(cli, ["run", "--kubeconfig", str(kubeconfig), "--leader-elect=false",
                                          "--metrics-bind-address", f"127.0.0.1:{port}"])
    finally:
        taken.close()
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: cannot serve /metrics and health on 127.0.0.1:{port}: address already in use "
        "(set --metrics-bind-address to another HOST:PORT, or 0 to disable)"
    ]
    assert "Traceback" not in result.output and "secret-token" not in result.output
