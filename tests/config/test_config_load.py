"""Loading a KubeSchedulerConfiguration file the way kube-scheduler's --config does.

Pins cmd/kube-scheduler/app/options/configfile.go behaviour (strict decoding: unknown and
duplicate fields are errors; only kubescheduler.config.k8s.io/v1 is served) and the
field paths of pkg/scheduler/apis/config/validation/validation.go, with every problem
reported in one ConfigError.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import ConfigError, config_to_dict, load_config, loads_config
from kubesched.config.plugin_args import (
    DefaultPreemptionArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _write(tmp_path: Path, body: str, *, header: bool = True) -> Path:
    path = tmp_path / "sched.yaml"
    path.write_text((HEADER if header else "") + textwrap.dedent(body))
    return path


def _errors(excinfo: pytest.ExceptionInfo[ConfigError]) -> list[str]:
    return [str(e) for e in excinfo.value.errors]


def test_documented_bin_packing_example(tmp_path: Path) -> None:
    """The MostAllocated example of the "Resource Bin Packing" docs page loads into typed args."""
    path = _write(
        tmp_path,
        """
        profiles:
        - pluginConfig:
          - args:
              scoringStrategy:
                resources:
                - name: cpu
                  weight: 1
                - name: memory
                  weight: 1
                - name: intel.com/foo
                  weight: 3
                - name: intel.com/bar
                  weight: 3
                type: MostAllocated
            name: NodeResourcesFit
    """,
    )
    config = load_config(path)
    (profile,) = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.args_for("NodeResourcesFit") == NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            type="MostAllocated",
            resources=[
                ResourceSpec("cpu", 1),
                ResourceSpec("memory", 1),
                ResourceSpec("intel.com/foo", 3),
                ResourceSpec("intel.com/bar", 3),
            ],
        )
    )
    assert profile.args_for("DefaultPreemption") == DefaultPreemptionArgs(10, 100)
    assert profile.args_for("NoSuchPlugin") is None


def test_yaml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        profiles:
        - schedulerName: a
           pluginConfig: []
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert excinfo.value.source == str(path)
    (err,) = excinfo.value.errors
    assert err.message == "invalid YAML at line 6, column 16: mapping values are not allowed here"
    assert str(excinfo.value).startswith(f"{path}: invalid YAML at line 6, column 16")


def test_duplicate_keys_are_errors(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        parallelism: 8
        parallelism: 9
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert _errors(excinfo) == ['duplicate key "parallelism" at line 5, column 1 (first at line 4)']


@pytest.mark.parametrize(
    ("api_version", "needle"),
    [
        (
            "kubescheduler.config.k8s.io/v1beta3",
            'apiVersion: "kubescheduler.config.k8s.io/v1beta3" was removed in Kubernetes v1.29',
        ),
        ("kubescheduler.config.k8s.io/v1beta2", "was removed in Kubernetes v1.28"),
        ("kubescheduler.config.k8s.io/v1alpha1", "was removed"),
        ("example.com/v1", 'apiVersion: unsupported version "example.com/v1"'),
    ],
)
def test_api_version(tmp_path: Path, api_version: str, needle: str) -> None:
    path = _write(tmp_path, f"apiVersion: {api_version}\nkind: KubeSchedulerConfiguration\n", header=False)
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    (msg,) = _errors(excinfo)
    assert needle in msg
    assert "kubescheduler.config.k8s.io/v1" in msg


def test_missing_type_meta_in_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "parallelism: 8\n", header=False)
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert [e.path for e in excinfo.value.errors] == ["apiVersion", "kind"]


def test_wrong_kind(tmp_path: Path) -> None:
    path = _write(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n", header=False)
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert _errors(excinfo) == ['kind: must be "KubeSchedulerConfiguration", got "Pod"']


def test_unknown_fields_are_all_reported(tmp_path: Path) -> None:
    """Strict decoding; metricsBindAddress/healthzBindAddress are not v1 fields (validation_test.go's
    non-empty-*-bind-addr cases)."""
    path = _write(
        tmp_path,
        """
        metricsBindAddress: 0.0.0.0:9090
        healthzBindAddress: 0.0.0.0:9090
        leaderElection:
          leaseDurationn: 15s
        profiles:
        - schedulerName: a
          plugins:
            filter:
              enabled:
              - name: Foo
                wieght: 2
            placementGenerate: {}
          pluginConfig:
          - name: InterPodAffinity
            args:
              hardPodAffinityWeigh: 2
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert sorted(e.path for e in excinfo.value.errors) == sorted(
        [
            "metricsBindAddress",
            "healthzBindAddress",
            "leaderElection.leaseDurationn",
            "profiles[0].plugins.filter.enabled[0].wieght",
            "profiles[0].plugins.placementGenerate",
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeigh",
        ]
    )
    assert all(e.message == "unknown field" for e in excinfo.value.errors)


