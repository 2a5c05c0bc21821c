"""Matching claims to volumes, shared by VolumeBinding and the simulated PV controller.

Upstream's k8s.io/component-helpers ``storage/volume/pv_helpers.go`` (identical in v0.35-v0.37):
``FindMatchingVolume``, ``CheckAccessModes``, ``GetBindVolumeToClaim`` and the volume-mode check.
The scheduler calls ``FindMatchingVolume`` with a node and ``delayBinding=True``; the PV
controller without a node (``delayBinding`` from the claim's class). Both must agree, so both
use this module.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kubesched.api.errors import InvalidObjectError
from kubesched.api.storage import ANN_BOUND_BY_CONTROLLER, PersistentVolume, PersistentVolumeClaim

__all__ = [
    "AVAILABLE",
    "bind_volume_to_claim",
    "check_access_modes",
    "claim_ref_of",
    "find_matching_volume",
]

#: ``v1.VolumeAvailable``: a PV not yet bound to any claim.
AVAILABLE = "Available"


def check_access_modes(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckAccessModes``: every mode the claim asks for is one the volume offers."""
    offered = set(volume.access_modes)
    return all(mode in offered for mode in claim.access_modes)


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    node_labels: Mapping[str, str] | None,
    excluded: Collection[str] = (),
    *,
    delay_binding: bool = True,
) -> PersistentVolume | None:
    """``FindMatchingVolume`` with VolumeAttributesClass on (GA): the smallest volume that fits,
    or the one already bound or pre-bound to the claim; ``node_labels`` None means no node yet.

    Raises ValueError for a claim whose selector cannot be parsed (upstream:
    ``error creating internal label selector for claim: <ns/name>: <err>``)."""
    try:
        selector = claim.selector()
    except InvalidObjectError as err:
        raise ValueError(f"error creating internal label selector for claim: {claim.key}: {err.message}") from err
    requested = claim.requested_storage or 0
    requested_class = claim.storage_class
    smallest: PersistentVolume | None = None
    for volume in volumes:
        if volume.name in excluded:
            continue
        if volume.claim_ref is not None and not volume.is_bound_to(claim):
            continue
        if (volume.capacity or 0) < requested:
            continue
        if volume.volume_mode != claim.volume_mode:  # CheckVolumeModeMismatches (nil = Filesystem)
            continue
        if volume.volume_attributes_class_name != claim.volume_attributes_class_name:
            continue
        if volume.deleting:
            continue
        affinity_ok = node_labels is None or volume.matches_node_labels(node_labels)
        if volume.is_bound_to(claim):
            # Bound or pre-bound to this claim: it or nothing.
            return volume if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if volume.phase != AVAILABLE:
            continue
        if selector is not None and not selector.matches(volume.labels):
            continue
        if volume.storage_class != requested_class:
            continue
        if not affinity_ok:
            continue
        if node_labels is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or (smallest.capacity or 0) > (volume.capacity or 0):
            smallest = volume
    return smallest


def claim_ref_of(claim: PersistentVolumeClaim) -> dict[str, Any]:
    """``reference.GetReference(claim)``: what a PV's ``spec.claimRef`` holds."""
    return {
        "kind": "PersistentVolumeClaim",
        "namespace": claim.namespace,
        "name": claim.name,
        "uid": claim.uid,
        "apiVersion": "v1",
        "resourceVersion": claim.resource_version,
    }


def bind_volume_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> tuple[dict[str, Any], bool]:
    """``GetBindVolumeToClaim``: a copy of the PV object bound to the claim, and whether anything
    changed (the claimRef, or the bound-by-controller annotation on a volume not pre-bound)."""
    obj: dict[str, Any] = copy.deepcopy(dict(volume.obj))
    dirty = False
    ref = volume.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace or ref.uid != claim.uid:
        spec = obj.setdefault("spec", {})
        spec["claimRef"] = claim_ref_of(claim)
        dirty = True
    if not volume.is_bound_to(claim) and ANN_BOUND_BY_CONTROLLER not in volume.annotations:
        md = obj.setdefault("metadata", {})
        annotations = md.get("annotations")
        kept = annotations if isinstance(annotations, Mapping) else {}
        md["annotations"] = {**kept, ANN_BOUND_BY_CONTROLLER: "yes"}
        dirty = True
    return obj, dirty
