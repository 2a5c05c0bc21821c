"""DeviceTaintRules applied to ResourceSlices (DRADeviceTaintRules), as upstream's resource slice
tracker does (k8s.io/dynamic-resource-allocation/resourceslice/tracker, ``applyPatches``): the
scheduler's allocator sees each slice with the taints of every matching rule appended to its
devices, and then treats them like the driver's own device taints.

A rule's ``spec.deviceSelector`` narrows it by ``driver``, ``pool`` and ``device`` names, and by
the CEL selectors of the DeviceClass named in ``deviceClassName`` (a class that does not exist
matches nothing) and its own CEL ``selectors`` (older API versions); a rule without a selector
taints every device. A CEL expression that fails on a device leaves that device untainted, as
upstream. A malformed rule (no taint, a selector that is not an object, a CEL expression that
does not compile) is skipped: it affects no device, never the other rules or the slices.

Served as resource.k8s.io/v1alpha3 in v1.35, v1beta2 in v1.36 and v1 in v1.37 (GA).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .cel import CELCache, CELError, device_variable
from .types import DeviceClassLister

__all__ = ["DEVICE_TAINT_RULE_API_VERSIONS", "apply_device_taint_rules", "device_taint_rule_api_version"]

#: The versions the API has served DeviceTaintRule under, newest first.
DEVICE_TAINT_RULE_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3")


def device_taint_rule_api_version(minor: int) -> str:
    """The version a v1.<minor> scheduler reads DeviceTaintRules in: v1alpha3 up to v1.35,
    v1beta2 in v1.36, v1 from v1.37."""
    if minor >= 37:
        return DEVICE_TAINT_RULE_API_VERSIONS[0]
    return DEVICE_TAINT_RULE_API_VERSIONS[1] if minor == 36 else DEVICE_TAINT_RULE_API_VERSIONS[2]


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _opt_str(selector: Mapping[str, Any], key: str) -> str | None:
    value = selector.get(key)
    return value if isinstance(value, str) else None


class _Rule:
    """One usable rule: its taint and its device selector, parsed once."""

    def __init__(self, rule: Mapping[str, Any], classes: DeviceClassLister) -> None:
        spec = _map(rule.get("spec"))
        taint = spec.get("taint")
        if not isinstance(taint, Mapping) or not taint.get("key") or not taint.get("effect"):
            raise ValueError("no taint")
        self.name = str(_map(rule.get("metadata")).get("name") or "")
        self.taint = {k: taint[k] for k in ("key", "value", "effect", "timeAdded") if taint.get(k) is not None}
        raw = spec.get("deviceSelector")
        if raw is not None and not isinstance(raw, Mapping):
            raise ValueError("deviceSelector is not an object")
        selector = _map(raw)
        self.driver = _opt_str(selector, "driver")
        self.pool = _opt_str(selector, "pool")
        self.device = _opt_str(selector, "device")
        self.expressions: list[str] = []
        self.applies = True
        class_name = _opt_str(selector, "deviceClassName")
        if class_name is not None:
            cls = classes.get(class_name)
            if cls is None:
                self.applies = False  # upstream: the rule does not apply while the class is missing
            else:
                self.expressions += _expressions(_map(cls.get("spec")).get("selectors"))
        self.expressions += _expressions(selector.get("selectors"))


def _expressions(selectors: object) -> list[str]:
    out = []
    for sel in _list(selectors):
        expr = _map(_map(sel).get("cel")).get("expression")
        if isinstance(expr, str) and expr:
            out.append(expr)
    return out


def _parse_rules(rules: Iterable[object], classes: DeviceClassLister) -> list[_Rule]:
    parsed = []
    for rule in rules:
        if not isinstance(rule, Mapping):
            continue
        try:
            r = _Rule(rule, classes)
        except ValueError:
            continue
        if r.applies:
            parsed.append(r)
    return parsed


def apply_device_taint_rules(
    slices: Sequence[Mapping[str, Any]],
    rules: Iterable[object],
    classes: DeviceClassLister,
    cel_cache: CELCache,
) -> list[Mapping[str, Any]]:
    """The slices with every matching rule's taint appended to the devices' ``taints``
    (rules in the order given); untouched slices are returned as they are, patched ones copied."""
    parsed = _parse_rules(rules, classes)
    if not parsed:
        return list(slices)
    out: list[Mapping[str, Any]] = []
    for sl in slices:
        spec = _map(_map(sl).get("spec"))
        driver = str(spec.get("driver") or "")
        pool = str(_map(spec.get("pool")).get("name") or "")
        md = _map(_map(sl).get("metadata"))
        version = (md.get("name"), md.get("resourceVersion"), _map(spec.get("pool")).get("generation"))
        patched: dict[str, Any] | None = None
        for rule in parsed:
            if (rule.driver is not None and rule.driver != driver) or (rule.pool is not None and rule.pool != pool):
                continue
            for index, device in enumerate(_list(spec.get("devices"))):
                if not isinstance(device, Mapping) or not isinstance(device.get("name"), str):
                    continue
                if rule.device is not None and rule.device != device["name"]:
                    continue
                if not _matches(rule, driver, pool, device, version, cel_cache):
                    continue
                if patched is None:
                    patched = copy.deepcopy(dict(sl))
                target = patched["spec"]["devices"][index]
                target["taints"] = [*_list(target.get("taints")), dict(rule.taint)]
        out.append(patched if patched is not None else sl)
    return out


def _matches(
    rule: _Rule, driver: str, pool: str, device: Mapping[str, Any], version: object, cel_cache: CELCache
) -> bool:
    if not rule.expressions:
        return True
    variable = device_variable(driver, device)
    for expr in rule.expressions:
        try:
            # Cached per device and slice version, as the allocator's own selectors.
            if not cel_cache.matches(expr, ((driver, pool, device["name"]), version), variable):
                return False
        except CELError:
            return False
    return True
