"""Upstream's allocator table (TestAllocator,
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go,
v1.37) as data (data/allocator_cases.yaml), run against kubesched.api.dra.structured. Shared
devices' results carry upstream's fixedShareID (the allocator is given a generator returning it,
where upstream's test overwrites the random ones); consumed capacities compare as quantities."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.dra.structured import AllocatedState, AllocationError, CELCache, Features, new_allocator
from kubesched.api.quantity import parse_quantity

CASES: dict[str, dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "data" / "allocator_cases.yaml").read_text())

SKIPPED: dict[str, str] = {
    # Partitionable devices and consumable capacity rows left out, with the reason.
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": (
        "multi-host pools: a pool's slices for other nodes (their devices' counters, the pool's "
        "completeness) are not gathered for this node"
    ),
    "partitionable-devices-validation-error-on-non-targeting-slice": (
        "multi-host pools: a slice for another node is not gathered, so its invalid counter use is not seen"
    ),
    "list-attributes-*": (
        "DRAListTypeAttributes (list-valued attributes in match/distinct constraints): alpha, off in v1.37"
    ),
}
"""Upstream rows not in the YAML and why (the table's other rows not there are another change's)."""


class _Classes:
    """upstream's class(name, driver), classWithConfig (config {attr: attrValue}) or a class whose
    selector is a given expression."""

    def __init__(self, classes: dict[str, Any]) -> None:
        self.classes = classes

    def get(self, name: str) -> dict[str, Any] | None:
        given = self.classes.get(name)
        if given is None:
            return None
        spec = given if isinstance(given, dict) else {"driver": given}
        expr = spec.get("expr") or f'device.driver == "{spec["driver"]}"'
        out: dict[str, Any] = {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expr}}]}}
        if spec.get("config"):
            out["spec"]["config"] = [_opaque(spec["driver"], spec["config"])]
        return out


def _opaque(driver: str, attribute: str) -> dict[str, Any]:
    """upstream's deviceConfiguration(driver, attribute)."""
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


TAINTS = {
    "no-schedule": {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"},
    "no-execute": {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"},
    "key1-no-schedule": {"key": "key1", "value": "value1", "effect": "NoSchedule"},
}
TOLERATIONS = {
    "no-schedule": {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"},
    "no-execute": {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"},
    "key1-no-schedule": {"operator": "Exists", "key": "key1", "effect": "NoSchedule"},
}


def _policy_range() -> dict[str, Any]:
    """upstream's withCapacityRequestPolicyRange: default 2, valid range min 2, step 2, max 4."""
    return {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}
def _counters(counters: dict[str, str]) -> dict[str, Any]:
    return {name: {"value": value} for name, value in counters.items()}


def _device(d: Any, capacity: dict[str, str]) -> dict[str, Any]:
    """A device: ``caps`` (capacity values), ``range`` / ``valid`` (capacities with upstream's
    request policies), ``multi`` (allowMultipleAllocations), ``counters`` ([counter set,
    {counter: value}], upstream's withDeviceCounterConsumption; ``from_counters`` also makes them
    its capacity), ``node`` (per-device node selection: a node name, ``all`` or a selector as in
    a slice's ``where``)."""
    if isinstance(d, str):
        d = {"name": d}
    out: dict[str, Any] = {"name": d["name"]}
    if d["name"] in capacity:
        out["capacity"] = {"memory": {"value": capacity[d["name"]]}}
    caps: dict[str, Any] = {}
    for c in d.get("counters", []):
        out.setdefault("consumesCounters", []).append(
            {"counterSet": c[0], "counters": {k: {"value": str(v)} for k, v in c[1].items()}}
        )
        if d.get("from_counters"):
            caps.update({k: {"value": str(v)} for k, v in c[1].items()})
    caps.update({k: {"value": str(v)} for k, v in d.get("caps", {}).items()})
    caps.update({k: {"value": str(v), "requestPolicy": _policy_range()} for k, v in d.get("range", {}).items()})
    if "valid" in d:  # upstream's withCapacityRequestPolicyValidValues(default, capacity, more)
        default, values, more = d["valid"]
        policy = {"default": str(default), "validValues": [str(default)] + [str(m) for m in more]}
        caps.update({k: {"value": str(v), "requestPolicy": policy} for k, v in values.items()})
    if caps:
        out["capacity"] = caps
    if d.get("multi"):
        out["allowMultipleAllocations"] = True
    if "node" in d:
        node = d["node"]
        out.update({"nodeName": node} if "=" not in node and node != "all" else _where(node))
    if d.get("taints"):
        out["taints"] = [TAINTS[t] for t in d["taints"]]
    if d.get("attrs"):
        out["attributes"] = d["attrs"]
    if d.get("consumes"):  # upstream's withDeviceCounterConsumption
        out["consumesCounters"] = [{"counterSet": cs, "counters": _counters(c)} for cs, c in d["consumes"].items()]
    if "binding" in d:  # upstream's withBindingConditions(bindingConditions, bindingFailureConditions)
        conditions, failures = d["binding"]
        if conditions is not None:
            out["bindingConditions"] = conditions
        if failures is not None:
            out["bindingFailureConditions"] = failures
    if "binds_to_node" in d:  # upstream's withBindsToNode
        out["bindsToNode"] = d["binds_to_node"]
    return out


def _where(where: str) -> dict[str, Any]:
    """A slice's node selection other than nodeName: ``all``, ``field=<node>`` (upstream's
    localNodeSelector) or ``<label>=<value>`` (nodeLabelSelector)."""
    if where == "all":
        return {"allNodes": True}
    key, _, value = where.partition("=")
    if where == "perdevice":
        return {"perDeviceNodeSelection": True}
    if key == "field":
        return {
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [value]}]}]
            }
        }
    return {
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]
        }
    }


