"""Pod <-> ResourceClaim helpers, upstream k8s.io/dynamic-resource-allocation/resourceclaim.

Objects are the API server's JSON dicts; malformed fields read as absent so that a bad object
gives an answer or a ``ClaimNameError`` (one line), never another exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "ClaimNameError",
    "base_request_ref",
    "can_be_reserved",
    "claim_name",
    "is_allocated",
    "is_for_pod",
    "is_reserved_for_pod",
    "not_for_pod_message",
    "parse_request_ref",
]

# resourceapi.ResourceClaimReservedForMaxSize: the API server rejects a longer status.reservedFor.
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256

# Upstream's sentinel errors, wrapped into the messages below.
ERR_API_UNSUPPORTED = "none of the supported fields are set"
ERR_CLAIM_NOT_FOUND = "ResourceClaim not created yet"


class ClaimNameError(ValueError):
    """The pod claim's ResourceClaim name cannot be told (upstream Name's error)."""


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def claim_name(pod: Mapping[str, Any], pod_claim: Mapping[str, Any]) -> tuple[str | None, bool]:
    """Upstream resourceclaim.Name: (name, must_check_owner).

    ``(None, False)`` means the claim was intentionally not created (the pod claim is ignored);
    a claim generated from a template must be checked with ``is_for_pod`` (must_check_owner).
    Raises ``ClaimNameError`` when the claim is not created yet or no supported field is set.
    """
    meta = _map(_map(pod).get("metadata"))
    pod_claim = _map(pod_claim)
    ref = f"{_str(meta.get('namespace'))}/{_str(meta.get('name'))}"
    direct = pod_claim.get("resourceClaimName")
    if isinstance(direct, str):
        return direct, False
    if isinstance(pod_claim.get("resourceClaimTemplateName"), str):
        for status in _list(_map(_map(pod).get("status")).get("resourceClaimStatuses")):
            status = _map(status)
            if status.get("name") == pod_claim.get("name"):
                name = status.get("resourceClaimName")
                return (name if isinstance(name, str) else None), True
        raise ClaimNameError(f'pod "{ref}": {ERR_CLAIM_NOT_FOUND}')
    raise ClaimNameError(f'pod "{ref}", spec.resourceClaim "{_str(pod_claim.get("name"))}": {ERR_API_UNSUPPORTED}')


def _is_controlled_by(obj_meta: Mapping[str, Any], owner_uid: str) -> bool:
    """metav1.IsControlledBy: the controller owner reference has the owner's UID."""
    for ref in _list(obj_meta.get("ownerReferences")):
        ref = _map(ref)
        if ref.get("controller") is True:
            return bool(owner_uid) and ref.get("uid") == owner_uid
    return False


def is_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """Upstream IsForPod as a yes/no: the claim was created for the pod (same namespace, pod is owner)."""
    return not_for_pod_message(pod, claim) is None


def not_for_pod_message(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> str | None:
    """Upstream IsForPod's error: None when the claim was created for the pod, else the message."""
    pod_meta = _map(_map(pod).get("metadata"))
    claim_meta = _map(_map(claim).get("metadata"))
    pod_ns, claim_ns = _str(pod_meta.get("namespace")), _str(claim_meta.get("namespace"))
    if claim_ns != pod_ns or not _is_controlled_by(claim_meta, _str(pod_meta.get("uid"))):
        return (
            f"ResourceClaim {claim_ns}/{_str(claim_meta.get('name'))} was not created for pod "
            f"{pod_ns}/{_str(pod_meta.get('name'))} (pod is not owner)"
        )
    return None


def is_reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """Upstream IsReservedForPod: the pod's UID is among status.reservedFor."""
    uid = _map(_map(pod).get("metadata")).get("uid")
    if not isinstance(uid, str) or not uid:
        return False
    return any(_map(r).get("uid") == uid for r in _list(_map(_map(claim).get("status")).get("reservedFor")))


def is_allocated(claim: Mapping[str, Any]) -> bool:
    """status.allocation is set (upstream checks ``claim.Status.Allocation != nil``)."""
    return isinstance(_map(_map(claim).get("status")).get("allocation"), Mapping)


def can_be_reserved(claim: Mapping[str, Any]) -> bool:
    """Upstream CanBeReserved: room for one more consumer in status.reservedFor."""
    reserved = _list(_map(_map(claim).get("status")).get("reservedFor"))
    return len(reserved) < RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE


def parse_request_ref(ref: str) -> tuple[str, str]:
    """Upstream ParseRequestReference: "request/subrequest" -> (request, subrequest or "")."""
    request, _, subrequest = ref.partition("/")
    return request, subrequest


def base_request_ref(ref: str) -> str:
    """Upstream BaseRequestRef: the top-level request of a "request/subrequest" reference."""
    return parse_request_ref(ref)[0]
