"""Default plugins and mergePluginSet semantics.

Ported from pkg/scheduler/apis/config/v1/default_plugins_test.go (TestMergePlugins,
TestApplyFeatureGates); the merge table lives in data/merge_plugins.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import Plugins, default_plugins, merge_plugins
from kubesched.config.args import decode_into
from kubesched.config.errors import FieldError
from kubesched.config.releases import V1_35

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "merge_plugins.yaml").read_text()
)


def _plugins(raw: dict[str, Any] | None) -> Plugins | None:
    if raw is None:
        return None
    errors: list[FieldError] = []
    plugins = decode_into(Plugins, raw, "plugins", errors)
    assert errors == []
    return plugins


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_merge_plugins(case: dict[str, Any]) -> None:
    default = _plugins(case["default"])
    assert default is not None
    assert merge_plugins(default, _plugins(case["custom"])) == _plugins(case["expected"])


def test_default_multi_point_v1_35() -> None:
    """getDefaultPlugins with v1.35's default gates: the removed cloud volume-limit plugins are
    gone and DynamicResources (DRA GA) sits before DefaultPreemption."""
    got = [(p.name, p.weight) for p in default_plugins(release=V1_35).multi_point.enabled]
    assert got == [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]
    for attr, plugin_set in default_plugins().items():
        if attr != "multi_point":
            assert plugin_set.enabled == [] and plugin_set.disabled == [], attr


def test_default_plugins_without_dra() -> None:
    names = [p.name for p in default_plugins(dynamic_resource_allocation=False).multi_point.enabled]
    assert "DynamicResources" not in names
    assert names.index("InterPodAffinity") + 1 == names.index("DefaultPreemption")


def test_default_plugins_are_fresh_copies() -> None:
    first = default_plugins()
    first.multi_point.enabled[0].weight = 99
    assert default_plugins().multi_point.enabled[0].weight == 0
