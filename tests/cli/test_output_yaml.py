"""``-o yaml`` on every command that prints results (issue 16): the same document as ``-o json``,
key for key and in the same order (simulate, explain, trace alibaba-gpu, bench, version)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli

ROOT = Path(__file__).resolve().parents[2]
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-0,64000,262144,2,P100\nn-1,96000,786432,8,V100M32\n"
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-0,4000,8192,1,500\np-1,2000,4096,0,0\n"
POD = """apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""
#: Fields that differ from one run to the next (timings, memory).
VOLATILE = re.compile(r"seconds|per_second|_ms$|rss|cpu_seconds")


def _same(doc_json: Any, doc_yaml: Any) -> None:
    if isinstance(doc_json, dict):
        assert isinstance(doc_yaml, dict) and list(doc_json) == list(doc_yaml)
        for k, v in doc_json.items():
            if not VOLATILE.search(k):
                _same(v, doc_yaml[k])
    elif isinstance(doc_json, list):
        assert isinstance(doc_yaml, list) and len(doc_json) == len(doc_yaml)
        for a, b in zip(doc_json, doc_yaml, strict=True):
            _same(a, b)
    else:
        assert doc_json == doc_yaml


def _args(tmp_path: Path) -> dict[str, list[str]]:
    nodes, pods, pod = tmp_path / "nodes.csv", tmp_path / "pods.csv", tmp_path / "pod.yaml"
    nodes.write_text(NODES)
    pods.write_text(PODS)
    pod.write_text(POD)
    quickstart = str(ROOT / "examples" / "quickstart")
    return {
        "simulate": ["simulate", quickstart, "--seed", "1"],
        "explain": ["explain", quickstart, "--pod", str(pod)],
        "trace": ["trace", "alibaba-gpu", "--nodes", str(nodes), "--pods", str(pods), "--policy", "FGD"],
        "bench": ["bench", "--workload", "SchedulingBasic", "--nodes", "5", "--init-pods", "0", "--pods", "5",
                  "--no-progress"],
        "version": ["version"],
    }


@pytest.mark.parametrize("command", ["simulate", "explain", "trace", "bench", "version"])
def test_yaml_is_the_json_document(tmp_path: Path, command: str) -> None:
    args = _args(tmp_path)[command]
    run: Callable[[str], Any] = lambda fmt: CliRunner().invoke(cli, [*args, "-o", fmt])  # noqa: E731
    as_json, as_yaml = run("json"), run("yaml")
    assert as_json.exit_code == 0, as_json.output
    assert as_yaml.exit_code == 0, as_yaml.output
    _same(json.loads(as_json.stdout), yaml.safe_load(as_yaml.stdout))
