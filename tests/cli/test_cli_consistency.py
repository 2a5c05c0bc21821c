"""One CLI (issue 16): ``-v`` and ``--logging-format`` as kube-scheduler's on every offline command,
a scenario folder's own KubeSchedulerConfiguration, ``kubesched version``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched import __version__
from kubesched.cli import cli
from kubesched.testing import make_node, make_pod

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    d = tmp_path / "scenario"
    d.mkdir()
    (d / "cluster.yaml").write_text(yaml.safe_dump_all([
        make_node("n1").capacity(cpu="2", memory="4Gi").obj(),
        make_pod("p").req(cpu="1").obj(),
    ]))
    return d


@pytest.mark.parametrize("flag", [["-v=2"], ["-v", "2"], ["--v=2"], ["--v", "2"]])
@pytest.mark.parametrize("command", ["simulate", "explain"])
def test_every_spelling_of_v_works(command: str, flag: list[str], scenario: Path, tmp_path: Path) -> None:
    args = [command, *flag, str(scenario)]
    if command == "explain":
        pod = tmp_path / "pod.yaml"
        pod.write_text(yaml.safe_dump(make_pod("q").req(cpu="1").obj()))
        args += ["--pod", str(pod)]
    code, _, err = invoke(*args)
    assert code == 0, err


def test_a_bad_verbosity_is_one_line(scenario: Path) -> None:
    code, _, err = invoke("simulate", "-v=high", str(scenario))
    assert code == 2
    assert err.strip().splitlines() == [
        "error: Invalid value for '-v' / '--v': 'high' is not a valid integer (see 'cli simulate --help')"
    ]


def test_json_logging_on_simulate(scenario: Path) -> None:
    code, _, err = invoke("simulate", "-v=2", "--logging-format", "json", str(scenario))
    assert code == 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    assert any("msg" in json.loads(line) for line in lines)


def test_the_scenarios_configuration_is_used_without_config(tmp_path: Path) -> None:
    """examples/gang holds its KubeSchedulerConfiguration (the Coscheduling profile): without
    --config it is the run's configuration, said on stderr, and never read as a manifest."""
    gang = tmp_path / "gang"
    shutil.copytree(EXAMPLES / "gang", gang)
    code, out, err = invoke("simulate", str(gang), "-o", "json")
    assert code == 0, err
    assert "note: using the scenario's configuration" in err and "scheduler-config.yaml" in err
    with_config = invoke("simulate", str(gang), "--config", str(gang / "scheduler-config.yaml"), "-o", "json")
    assert with_config[0] == 0
    assert json.loads(out) == json.loads(with_config[1])


def test_two_configurations_in_a_scenario_need_config(scenario: Path) -> None:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    for name in ("a.yaml", "b.yaml"):
        (scenario / name).write_text(yaml.safe_dump(cfg))
    code, _, err = invoke("simulate", str(scenario))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "more than one KubeSchedulerConfiguration in the scenario; choose one with --config" in err
    code, _, err = invoke("simulate", str(scenario), "--config", str(scenario / "a.yaml"))
    assert code == 0, err  # the other one is not read as a manifest either


def test_version() -> None:
    code, out, _ = invoke("version")
    assert code == 0 and out.startswith(f"kubesched {__version__}: behaves as kube-scheduler v1.37.2 by default")
    code, out, _ = invoke("version", "-o", "json")
    assert json.loads(out)["releases"] == {"1.35": "v1.35.4", "1.36": "v1.36.3", "1.37": "v1.37.2"}
    assert json.loads(out)["defaultRelease"] == "1.37"
