"""Upstream's allocator table (TestAllocator,
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go,
v1.37) as data (data/allocator_cases.yaml), run against kubesched.api.dra.structured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.dra.structured import AllocatedState, AllocationError, CELCache, Features, new_allocator

CASES: dict[str, dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "data" / "allocator_cases.yaml").read_text())


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


def _counters(counters: dict[str, str]) -> dict[str, Any]:
    return {name: {"value": value} for name, value in counters.items()}


def _device(d: Any, capacity: dict[str, str]) -> dict[str, Any]:
    if isinstance(d, str):
        d = {"name": d}
    out: dict[str, Any] = {"name": d["name"]}
    if d["name"] in capacity:
        out["capacity"] = {"memory": {"value": capacity[d["name"]]}}
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
    return {
        "metadata": {"name": name},
        "spec": {
            "driver": driver,
            **where,
            "pool": {"name": pool, "generation": opts.get("generation", 1), "resourceSliceCount": opts.get("count", 1)},
            "devices": [_device(d, capacity) for d in devices],
            # upstream's sliceWithCounterSets
            **(
                {"sharedCounters": [{"name": n, "counters": _counters(c)} for n, c in opts["counters"].items()]}
                if opts.get("counters")
                else {}
            ),
        },
    }


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


def _results(allocations: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            " ".join(
                [r["request"], r["driver"], r["pool"], r["device"]]
                + (["admin"] if r.get("adminAccess") else [])
                + ([f"bc={','.join(r['bindingConditions'])}"] if r.get("bindingConditions") else [])
                + ([f"bfc={','.join(r['bindingFailureConditions'])}"] if r.get("bindingFailureConditions") else [])
            )
            for r in a["devices"]["results"]
        ]
        for a in allocations
    ]


def _features(given: list[str] | dict[str, bool]) -> dict[str, bool]:
    return dict(given) if isinstance(given, dict) else dict.fromkeys(given, True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator_table(name: str) -> None:
    case = CASES[name]
    allocated = {tuple(d.split()) for d in case.get("allocated", [])}
    allocator = new_allocator(
        Features(**_features(case.get("features", []))),
        AllocatedState(allocated_devices=allocated),  # type: ignore[arg-type]
        _Classes(case.get("classes", {"class-a": "driver-a"})),
        [_slice(r) for r in case["slices"]],
        CELCache(),
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
    assert _results(got) == case["expect"]
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
