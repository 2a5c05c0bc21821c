"""ValidateKubeSchedulerConfiguration rules and their field paths.

Ported from pkg/scheduler/apis/config/validation/validation_test.go
(TestValidateKubeSchedulerConfigurationV1) plus component-base
config/validation/validation.go's leader-election/client-connection rules; the table lives in
data/validation_v1.yaml.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import kubesched.config as cfg
import kubesched.config.plugin_args as plugin_args
from kubesched.config import KubeSchedulerConfiguration, load_config, validate_configuration

DATA = yaml.safe_load((Path(__file__).parent / "data" / "validation_v1.yaml").read_text())
BASE = load_config(DATA["base"])

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _build(value: Any) -> Any:
    if isinstance(value, dict) and "__type__" in value:
        kwargs = {k: _build(v) for k, v in value.items() if k != "__type__"}
        cls = getattr(cfg, value["__type__"], None) or getattr(plugin_args, value["__type__"])
        return cls(**kwargs)
    if isinstance(value, list):
        return [_build(v) for v in value]
    return value


def _set(root: Any, path: str, value: Any) -> None:
    """Assign at an attribute/key/index path; an index one past the end appends."""
    segments: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _SEGMENT.finditer(path)
    ]
    target = root
    for seg in segments[:-1]:
        target = target[seg] if isinstance(seg, int) or isinstance(target, dict) else getattr(target, seg)
    last = segments[-1]
    if isinstance(last, int):
        if last == len(target):
            target.append(value)
        else:
            target[last] = value
    elif isinstance(target, dict):
        target[last] = value
    else:
        setattr(target, last, value)


def test_base_is_valid_and_loaded() -> None:
    assert isinstance(BASE, KubeSchedulerConfiguration)
    assert [p.scheduler_name for p in BASE.profiles] == ["me", "other"]


@pytest.mark.parametrize("case", DATA["cases"], ids=[c["name"] for c in DATA["cases"]])
def test_validate_configuration(case: dict[str, Any]) -> None:
    config = copy.deepcopy(BASE)
    for path, value in case["set"].items():
        _set(config, path, _build(value))
    got = [e.path for e in validate_configuration(config)]
    assert sorted(got) == sorted(case["want"])


def test_messages() -> None:
    """Exact wording for the rules whose messages users grep for."""
    config = copy.deepcopy(BASE)
    config.percentage_of_nodes_to_score = 150
    config.profiles[0].percentage_of_nodes_to_score = 150
    # the profile already holds 8 entries: DefaultPreemption first, then the defaulted ones
    config.profiles[0].plugin_config.append(
        cfg.PluginConfig("DefaultPreemption", plugin_args.DefaultPreemptionArgs())
    )
    msgs = [str(e) for e in validate_configuration(config)]
    assert "percentageOfNodesToScore: must be in 0..100, got 150" in msgs
    assert "profiles[0].percentageOfNodesToScore: must be in 0..100, got 150" in msgs
    assert 'profiles[0].pluginConfig[8]: repeated config for plugin "DefaultPreemption"' in msgs
