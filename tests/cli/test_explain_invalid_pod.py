"""``kubesched explain`` of a pod with field problems: the scheduler never runs a plugin on such a pod,
so explain says why in one line and exits 2, instead of raising inside a plugin (issue 11)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.testing import make_node, make_pod


def test_explain_refuses_an_invalid_pod(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump(make_node("n1").capacity(cpu="2").obj()))
    pod = make_pod("p").obj()
    pod["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": "x", "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod))
    result = CliRunner().invoke(cli, ["explain", str(tmp_path / "nodes.yaml"), "--pod", str(pod_file)])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith("error: pod default/p: pod is invalid: spec.topologySpreadConstraints[0].maxSkew")
    assert "Traceback" not in result.output
