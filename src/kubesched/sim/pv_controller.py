"""A simulated PersistentVolume controller: what kube-controller-manager's PV binder and a
provisioner do, so that a simulation can tell a pod's whole volume story.

It reacts, before the write that caused it returns, to every PersistentVolume, claim and
StorageClass the simulator stores:

* a new PV without a claim becomes ``Available``;
* a claim of a class that binds immediately (or of no class) is bound to the smallest matching
  available PV, or, when none matches and the class has a provisioner, to a new PV provisioned for it;
* a pod's generic ephemeral volumes get their claims from the templates, owned by the pod (the
  ephemeral volume controller);
* a claim waiting for its first consumer is left to the scheduler: once VolumeBinding's PreBind
  writes a PV's ``claimRef`` to it, the binding is completed; once it writes the claim's
  ``volume.kubernetes.io/selected-node``, a PV is provisioned for that node.

A binding sets the claim's ``spec.volumeName``, its ``pv.kubernetes.io/bind-completed`` and
``bound-by-controller`` annotations and both phases to ``Bound``, as the real controller does
(pkg/controller/volume/persistentvolume/pv_controller.go ``bind``). A provisioned PV has the claim's
request as capacity, its access modes and volume mode, and, for a node-selected claim whose class
lists ``allowedTopologies``, a node affinity pinning each of those keys to the node's value (what a
topology-aware CSI provisioner reports); without them, no node affinity.

Deviations from the real components, all on purpose: everything happens at once on the virtual
clock (the real controller resyncs every 15 s and a provisioner takes its time), provisioning never
fails, and no volumes are released or deleted when claims go.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.api.pv_matching import AVAILABLE, claim_ref_of, find_matching_volume
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

if TYPE_CHECKING:
    from kubesched.sim.cluster import SimCluster

__all__ = ["PVController", "create_ephemeral_claims", "install"]

log = logging.getLogger("kubesched.sim")

CORE = "v1"
STORAGE = "storage.k8s.io/v1"
BOUND = "Bound"
#: The annotation a provisioned PV carries (``pv.kubernetes.io/provisioned-by``).
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
_WATCHED = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass")


class PVController:
    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self._busy = False
        self._again = False
        self.provisioned = 0

    def on_change(self, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> None:
        if kind not in _WATCHED:
            return
        if self._busy:  # our own write: the running sync sees it on its next pass
            self._again = True
            return
        self._busy = True
        try:
            for _ in range(100):  # each pass settles at least one object; never loop forever
                self._again = False
                self._sync()
                if not self._again:
                    break
        finally:
            self._busy = False

    # -- store access ---------------------------------------------------------------------------
    def _pvs(self) -> list[PersistentVolume]:
        return [PersistentVolume.from_object(o) for o in self.cluster.list_objects(CORE, "PersistentVolume")]

    def _claims(self) -> list[PersistentVolumeClaim]:
        return [
            PersistentVolumeClaim.from_object(o) for o in self.cluster.list_objects(CORE, "PersistentVolumeClaim")
        ]

    def _class(self, name: str) -> StorageClass | None:
        obj = self.cluster.get_object(STORAGE, "StorageClass", "", name)
        return StorageClass.from_object(obj) if obj is not None else None

    def _write(self, kind: str, obj: dict[str, Any]) -> None:
        self.cluster.store_object(CORE, kind, obj)

    # -- the controller -------------------------------------------------------------------------
    def _sync(self) -> None:
        pvs = self._pvs()
        for pv in pvs:
            if pv.claim_ref is None and pv.phase in ("", "Pending"):
                self._set_pv_phase(pv, AVAILABLE)
        for claim in self._claims():
            if claim.fully_bound or claim.deleting:
                continue
            self._sync_claim(claim, self._pvs())

    def _sync_claim(self, claim: PersistentVolumeClaim, pvs: list[PersistentVolume]) -> None:
        if claim.volume_name:  # pre-bound by the user to a volume
            for pv in pvs:
                if pv.name == claim.volume_name and (pv.claim_ref is None or pv.is_bound_to(claim)):
                    self._bind(claim, pv)
            return
        chosen = next((pv for pv in pvs if pv.claim_ref is not None and pv.is_bound_to(claim)), None)
        if chosen is not None:  # the scheduler (or a user) pointed a volume at this claim
            self._bind(claim, chosen)
            return
        sc = self._class(claim.storage_class) if claim.storage_class else None
        delayed = sc is not None and sc.wait_for_first_consumer
        if not delayed:
            try:
                match = find_matching_volume(claim, pvs, None, delay_binding=False)
            except ValueError as err:
                log.info("claim %s: %s", claim.key, err)
                return
            if match is not None:
                self._bind(claim, match)
                return
            if sc is not None and self._can_provision(sc):
                self._provision(claim, sc, None)
            return
        node = claim.annotations.get(ANN_SELECTED_NODE)
        if node and sc is not None and self._can_provision(sc):
            self._provision(claim, sc, node)

    @staticmethod
    def _can_provision(sc: StorageClass) -> bool:
        return bool(sc.provisioner) and sc.provisioner != NOT_SUPPORTED_PROVISIONER

    def _set_pv_phase(self, pv: PersistentVolume, phase: str) -> None:
        obj = copy.deepcopy(dict(pv.obj))
        obj.setdefault("status", {})["phase"] = phase
        self._write("PersistentVolume", obj)

    def _bind(self, claim: PersistentVolumeClaim, pv: PersistentVolume) -> None:
        pv_obj = copy.deepcopy(dict(pv.obj))
        spec = pv_obj.setdefault("spec", {})
        ref = spec.get("claimRef")
        if not isinstance(ref, dict) or ref.get("uid") != claim.uid:
            spec["claimRef"] = claim_ref_of(claim)
        pv_obj.setdefault("status", {})["phase"] = BOUND
        self._write("PersistentVolume", pv_obj)

        pvc_obj = copy.deepcopy(dict(claim.obj))
        pvc_obj.setdefault("spec", {})["volumeName"] = pv.name
        md = pvc_obj.setdefault("metadata", {})
        annotations = dict(md.get("annotations") or {})
        annotations[ANN_BIND_COMPLETED] = "yes"
        annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        md["annotations"] = annotations
        status = pvc_obj.setdefault("status", {})
        status["phase"] = BOUND
        status["accessModes"] = list(pv.access_modes)
        capacity = (pv.spec.get("capacity") or {}).get("storage")
        if capacity is not None:
            status["capacity"] = {"storage": capacity}
        self._write("PersistentVolumeClaim", pvc_obj)
        log.debug("bound claim %s to volume %s", claim.key, pv.name)

    def _provision(self, claim: PersistentVolumeClaim, sc: StorageClass, node: str | None) -> None:
        name = f"pvc-{claim.uid}" if claim.uid else f"pvc-{claim.namespace}-{claim.name}"
        request = (((claim.obj.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage", "0")
        spec: dict[str, Any] = {
            "capacity": {"storage": request},
            "accessModes": list(claim.access_modes),
            "volumeMode": claim.volume_mode,
            "storageClassName": sc.name,
            "persistentVolumeReclaimPolicy": (sc.obj.get("reclaimPolicy") or "Delete"),
            "claimRef": claim_ref_of(claim),
            "csi": {"driver": sc.provisioner, "volumeHandle": name},
        }
        affinity = self._node_affinity(sc, node) if node else None
        if affinity is not None:
            spec["nodeAffinity"] = affinity
        pv_obj: dict[str, Any] = {
            "apiVersion": CORE,
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: sc.provisioner}},
            "spec": spec,
            "status": {"phase": BOUND},
        }
        self.provisioned += 1
        self._write("PersistentVolume", pv_obj)
        log.debug("provisioned volume %s for claim %s%s", name, claim.key, f" on node {node}" if node else "")
        self._bind(claim, PersistentVolume.from_object(pv_obj))

    def _node_affinity(self, sc: StorageClass, node_name: str) -> dict[str, Any] | None:
        node = self.cluster.nodes.get(node_name)
        labels = (node or {}).get("metadata", {}).get("labels") or {}
        keys: list[str] = []
        for term in sc.allowed_topologies:
            for expr in (term.get("matchLabelExpressions") or []) if isinstance(term, Mapping) else []:
                key = expr.get("key") if isinstance(expr, Mapping) else None
                if isinstance(key, str) and key not in keys:
                    keys.append(key)
        exprs = [{"key": k, "operator": "In", "values": [labels[k]]} for k in keys if k in labels]
        if not exprs:
            return None
        return {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}


def create_ephemeral_claims(cluster: SimCluster, pod: Mapping[str, Any]) -> None:
    """The ephemeral volume controller (pkg/controller/volume/ephemeral): for each generic
    ephemeral volume of a new pod, the claim ``<pod>-<volume>`` from its template, owned by the pod.
    Done before the scheduler sees the pod (the real controller races it; the scheduler then
    waits for the claim's Add event)."""
    md = pod.get("metadata") or {}
    namespace = str(md.get("namespace") or "default")
    for vol in (pod.get("spec") or {}).get("volumes") or []:
        eph = vol.get("ephemeral") if isinstance(vol, Mapping) else None
        if not isinstance(eph, Mapping):
            continue
        name = f"{md.get('name')}-{vol.get('name')}"
        if cluster.get_object(CORE, "PersistentVolumeClaim", namespace, name) is not None:
            continue
        raw = eph.get("volumeClaimTemplate")
        template: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        raw_md = template.get("metadata")
        tmd: Mapping[str, Any] = raw_md if isinstance(raw_md, Mapping) else {}
        claim: dict[str, Any] = {
            "apiVersion": CORE,
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"{md.get('uid', '')}-{vol.get('name')}",
                "labels": dict(tmd.get("labels") or {}),
                "annotations": dict(tmd.get("annotations") or {}),
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": md.get("name"), "uid": md.get("uid"),
                     "controller": True, "blockOwnerDeletion": True}
                ],
            },
            "spec": copy.deepcopy(dict(template.get("spec") or {})),
            "status": {"phase": "Pending"},
        }
        claim["spec"].setdefault("volumeMode", "Filesystem")
        cluster.store_object(CORE, "PersistentVolumeClaim", claim)


def install(cluster: SimCluster) -> PVController:
    """Run a simulated PV controller and ephemeral volume controller in ``cluster`` (before
    loading objects, so they see them all)."""
    controller = PVController(cluster)
    cluster.object_watchers.append(controller.on_change)
    cluster.pod_created_hooks.append(lambda pod: create_ephemeral_claims(cluster, pod))
    return controller
