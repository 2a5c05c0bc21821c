"""``kubesched run`` flags, named like kube-scheduler's (cmd/kube-scheduler/app/options): the
--leader-elect* flags and --kube-api-qps/--kube-api-burst override the configuration file,
klog's ``-v=2`` works, and bad input exits 2 with one line naming the problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

import kubesched.kube.run
from kubesched.cli import cli
from kubesched.config.types import LeaderElectionConfiguration
from kubesched.kube.run import apply_leader_election_flags

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 20
  burst: 40
leaderElection:
  leaderElect: true
  resourceNamespace: from-config
profiles:
  - schedulerName: mine
"""


class FakeApp:
    seen: ClassVar[dict[str, Any]] = {}

    def __init__(self, config: Any, registry: Any, options: Any) -> None:
        FakeApp.seen = {"config": config, "options": options}

    def run(self) -> int:
        return 0


@pytest.fixture
def fake_app(monkeypatch: pytest.MonkeyPatch) -> type[FakeApp]:
    monkeypatch.setattr(kubesched.kube.run, "SchedulerApp", FakeApp)
    return FakeApp


def test_flags_override_the_configuration(tmp_path: Path, fake_app: type[FakeApp]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG)
    args = [
        "run",
        f"--config={cfg}",
        "--kubeconfig=/k",
        "--leader-elect=false",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline=20s",
        "--leader-elect-retry-period=5s",
        "--leader-elect-resource-name=lease",
        "--kube-api-qps=100",
        "--metrics-bind-address=127.0.0.1:0",
        "--shutdown-grace-period=1m",
        "-v=4",
        "--logging-format=json",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    config, options = fake_app.seen["config"], fake_app.seen["options"]
    le = config.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (False, 30.0, 20.0, 5.0)
    assert (le.resource_name, le.resource_namespace) == ("lease", "from-config")
    assert (config.client_connection.qps, config.client_connection.burst) == (100.0, 40)
    assert options.kubeconfig == "/k"
    assert options.metrics_bind_address == "127.0.0.1:0"
    assert options.shutdown_grace == 60.0


def test_bare_leader_elect_flag_means_true(tmp_path: Path, fake_app: type[FakeApp]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG.replace("leaderElect: true", "leaderElect: false"))
    assert CliRunner().invoke(cli, ["run", f"--config={cfg}", "--leader-elect", "-v", "2"]).exit_code == 0
    assert fake_app.seen["config"].leader_election.leader_elect is True
    # kube-scheduler's serving defaults (cmd/kube-scheduler/app/options): HTTPS on 0.0.0.0:10259,
    # health paths always allowed; no plain HTTP unless --metrics-bind-address asks for it (issue 13).
    options = fake_app.seen["options"]
    assert options.metrics_bind_address == ""
    assert (options.serving.bind_address, options.serving.secure_port) == ("0.0.0.0", 10259)
    assert options.serving.always_allow_paths == ("/healthz", "/readyz", "/livez")


def test_bad_input_exits_2_with_the_reason(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", f"--kubeconfig={tmp_path / 'absent'}"])
    assert result.exit_code == 2
    assert "cannot read kubeconfig" in result.output
    result = CliRunner().invoke(cli, ["run", "--leader-elect-lease-duration=soon"])
    assert result.exit_code == 2
    assert "--leader-elect-lease-duration" in result.output
    result = CliRunner().invoke(cli, ["run", "-v=lots"])
    assert result.exit_code == 2


def test_apply_leader_election_flags_leaves_unset_values() -> None:
    base = LeaderElectionConfiguration(resource_name="x")
    out = apply_leader_election_flags(base, retry_period=1.0)
    assert out.retry_period == 1.0 and out.resource_name == "x" and out.lease_duration == 15.0
    assert base.retry_period == 2.0  # not modified in place


#: kubeadm v1.35's kube-scheduler static pod command (cmd/kubeadm/app/phases/controlplane/manifests.go,
#: getSchedulerCommand), plus the other flags of issue 13 an operator adds to it.
KUBEADM_COMMAND = [
    "--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
    "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf",
    "--bind-address=127.0.0.1",
    "--kubeconfig=/etc/kubernetes/scheduler.conf",
    "--leader-elect=true",
]


def test_a_kubeadm_command_line_reaches_the_app(fake_app: type[FakeApp]) -> None:
    args = [
        "run", *KUBEADM_COMMAND,
        "--master=https://10.0.0.1:6443",
        "--feature-gates=SchedulerAsyncPreemption=false,InformerResourceVersion=true",
        "--emulated-version=1.35",  # a kubeadm v1.35 cluster: its gates and their warnings
        "--profiling=false",
        "--contention-profiling=false",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    config, options = fake_app.seen["config"], fake_app.seen["options"]
    assert options.kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert options.master == "https://10.0.0.1:6443"
    assert options.serving.bind_address == "127.0.0.1" and options.serving.secure_port == 10259
    assert options.serving.authentication_kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert options.serving.authorization_kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert config.leader_election.leader_elect is True
    assert (config.enable_profiling, config.enable_contention_profiling) == (False, False)
    gates = options.feature_gates
    assert gates.enabled("SchedulerAsyncPreemption") is False and gates.enabled("InformerResourceVersion") is True
    # kube-scheduler's GA warning, and one line naming what kubesched ignores
    ga = "Setting GA feature gate InformerResourceVersion=true. It will be removed in a future release."
    assert ga in result.stderr
    ignored = [line for line in result.stderr.splitlines() if "without effect in kubesched" in line]
    assert len(ignored) == 1 and ignored[0].endswith(": SchedulerAsyncPreemption=false")


def test_profiling_flags_default_to_the_configuration(fake_app: type[FakeApp], tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG + "enableProfiling: false\n")
    assert CliRunner().invoke(cli, ["run", f"--config={cfg}"]).exit_code == 0
    config, options = fake_app.seen["config"], fake_app.seen["options"]
    assert (config.enable_profiling, config.enable_contention_profiling) == (False, False)
    assert options.master is None and options.feature_gates.explicit == {}
    # the flag overrides the file (a bare --profiling means true, as a Go bool flag)
    assert CliRunner().invoke(cli, ["run", f"--config={cfg}", "--profiling"]).exit_code == 0
    assert fake_app.seen["config"].enable_profiling is True
