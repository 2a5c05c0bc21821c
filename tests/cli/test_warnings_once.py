"""An invalid node or pod in a scenario is reported once, with its file and line: the loader's warning,
not also the scheduler core's log line about the same object (issue 11)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubesched.cli import cli

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: good}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: bad}
spec: {taints: ["x"]}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""


def test_each_problem_is_reported_once(tmp_path: Path) -> None:
    f = tmp_path / "scenario.yaml"
    f.write_text(NODES)
    for _ in range(2):  # the second run must not inherit the first one's logging levels
        result = CliRunner().invoke(cli, ["simulate", str(f), "-o", "json"])
        assert result.exit_code == 0
        lines = [line for line in result.stderr.splitlines() if "taints" in line]
        assert lines == [f'warning: {f}:9: document 2 (Node bad): spec.taints[0]: must be an object, got "x"']
        assert '"node": "good"' in result.stdout
