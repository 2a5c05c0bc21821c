"""The release kubesched behaves as (``--emulated-version``) and the table of what each changed.

Upstream: component-base's ``--emulated-version`` (compatibility/registry.go: ``major.minor``,
``kube=`` prefix), pkg/scheduler/apis/config/v1/default_plugins.go at v1.35.4 and v1.37.2 (the
MultiPoint order below is copied from those files), validation_pluginargs.go at v1.35.4 and v1.36.3.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.config import ConfigError, load_config
from kubesched.config.releases import (
    CHANGES,
    DEFAULT_RELEASE,
    RELEASES,
    V1_35,
    V1_36,
    V1_37,
    ReleaseError,
    parse_emulated_version,
    unported,
)
from kubesched.plugins.registry import default_registry
from kubesched.testing import make_node, new_framework

#: getDefaultPlugins' MultiPoint names, in order (DynamicResources put before DefaultPreemption by
#: applyFeatureGates). v1.36.3's list is v1.35.4's and then NodeDeclaredFeatures, which
#: applyFeatureGates appends once its gate is on (Beta, on in v1.36.3; GA in v1.37.2).
UPSTREAM_ORDER_V1_35 = [
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
    "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder",
]
UPSTREAM_ORDER_V1_36 = [*UPSTREAM_ORDER_V1_35, "NodeDeclaredFeatures"]
UPSTREAM_ORDER_V1_37 = [
    "SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption",
    "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder", "NodeDeclaredFeatures",
]


@pytest.mark.parametrize(
    ("value", "want"),
    [("1.35", V1_35), ("kube=1.36", V1_36), ("v1.37", V1_37), (" 1.37 ", V1_37)],
)
def test_emulated_version_values(value: str, want: object) -> None:
    assert parse_emulated_version(value) == want


@pytest.mark.parametrize("value", ["1.34", "1.38", "2.0", "abc", "1.35.1", "", "kube=", "1"])
def test_emulated_versions_kubesched_cannot_be(value: str) -> None:
    with pytest.raises(ReleaseError, match="--emulated-version"):
        parse_emulated_version(value)


def test_the_table() -> None:
    assert [str(r) for r in RELEASES] == ["1.35", "1.36", "1.37"]
    assert [r.binary for r in RELEASES] == ["v1.35.4", "v1.36.3", "v1.37.2"]
    names = [c.name for c in CHANGES]
    assert len(names) == len(set(names))
    assert all(c.since in RELEASES[1:] and c.upstream and c.what for c in CHANGES)
    # Oldest first: the table reads as a changelog.
    assert [c.since for c in CHANGES] == sorted(c.since for c in CHANGES)
    assert not any(V1_35.has(c) for c in CHANGES)
    assert all(V1_37.has(c) for c in CHANGES)


def test_the_default_release_has_every_change_ported() -> None:
    """The default moves to a newer release only once all of its changes are implemented."""
    assert unported(DEFAULT_RELEASE) == []


@pytest.mark.parametrize(("release", "order"), [(V1_35, UPSTREAM_ORDER_V1_35), (V1_36, UPSTREAM_ORDER_V1_36),
                                                (V1_37, UPSTREAM_ORDER_V1_37)])
def test_default_plugin_order(release: object, order: list[str]) -> None:
    config = load_config(None, release=release)  # type: ignore[arg-type]
    assert config.release == release
    assert [p.name for p in config.profiles[0].plugins.multi_point.enabled] == order


FIT_RATIO_WITH_LEAST_ALLOCATED = {
    "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}]}}}}]}],
}


def test_fit_args_checks_by_release() -> None:
    # v1.35.4: a requestedToCapacityRatio with another type is ignored.
    load_config(FIT_RATIO_WITH_LEAST_ALLOCATED, release=V1_35)
    # v1.36+: forbidden.
    for release in (V1_36, V1_37):
        with pytest.raises(ConfigError) as err:
            load_config(FIT_RATIO_WITH_LEAST_ALLOCATED, release=release)
        assert [e.path for e in err.value.errors] == [
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio"
        ]


def test_plugins_see_the_release_through_their_handle() -> None:
    seen: list[object] = []

    class Probe:
        name = "Probe"

        def __init__(self, args: object, handle: object) -> None:
            seen.append(handle.release)  # type: ignore[attr-defined]

        def filter(self, state: object, pod: object, node: object) -> None:
            return None

    for release in RELEASES:
        config = load_config(
            {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Probe"}]}}}]}, release=release
        )
        reg = default_registry(entry_points=False)
        reg.register("Probe", Probe, origin="test")
        new_framework(config, nodes=[make_node("n1").obj()], registry=reg)
    assert seen == list(RELEASES)


def test_cli_refuses_an_unsupported_release_in_one_line() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
    result = CliRunner().invoke(cli, ["simulate", str(example), "--emulated-version", "1.34"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "1.34" in lines[0] and "1.35..1.37" in lines[0], result.output
