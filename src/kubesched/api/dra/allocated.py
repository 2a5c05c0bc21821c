"""The devices that allocated claims hold (upstream structured ``GatherAllocatedState``, which the
scheduler's allocateddevices.go feeds): what the allocator must not hand out again.

Admin-access results do not count (they observe a device without taking it). With
DRAConsumableCapacity a result with a ``shareID`` takes one share of the device and its
``consumedCapacity``, not the whole device; without it every result takes the whole device.
A malformed result is skipped: it names no device the allocator could give out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubesched.api.quantity import QuantityError, parse_quantity

from .types import AllocatedState, DeviceID

__all__ = ["gather_allocated_state"]


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def gather_allocated_state(claims: Iterable[Mapping[str, Any]], consumable_capacity: bool = False) -> AllocatedState:
    """Upstream ``GatherAllocatedState`` over ``claims`` (allocated ones and in-flight ones)."""
    state = AllocatedState(allocated_devices=set())
    for claim in claims:
        allocation = _map(_map(claim.get("status")).get("allocation"))
        for raw in _list(_map(allocation.get("devices")).get("results")):
            result = _map(raw)
            if result.get("adminAccess") is True:
                continue
            driver, pool, device = _str(result.get("driver")), _str(result.get("pool")), _str(result.get("device"))
            if driver is None or pool is None or device is None:
                continue
            device_id: DeviceID = (driver, pool, device)
            share = _str(result.get("shareID"))
            if consumable_capacity and share is not None:
                state.allocated_shared_device_ids.add((driver, pool, device, share))
                consumed = state.aggregated_capacity.setdefault(device_id, {})
                for name, value in _map(result.get("consumedCapacity")).items():
                    if not isinstance(value, str | int | float) or isinstance(value, bool):
                        continue
                    try:
                        consumed[name] = consumed.get(name, Fraction(0)) + parse_quantity(value)
                    except QuantityError:
                        continue
                continue
            state.allocated_devices.add(device_id)
    return state
