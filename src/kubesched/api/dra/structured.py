"""The structured-parameters allocator, upstream k8s.io/dynamic-resource-allocation/structured.

The API the DynamicResources plugin imports (names as upstream's): ``new_allocator`` builds an
``Allocator`` over the cluster's DeviceClasses and ResourceSlices and the devices already taken
(``AllocatedState``, from ``gather_allocated_state``); ``Allocator.allocate`` answers one node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from kubesched.api.dra.cel import CELCache

__all__ = [
    "AllocatedState",
    "AllocationError",
    "Allocator",
    "CELCache",
    "DeviceClassLister",
    "DeviceID",
    "Features",
    "gather_allocated_state",
    "new_allocator",
]

DeviceID = tuple[str, str, str]
"""(driver, pool, device): upstream structured.DeviceID."""

SharedDeviceID = tuple[str, str, str, str]
"""(driver, pool, device, share id): upstream structured.SharedDeviceID."""


@dataclass(frozen=True)
class Features:
    """Upstream structured.Features: which optional parts of the API the allocator honours."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_and_status: bool = False
    consumable_capacity: bool = False


@dataclass
class AllocatedState:
    """Upstream structured.AllocatedState: devices other claims hold."""

    allocated_devices: set[DeviceID]
    allocated_shared_device_ids: set[SharedDeviceID] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)


class DeviceClassLister(Protocol):
    """Looks up a DeviceClass by name (None when it does not exist)."""

    def get(self, name: str) -> Mapping[str, Any] | None: ...


class AllocationError(Exception):
    """A real error (bad CEL, missing class, ...), with upstream's message; not 'does not fit'."""


class Allocator(Protocol):
    """Upstream structured.Allocator."""

    def allocate(self, node: Mapping[str, Any] | None, claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """One AllocationResult dict per claim, in order; [] when they do not all fit on this node."""
        ...


def new_allocator(
    features: Features,
    allocated_state: AllocatedState,
    classes: DeviceClassLister,
    slices: Sequence[Mapping[str, Any]],
    cel_cache: CELCache,
) -> Allocator:
    """Upstream structured.NewAllocator."""
    from kubesched.api.dra.allocator import StableAllocator

    return StableAllocator(features, allocated_state, classes, slices, cel_cache)


def gather_allocated_state(claims: Iterable[Mapping[str, Any]]) -> AllocatedState:
    """Devices in status.allocation of allocated claims; admin-access results do not count."""
    from kubesched.api.dra.allocator import gather_allocated_state as gather

    return gather(claims)
