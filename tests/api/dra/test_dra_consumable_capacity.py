"""Consumable capacity (DRAConsumableCapacity) across allocations: results of one allocation, as the
scheduler's GatherAllocatedState reads them back (allocated shares and their consumedCapacity,
upstream's AllocatedState.AllocatedSharedDeviceIDs and AggregatedCapacity), limit the next one,
as in the "consumable-capacity-multi-allocatable-device-with-allocated-capacity-*" rows of
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go.
A shared device's counters are taken while any share is allocated (upstream's IsDeviceAllocated,
kubernetes PR 139040). With the gate off a device allowing several allocations is a whole device,
as upstream's stable allocator treats it. Malformed capacities affect only their claim or device.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubesched.api.dra.structured import (
    AllocatedState,
    AllocationError,
    CELCache,
    Features,
    gather_allocated_state,
    new_allocator,
)

DRIVER = "driver-a"
NODE = {"metadata": {"name": "node-1"}}
SHARE = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
ON = Features(consumable_capacity=True, partitionable_devices=True)
RANGE = {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}


class _Classes:
    def get(self, name: str) -> dict[str, Any] | None:
        expr = f'device.driver == "{DRIVER}"'
        return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expr}}]}}


def _slice(*devices: dict[str, Any], counters: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": DRIVER,
        "nodeName": "node-1",
        "pool": {"name": "pool-1", "generation": 1, "resourceSliceCount": 1},
        "devices": list(devices),
    }
    if counters:
        spec["sharedCounters"] = [{"name": "set", "counters": {k: {"value": v} for k, v in counters.items()}}]
    return {"metadata": {"name": "slice-1"}, "spec": spec}


def _shared(name: str = "device-1", capacity: Any = "4", policy: Any = RANGE) -> dict[str, Any]:
    return {
        "name": name,
        "allowMultipleAllocations": True,
        "capacity": {"capacity-0": {"value": capacity, "requestPolicy": policy}},
    }


def _claim(name: str, capacity: Any = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "class-a", "allocationMode": "ExactCount", "count": 1}
    if capacity is not None:
        exactly["capacity"] = {"requests": {"capacity-0": capacity}}
    return {"metadata": {"name": name}, "spec": {"devices": {"requests": [{"name": "req-0", "exactly": exactly}]}}}


def _allocate(
    slices: list[dict[str, Any]], claim: dict[str, Any], state: AllocatedState, features: Features = ON
) -> list[dict[str, Any]]:
    allocator = new_allocator(features, state, _Classes(), slices, CELCache(), share_id=lambda _: SHARE)
    return allocator.allocate(NODE, [claim])


def _empty() -> AllocatedState:
    return AllocatedState(allocated_devices=set())


def _allocated(claim: dict[str, Any], allocation: dict[str, Any]) -> dict[str, Any]:
    return {**claim, "status": {"allocation": allocation}}


def test_shares_of_earlier_allocations_limit_the_next() -> None:
    """Each claim takes 2 of the device's 4 (the policy's default); a third finds nothing left."""
    slices = [_slice(_shared())]
    done: list[dict[str, Any]] = []
    for name in ("claim-0", "claim-1"):
        state = gather_allocated_state(done, consumable_capacity=True)
        [allocation] = _allocate(slices, _claim(name), state)
        [result] = allocation["devices"]["results"]
        assert result == {
            "request": "req-0",
            "driver": DRIVER,
            "pool": "pool-1",
            "device": "device-1",
            "shareID": SHARE,
            "consumedCapacity": {"capacity-0": "2"},
        }
        done.append(_allocated(_claim(name), allocation))
    state = gather_allocated_state(done, consumable_capacity=True)
    assert state.aggregated_capacity == {(DRIVER, "pool-1", "device-1"): {"capacity-0": 4}}
    assert state.allocated_devices == set()
    assert _allocate(slices, _claim("claim-2"), state) == []


def test_a_shared_device_held_by_others_takes_its_counters() -> None:
    """device-1 (6 of 8) is shared by another claim: device-2 (4) no longer fits the counter set."""
    consumes = [{"counterSet": "set", "counters": {"memory": {"value": "6"}}}]
    shared = {**_shared(), "consumesCounters": consumes, "attributes": {"partition": {"bool": False}}}
    partition = {
        "name": "device-2",
        "consumesCounters": [{"counterSet": "set", "counters": {"memory": {"value": "4"}}}],
    }
    slices = [_slice(shared, partition, counters={"memory": "8"})]
    claim = _claim("claim-0")
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["driver-a"].partition == true'}}
    ]
    partition["attributes"] = {"partition": {"bool": True}}
    assert _allocate(slices, claim, _empty())[0]["devices"]["results"][0]["device"] == ("device-2")
    held = [_allocated(_claim("other"), _allocate(slices, _claim("other"), _empty())[0])]
    assert _allocate(slices, claim, gather_allocated_state(held, consumable_capacity=True)) == []


def test_gate_off_a_shared_device_is_a_whole_device() -> None:
    """Without DRAConsumableCapacity: no share, no consumed capacity, and the device is taken."""
    slices = [_slice(_shared())]
    off = Features(consumable_capacity=False)
    [allocation] = _allocate(slices, _claim("claim-0"), _empty(), off)
    assert allocation["devices"]["results"] == [
        {"request": "req-0", "driver": DRIVER, "pool": "pool-1", "device": "device-1"}
    ]
    state = gather_allocated_state([_allocated(_claim("claim-0"), allocation)], consumable_capacity=False)
    assert _allocate(slices, _claim("claim-1"), state, off) == []
    with pytest.raises(
        AllocationError, match="has capacity requests, but the DRAConsumableCapacity feature is disabled"
    ):
        _allocate(slices, _claim("claim-1", capacity="1"), _empty(), off)


def test_default_share_ids_are_uuids() -> None:
    """upstream GenerateShareID: a new random UUID per result."""
    allocator = new_allocator(ON, _empty(), _Classes(), [_slice(_shared())], CELCache())
    ids = [allocator.allocate(NODE, [_claim("claim-0")])[0]["devices"]["results"][0]["shareID"] for _ in range(2)]
    assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", i) for i in ids)
    assert ids[0] != ids[1]


@pytest.mark.parametrize(
    ("device", "capacity"),
    [
        (_shared(capacity="lots"), None),  # unparsable capacity: counts as zero, nothing fits
        (_shared(policy={"validRange": "wide", "validValues": "x"}), None),  # malformed policy: none
        (_shared(policy={"validRange": {"min": "2", "step": "0"}}), "3"),  # zero step: no step
        ({"name": "device-1", "allowMultipleAllocations": True, "capacity": ["x"]}, None),
    ],
)
def test_malformed_capacities_do_not_raise(device: dict[str, Any], capacity: Any) -> None:
    _allocate([_slice(device)], _claim("claim-0", capacity), _empty())


def test_malformed_capacity_request_is_the_claims_error() -> None:
    with pytest.raises(AllocationError, match="invalid capacity request capacity-0"):
        _allocate([_slice(_shared())], _claim("claim-0", capacity="plenty"), _empty())


@pytest.mark.parametrize(
    ("policy", "wanted", "consumed"),
    [
        # upstream roundUpRange: min + ceil((request - min) / step) * step, in the step's format.
        ({"validRange": {"min": "1Gi", "step": "1Gi", "max": "8Gi"}}, "1536Mi", "2Gi"),
        ({"validRange": {"min": "1k", "step": "500"}}, "1200", "1500"),
        ({"validRange": {"min": "100m", "step": "100m"}}, "150m", "200m"),
        ({"validRange": {"min": "1Gi"}}, "100Mi", "1Gi"),  # below min: min
        ({"validValues": ["1Gi", "4Gi"]}, "2Gi", "4Gi"),  # roundUpValidValues
    ],
)
def test_request_policy_rounding(policy: dict[str, Any], wanted: str, consumed: str) -> None:
    slices = [_slice(_shared(capacity="8Gi", policy=policy))]
    [allocation] = _allocate(slices, _claim("claim-0", capacity=wanted), _empty())
    assert allocation["devices"]["results"][0]["consumedCapacity"] == {"capacity-0": consumed}


def test_consumed_capacity_is_written_canonically() -> None:
    """A request of 2048Mi reads back as upstream's resource.Quantity writes it: 2Gi."""
    slices = [_slice(_shared(capacity="8Gi", policy=None))]
    [allocation] = _allocate(slices, _claim("claim-0", capacity="2048Mi"), _empty())
    assert allocation["devices"]["results"][0]["consumedCapacity"] == {"capacity-0": "2Gi"}
