"""Device selectors in CEL (kubesched.api.dra.cel): the environment of upstream's
k8s.io/dynamic-resource-allocation/cel/compile.go (``device.driver``, ``attributes`` and
``capacity`` by domain) and the Kubernetes CEL library's functions as
k8s.io/apiserver/pkg/cel/library/quantity.go and semverlib.go define them. The cases are ours,
evaluated by hand; upstream's compile_test.go table is not ported yet."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra.cel import CELCache, CELError, device_variable

DRIVER = "dra.example.com"
DEVICE: dict[str, Any] = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "h100"},
        "numa": {"int": 1},
        "mig": {"bool": True},
        "driverVersion": {"version": "1.2.3"},
        "other.example.com/rack": {"string": "r7"},
    },
    "capacity": {"memory": {"value": "80Gi"}, "other.example.com/slots": {"value": "4"}},
}


def _eval(expr: str, device: dict[str, Any] | None = None) -> bool:
    return CELCache().matches(expr, ("k", expr), device_variable(DRIVER, device or DEVICE))


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('device.driver == "dra.example.com"', True),
        ('device.driver == "other"', False),
        (f'device.attributes["{DRIVER}"].model == "h100"', True),
        (f'device.attributes["{DRIVER}"].numa == 1', True),
        (f'device.attributes["{DRIVER}"].mig', True),
        ('device.attributes["other.example.com"].rack == "r7"', True),
        (f'"numa" in device.attributes["{DRIVER}"]', True),
        (f'"missing" in device.attributes["{DRIVER}"]', False),
        (f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) == 0', True),
        (f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("40Gi"))', True),
        (f'device.capacity["{DRIVER}"].memory.isLessThan(quantity("1Ti"))', True),
        ('device.capacity["other.example.com"].slots.asInteger() == 4', True),
        (f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
        (f'device.attributes["{DRIVER}"].driverVersion.compareTo(semver("1.2.3")) == 0', True),
        (f'device.attributes["{DRIVER}"].driverVersion.isLessThan(semver("1.10.0"))', True),
        (f'device.attributes["{DRIVER}"].driverVersion.major() == 1', True),
        ("device.allowMultipleAllocations", False),
        ('isQuantity("10Gi") && !isQuantity("ten")', True),
    ],
)
def test_expressions(expr: str, want: bool) -> None:
    assert _eval(expr) is want


@pytest.mark.parametrize(
    ("expr", "error"),
    [
        (f'device.attributes["{DRIVER}"].missing == "x"', "runtime error"),
        ('device.attributes["nope.example.com"].x == 1', "runtime error"),
        ("device.driver ==", "compilation failed"),
        ("device.driver", "must evaluate to bool"),
        ('quantity("not a quantity").sign() == 1', "runtime error"),
        ('semver("1.2").major() == 1', "runtime error"),
    ],
)
def test_errors(expr: str, error: str) -> None:
    with pytest.raises(CELError, match=error):
        _eval(expr)


def test_results_are_cached_per_device_and_expression() -> None:
    cache = CELCache()
    var = device_variable(DRIVER, DEVICE)
    expr = 'device.driver == "dra.example.com"'
    assert cache.matches(expr, "dev-a", var)
    other = device_variable("other", DEVICE)
    assert cache.matches(expr, "dev-a", other)  # the same key: the cached answer
    assert not cache.matches(expr, "dev-b", other)


def test_malformed_attributes_are_left_out() -> None:
    device = {
        "attributes": {"ok": {"int": 1}, "a": "text", "b": {"int": "x"}, "c": {"version": "nope"}},
        "capacity": {"m": {"value": "??"}},
    }
    assert _eval(f'!("a" in device.attributes["{DRIVER}"]) && !("c" in device.attributes["{DRIVER}"])', device)
