"""A pod's ResourceClaims as the plugin needs them (upstream ``foreachPodResourceClaim``,
``podResourceClaims`` and the small helpers around them in dynamicresources.go).

Every problem is a one-line message (upstream's error text), never an exception: a pod or claim
with malformed fields reads as a pod that cannot be scheduled yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubesched.api.dra.resourceclaim import ClaimNameError, claim_name, is_for_pod
from kubesched.config.releases import DEFAULT_RELEASE, DRA_POD_IS_NOT_OWNER_CAPITALISED, Release
from kubesched.framework.types import JSONObj, JSONValue

from .dra_manager import ClaimTracker

__all__ = [
    "ClaimLookup",
    "allocation_of",
    "as_list",
    "as_map",
    "claim_ref",
    "foreach_pod_resource_claim",
    "pod_claims_list",
]

#: (the pod's name for the claim, the ResourceClaim), in ``spec.resourceClaims`` order.
ClaimLookup = tuple[list[tuple[str, JSONObj]], str | None]


def as_map(value: object) -> JSONObj:
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> Sequence[JSONValue]:
    """A list field, empty when unset or not a list."""
    return value if isinstance(value, list | tuple) else ()


def claim_ref(claim: JSONObj) -> str:
    """``klog.KObj(claim)``: namespace/name."""
    md = as_map(claim.get("metadata"))
    ns, name = md.get("namespace") or "", md.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


def allocation_of(claim: JSONObj) -> JSONObj | None:
    """``claim.Status.Allocation``, None when unset (or malformed)."""
    alloc = as_map(claim.get("status")).get("allocation")
    return alloc if isinstance(alloc, Mapping) else None


def pod_claims_list(pod: JSONObj) -> Sequence[JSONValue] | None:
    """``spec.resourceClaims``; None when it is not a list."""
    claims = as_map(pod.get("spec")).get("resourceClaims")
    if claims is None:
        return []
    return claims if isinstance(claims, list | tuple) else None


def _not_owner(pod: JSONObj, claim: JSONObj, release: Release) -> str:
    pmd, cmd = as_map(pod.get("metadata")), as_map(claim.get("metadata"))
    word = "Pod" if release.has(DRA_POD_IS_NOT_OWNER_CAPITALISED) else "pod"
    return (
        f"ResourceClaim {cmd.get('namespace') or ''}/{cmd.get('name') or ''} was not created for {word} "
        f"{pmd.get('namespace') or 'default'}/{pmd.get('name') or ''} ({word} is not owner)"
    )


def foreach_pod_resource_claim(pod: JSONObj, tracker: ClaimTracker, release: Release = DEFAULT_RELEASE) -> ClaimLookup:
    """Each existing claim of the pod, or the reason the pod has to wait for one (upstream's
    error: not created yet, not found, being deleted, not owned by the pod)."""
    pod_claims = pod_claims_list(pod)
    if pod_claims is None:
        return [], "spec.resourceClaims: expected a list"
    namespace = str(as_map(pod.get("metadata")).get("namespace") or "default")
    found: list[tuple[str, JSONObj]] = []
    for resource in pod_claims:
        if not isinstance(resource, Mapping):
            return [], "spec.resourceClaims: expected a list of objects"
        try:
            name, must_check_owner = claim_name(pod, resource)
        except ClaimNameError as err:
            return [], str(err)
        if name is None:  # intentionally not generated: nothing to wait for
            continue
        claim = tracker.get(namespace, name)
        if claim is None:
            return [], f'could not find ResourceClaim "{namespace}/{name}"'
        if as_map(claim.get("metadata")).get("deletionTimestamp"):
            return [], f'resourceclaim "{name}" is being deleted'
        if must_check_owner and not is_for_pod(pod, claim):
            return [], _not_owner(pod, claim, release)
        found.append((str(resource.get("name") or ""), claim))
    return found, None
