"""``kubesched explain PATH --pod NAMESPACE/NAME [--at TIME] [--attempt N]`` and ``--pod FILE
[--at TIME]`` (issue 16). Scenarios and expectations are hand-traced:

- one node with 2 CPUs; ``low`` (priority 1, 2 CPUs) is bound at the start; ``high`` (priority
  100, 2 CPUs) arrives at 60 s: its first attempt finds no room (``Insufficient cpu``), and
  DefaultPreemption evicts ``low`` and nominates n1; its second attempt binds it to n1;
- ``--pod FILE`` at the start: the scenario's pending pods are in the queue, not on nodes; at a
  later ``--at`` they are wherever the scenario put them by then.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.testing import make_node, make_pod

ARRIVAL = "sim.kubesched.io/arrival"


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    objs = [
        make_node("n1").capacity(cpu="2", memory="8Gi").obj(),
        make_pod("low").req(cpu="2").priority(1).obj(),
        make_pod("high").req(cpu="2").priority(100).annotation(ARRIVAL, "60s").obj(),
    ]
    f = tmp_path / "scenario.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    return f


def _explain(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["explain", *args, "-o", "json"])
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_last_attempt_of_a_scenario_pod(scenario: Path) -> None:
    out = _explain(str(scenario), "--pod", "default/high")
    assert (out["pod"], out["at"], out["attempt"]) == ("default/high", "2026-01-01T00:01:00Z", 2)
    # The victim is gone by then: n1 fits, and the attempt bound it there.
    assert out["selected"] == "n1"
    assert out["outcome"] == {"result": "bound", "node": "n1", "message": None, "nominatedNode": None, "victims": []}


def test_the_first_attempt_shows_preemption(scenario: Path) -> None:
    out = _explain(str(scenario), "--pod", "high", "--attempt", "1")  # NAME alone: the default namespace
    assert out["attempt"] == 1 and out["selected"] is None
    assert out["nodes"]["n1"]["filter"]["NodeResourcesFit"] == {
        "code": "Unschedulable", "reasons": ["Insufficient cpu"]}
    assert out["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    # A preemption that found victims adds nothing to the message (upstream's FitError); the pod is
    # nominated to the node it freed.
    assert out["outcome"] == {"result": "unschedulable", "node": None, "victims": ["default/low"],
                              "message": "0/1 nodes are available: 1 Insufficient cpu.", "nominatedNode": "n1"}


def test_at_a_time_before_the_pod_was_tried(scenario: Path) -> None:
    result = CliRunner().invoke(cli, ["explain", str(scenario), "--pod", "default/high", "--at", "30s"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == "error: pod default/high: not in the scenario by 2026-01-01T00:00:30Z " \
        "(arrived pods: 1)"


@pytest.mark.parametrize(("args", "error"), [
    (["--pod", "default/nope"], "error: pod default/nope: not in the scenario (arrived pods: 2)"),
    (["--pod", "gone.yaml"], "error: --pod: gone.yaml: no such file, and not a NAMESPACE/NAME of a pod"),
    (["--pod", "Bad Name!"], "error: --pod: Bad Name!: no such file, and not a NAMESPACE/NAME of a pod"),
    (["--pod", "default/high", "--attempt", "3"], "error: pod default/high: --attempt 3: it had 2 attempt(s)"),
    (["--pod", "default/high", "--at", "soon"],
     "error: --at: invalid time 'soon' (use RFC 3339, e.g. 2026-01-01T21:00:00Z, or a duration such as 2h)"),
])
def test_bad_references_exit_2_with_one_line(scenario: Path, args: list[str], error: str) -> None:
    result = CliRunner().invoke(cli, ["explain", str(scenario), *args])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == error
    assert "Traceback" not in result.output


def test_a_file_pod_sees_the_scenario_as_it_is_at_the_time(scenario: Path, tmp_path: Path) -> None:
    probe = tmp_path / "probe.yaml"
    probe.write_text(yaml.safe_dump(make_pod("probe").req(cpu="1").obj()))
    # At the start low is still pending (in the queue, not on n1) and high has not arrived: room.
    at_start = _explain(str(scenario), "--pod", str(probe))
    assert at_start["nodes"]["n1"]["filter"]["NodeResourcesFit"]["code"] == "Success"
    # At 2 minutes high holds n1 instead (low was preempted): still no room, and the cluster is
    # the one the scenario has then.
    later = _explain(str(scenario), "--pod", str(probe), "--at", "2m")
    assert later["at"] == "2026-01-01T00:02:00Z"
    assert later["nodes"]["n1"]["filter"]["NodeResourcesFit"]["code"] == "Unschedulable"


def test_a_file_pod_counts_nominated_pods(tmp_path: Path) -> None:
    """A pod nominated to a node (waiting for its victim to go) counts there for pods of lower or
    equal priority (upstream RunFilterPluginsWithNominatedPods). Here the victim has a long
    termination grace: the simulator deletes victims at once, so the nomination is made by hand
    (``status.nominatedNodeName`` of a pending pod, which the queue takes as a nomination)."""
    objs = [
        make_node("n1").capacity(cpu="2", memory="8Gi").obj(),
        {**make_pod("waiting").req(cpu="2").priority(100).obj(), "status": {"nominatedNodeName": "n1"}},
    ]
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    probe = tmp_path / "probe.yaml"
    probe.write_text(yaml.safe_dump(make_pod("probe").req(cpu="1").priority(1).obj()))
    out = _explain(str(f), "--pod", str(probe))
    node = out["nodes"]["n1"]
    assert node["nominatedPods"] == ["default/waiting"]
    assert node["filter"]["NodeResourcesFit"] == {"code": "Unschedulable", "reasons": ["Insufficient cpu"]}
