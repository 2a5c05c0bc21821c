"""Our ``--feature-gates`` parser against the real kube-scheduler of each release, value for value.

For each value the binary runs as ``kube-scheduler --feature-gates=VALUE --kubeconfig=K
--write-config-to=F`` (it exits before connecting anywhere) and its ``"command failed" err="..."``
line (cmd/kube-scheduler/app's run.go via component-base's cli.Run) must say what
``parse_feature_gates([VALUE], release)`` says; the values it accepts must be accepted by us too,
with the same GA/deprecated warnings (component-base featuregate/feature_gate.go, unsafeSetFromMap).
The binaries are v1.35.4 (``find_binaries("v1.35")``) and v1.37.2 (the default control plane);
under ``CI`` a missing one fails.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from kubesched.config.feature_gates import FeatureGateError, known_feature_gates, parse_feature_gates
from kubesched.kube.controlplane import require_binaries

pytestmark = pytest.mark.controlplane

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: unused}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""
COMMAND_FAILED = re.compile(r'^E\d{4} [\d:.]+\s+\d+ run\.go:\d+\] "command failed" err=(".*")$', re.M)
KLOG_LINE = re.compile(r"^[IW]\d{4} [\d:.]+\s+\d+ feature_gate\.go:\d+\] (.*)$", re.M)

#: Values refused by both releases' binaries, with different reasons where the releases differ.
REFUSED = {
    "1.35": [
        "Foo=true",
        "SchedulerAsyncPreemption=maybe",
        "SchedulerAsyncPreemption",
        "wardle:X=true",
        "SchedulerAsyncPreemption=false,kube:GenericWorkload=true",
        "SchedulerQueueingHints=false",  # GA, locked
        "GangScheduling=true",  # depends on GenericWorkload
        "TopologyAwareWorkloadScheduling=true",  # not registered before 1.36
        "PodSchedulingReadiness=false,SchedulerQueueingHints=false",  # two errors
    ],
    "1.37": [
        "Foo=true",
        "SchedulerAsyncPreemption=maybe",
        "SchedulerAsyncPreemption",
        "wardle:X=true",
        "SchedulerAsyncPreemption=false,kube:GenericWorkload=true",
        "GangScheduling=true",  # removed in 1.37
        "SchedulerQueueingHints=true",  # removed in 1.37
        "NodeDeclaredFeatures=false",  # GA, locked in 1.37
        "TopologyAwareWorkloadScheduling=true",  # depends on GenericWorkload
        "NodeDeclaredFeatures=false,PodSchedulingReadiness=false",  # two errors
    ],
}
#: Values both accept; the GA and deprecated ones log a warning.
ACCEPTED = {
    "1.35": ["SchedulerAsyncPreemption=false,GenericWorkload=true", "InformerResourceVersion=false",
             "AllowDNSOnlyNodeCSR=true"],
    "1.37": ["StorageCapacityScoring=false,GenericWorkload=true", "InformerResourceVersion=false",
             "AllowDNSOnlyNodeCSR=true", "NodeDeclaredFeatures=true"],
}
RELEASES = {"1.35": "v1.35", "1.37": "v1.37"}


def _run(release: str, value: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    binary = require_binaries(RELEASES[release]).kube_scheduler
    assert binary is not None, "scripts/controlplane.sh builds kube-scheduler"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    argv = [str(binary), f"--feature-gates={value}", f"--kubeconfig={kubeconfig}",
            f"--write-config-to={tmp_path / 'config.yaml'}"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def _go_errors(err: str) -> set[str]:
    """The messages of a Go error line: utilerrors' aggregate prints several as ``[a, b]``. Our
    messages themselves contain ", ", so split only where the next message starts (capitalised or
    one of featuregate's lower-case openings)."""
    if not err.startswith("[") or not err.endswith("]"):
        return {err}
    return set(re.split(r", (?=cannot set|unrecognized|[A-Z])", err[1:-1]))


@pytest.mark.parametrize(("release", "value"), [(r, v) for r, values in REFUSED.items() for v in values])
def test_refused_with_the_binarys_messages(release: str, value: str, tmp_path: Path) -> None:
    proc = _run(release, value, tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = COMMAND_FAILED.findall(proc.stderr)
    assert len(found) == 1, proc.stderr
    with pytest.raises(FeatureGateError) as info:
        parse_feature_gates([value], release)
    # Go prints several errors in map order; ours are in command-line order: compare as sets.
    assert _go_errors(json.loads(found[0])) == set(info.value.errors)
    assert len(info.value.errors) == (2 if "," in value and "kube:" not in value else 1)


@pytest.mark.parametrize(("release", "value"), [(r, v) for r, values in ACCEPTED.items() for v in values])
def test_accepted_with_the_binarys_warnings(release: str, value: str, tmp_path: Path) -> None:
    proc = _run(release, value, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "config.yaml").is_file()
    logged = {line for line in KLOG_LINE.findall(proc.stderr) if "feature gate" in line}
    assert logged == set(parse_feature_gates([value], release).warnings)


HELP_GATE = re.compile(r"kube:(\w+)=true\|false \((ALPHA|BETA) - default=(true|false)\)")


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_help_lists_our_alpha_and_beta_gates_with_their_defaults(release: str) -> None:
    # ``--feature-gates``'s usage lists every alpha and beta gate (featuregate's KnownFeatures)
    binary = require_binaries(RELEASES[release]).kube_scheduler
    assert binary is not None
    usage = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    listed = {name: (stage, default == "true") for name, stage, default in HELP_GATE.findall(usage)}
    ours = {
        name: (spec.pre_release, spec.default)
        for name, spec in known_feature_gates(release).items()
        if spec.pre_release in ("ALPHA", "BETA")
    }
    assert len(listed) > 100
    assert listed == ours
