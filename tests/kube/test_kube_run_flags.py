"""``kubesched run`` flag values (issue 11, "Option values"): refused with one line and exit 2 before
anything connects; flags override the file and the result is validated again, as kube-scheduler does
(cmd/kube-scheduler/app/options: ApplyTo, then Validate)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
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
    # issue 13: kube-scheduler's --feature-gates messages (k8s.io/component-base/featuregate), --master,
    # --profiling and --contention-profiling as booleans
    (["--feature-gates=Foo=true"], "error: --feature-gates: unrecognized feature gate: Foo"),
    # v1.35.4's gates (SchedulerQueueingHints is not registered in v1.37)
    (["--emulated-version=1.35", "--feature-gates=SchedulerQueueingHints=maybe"],
     'error: --feature-gates: invalid value of SchedulerQueueingHints=maybe, err: strconv.ParseBool: '
     'parsing "maybe": invalid syntax'),
    (["--emulated-version=1.35", "--feature-gates=SchedulerQueueingHints"],
     "error: --feature-gates: missing bool value for SchedulerQueueingHints"),
    (["--emulated-version=1.35", "--feature-gates=SchedulerQueueingHints=false"],
     "error: --feature-gates: cannot set feature gate SchedulerQueueingHints to false, feature is locked to true"),
    # v1.37.2's, the default release
    (["--feature-gates=SchedulerQueueingHints=false"],
     "error: --feature-gates: unrecognized feature gate: SchedulerQueueingHints"),
    (["--feature-gates=NodeDeclaredFeatures=false"],
     "error: --feature-gates: cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
    (["--emulated-version=1.34"],
     "Invalid value for '--emulated-version': kubesched behaves as kube-scheduler 1.35..1.37 "
     "(emulation version 1.34 is not between [1.35, 1.37])"),
    (["--feature-gates=wardle:A=true"], "error: --feature-gates: component not registered: wardle"),
    (["--master=http://[::1"], "error: --master 'http://[::1': not a URL: Invalid IPv6 URL"),
    (["--master=ftp://apiserver"], "error: --master 'ftp://apiserver': expected a URL such as https://10.0.0.1:6443"),
    (["--profiling=maybe"], "Invalid value for '--profiling': 'maybe' is not a valid boolean."),
    (["--contention-profiling=2"], "Invalid value for '--contention-profiling': '2' is not a valid boolean."),
    # issue 13: secure serving's flags (k8s.io/apiserver/pkg/authorization/path: only a trailing *)
    (["--authorization-always-allow-paths=/healthz,/a*b"],
     "error: --authorization-always-allow-paths: only trailing * allowed in '/a*b'"),
    (["--secure-port=70000"], "Invalid value for '--secure-port': 70000 is not in the range 0<=x<=65535."),
    (["--bind-address=localhost"], "Invalid value for '--bind-address': 'localhost' is not an IP address"),
    (["--tls-cert-file=/nonexistent.crt"], "error: --tls-cert-file and --tls-private-key-file must be set together"),
    (["--tls-cert-file=/nonexistent.crt", "--tls-private-key-file=/nonexistent.key"],
     "error: serving certificate --tls-cert-file /nonexistent.crt: No such file or directory"),
])
def test_bad_flag_values_exit_2(tmp_path: Path, flags: list[str], line: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    result = CliRunner().invoke(cli, ["run", "--kubeconfig", str(kubeconfig), "--leader-elect=true", *flags])
    assert result.exit_code == 2
    assert line in result.stderr.splitlines() or any(line in x for x in result.stderr.splitlines())
    assert "Traceback" not in result.output


def test_write_config_to_writes_the_defaulted_configuration_and_exits_0(tmp_path: Path) -> None:
    """kube-scheduler's --write-config-to (options.LogOrWriteConfig): the configuration with the
    flags applied, as YAML, then exit 0 without connecting (the kubeconfig's server is unreachable)."""
    from kubesched.config.defaults import default_plugins
    from kubesched.config.load import config_to_dict, load_config

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    out = tmp_path / "written.yaml"
    result = CliRunner().invoke(cli, [
        "run", f"--kubeconfig={kubeconfig}", f"--write-config-to={out}", "--leader-elect=false", "--profiling=false",
    ])
    assert result.exit_code == 0, result.output
    assert '"Wrote configuration"' in result.stderr
    written = load_config(str(out))
    assert written.leader_election.leader_elect is False and written.enable_profiling is False
    doc = yaml.safe_load(out.read_text())
    profile = doc["profiles"][0]
    assert profile["schedulerName"] == "default-scheduler"
    enabled = [(p["name"], p["weight"]) for p in profile["plugins"]["multiPoint"]["enabled"]]
    assert enabled == [(p.name, p.weight) for p in default_plugins().multi_point.enabled]
    args = {c["name"] for c in profile["pluginConfig"]}
    assert args >= {"DefaultPreemption", "NodeResourcesFit", "PodTopologySpread"}
    assert config_to_dict(written) == doc  # loads back to the same configuration


def test_write_config_to_an_unwritable_path_is_one_line_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", f"--write-config-to={tmp_path / 'absent' / 'c.yaml'}"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: --write-config-to: {tmp_path / 'absent' / 'c.yaml'}: No such file or directory"
    ]
