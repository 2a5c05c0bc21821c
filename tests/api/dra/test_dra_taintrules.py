"""DeviceTaintRules applied to ResourceSlices (kubesched.api.dra.taintrules).

The final patched slices of upstream's TestListPatchedResourceSlices
(staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker_test.go): kubesched
applies the current rules to the current slices each cycle, so the rows' event orderings and
handler events do not apply; only ``expectedPatchedSlices`` is compared. Rows about CEL runtime
errors and their Events are left out (the tracker's event recorder is not modelled).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.dra.cel import CELCache
from kubesched.api.dra.taintrules import apply_device_taint_rules, device_taint_rule_api_version

DRIVER1, DRIVER2 = "driver1.example.com", "driver2.example.com"
TAINT1 = {"key": "example.com/taint", "value": "tainted", "effect": "NoExecute", "timeAdded": "2006-01-02T15:04:05Z"}
TAINT2 = {"key": "example.com/taint2", "value": "tainted2", "effect": "NoExecute", "timeAdded": "2006-01-02T15:04:05Z"}
CLASS1 = {
    "metadata": {"name": "device-class-1"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER1}"'}}]},
}


def _slice(name: str, driver: str, pool: str, devices: list[Any]) -> dict[str, Any]:
    out = []
    for d in devices:
        name_, taints = (d, []) if isinstance(d, str) else d
        out.append({"name": name_, **({"taints": taints} if taints else {})})
    return {"metadata": {"name": name}, "spec": {"driver": driver, "pool": {"name": pool}, "devices": out}}


def _rule(**selector: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"taint": dict(TAINT1)}
    if selector:
        spec["deviceSelector"] = dict(selector)
    return {"metadata": {"name": "rule"}, "spec": spec}


SLICE1 = _slice("s1", DRIVER1, "pool-1", ["device-1"])
SLICE1_TAINTED = _slice("s1", DRIVER1, "pool-1", [("device-1", [TAINT1])])
SLICE2 = _slice("s2", DRIVER2, "pool-2", ["device-2"])
SLICE2_TAINTED = _slice("s2", DRIVER2, "pool-2", [("device-2", [TAINT1])])

#: name -> (slices, rules, expected patched slices).
CASES: dict[str, tuple[list[Any], list[Any], list[Any]]] = {
    "add-slices-no-patches": ([SLICE1, SLICE2], [], [SLICE1, SLICE2]),
    "patch-all-slices": ([SLICE1], [_rule()], [SLICE1_TAINTED]),
    # update-patch: the rule ends up selecting pool-2.
    "update-patch": ([SLICE1, SLICE2], [_rule(pool="pool-2")], [SLICE1, SLICE2_TAINTED]),
    "merge-taints": (
        [_slice("s1", DRIVER1, "pool-1", [("device-1", [TAINT2])])],
        [_rule()],
        [_slice("s1", DRIVER1, "pool-1", [("device-1", [TAINT2, TAINT1])])],
    ),
    "add-taint-for-driver": ([SLICE1, SLICE2], [_rule(driver=DRIVER1)], [SLICE1_TAINTED, SLICE2]),
    "add-taint-for-pool": ([SLICE1, SLICE2], [_rule(pool="pool-1")], [SLICE1_TAINTED, SLICE2]),
    "add-taint-for-device": ([SLICE1, SLICE2], [_rule(device="device-1")], [SLICE1_TAINTED, SLICE2]),
    "filter-all-criteria": (
        [SLICE1, SLICE2],
        [_rule(driver=DRIVER1, pool="pool-1", device="device-1")],
        [SLICE1_TAINTED, SLICE2],
    ),
    "update-patched-slice": (
        [
            _slice("s1", DRIVER1, "pool-1", ["device-0", "device-1", "device-2"]),
            _slice("s2", DRIVER2, "pool-2", ["device-1"]),
        ],
        [_rule(device="device-1")],
        [
            _slice("s1", DRIVER1, "pool-1", ["device-0", ("device-1", [TAINT1]), "device-2"]),
            _slice("s2", DRIVER2, "pool-2", [("device-1", [TAINT1])]),
        ],
    ),
}


class _Classes:
    def get(self, name: str) -> dict[str, Any] | None:
        return CLASS1 if name == "device-class-1" else None


@pytest.mark.parametrize("name", sorted(CASES))
def test_list_patched_resource_slices(name: str) -> None:
    slices, rules, want = CASES[name]
    before = copy.deepcopy(slices)
    got = apply_device_taint_rules(slices, rules, _Classes(), CELCache())
    assert got == want
    assert slices == before, "the informer's slices are never modified"


def test_device_class_selector() -> None:
    """Older versions' deviceSelector.deviceClassName: the class's CEL selectors must match; a
    missing class matches nothing (tracker.go applyPatches)."""
    got = apply_device_taint_rules([SLICE1, SLICE2], [_rule(deviceClassName="device-class-1")], _Classes(), CELCache())
    assert got == [SLICE1_TAINTED, SLICE2]
    got = apply_device_taint_rules([SLICE1], [_rule(deviceClassName="no-such-class")], _Classes(), CELCache())
    assert got == [SLICE1]


@pytest.mark.parametrize(
    "rule",
    [
        "not a rule",
        {"metadata": {"name": "r"}},
        {"metadata": {"name": "r"}, "spec": {"taint": {"key": "k"}}},
        {"metadata": {"name": "r"}, "spec": {"taint": dict(TAINT1), "deviceSelector": "all"}},
    ],
)
def test_malformed_rules_taint_nothing(rule: object) -> None:
    assert apply_device_taint_rules([SLICE1], [rule, _rule(device="device-0")], _Classes(), CELCache()) == [SLICE1]


def test_api_version_per_release() -> None:
    assert [device_taint_rule_api_version(m) for m in (35, 36, 37)] == [
        "resource.k8s.io/v1alpha3",
        "resource.k8s.io/v1beta2",
        "resource.k8s.io/v1",
    ]
