"""The structured-parameters allocator, upstream k8s.io/dynamic-resource-allocation/structured.

The API the DynamicResources plugin imports (names as upstream's): ``new_allocator`` builds an
``Allocator`` over the cluster's DeviceClasses and ResourceSlices and the devices already taken
(``AllocatedState``, from ``gather_allocated_state``); ``Allocator.allocate`` answers one node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kubesched.api.dra.allocated import gather_allocated_state
from kubesched.api.dra.allocator import StableAllocator
from kubesched.api.dra.cel import CELCache
from kubesched.api.dra.types import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    DeviceClassLister,
    DeviceID,
    FailedAllocationOnNode,
    Features,
)

__all__ = [
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "CELCache",
    "DeviceClassLister",
    "DeviceID",
    "FailedAllocationOnNode",
    "Features",
    "gather_allocated_state",
    "new_allocator",
]


class Allocator(Protocol):
    """Upstream structured.Allocator."""

    def allocate(
        self, node: Mapping[str, Any] | None, claims: Sequence[Mapping[str, Any]], *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """One AllocationResult dict per claim, in order; [] when they do not all fit on this node.
        Past ``deadline`` (time.monotonic()), AllocationTimeout."""
        ...


def new_allocator(
    features: Features,
    allocated_state: AllocatedState,
    classes: DeviceClassLister,
    slices: Sequence[Mapping[str, Any]],
    cel_cache: CELCache,
    share_id: Callable[[str], str] | None = None,
) -> Allocator:
    """Upstream structured.NewAllocator; ``share_id`` makes the shareID of a shared device's result
    from a key naming the share (upstream's random UUIDs by default)."""
    if share_id is None:
        return StableAllocator(features, allocated_state, classes, slices, cel_cache)
    return StableAllocator(features, allocated_state, classes, slices, cel_cache, share_id)
