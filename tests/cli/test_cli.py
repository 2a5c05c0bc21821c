"""The command line: JSON shapes of ``simulate -o json`` and ``explain -o json`` (issue 2's
interface), and bad input exiting with code 2 and a message naming the file and field."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.testing import make_node, make_pod

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def _write(path: Path, *objs: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


def _cluster(tmp_path: Path) -> Path:
    d = tmp_path / "cluster"
    d.mkdir()
    _write(
        d / "nodes.yaml",
        make_node("n1").capacity(cpu="2", memory="4Gi").obj(),
        make_node("n2").capacity(cpu="4", memory="8Gi").obj(),
    )
    _write(
        d / "pods.yaml",
        make_pod("small").req(cpu="1", memory="1Gi").obj(),
        make_pod("late").req(cpu="1").annotation("sim.kubesched.io/arrival", "90s").obj(),
        make_pod("huge").req(cpu="16").obj(),
    )
    return d


def test_simulate_json_shape(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(_cluster(tmp_path)), "-o", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"pods", "summary"}
    assert out["summary"] == {"pods": 3, "bound": 2, "pending": 1, "preempted": 0, "completed": 0, "deleted": 0}
    pods = {p["name"]: p for p in out["pods"]}
    for p in pods.values():
        assert set(p) == {"namespace", "name", "state", "node", "boundAt", "message", "arrivedAt", "attempts",
                          "firstAttemptAt", "lastAttemptAt", "endedAt", "preemptedBy", "waited"}
    assert pods["small"]["node"] in ("n1", "n2") and pods["small"]["message"] is None
    # 90 s after the documented default start, 2026-01-01T00:00:00Z.
    assert pods["late"]["boundAt"] == "2026-01-01T00:01:30Z"
    assert pods["huge"] == {
        "namespace": "default",
        "name": "huge",
        "state": "pending",
        "node": None,
        "boundAt": None,
        # 16 CPUs exceed both nodes' allocatable: UnschedulableAndUnresolvable, so preemption has no
        # candidate (upstream preemption.go: "Preemption is not helpful for scheduling").
        "message": "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        # Its story: it arrived at the start, was tried once (nothing changed after that to retry
        # it) and waited for NodeResourcesFit with the same message.
        "arrivedAt": "2026-01-01T00:00:00Z",
        "attempts": 1,
        "firstAttemptAt": "2026-01-01T00:00:00Z",
        "lastAttemptAt": "2026-01-01T00:00:00Z",
        "endedAt": None,
        "preemptedBy": None,
        "waited": [{"at": "2026-01-01T00:00:00Z", "kind": "unschedulable", "plugins": ["NodeResourcesFit"],
                    "message": "0/2 nodes are available: 2 Insufficient cpu. "
                    "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
                    "times": 1}],
    }


def test_simulate_start_and_until(tmp_path: Path) -> None:
    args = ["simulate", str(_cluster(tmp_path)), "-o", "json", "--start", "2026-06-01T21:00:00Z", "--until", "60s"]
    out = json.loads(CliRunner().invoke(cli, args).stdout)
    pods = {p["name"]: p for p in out["pods"]}
    assert pods["small"]["boundAt"] == "2026-06-01T21:00:00Z"
    assert "late" not in pods  # arrives at 90 s, after the run ended


def test_explain_json_shape(tmp_path: Path) -> None:
    pod = _write(tmp_path / "pod.yaml", make_pod("p").req(cpu="3").obj())
    result = CliRunner().invoke(cli, ["explain", str(_cluster(tmp_path)), "--pod", str(pod), "-o", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"pod", "profile", "preFilter", "preScore", "nodes", "feasible", "scored", "selected",
                        "message", "note"}
    assert out["pod"] == "default/p" and out["profile"] == "default-scheduler"
    assert out["preFilter"]["NodeResourcesFit"] == {"code": "Success", "message": ""}
    n1 = out["nodes"]["n1"]
    # Every Filter plugin ran on n1, even after NodeResourcesFit rejected it. 3 CPUs exceed n1's whole
    # allocatable, so preemption cannot help: UnschedulableAndUnresolvable (upstream fit.go).
    assert n1["filter"]["NodeResourcesFit"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["Insufficient cpu"],
    }
    assert n1["filter"]["TaintToleration"]["code"] == "Success"
    assert out["feasible"] == ["n2"] and out["selected"] == "n2"
    # One feasible node: kube-scheduler takes it without PreScore or Score (schedule_one.go).
    assert out["scored"] is False and out["preScore"] == {} and out["nodes"]["n2"]["scores"] == {}
    assert out["note"] == "only one node passes the filters: kube-scheduler takes it without scoring"
    assert out["message"] is None


def test_explain_scores_and_pre_score_statuses(tmp_path: Path) -> None:
    pod = _write(tmp_path / "pod.yaml", make_pod("p").req(cpu="1").obj())
    result = CliRunner().invoke(cli, ["explain", str(_cluster(tmp_path)), "--pod", str(pod), "-o", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["scored"] is True and sorted(out["feasible"]) == ["n1", "n2"]
    # A pod without affinity, spread constraints or images to count: those PreScores say Skip,
    # which is why their scores are missing below.
    assert out["preScore"]["InterPodAffinity"]["code"] == "Skip"
    assert out["preScore"]["NodeResourcesFit"]["code"] == "Success"
    scores = out["nodes"]["n2"]["scores"]
    assert "InterPodAffinity" not in scores
    for s in scores.values():
        assert set(s) == {"raw", "normalized", "weighted"}
    assert scores["TaintToleration"]["weighted"] == 3 * scores["TaintToleration"]["normalized"]
    assert out["nodes"]["n2"]["total"] == sum(s["weighted"] for s in scores.values())


def test_explain_shows_upstreams_status_for_nodes_a_pre_filter_result_leaves_out(tmp_path: Path) -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}
    p = make_pod("p").req(cpu="1").obj()
    p["spec"]["affinity"] = affinity
    pod = _write(tmp_path / "pod.yaml", p)
    cluster = _cluster(tmp_path)
    result = CliRunner().invoke(cli, ["explain", str(cluster), "--pod", str(pod), "-o", "json"])
    out = json.loads(result.stdout)
    assert out["nodes"]["n1"]["excluded"] == {
        "code": "UnschedulableAndUnresolvable",
        "message": "node(s) didn't satisfy plugin(s) [NodeAffinity]",
        "plugins": ["NodeAffinity"],
    }
    table = CliRunner().invoke(cli, ["explain", str(cluster), "--pod", str(pod)], env={"COLUMNS": "200"})
    assert "node(s) didn't satisfy plugin(s) [NodeAffinity]" in table.stdout


def test_explain_unschedulable_message(tmp_path: Path) -> None:
    pod = _write(tmp_path / "pod.yaml", make_pod("p").req(cpu="3", memory="16Gi").obj())
    out = json.loads(
        CliRunner().invoke(cli, ["explain", str(_cluster(tmp_path)), "--pod", str(pod), "-o", "json"]).output
    )
    assert out["selected"] is None and out["feasible"] == []
    assert out["message"] == "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."


def test_bad_config_exits_2_naming_fields(tmp_path: Path) -> None:
    cfg = _write(tmp_path / "cfg.yaml", {**CONFIG, "percentageOfNodesToScore": 150, "bogus": 1})
    result = CliRunner().invoke(cli, ["simulate", str(_cluster(tmp_path)), "--config", str(cfg)])
    assert result.exit_code == 2
    assert "percentageOfNodesToScore: must be in 0..100, got 150" in result.output
    assert "bogus: unknown field" in result.output
    assert "Traceback" not in result.output


def test_unregistered_plugin_exits_2(tmp_path: Path) -> None:
    cfg = dict(CONFIG)
    cfg["profiles"] = [{"schedulerName": "x", "plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]
    result = CliRunner().invoke(
        cli, ["simulate", str(_cluster(tmp_path)), "--config", str(_write(tmp_path / "c.yaml", cfg))]
    )
    assert result.exit_code == 2
    assert "NoSuchPlugin" in result.output and "not registered" in result.output


def test_bad_manifest_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n")
    result = CliRunner().invoke(cli, ["simulate", str(bad)])
    assert result.exit_code == 2
    assert str(bad) in result.output and "invalid YAML" in result.output


def test_bad_quantity_in_pod_does_not_stop_the_others(tmp_path: Path) -> None:
    d = _cluster(tmp_path)
    _write(d / "broken.yaml", make_pod("broken").req(cpu="lots").obj())
    out = json.loads(CliRunner().invoke(cli, ["simulate", str(d), "-o", "json"]).stdout)
    pods = {p["name"]: p for p in out["pods"]}
    assert pods["small"]["node"] is not None
    assert pods["broken"]["node"] is None
    assert "cpu" in pods["broken"]["message"]