def _node(name: str) -> dict[str, Any]:
    region = "region-1" if name == "node-1" else "region-2"
    return {"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}}


def _slice(row: list[Any]) -> dict[str, Any]:
    name, node, pool, driver, devices, *rest = row
    opts: dict[str, Any] = rest[0] if rest else {}
    if isinstance(devices, int):  # upstream's sliceWithMultipleDevices
        devices = [f"device-{i}" for i in range(devices)]
    capacity = opts.get("capacity", {})
    where = _where(opts["where"]) if "where" in opts else {"nodeName": node}
    spec: dict[str, Any] = {
        "driver": driver,
        **where,
        "pool": {"name": pool, "generation": opts.get("generation", 1), "resourceSliceCount": opts.get("count", 1)},
        "devices": [_device(d, capacity) for d in devices],
    }
    if opts.get("counters"):  # upstream's sliceWithCounterSets, as {name: {counter: value}}
        spec["sharedCounters"] = [{"name": n, "counters": _counters(c)} for n, c in opts["counters"].items()]
    if "counter_sets" in opts:  # upstream's sliceWithCounterSets: [[name, {counter: value}]]
        spec["sharedCounters"] = [
            {"name": n, "counters": {k: {"value": str(v)} for k, v in c.items()}} for n, c in opts["counter_sets"]
        ]
    return {"metadata": {"name": name}, "spec": spec}


def _exact(r: dict[str, Any]) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": r["class"]}
    if r.get("mode") not in (None, "ExactCount"):
        exactly["allocationMode"] = r["mode"]
    else:
        exactly["allocationMode"] = "ExactCount"
        exactly["count"] = r.get("count", 1)
    if r.get("admin"):
        exactly["adminAccess"] = True
    if r.get("tolerations"):
        exactly["tolerations"] = [TOLERATIONS[t] for t in r["tolerations"]]
    if r.get("selectors"):
        exactly["selectors"] = [{"cel": {"expression": e}} for e in r["selectors"]]
    if "raw_selectors" in r:
        exactly["selectors"] = r["raw_selectors"]
    if "capacity" in r:  # upstream's withCapacityRequest: capacity-0, or {name: value}
        given = r["capacity"]
        wanted = given if isinstance(given, dict) else {"capacity-0": given}
        exactly["capacity"] = {"requests": {k: str(v) for k, v in wanted.items()}}
    return exactly


def _claim(spec: dict[str, Any]) -> dict[str, Any]:
    requests = []
    for r in spec["requests"]:
        if "first" in r:
            requests.append(
                {"name": r["name"], "firstAvailable": [{"name": s["name"], **_exact(s)} for s in r["first"]]}
            )
        else:
            requests.append({"name": r["name"], "exactly": _exact(r)})
    devices: dict[str, Any] = {"requests": requests}
    if spec.get("constraints"):
        devices["constraints"] = spec["constraints"]
    if spec.get("config"):
        devices["config"] = [
            {**({"requests": c["requests"]} if c.get("requests") else {}), **_opaque(c["driver"], c["attr"])}
            for c in spec["config"]
        ]
    return {"metadata": {"name": spec["name"]}, "spec": {"devices": devices}}


FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
"""upstream's fixedShareID, which its test puts in place of every generated share ID."""


def _result(r: dict[str, Any]) -> str:
    """``request driver pool device [admin] [bc=conditions] [bfc=conditions] [share] [capacity=amount ...]``."""
    words = [r["request"], r["driver"], r["pool"], r["device"]] + (["admin"] if r.get("adminAccess") else [])
    if r.get("bindingConditions"):
        words.append(f"bc={','.join(r['bindingConditions'])}")
    if r.get("bindingFailureConditions"):
        words.append(f"bfc={','.join(r['bindingFailureConditions'])}")
    if "shareID" in r:
        assert r["shareID"] == FIXED_SHARE_ID
        words.append("share")
    words += [f"{k}={v}" for k, v in sorted(r.get("consumedCapacity", {}).items())]
    return _canonical(" ".join(words))


def _canonical(line: str) -> str:
    """Amounts compared as quantities (``4Gi`` and ``4294967296`` are the same)."""
    words = []
    for word in line.split():
        name, eq, amount = word.partition("=")
        words.append(f"{name}={parse_quantity(amount)}" if eq and name not in ("bc", "bfc") else word)
    return " ".join(words)


def _results(allocations: list[dict[str, Any]]) -> list[list[str]]:
    return [[_result(r) for r in a["devices"]["results"]] for a in allocations]


def _features(given: list[str] | dict[str, bool]) -> dict[str, bool]:
    return dict(given) if isinstance(given, dict) else dict.fromkeys(given, True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator_table(name: str) -> None:
    case = CASES[name]
    allocated = {tuple(d.split()) for d in case.get("allocated", [])}
    state = AllocatedState(allocated_devices=allocated)  # type: ignore[arg-type]
    for device, capacity in case.get("consumed", {}).items():  # upstream's allocatedCapacityDevices
        state.aggregated_capacity[tuple(device.split())] = {  # type: ignore[index]
            k: parse_quantity(str(v)) for k, v in capacity.items()
        }
    allocator = new_allocator(
        Features(**_features(case.get("features", []))),
        state,
        _Classes(case.get("classes", {"class-a": "driver-a"})),
        [_slice(r) for r in case["slices"]],
        CELCache(),
        share_id=lambda _: FIXED_SHARE_ID,
    )
    claims = [_claim(c) for c in case["claims"]]
    node = _node(case.get("node", "node-1"))
    if "error" in case:
        with pytest.raises(AllocationError) as err:
            allocator.allocate(node, claims)
        assert case["error"] in str(err.value)
        return
    got = allocator.allocate(node, claims)
    if case["expect"] is None:
        assert got == [] or not claims
        return
    assert _results(got) == [[_canonical(r) for r in claim] for claim in case["expect"]]
    local = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [case.get("node", "node-1")]}]}
        ]
    }
    for a in got:
        assert a.get("nodeSelector") == case.get("selector", local)
    if "config" in case:
        want = [
            {"source": src, **({"requests": reqs} if reqs else {}), **_opaque(driver, attr)}
            for src, reqs, driver, attr in case["config"]
        ]
        assert got[0]["devices"].get("config") == want


def test_skipped_rows_are_not_in_the_table() -> None:
    """SKIPPED names upstream rows left out; none of them may be in the YAML as well."""
    for name in SKIPPED:
        prefix = name.removesuffix("*")
        assert not any(c == name or (name.endswith("*") and c.startswith(prefix)) for c in CASES)
