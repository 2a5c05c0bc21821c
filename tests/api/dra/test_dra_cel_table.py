"""Upstream's CEL table for device selectors (TestCEL,
staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go) as data (data/cel_cases.yaml),
run against kubesched.api.dra.cel: the same expressions, devices and results or errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.dra.cel import CELCache, CELError, device_variable

CASES: dict[str, dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "data" / "cel_cases.yaml").read_text())


def _device(case: dict[str, Any]) -> dict[str, Any]:
    device: dict[str, Any] = {"name": "device"}
    if case.get("attributes"):
        device["attributes"] = case["attributes"]
    if case.get("capacity"):
        device["capacity"] = {k: {"value": v} for k, v in case["capacity"].items()}
    if "allowMultipleAllocations" in case:
        device["allowMultipleAllocations"] = case["allowMultipleAllocations"]
    return device


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_cel_table(name: str) -> None:
    case = CASES[name]
    cache = CELCache()
    variable = device_variable(case.get("driver", ""), _device(case))
    if "compile_error" in case or "match_error" in case:
        want = case.get("compile_error") or case["match_error"]
        with pytest.raises(CELError) as err:
            cache.matches(case["expression"], name, variable)
        assert want in str(err.value)
        assert str(err.value).startswith("compilation failed" if "compile_error" in case else "runtime error")
    else:
        assert cache.matches(case["expression"], name, variable) is case["match"]


def test_the_table_is_whole() -> None:
    """Every row says what it expects, once."""
    for name, case in CASES.items():
        assert sum(k in case for k in ("match", "compile_error", "match_error")) == 1, name
