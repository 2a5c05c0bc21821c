"""Every problem in a resource.k8s.io/v1 object that DynamicResources would read wrongly, and the
API server's defaults for them.

``validate_dra_object(kind, obj)`` returns one ``"<field path>: <message>"`` per problem of a
DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate or DeviceTaintRule, after upstream's
pkg/apis/resource/validation/validation.go for the fields the scheduler reads (its wording where
it has one: ``Required value``, ``Unsupported value``, ``Duplicate value``, ``exactly one of ...``);
the simulator refuses manifests with problems (exit 2). ``apply_dra_defaults`` sets what
pkg/apis/resource/v1/defaults.go sets: an ``exactly`` request's ``allocationMode: ExactCount`` and
``count: 1``, a subrequest's too. CEL expressions are not compiled here (the allocator reports a
bad one when it is used, as upstream's scheduler does for objects stored before a CEL change).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.errors import field_required
from kubesched.api.nodeaffinity import NodeSelector
from kubesched.api.objects_validation import _Checker, _shown
from kubesched.api.storage_validation import _meta
from kubesched.api.validation import is_qualified_name, is_valid_label_value

__all__ = ["DRA_KINDS", "apply_dra_defaults", "validate_dra_object"]

#: resource.ResourceSliceMaxDevices, DeviceRequestsMaxSize, AllocationResultsMaxSize.
MAX_DEVICES = 128
MAX_REQUESTS = 32
MAX_COUNT = 32
_MODES = ("All", "ExactCount")
_NODE_SELECTION = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")


def _required(c: _Checker, value: Any, path: str) -> str | None:
    """A string the API server requires: absent or empty is ``Required value``."""
    text = c.string(value, path, required=True)
    if text == "":
        c.error(field_required(path, ""))
    return text


def _selectors(c: _Checker, value: Any, path: str) -> None:
    for i, sel in enumerate(c.items(value, path) or ()):
        s = c.mapping(sel, f"{path}[{i}]")
        if s is None:
            continue
        cel = c.mapping(s.get("cel"), f"{path}[{i}].cel")
        if cel is not None:
            _required(c, cel.get("expression"), f"{path}[{i}].cel.expression")


def _exact(c: _Checker, req: Mapping[str, Any], path: str) -> None:
    _required(c, req.get("deviceClassName"), f"{path}.deviceClassName")
    mode = req.get("allocationMode")
    c.one_of(mode, f"{path}.allocationMode", _MODES)
    count = req.get("count")
    if count is not None:
        n = c.integer(count, f"{path}.count")
        if n is not None and mode == "All" and n != 0:
            c.add(f"{path}.count", f"Invalid value: {n}: must not be specified when allocationMode is 'All'")
        elif n is not None and mode != "All" and not 1 <= n <= MAX_COUNT:
            c.add(f"{path}.count", f"Invalid value: {n}: must be in the range [1, {MAX_COUNT}]")
    c.boolean(req.get("adminAccess"), f"{path}.adminAccess")
    _selectors(c, req.get("selectors"), f"{path}.selectors")


def _device_claim(c: _Checker, devices: Mapping[str, Any], path: str) -> None:
    requests = c.items(devices.get("requests"), f"{path}.requests") or ()
    if len(requests) > MAX_REQUESTS:
        c.add(f"{path}.requests", f"Too many: {len(requests)}: must have at most {MAX_REQUESTS} items")
    names: set[str] = set()
    for i, raw in enumerate(requests):
        rp = f"{path}.requests[{i}]"
        req = c.mapping(raw, rp)
        if req is None:
            continue
        name = _required(c, req.get("name"), f"{rp}.name")
        if name:
            if name in names:
                c.add(f"{rp}.name", f"Duplicate value: {_shown(name)}")
            names.add(name)
        has_exact, has_first = req.get("exactly") is not None, req.get("firstAvailable") is not None
        if has_exact == has_first:
            c.add(
                rp,
                "Required value: exactly one of `exactly` or `firstAvailable` is required"
                if not has_exact
                else "Invalid value: exactly one of `exactly` or `firstAvailable` is required, "
                "but multiple fields are set",
            )
        if has_exact:
            exact = c.mapping(req.get("exactly"), f"{rp}.exactly")
            if exact is not None:
                _exact(c, exact, f"{rp}.exactly")
        if has_first:
            subs = c.items(req.get("firstAvailable"), f"{rp}.firstAvailable") or ()
            if not subs:
                c.add(f"{rp}.firstAvailable", "Required value")
            sub_names: set[str] = set()
            for j, raw_sub in enumerate(subs):
                sp = f"{rp}.firstAvailable[{j}]"
                sub = c.mapping(raw_sub, sp)
                if sub is None:
                    continue
                sub_name = c.string(sub.get("name"), f"{sp}.name", required=True)
                if sub_name is not None and sub_name in sub_names:
                    c.add(f"{sp}.name", f"Duplicate value: {_shown(sub_name)}")
                if sub_name:
                    sub_names.add(sub_name)
                    names.add(f"{name}/{sub_name}")
                _exact(c, sub, sp)
    for i, raw in enumerate(c.items(devices.get("constraints"), f"{path}.constraints") or ()):
        cp = f"{path}.constraints[{i}]"
        con = c.mapping(raw, cp)
        if con is None:
            continue
        for j, ref in enumerate(c.items(con.get("requests"), f"{cp}.requests") or ()):
            if isinstance(ref, str) and ref not in names:
                c.add(
                    f"{cp}.requests[{j}]", f"Invalid value: {_shown(ref)}: must be the name of a request in the claim"
                )
            elif not isinstance(ref, str):
                c.add(f"{cp}.requests[{j}]", f"must be a string, got {_shown(ref)}")
        attr = con.get("matchAttribute")
        if attr is not None:
            text = c.string(attr, f"{cp}.matchAttribute")
            if text is not None and "/" not in text:
                c.add(f"{cp}.matchAttribute", f"Invalid value: {_shown(text)}: must include a domain")


def validate_resource_claim(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=True)
    spec = c.mapping(obj.get("spec"), "spec") or {}
    devices = c.mapping(spec.get("devices"), "spec.devices")
    if devices is not None:
        _device_claim(c, devices, "spec.devices")
    return c.problems


def validate_resource_claim_template(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=True)
    spec = c.mapping(obj.get("spec"), "spec") or {}
    inner = c.mapping(spec.get("spec"), "spec.spec") or {}
    devices = c.mapping(inner.get("devices"), "spec.spec.devices")
    if devices is not None:
        _device_claim(c, devices, "spec.spec.devices")
    return c.problems


def validate_device_class(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = c.mapping(obj.get("spec"), "spec") or {}
    _selectors(c, spec.get("selectors"), "spec.selectors")
    c.items(spec.get("config"), "spec.config")
    return c.problems


def _attributes(c: _Checker, value: Any, path: str) -> None:
    attrs = c.mapping(value, path)
    for name, attr in (attrs or {}).items():
        ap = f"{path}[{name}]"
        a = c.mapping(attr, ap)
        if a is None:
            continue
        kinds = [k for k in ("int", "bool", "string", "version") if k in a]
        if len(kinds) != 1:
            c.add(ap, "exactly one value must be specified")
            continue
        kind = kinds[0]
        if kind == "int":
            c.integer(a["int"], f"{ap}.int", lo=-(1 << 63), hi=(1 << 63) - 1)
        elif kind == "bool":
            c.boolean(a["bool"], f"{ap}.bool")
        else:
            c.string(a[kind], f"{ap}.{kind}")


def validate_resource_slice(obj: Mapping[str, Any]) -> list[str]:
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = c.mapping(obj.get("spec"), "spec") or {}
    _required(c, spec.get("driver"), "spec.driver")
    pool = c.mapping(spec.get("pool"), "spec.pool")
    if pool is not None:
        _required(c, pool.get("name"), "spec.pool.name")
        gen = pool.get("generation")
        if gen is not None:
            g = c.integer(gen, "spec.pool.generation", lo=0, hi=(1 << 63) - 1)
            if g is not None and g < 0:
                c.add("spec.pool.generation", f"Invalid value: {g}: must be greater than or equal to 0")
        count = c.integer(pool.get("resourceSliceCount", 0), "spec.pool.resourceSliceCount")
        if count is not None and count < 1:
            c.add("spec.pool.resourceSliceCount", f"Invalid value: {count}: must be greater than zero")
    chosen = [k for k in _NODE_SELECTION if spec.get(k) not in (None, False, "")]
    if not chosen:
        c.add(
            "spec",
            "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
            "`perDeviceNodeSelection` is required",
        )
    elif len(chosen) > 1:
        c.add(
            "spec",
            f"Invalid value: {json.dumps(chosen)}: exactly one of `nodeName`, `nodeSelector`, "
            "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
        )
    c.string(spec.get("nodeName"), "spec.nodeName")
    c.boolean(spec.get("allNodes"), "spec.allNodes")
    c.boolean(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection")
    selector = c.mapping(spec.get("nodeSelector"), "spec.nodeSelector")
    if selector:
        try:
            NodeSelector(selector, "spec.nodeSelector")
        except Exception as err:  # InvalidObjectError and its aggregate
            c.add("spec.nodeSelector", str(err))
    devices = c.items(spec.get("devices"), "spec.devices") or ()
    if len(devices) > MAX_DEVICES:
        c.add("spec.devices", f"Too many: {len(devices)}: must have at most {MAX_DEVICES} items")
    seen: set[str] = set()
    for i, raw in enumerate(devices):
        dp = f"spec.devices[{i}]"
        dev = c.mapping(raw, dp)
        if dev is None:
            continue
        name = _required(c, dev.get("name"), f"{dp}.name")
        if name:
            if name in seen:
                c.add(f"{dp}.name", f"Duplicate value: {_shown(name)}")
            seen.add(name)
        _attributes(c, dev.get("attributes"), f"{dp}.attributes")
        for cap_name, cap in (c.mapping(dev.get("capacity"), f"{dp}.capacity") or {}).items():
            cap_map = c.mapping(cap, f"{dp}.capacity[{cap_name}]")
            if cap_map is not None:
                c.quantity(str(cap_name), cap_map.get("value"), f"{dp}.capacity[{cap_name}].value")
    return c.problems


#: resourceapi.DeviceTaintEffect values, in validation's order.
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")


def validate_device_taint_rule(obj: Mapping[str, Any]) -> list[str]:
    """A DeviceTaintRule (DRADeviceTaintRules): the taint (``key`` a qualified name, ``effect``
    one of NoExecute, NoSchedule, None, ``value`` a label value) and the device selector's names
    and CEL selectors, the fields the scheduler applies to devices."""
    c = _Checker()
    _meta(c, obj, namespaced=False)
    spec = c.mapping(obj.get("spec"), "spec") or {}
    taint = c.mapping(spec.get("taint"), "spec.taint")
    if taint is None:
        if "taint" not in spec:
            c.add("spec.taint", "Required value")
    else:
        key = _required(c, taint.get("key"), "spec.taint.key")
        if key:
            for msg in is_qualified_name(key):
                c.add("spec.taint.key", f"Invalid value: {_shown(key)}: {msg}")
        value = c.string(taint.get("value"), "spec.taint.value")
        if value:
            for msg in is_valid_label_value(value):
                c.add("spec.taint.value", f"Invalid value: {_shown(value)}: {msg}")
        if _required(c, taint.get("effect"), "spec.taint.effect"):
            c.one_of(taint.get("effect"), "spec.taint.effect", _TAINT_EFFECTS)
        c.string(taint.get("timeAdded"), "spec.taint.timeAdded")
    selector = c.mapping(spec.get("deviceSelector"), "spec.deviceSelector")
    if selector is not None:
        for key in ("deviceClassName", "driver", "pool", "device"):
            c.string(selector.get(key), f"spec.deviceSelector.{key}")
        _selectors(c, selector.get("selectors"), "spec.deviceSelector.selectors")
    return c.problems


#: kind -> validator.
DRA_KINDS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "DeviceClass": validate_device_class,
    "ResourceSlice": validate_resource_slice,
    "ResourceClaim": validate_resource_claim,
    "ResourceClaimTemplate": validate_resource_claim_template,
    "DeviceTaintRule": validate_device_taint_rule,
}


def validate_dra_object(kind: str, obj: Any) -> list[str]:
    """``"<field path>: <message>"`` for every problem of a DRA object of ``kind``."""
    if not isinstance(obj, Mapping):
        return [f"{kind}: must be an object, got {_shown(obj)}"]
    validator = DRA_KINDS.get(kind)
    return validator(obj) if validator is not None else []


def _default_request(req: dict[str, Any]) -> None:
    req.setdefault("allocationMode", "ExactCount")
    if req["allocationMode"] == "ExactCount":
        req.setdefault("count", 1)


def apply_dra_defaults(kind: str, obj: dict[str, Any]) -> None:
    """pkg/apis/resource/v1/defaults.go: ExactCount and count 1 for requests that leave them out."""
    if kind == "ResourceClaim":
        devices = (obj.get("spec") or {}).get("devices") or {}
    elif kind == "ResourceClaimTemplate":
        devices = ((obj.get("spec") or {}).get("spec") or {}).get("devices") or {}
    else:
        return
    for req in devices.get("requests") or []:
        if isinstance(req.get("exactly"), dict):
            _default_request(req["exactly"])
        for sub in req.get("firstAvailable") or []:
            if isinstance(sub, dict):
                _default_request(sub)
