"""The simulated resourceclaim controller (kube-controller-manager's
pkg/controller/resourceclaim/controller.go), for pods with Dynamic Resource Allocation claims.

- A new pod's claims from templates (``spec.resourceClaims[].resourceClaimTemplateName``) are
  created as the controller creates them: named ``<pod>-<pod claim>-<5 characters>`` (the API
  server's generateName; here the characters come from the pod's UID, so runs repeat), owned by the
  pod (controller reference), annotated ``resource.kubernetes.io/pod-claim-name``, with the
  template's labels, annotations and spec; the pod's ``status.resourceClaimStatuses`` records each
  name. This happens before the scheduler sees the pod (the real controller races it; the
  scheduler's PreEnqueue then waits for the claim).
- When a pod goes away (deleted, completed), it leaves every claim's ``status.reservedFor``; a claim
  reserved by no pod any more is deallocated (allocation and the scheduler's finalizer removed); a
  claim the pod controls (owner reference with ``controller: true``) is deleted: one generated from
  a template, and the claim the scheduler created for the pod's extended resources backed by DRA
  (DRAExtendedResource), which upstream's garbage collector deletes with its owner.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import Any

from kubesched.sim.cluster import SimCluster

__all__ = ["ClaimController", "install"]

API_VERSION = "resource.k8s.io/v1"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: The scheduler's finalizer on claims it allocated (resourceapi.Finalizer).
FINALIZER = "resource.kubernetes.io/delete-protection"
#: The API server's generateName alphabet (k8s.io/apimachinery/pkg/util/rand: no vowels, no
#: look-alike digits).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


class ClaimController:
    """See the module docstring."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster

    def on_pod_created(self, pod: dict[str, Any]) -> None:
        md = _map(pod.get("metadata"))
        namespace = str(md.get("namespace") or "default")
        statuses: list[dict[str, str]] = []
        for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
            if not isinstance(pc, Mapping):
                continue
            template_name = pc.get("resourceClaimTemplateName")
            if not isinstance(template_name, str) or not template_name:
                continue
            template = self.cluster.get_object(API_VERSION, "ResourceClaimTemplate", namespace, template_name)
            if template is None:
                continue  # the real controller retries; the pod waits at PreEnqueue
            pod_claim = str(pc.get("name") or "")
            seed = f"{md.get('uid')}/{pod_claim}"
            name = f"{md.get('name')}-{pod_claim}-{_suffix(seed)}"
            tmd = _map(template.get("metadata"))
            claim: dict[str, Any] = {
                "apiVersion": API_VERSION,
                "kind": "ResourceClaim",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "uid": f"{md.get('uid', '')}-{pod_claim}",
                    "labels": dict(_map(tmd.get("labels"))),
                    "annotations": {**_map(tmd.get("annotations")), POD_CLAIM_NAME_ANNOTATION: pod_claim},
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": md.get("name"),
                            "uid": md.get("uid"),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": copy.deepcopy(dict(_map(_map(template.get("spec")).get("spec")))),
                "status": {},
            }
            self.cluster.store_object(API_VERSION, "ResourceClaim", claim)
            statuses.append({"name": pod_claim, "resourceClaimName": name})
        if statuses:
            pod.setdefault("status", {})["resourceClaimStatuses"] = statuses

    def on_pod_removed(self, pod: Mapping[str, Any]) -> None:
        uid = _map(pod.get("metadata")).get("uid")
        for claim in list(self.cluster.list_objects(API_VERSION, "ResourceClaim")):
            md = _map(claim.get("metadata"))
            status = dict(_map(claim.get("status")))
            reserved = [r for r in status.get("reservedFor") or [] if _map(r).get("uid") != uid]
            owned = any(
                _map(o).get("uid") == uid and _map(o).get("controller") is True for o in md.get("ownerReferences") or []
            )
            if owned:
                self.cluster.delete_object(API_VERSION, "ResourceClaim", claim)
                continue
            if len(reserved) == len(status.get("reservedFor") or []):
                continue
            status["reservedFor"] = reserved
            new = copy.deepcopy(dict(claim))
            if not reserved:
                status.pop("allocation", None)
                status.pop("devices", None)
                finalizers = [f for f in md.get("finalizers") or [] if f != FINALIZER]
                new["metadata"]["finalizers"] = finalizers
            if not status.get("reservedFor"):
                status.pop("reservedFor", None)
            new["status"] = status
            self.cluster.store_object(API_VERSION, "ResourceClaim", new)


def install(cluster: SimCluster) -> ClaimController:
    """Run a simulated resourceclaim controller in ``cluster`` (before loading objects)."""
    controller = ClaimController(cluster)
    cluster.pod_created_hooks.append(controller.on_pod_created)
    cluster.pod_removed_hooks.append(controller.on_pod_removed)
    return controller
