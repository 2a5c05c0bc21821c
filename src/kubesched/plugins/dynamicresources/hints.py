"""DynamicResources' queueing hints (upstream ``isSchedulableAfterClaimChange`` and
``isSchedulableAfterTargetPodUpdate``): which ResourceClaim and pod updates may make a pod
that this plugin rejected schedulable."""

from __future__ import annotations

from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.framework.events import QueueingHint
from kubesched.framework.types import JSONObj
from kubesched.plugins.jsonview import as_object

from .claims import allocation_of, as_map, foreach_pod_resource_claim
from .dra_manager import ClaimTracker, claim_uid

__all__ = ["is_schedulable_after_claim_change", "is_schedulable_after_pod_change"]


def is_schedulable_after_claim_change(
    tracker: ClaimTracker, pod: JSONObj, old: object, new: object, release: Release = DEFAULT_RELEASE
) -> QueueingHint:
    """A claim the pod waits for was created or its status changed, or any claim released its
    devices (deallocated or deleted while allocated)."""
    original = as_object(old, "ResourceClaim")
    modified = as_object(new, "ResourceClaim")
    # A pod that still waits for one of its own claims (not created, being deleted, not its
    # owner) is not helped by any claim event but that claim's: upstream checks this first, also
    # for deletes (dynamicresources_test.go "skip-deletes").
    found, err = foreach_pod_resource_claim(pod, tracker, release)
    if err is not None:
        return QueueingHint.QUEUE_SKIP
    if modified is None:  # deleted: only an allocated claim frees devices (kubernetes#140831)
        return (
            QueueingHint.QUEUE if original is None or allocation_of(original) is not None else QueueingHint.QUEUE_SKIP
        )
    if original is not None and allocation_of(original) is not None and allocation_of(modified) is None:
        return QueueingHint.QUEUE  # deallocated: devices became free for everyone
    uid = claim_uid(modified)
    if not any(claim_uid(c) == uid for _, c in found):
        return QueueingHint.QUEUE_SKIP
    if original is None:
        return QueueingHint.QUEUE
    if as_map(original.get("status")) == as_map(modified.get("status")):
        return QueueingHint.QUEUE_SKIP  # e.g. a finalizer added by the driver
    return QueueingHint.QUEUE


def is_schedulable_after_pod_change(
    tracker: ClaimTracker, pod: JSONObj, old: object, new: object, release: Release = DEFAULT_RELEASE
) -> QueueingHint:
    """The pod's own update recorded its generated claims: queue once they all exist."""
    modified = as_object(new, "Pod")
    if modified is None:
        return QueueingHint.QUEUE_SKIP
    uid = as_map(modified.get("metadata")).get("uid")
    if uid != as_map(pod.get("metadata")).get("uid"):
        return QueueingHint.QUEUE_SKIP
    _, err = foreach_pod_resource_claim(modified, tracker, release)
    return QueueingHint.QUEUE_SKIP if err is not None else QueueingHint.QUEUE
