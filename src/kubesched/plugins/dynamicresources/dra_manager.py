"""The scheduler's view of resource.k8s.io objects (upstream ``dra_manager.go`` and
``allocateddevices.go``): claims as the informers hold them overlaid with the copies the plugin
itself wrote (the assume cache), the allocations in flight between Reserve and PreBind, and the
devices all of them hold, which is what the allocator must not hand out again.

Upstream keeps the allocated devices incrementally from claim events; kubesched's plugins see
objects through ``handle.client()`` only, so :meth:`ClaimTracker.gather_allocated_state` folds
the listed claims once per scheduling cycle (PreFilter of a pod with claims to allocate) with
:func:`kubesched.api.dra.structured.gather_allocated_state`, which gives the same set: every
device of every allocated claim plus those of in-flight allocations.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.api.dra.structured import AllocatedState, gather_allocated_state
from kubesched.framework.interfaces import ClusterClient
from kubesched.framework.types import JSONObj

__all__ = [
    "API_VERSION",
    "ClaimTracker",
    "DeviceClassLister",
    "claim_key",
    "claim_uid",
    "list_resource_slices",
]

API_VERSION = "resource.k8s.io/v1"


def _map(value: object) -> JSONObj:
    return value if isinstance(value, Mapping) else {}


def claim_key(claim: JSONObj) -> str:
    md = _map(claim.get("metadata"))
    return f"{md.get('namespace') or ''}/{md.get('name') or ''}"


def claim_uid(claim: JSONObj) -> str:
    """The claim's UID, or its namespace/name when it has none (hand-written test objects)."""
    uid = _map(claim.get("metadata")).get("uid")
    return uid if isinstance(uid, str) and uid else claim_key(claim)


def _resource_version(claim: JSONObj) -> str:
    return str(_map(claim.get("metadata")).get("resourceVersion") or "")


class DeviceClassLister:
    """Upstream ``deviceClassLister``: DeviceClasses by name from the client's store."""

    def __init__(self, client: ClusterClient) -> None:
        self._client = client

    def get(self, name: str) -> JSONObj | None:
        obj = self._client.get_object(API_VERSION, "DeviceClass", "", name)
        return obj if isinstance(obj, Mapping) else None


def list_resource_slices(client: ClusterClient) -> list[JSONObj]:
    """Upstream ``ListWithDeviceTaintRules`` without the DeviceTaintRule patching (not ported)."""
    return [s for s in client.list_objects(API_VERSION, "ResourceSlice") if isinstance(s, Mapping)]


@dataclass
class _InFlight:
    claim: JSONObj
    sharers: int


@dataclass
class _Assumed:
    claim: JSONObj
    #: The resourceVersion of the informer's copy the write replaced: once the informer has
    #: another one, the write has arrived and the assumed copy is dropped.
    over: str


class ClaimTracker:
    """Upstream ``claimTracker``: Get/List through the assume cache, in-flight allocations
    (``SignalClaimPendingAllocation`` ... ``MaybeRemoveClaimPendingAllocation``), and the
    allocated state the allocator starts from."""

    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._lock = threading.Lock()
        self._in_flight: dict[str, _InFlight] = {}
        self._assumed: dict[str, _Assumed] = {}

    # -- the assume cache ---------------------------------------------------------------------
    def _overlay(self, informer: JSONObj | None, key: str) -> JSONObj | None:
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is None:
                return informer
            if informer is None or _resource_version(informer) != assumed.over:
                del self._assumed[key]  # deleted, or the informer caught up
                return informer
            return assumed.claim

    def get(self, namespace: str, name: str) -> JSONObj | None:
        obj = self._client.get_object(API_VERSION, "ResourceClaim", namespace, name)
        informer = obj if isinstance(obj, Mapping) else None
        return self._overlay(informer, f"{namespace}/{name}")

    def list_claims(self) -> list[JSONObj]:
        out: list[JSONObj] = []
        for obj in self._client.list_objects(API_VERSION, "ResourceClaim"):
            if isinstance(obj, Mapping):
                claim = self._overlay(obj, claim_key(obj))
                if claim is not None:
                    out.append(claim)
        return out

    def assume_claim_after_api_call(self, written: JSONObj, over: JSONObj) -> None:
        """Upstream ``AssumeClaimAfterAPICall``: read ``written`` until the informer delivers it."""
        with self._lock:
            self._assumed[claim_key(written)] = _Assumed(written, _resource_version(over))

    def assumed_claim_restore(self, namespace: str, name: str) -> None:
        with self._lock:
            self._assumed.pop(f"{namespace}/{name}", None)

    # -- in-flight allocations ----------------------------------------------------------------
    def get_pending_allocation(self, uid: str) -> JSONObj | None:
        with self._lock:
            inflight = self._in_flight.get(uid)
        if inflight is None:
            return None
        alloc = _map(inflight.claim.get("status")).get("allocation")
        return alloc if isinstance(alloc, Mapping) else None

    def signal_claim_pending_allocation(self, uid: str, allocated_claim: JSONObj) -> None:
        with self._lock:
            inflight = self._in_flight.get(uid)
            if inflight is not None:
                inflight.sharers += 1
                return
        md = _map(allocated_claim.get("metadata"))
        current = self.get(str(md.get("namespace") or ""), str(md.get("name") or ""))
        if (
            current is not None
            and claim_uid(current) == uid
            and isinstance(_map(current.get("status")).get("allocation"), Mapping)
        ):
            return  # already allocated in the store: nothing in flight
        with self._lock:
            self._in_flight[uid] = _InFlight(allocated_claim, 1)

    def maybe_remove_claim_pending_allocation(self, uid: str, force_remove: bool) -> bool:
        with self._lock:
            inflight = self._in_flight.get(uid)
            if inflight is None:
                return False
            if force_remove or inflight.sharers == 1:
                del self._in_flight[uid]
                return True
            inflight.sharers -= 1
            return False

    def in_flight_claims(self) -> list[JSONObj]:
        with self._lock:
            return [f.claim for f in self._in_flight.values()]

    # -- allocated devices --------------------------------------------------------------------
    def gather_allocated_state(self, consumable_capacity: bool) -> AllocatedState:
        """Upstream ``GatherAllocatedState``: devices of allocated claims and of in-flight ones."""
        return gather_allocated_state([*self.list_claims(), *self.in_flight_claims()], consumable_capacity)