def test_decode_and_validation_errors_together(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        parallelism: "16"
        percentageOfNodesToScore: 150
        podInitialBackoffSeconds: 0
        leaderElection:
          leaseDuration: 15
        profiles:
        - schedulerName: a
          percentageOfNodesToScore: 150
        - pluginConfig:
          - name: DefaultPreemption
            args:
              minCandidateNodesPercentage: 200
          - name: DefaultPreemption
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    msgs = _errors(excinfo)
    assert sorted(msgs) == sorted(
        [
            'parallelism: must be int, got "16"',
            'leaderElection.leaseDuration: must be a duration string such as "1m30s", got 15',
            "profiles[1].pluginConfig[0].args.minCandidateNodesPercentage: "
            "not in valid range [0, 100], got 200",
            "profiles[0].percentageOfNodesToScore: must be in 0..100, got 150",
            "profiles[1].schedulerName: required",
            'profiles[1].pluginConfig[1]: repeated config for plugin "DefaultPreemption"',
            "percentageOfNodesToScore: must be in 0..100, got 150",
            "podInitialBackoffSeconds: must be greater than 0, got 0",
        ]
    )
    assert str(excinfo.value).count("\n") == len(msgs) - 1
    assert all(line.startswith(f"{path}: ") for line in str(excinfo.value).splitlines())


def test_two_unnamed_profiles(tmp_path: Path) -> None:
    path = _write(tmp_path, "profiles:\n- {}\n- {}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert sorted(e.path for e in excinfo.value.errors) == [
        "profiles[0].schedulerName",
        "profiles[1].schedulerName",
        "profiles[1].schedulerName",
    ]


def test_removed_plugin(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        profiles:
        - plugins:
            filter:
              enabled: [{name: EBSLimits}]
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    (err,) = excinfo.value.errors
    assert err.path == "profiles[0].plugins.filter.enabled[0]"
    assert "EBSLimits" in err.message and "removed" in err.message


def test_args_kind_and_shape(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        profiles:
        - pluginConfig:
          - name: InterPodAffinity
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: InterPodAffinityArgs
              hardPodAffinityWeight: 5
          - name: DefaultPreemption
            args:
              kind: InterPodAffinityArgs
          - name: NodeResourcesFit
            args: [1, 2]
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert [e.path for e in excinfo.value.errors] == [
        "profiles[0].pluginConfig[1].args.kind",
        "profiles[0].pluginConfig[2].args",
    ]
    assert "{ignoredResources: list[str] = []" in excinfo.value.errors[1].message


def test_out_of_tree_args_raw_or_typed() -> None:
    @dataclass
    class WindowTransferArgs:
        window_start: str
        window_end: str
        bandwidth_threshold: int = 0

        def validate(self) -> list[tuple[str, str]]:
            return [("bandwidthThreshold", "must be >= 0")] if self.bandwidth_threshold < 0 else []

    raw: dict[str, Any] = {
        "profiles": [
            {
                "schedulerName": "s",
                "plugins": {"multiPoint": {"enabled": [{"name": "WindowTransfer"}, {"name": "Other"}]}},
                "pluginConfig": [
                    {"name": "Other", "args": {"anything": [1, 2]}},
                    {"name": "WindowTransfer", "args": {"windowStart": "01:00", "windowEnd": "05:00"}},
                    {"name": "NoArgs"},
                ],
            }
        ],
    }
    config = load_config(raw, args_types={"WindowTransfer": WindowTransferArgs})
    profile = config.profiles[0]
    assert profile.args_for("WindowTransfer") == WindowTransferArgs("01:00", "05:00", 0)
    assert profile.args_for("Other") == {"anything": [1, 2]}
    assert profile.args_for("NoArgs") == {}
    # without args_types the same args stay raw
    assert load_config(raw).profiles[0].args_for("WindowTransfer") == {
        "windowStart": "01:00",
        "windowEnd": "05:00",
    }

    raw["profiles"][0]["pluginConfig"][1]["args"] = {
        "windowStart": "01:00",
        "bandwidthThreshold": -1,
        "colour": "red",
    }
    with pytest.raises(ConfigError) as excinfo:
        load_config(raw, args_types={"WindowTransfer": WindowTransferArgs})
    assert sorted(str(e) for e in excinfo.value.errors) == [
        "profiles[0].pluginConfig[1].args.colour: unknown field",
        "profiles[0].pluginConfig[1].args.windowEnd: required field is missing",
    ]
    # an enabled out-of-tree plugin whose args need fields gets no default entry (its factory sees None)
    del raw["profiles"][0]["pluginConfig"][1]
    config = load_config(raw, args_types={"WindowTransfer": WindowTransferArgs})
    assert config.profiles[0].args_for("WindowTransfer") is None


def test_extenders_strict_and_kept_raw(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        extenders:
        - urlPrefix: http://127.0.0.1:8888/
          filterVerb: filter
          prioritizeVerb: prioritize
          weight: 2
          enableHTTPS: true
          httpTimeout: 30s
          tlsConfig: {insecure: true}
          managedResources:
          - {name: example.com/foo, ignoredByScheduler: true}
    """,
    )
    config = load_config(path)
    assert config.extenders[0]["enableHTTPS"] is True
    assert config.extenders[0]["httpTimeout"] == "30s"

    path = _write(
        tmp_path,
        """
        extenders:
        - urlPrefix: http://127.0.0.1:8888/
          prioritizeVerb: prioritize
          enableHttps: true
          httpTimeout: thirty
          tlsConfig: {insecure: "yes"}
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert sorted(e.path for e in excinfo.value.errors) == sorted(
        [
            "extenders[0].enableHttps",
            "extenders[0].httpTimeout",
            "extenders[0].tlsConfig.insecure",
            "extenders[0].weight",
        ]
    )


def test_mapping_source_type_meta_optional_but_checked() -> None:
    assert load_config({"parallelism": 4}).parallelism == 4
    with pytest.raises(ConfigError) as excinfo:
        load_config({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"})
    assert [e.path for e in excinfo.value.errors] == ["apiVersion"]


def test_empty_and_non_mapping_documents(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="empty document"):
        load_config(_write(tmp_path, "", header=False))
    with pytest.raises(ConfigError, match="must be a mapping"):
        loads_config("- a\n- b\n")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path / "nope.yaml")
    assert excinfo.value.source == str(tmp_path / "nope.yaml")
    assert "cannot read file" in excinfo.value.errors[0].message


def test_profile_lookup_and_multiple_profiles(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        profiles:
        - schedulerName: default-scheduler
        - schedulerName: no-scoring-scheduler
          plugins:
            preScore:
              disabled: [{name: "*"}]
            score:
              disabled: [{name: "*"}]
    """,
    )
    config = load_config(path)
    no_scoring = config.profile("no-scoring-scheduler")
    assert no_scoring is not None
    assert no_scoring.plugins.score.disabled_names() == ["*"]
    assert no_scoring.plugins.score.enabled == []
    assert config.profile("missing") is None


def test_decode_error_hides_derived_validation_noise(tmp_path: Path) -> None:
    """A field that failed to decode keeps its default; rules over it are not reported again."""
    path = _write(
        tmp_path,
        """
        podInitialBackoffSeconds: 20
        podMaxBackoffSeconds: "30"
    """,
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(path)
    assert _errors(excinfo) == ['podMaxBackoffSeconds: must be int, got "30"']


@pytest.mark.parametrize(
    "raw",
    [
        None,
        {"leaderElection": {"leaseDuration": "1m30s", "renewDeadline": "1m", "retryPeriod": "250ms"}},
        {
            "profiles": [
                {"schedulerName": "a", "plugins": {"score": {"disabled": [{"name": "*"}]}}},
                {
                    "schedulerName": "b",
                    "plugins": {"multiPoint": {"enabled": [{"name": "Custom", "weight": 4}]}},
                    "pluginConfig": [{"name": "Custom", "args": {"x": [1]}}],
                },
            ],
            "extenders": [{"urlPrefix": "http://e/", "prioritizeVerb": "p", "weight": 1}],
        },
    ],
)
def test_config_to_dict_round_trips(raw: dict[str, Any] | None) -> None:
    """config_to_dict writes a v1 document that loads back to the same configuration."""
    config = load_config(raw)
    dumped = config_to_dict(config)
    assert dumped["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert loads_config(yaml.safe_dump(dumped)) == config
