"""The structured allocator (kubesched.api.dra.structured; upstream
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go and the
cases of internal/allocatortesting/allocator_testing.go: simple, small and large counts, already
allocated devices, all devices, matchAttribute, first available, admin access, class and claim
config, several claims, other nodes' and older generations' slices). Expected devices are
hand-derived from upstream's search order: pools by driver and pool name, devices in slice order,
the first complete assignment."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra.structured import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    CELCache,
    Features,
    gather_allocated_state,
    new_allocator,
)

DRIVER = "gpu.example.com"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}}}
ON_NODE = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}


class Classes:
    def __init__(self, *classes: dict[str, Any]) -> None:
        self.by_name = {c["metadata"]["name"]: c for c in classes}

    def get(self, name: str) -> dict[str, Any] | None:
        return self.by_name.get(name)


def _class(name: str = "gpu", expr: str = f'device.driver == "{DRIVER}"', config: list[Any] | None = None) -> dict:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expr}}]}
    if config:
        spec["config"] = config
    return {"metadata": {"name": name}, "spec": spec}


def _slice(
    node: str | None = "node-1",
    devices: int = 4,
    *,
    pool: str | None = None,
    generation: int = 1,
    domains: list[int] | None = None,
    driver: str = DRIVER,
    **where: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or "shared", "generation": generation, "resourceSliceCount": 1},
    }
    if node is not None:
        spec["nodeName"] = node
    spec.update(where)
    spec["devices"] = [
        {"name": f"gpu-{i}", "attributes": {"nvlink": {"int": (domains or [0] * devices)[i]}, "model": {"string": "x"}}}
        for i in range(devices)
    ]
    return {"metadata": {"name": f"{pool or node}-{generation}"}, "spec": spec}


def _claim(
    name: str = "claim",
    *requests: dict[str, Any],
    constraints: list[Any] | None = None,
    config: list[Any] | None = None,
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests) or [_req()]}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def _req(
    name: str = "req",
    count: int | None = None,
    *,
    cls: str = "gpu",
    mode: str | None = None,
    selectors: list[str] | None = None,
    admin: bool = False,
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls}
    if count is not None:
        exactly["count"] = count
    if mode:
        exactly["allocationMode"] = mode
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def _allocate(
    claims: list[dict[str, Any]],
    slices: list[dict[str, Any]],
    *,
    allocated: set[Any] | None = None,
    classes: Classes | None = None,
    node: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    alloc = new_allocator(
        Features(),
        AllocatedState(allocated_devices=allocated or set()),
        classes or Classes(_class()),
        slices,
        CELCache(),
    )
    return alloc.allocate(NODE if node is None else node, claims)


def _devices(result: list[dict[str, Any]]) -> list[list[str]]:
    return [[f"{r['request']}:{r['pool']}/{r['device']}" for r in a["devices"]["results"]] for a in result]


def test_simple_one_device_on_the_node() -> None:
    result = _allocate([_claim()], [_slice()])
    assert result == [
        {
            "devices": {"results": [{"request": "req", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"}]},
            "nodeSelector": ON_NODE,
        }
    ]


def test_count_takes_the_first_free_devices_in_slice_order() -> None:
    result = _allocate([_claim("c", _req(count=2))], [_slice()], allocated={(DRIVER, "node-1", "gpu-0")})
    assert _devices(result) == [["req:node-1/gpu-1", "req:node-1/gpu-2"]]


def test_not_enough_devices_is_no_result() -> None:
    assert _allocate([_claim("c", _req(count=5))], [_slice()]) == []


def test_match_attribute_keeps_a_request_in_one_domain() -> None:
    slices = [_slice(devices=8, domains=[0, 1, 0, 1, 0, 1, 0, 1])]
    constraint = [{"requests": ["req"], "matchAttribute": f"{DRIVER}/nvlink"}]
    result = _allocate([_claim("c", _req(count=4), constraints=constraint)], slices)
    assert _devices(result) == [["req:node-1/gpu-0", "req:node-1/gpu-2", "req:node-1/gpu-4", "req:node-1/gpu-6"]]
    # One device of domain 0 taken: only domain 1 still has four.
    result = _allocate(
        [_claim("c", _req(count=4), constraints=constraint)], slices, allocated={(DRIVER, "node-1", "gpu-0")}
    )
    assert _devices(result) == [["req:node-1/gpu-1", "req:node-1/gpu-3", "req:node-1/gpu-5", "req:node-1/gpu-7"]]
    assert _allocate([_claim("c", _req(count=5), constraints=constraint)], slices) == []


def test_all_devices_or_nothing() -> None:
    assert _devices(_allocate([_claim("c", _req(mode="All"))], [_slice(devices=2)])) == [
        ["req:node-1/gpu-0", "req:node-1/gpu-1"]
    ]
    assert (
        _allocate([_claim("c", _req(mode="All"))], [_slice(devices=2)], allocated={(DRIVER, "node-1", "gpu-1")}) == []
    )


def test_first_available_tries_subrequests_in_order() -> None:
    request = {
        "name": "req",
        "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu", "count": 8},
            {"name": "small", "deviceClassName": "gpu", "count": 2},
        ],
    }
    assert _devices(_allocate([_claim("c", request)], [_slice()])) == [
        ["req/small:node-1/gpu-0", "req/small:node-1/gpu-1"]
    ]


def test_devices_are_not_shared_between_claims() -> None:
    result = _allocate([_claim("a", _req(count=3)), _claim("b", _req(count=1))], [_slice()])
    assert _devices(result) == [["req:node-1/gpu-0", "req:node-1/gpu-1", "req:node-1/gpu-2"], ["req:node-1/gpu-3"]]
    assert _allocate([_claim("a", _req(count=3)), _claim("b", _req(count=2))], [_slice()]) == []


def test_admin_access_may_use_allocated_devices() -> None:
    result = _allocate([_claim("c", _req(admin=True))], [_slice(devices=1)], allocated={(DRIVER, "node-1", "gpu-0")})
    assert result[0]["devices"]["results"] == [
        {"request": "req", "driver": DRIVER, "pool": "node-1", "device": "gpu-0", "adminAccess": True}
    ]


def test_other_nodes_and_older_generations_do_not_count() -> None:
    slices = [_slice("node-2", 4), _slice(devices=4, generation=1), _slice(devices=1, generation=2)]
    assert _devices(_allocate([_claim()], slices)) == [["req:node-1/gpu-0"]]
    assert _allocate([_claim("c", _req(count=2))], slices) == []


def test_network_attached_devices_have_no_node_selector_or_the_slice_one() -> None:
    shared = _slice(None, 1, pool="fabric", allNodes=True)
    assert _allocate([_claim()], [shared]) == [
        {"devices": {"results": [{"request": "req", "driver": DRIVER, "pool": "fabric", "device": "gpu-0"}]}}
    ]
    zone = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    in_zone = _slice(None, 1, pool="zone-a", nodeSelector=zone)
    assert _allocate([_claim()], [in_zone])[0]["nodeSelector"] == zone
    other = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-9", "labels": {"zone": "b"}}}
    assert _allocate([_claim()], [in_zone], node=other) == []


def test_pools_in_driver_and_name_order() -> None:
    slices = [_slice(None, 1, pool="zz", allNodes=True), _slice(None, 1, pool="aa", allNodes=True)]
    assert _devices(_allocate([_claim()], slices)) == [["req:aa/gpu-0"]]


def test_selectors_of_class_and_request() -> None:
    classes = Classes(
        _class(), _class("odd", f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].nvlink == 1')
    )
    slices = [_slice(devices=4, domains=[0, 1, 0, 1])]
    assert _devices(_allocate([_claim("c", _req(cls="odd", count=2))], slices, classes=classes)) == [
        ["req:node-1/gpu-1", "req:node-1/gpu-3"]
    ]
    picky = _req(count=1, selectors=[f'device.attributes["{DRIVER}"].nvlink == 1'])
    assert _devices(_allocate([_claim("c", picky)], slices, classes=classes)) == [["req:node-1/gpu-1"]]


def test_config_from_class_then_claim() -> None:
    opaque = {"opaque": {"driver": DRIVER, "parameters": {"mode": "shared"}}}
    classes = Classes(_class(config=[opaque]))
    claim = _claim("c", _req(), config=[{"requests": ["req"], **opaque}])
    result = _allocate([claim], [_slice()], classes=classes)
    assert result[0]["devices"]["config"] == [
        {"source": "FromClass", "requests": ["req"], **opaque},
        {"source": "FromClaim", "requests": ["req"], **opaque},
    ]


@pytest.mark.parametrize(
    ("classes", "claim", "message"),
    [
        (Classes(), _claim(), "could not retrieve device class gpu"),
        (Classes(_class(expr='device.attributes["nope"].x == 1')), _claim(), "runtime error"),
        (Classes(_class(expr="device.driver ==")), _claim(), "compilation failed"),
        (Classes(_class(expr="device.driver")), _claim(), "could not be converted to bool"),
        (Classes(_class()), _claim("c", _req(count=0)), "invalid count 0"),
        (Classes(_class()), _claim("c", _req(count=10**9)), "exceeds the claim limit of 32"),
        (Classes(_class()), _claim("c", {"name": "r"}), "neither exactly nor firstAvailable"),
    ],
    ids=["missing class", "CEL runtime error", "CEL compile error", "not bool", "count 0", "huge count", "no kind"],
)
def test_errors(classes: Classes, claim: dict[str, Any], message: str) -> None:
    with pytest.raises(AllocationError, match=message):
        _allocate([claim], [_slice()], classes=classes)


def test_malformed_slices_are_skipped() -> None:
    garbage = [{"spec": "x"}, {"spec": {"nodeName": "node-1", "devices": [None, 3, {"name": 5}]}}, {}]
    assert _devices(_allocate([_claim()], [*garbage, _slice()])) == [["req:node-1/gpu-0"]]


def test_gathered_state_skips_admin_access() -> None:
    claims = [
        {
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {"driver": DRIVER, "pool": "p", "device": "a"},
                            {"driver": DRIVER, "pool": "p", "device": "b", "adminAccess": True},
                            {"driver": DRIVER, "pool": "p"},
                        ]
                    }
                }
            }
        },
        {"status": {}},
        {"status": {"allocation": "garbage"}},
    ]
    assert gather_allocated_state(claims).allocated_devices == {(DRIVER, "p", "a")}


def _partitioned_slice() -> dict[str, Any]:
    """One GPU of 80Gi shared by its partitions (KEP-4815): the whole GPU, or two 40Gi halves."""

    def part(name: str, memory: str) -> dict[str, Any]:
        return {"name": name, "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}]}

    return {
        "metadata": {"name": "parts"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
            "devices": [part("half-a", "40Gi"), part("half-b", "40Gi"), part("whole", "80Gi")],
        },
    }


def test_partitions_share_their_counters() -> None:
    features = Features(partitionable_devices=True)

    def allocate(claims: list[dict[str, Any]], allocated: set[Any] | None = None) -> list[dict[str, Any]]:
        alloc = new_allocator(
            features,
            AllocatedState(allocated_devices=allocated or set()),
            Classes(_class()),
            [_partitioned_slice()],
            CELCache(),
        )
        return alloc.allocate(NODE, claims)

    assert _devices(allocate([_claim("c", _req(count=2))])) == [["req:node-1/half-a", "req:node-1/half-b"]]
    # Both halves and the whole would need 160Gi of the GPU's 80Gi.
    assert allocate([_claim("c", _req(count=3))]) == []
    # A half is allocated elsewhere: the whole GPU no longer fits, the other half does.
    assert _devices(allocate([_claim("c", _req(count=1))], {(DRIVER, "node-1", "half-a")})) == [["req:node-1/half-b"]]
    picky = _req(count=1, selectors=["device.attributes.size() == 0"])
    assert allocate([_claim("c", picky)], {(DRIVER, "node-1", "half-a"), (DRIVER, "node-1", "half-b")}) == []
    # Without DRAPartitionableDevices, devices that consume counters are not offered at all.
    off = new_allocator(
        Features(), AllocatedState(allocated_devices=set()), Classes(_class()), [_partitioned_slice()], CELCache()
    )
    assert off.allocate(NODE, [_claim()]) == []


def test_devices_waiting_for_binding_conditions_are_not_offered() -> None:
    s = _slice(devices=2)
    s["spec"]["devices"][0]["bindingConditions"] = ["attached"]
    assert _devices(_allocate([_claim()], [s])) == [["req:node-1/gpu-1"]]


def test_the_search_stops_at_its_deadline() -> None:
    """filterTimeout: upstream's allocator stops when the Filter's context expires. 2000 GPUs, each
    in an NVLink domain of its own, and a claim for two in one domain: no pair exists, and the
    search would try ~2 million pairs (minutes here); with a deadline it gives up at once."""
    import time

    alloc = new_allocator(
        Features(),
        AllocatedState(allocated_devices=set()),
        Classes(_class()),
        [_slice(devices=2000, domains=list(range(2000)))],
        CELCache(),
    )
    claim = _claim("c", _req(count=2), constraints=[{"requests": ["req"], "matchAttribute": f"{DRIVER}/nvlink"}])
    start = time.monotonic()
    with pytest.raises(AllocationTimeout, match="timed out trying to allocate devices"):
        alloc.allocate(NODE, [claim], deadline=start + 0.05)
    assert time.monotonic() - start < 10  # CEL over the 2000 devices once, then the deadline
    # A deadline far away changes nothing for a claim that fits.
    assert _devices(alloc.allocate(NODE, [_claim("d", _req(count=1))], deadline=time.monotonic() + 60)) == [
        ["req:node-1/gpu-0"]
    ]
