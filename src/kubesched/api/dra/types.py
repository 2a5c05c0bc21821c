"""The allocator's value types (upstream structured.DeviceID, Features, AllocatedState, ...),
apart from :mod:`.structured` so the allocator and its front both import them without a cycle."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

__all__ = [
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "DeviceClassLister",
    "DeviceID",
    "FailedAllocationOnNode",
    "Features",
    "SharedDeviceID",
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


class FailedAllocationOnNode(AllocationError):
    """Allocation failed on this node for a reason of the node's own slices (an invalid pool):
    upstream's ``ErrFailedAllocationOnNode``, an Unschedulable status for the node, not an Error."""


class AllocationTimeout(AllocationError):
    """The search ran past its deadline (upstream: the Filter's context expired after
    ``filterTimeout``); the plugin answers as upstream does for a timed-out allocation."""
