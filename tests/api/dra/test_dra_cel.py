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
        ("device.driver", "could not be converted to bool"),  # upstream: at compile time
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


def test_an_expression_over_the_cost_limit_fails_fast_on_every_other_device() -> None:
    """The budget is spent once: the next device gets the same error without evaluating."""
    import time

    from kubesched.api.dra import cel_eval

    expr = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, x + y < 100))"
    cache = CELCache()
    saved = cel_eval.BudgetRunner.steps
    cel_eval.BudgetRunner.steps = 500  # the 100 inner evaluations need far more steps
    try:
        with pytest.raises(CELError, match="actual cost limit exceeded"):
            cache.matches(expr, "a", device_variable(DRIVER, {"name": "a"}))
    finally:
        cel_eval.BudgetRunner.steps = saved
    start = time.perf_counter()
    with pytest.raises(CELError, match="actual cost limit exceeded"):
        cache.matches(expr, "b", device_variable(DRIVER, {"name": "b"}))
    assert time.perf_counter() - start < 0.05


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # cel-go's strings extension (version 2), the lists and regex libraries, sets, cel.bind.
        ('"GPU-A100".lowerAscii() == "gpu-a100"', True),
        ('"gpu".upperAscii() == "GPU"', True),
        ('"a,b,c".split(",") == ["a", "b", "c"]', True),
        ('"a,b,c".split(",", 2) == ["a", "b,c"]', True),
        ('"hello".substring(1, 3) == "el"', True),
        ('"hello".charAt(1) == "e"', True),
        ('"hello".indexOf("l") == 2 && "hello".lastIndexOf("l") == 3', True),
        ('"  x ".trim() == "x"', True),
        ('"aXbX".replace("X", "-") == "a-b-"', True),
        ('["a", "b"].join("/") == "a/b"', True),
        ('"nvidia-a100-80gb".find("[0-9]+gb") == "80gb"', True),
        ('"a1b22".findAll("[0-9]+") == ["1", "22"]', True),
        ("[1, 2, 3].isSorted() && [3, 1].isSorted() == false", True),
        ("[1, 2, 3].sum() == 6 && [4, 2, 9].min() == 2 && [4, 2, 9].max() == 9", True),
        ("[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2", True),
        ("sets.contains([1, 2, 3], [2]) && sets.intersects([1], [1, 5]) && sets.equivalent([1, 2], [2, 1])", True),
        ("cel.bind(n, 40, n + 2 == 42)", True),
        ('semver("v1.2", true) == semver("1.2.0") && isSemver("01.2.3", true) && !isSemver("01.2.3")', True),
    ],
)
def test_kubernetes_environment_functions(expr: str, want: bool) -> None:
    assert CELCache().matches(expr, "k", device_variable(DRIVER, {"name": "k"})) is want


@pytest.mark.parametrize(
    ("expr", "error"),
    [
        ('"abc".charAt(4) == ""', "index out of range: 4"),
        ('"abc".substring(2, 1) == ""', "invalid substring range"),
        ("[].min() == 0", "must not be empty"),
        ('semver("1.2-rc", true) == semver("1.2.0")', "short version"),
    ],
)
def test_kubernetes_environment_errors(expr: str, error: str) -> None:
    with pytest.raises(CELError, match=error):
        CELCache().matches(expr, "k", device_variable(DRIVER, {"name": "k"}))
