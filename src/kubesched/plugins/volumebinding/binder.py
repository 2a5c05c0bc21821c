"""The volume binder: which PersistentVolumes a pod's claims can use on a node, the assumption of
those bindings at Reserve, and writing them at PreBind (upstream ``volumebinding/binder.go``).

A claim is *bound* when it names a volume and the PV controller has finished with it
(``pv.kubernetes.io/bind-completed``); an unbound claim of a StorageClass binding on first consumer
(``WaitForFirstConsumer``) is the scheduler's to place: on each node, an available PV that matches
(capacity, access modes, class, selector, node affinity; the smallest wins) becomes a *static
binding*, and a claim no PV matches is *provisioned* when its class has a provisioner, the class's
``allowedTopologies`` admit the node and, for CSI drivers that publish it, a CSIStorageCapacity
reachable from the node is large enough. PreBind writes the PV's ``claimRef`` and the claim's
``volume.kubernetes.io/selected-node`` and waits for the PV controller to complete the binding.

Not done (upstream does): translating in-tree PVs to CSI before checking their node affinity on
nodes where the plugin is migrated (``tryTranslatePVToCSI``); the affinity is checked as written.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.api.pv_matching import bind_volume_to_claim, find_matching_volume
from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    ephemeral_claim_name,
    quantity_value,
    volume_is_for_pod,
)
from kubesched.framework.types import JSONObj
from kubesched.plugins.helper.storage_listers import StorageListers
from kubesched.plugins.jsonview import get_obj

from .assume_cache import NotFoundError, PVAssumeCache, PVCAssumeCache

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "BinderError",
    "BindingInfo",
    "DynamicProvision",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

#: ``wait.PollUntilContextTimeout``'s interval in ``BindPodVolumes``.
POLL_INTERVAL = 1.0


class BinderError(RuntimeError):
    """An error upstream's binder returns (the plugin turns it into an Error status)."""


@dataclass
class BindingInfo:
    """A claim and the PV chosen for it (after Reserve: the PV with its new claimRef)."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume
    #: The object to write at PreBind (the PV bound to the claim); None when nothing changes.
    write: JSONObj | None = None

    @property
    def storage_class_name(self) -> str:
        """The PV's ``spec.storageClassName`` (not the beta annotation), as upstream's scorer reads it."""
        return self.pv.storage_class_name


@dataclass
class DynamicProvision:
    pvc: PersistentVolumeClaim
    #: The CSIStorageCapacity that showed room on the node, when the driver publishes capacity.
    node_capacity: CSIStorageCapacity | None = None
    write: JSONObj | None = None


@dataclass
class PodVolumes:
    """What a pod's delayed claims need on one node."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    #: storage class → the PVs of that class (assumed versions substituted), for the delayed claims.
    unbound_volumes: dict[str, list[PersistentVolume]] = field(default_factory=dict)


def claim_name_of(pod_name: str, vol: PodVolume) -> str | None:
    """The claim a volume uses: a persistentVolumeClaim's name, an ephemeral volume's generated one."""
    if vol.is_pvc:
        return vol.claim_name
    if vol.is_ephemeral:
        return ephemeral_claim_name(pod_name, vol.name)
    return None


def _compare_resource_versions(a: str, b: str) -> int:
    """``storage.APIObjectVersioner.CompareResourceVersion``: numeric; unparsable compares equal."""
    try:
        x, y = int(a), int(b)
    except ValueError:
        return 0
    return (x > y) - (x < y)


class VolumeBinder:
    """Upstream's ``volumeBinder`` over the backend's stores (see the module docstring).

    ``update`` writes an object (optimistic on its resourceVersion) and returns the stored one;
    ``get_node_labels`` and ``pod_exists`` read the informers; ``sleep`` blocks for the poll
    interval and returns False where a binding cycle cannot block (the simulator, whose PV
    controller completes a binding before the write returns): the bindings are then checked once."""

    def __init__(
        self,
        listers: StorageListers,
        pv_cache: PVAssumeCache,
        pvc_cache: PVCAssumeCache,
        *,
        update: Callable[[JSONObj], JSONObj],
        get_node_labels: Callable[[str], Mapping[str, str] | None],
        pod_exists: Callable[[str, str], bool],
        sleep: Callable[[float], bool],
        now: Callable[[], float] = time.monotonic,
        bind_timeout: float = 600.0,
    ) -> None:
        self.listers = listers
        self.pv_cache = pv_cache
        self.pvc_cache = pvc_cache
        self._update = update
        self._node_labels = get_node_labels
        self._pod_exists = pod_exists
        self._sleep = sleep
        self._now = now
        self.bind_timeout = bind_timeout

    # -- claims of a pod ----------------------------------------------------------------------
    def _is_pvc_bound(self, namespace: str, name: str) -> tuple[bool, PersistentVolumeClaim]:
        key = f"{namespace}/{name}"
        try:
            pvc = self.pvc_cache.get(key)
        except NotFoundError as err:
            raise BinderError(f'error getting PVC "{key}": {err}') from err
        return pvc.fully_bound, pvc

    def _is_volume_bound(
        self, pod: JSONObj, vol: PodVolume
    ) -> tuple[bool, PersistentVolumeClaim | None]:
        md = get_obj(pod, "metadata")
        pod_name, namespace = str(md.get("name", "")), str(md.get("namespace") or "default")
        name = claim_name_of(pod_name, vol)
        if name is None:
            return True, None
        bound, pvc = self._is_pvc_bound(namespace, name)
        if vol.is_ephemeral:
            problem = volume_is_for_pod(namespace, pod_name, str(md.get("uid", "")), pvc)
            if problem is not None:
                raise BinderError(problem)
        return bound, pvc

    def pod_volumes_bound(self, pod: JSONObj, volumes: Sequence[PodVolume]) -> bool:
        """``arePodVolumesBound`` (lookup errors count as unbound)."""
        for vol in volumes:
            try:
                bound, _ = self._is_volume_bound(pod, vol)
            except BinderError:
                return False
            if not bound:
                return False
        return True

    def get_pod_volume_claims(self, pod: JSONObj, volumes: Sequence[PodVolume]) -> PodVolumeClaims:
        """``GetPodVolumeClaims``: the pod's claims sorted into bound, delayed and immediate."""
        claims = PodVolumeClaims()
        for vol in volumes:
            bound, pvc = self._is_volume_bound(pod, vol)
            if pvc is None:
                continue
            if bound:
                claims.bound.append(pvc)
            elif self._is_delay_binding_mode(pvc) and not pvc.volume_name:
                claims.delay_binding.append(pvc)
            else:
                claims.immediate.append(pvc)
        for pvc in claims.delay_binding:
            cls = pvc.storage_class
            claims.unbound_volumes[cls] = self.pv_cache.list_pvs(cls)
        return claims

    def _is_delay_binding_mode(self, pvc: PersistentVolumeClaim) -> bool:
        """``IsDelayBindingMode``: the claim's class binds on first consumer."""
        name = pvc.storage_class
        if not name:
            return False
        sc = self.listers.storage_class(name)
        if sc is None:
            return False
        if sc.volume_binding_mode is None:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{name}"')
        return sc.wait_for_first_consumer

    # -- Filter -------------------------------------------------------------------------------
    def find_pod_volumes(
        self, claims: PodVolumeClaims, node_name: str, node_labels: Mapping[str, str]
    ) -> tuple[PodVolumes, list[str]]:
        """``FindPodVolumes``: what the pod's claims need on this node, or the conflict reasons."""
        pod_volumes = PodVolumes()
        bound_ok = unbound_ok = enough_space = pvs_found = True
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node_labels)
        if claims.delay_binding:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            conflict = False
            for pvc in claims.delay_binding:
                selected = pvc.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node_name:
                        conflict = True
                        break
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if conflict:
                unbound_ok = False
            else:
                if to_match:
                    unbound_ok, pod_volumes.static_bindings, unmatched = self._find_matching_volumes(
                        to_match, claims.unbound_volumes, node_labels
                    )
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, enough_space, pod_volumes.dynamic_provisions = self._check_volume_provisions(
                        to_provision, node_labels
                    )
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not enough_space:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return pod_volumes, reasons

    def _check_bound_claims(
        self, claims: Sequence[PersistentVolumeClaim], node_labels: Mapping[str, str]
    ) -> tuple[bool, bool]:
        """(affinity satisfied, every bound PV found); the first failure decides."""
        for pvc in claims:
            try:
                pv = self.pv_cache.get(pvc.volume_name)
            except NotFoundError:
                return True, False
            if not pv.matches_node_labels(node_labels):
                return False, True
        return True, True

    def _find_matching_volumes(
        self,
        claims: list[PersistentVolumeClaim],
        unbound_volumes: Mapping[str, Sequence[PersistentVolume]],
        node_labels: Mapping[str, str],
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        """``findMatchingVolumes``: smallest claims first, each PV used once."""
        # Go's sort.Sort on equal sizes is not stable; Python's is. Equal-size claims keep their
        # volume order here, which upstream may permute (no upstream test depends on it).
        ordered = sorted(claims, key=lambda c: c.requested_storage or 0)
        chosen: set[str] = set()
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        found = True
        for pvc in ordered:
            try:
                pv = find_matching_volume(pvc, unbound_volumes.get(pvc.storage_class, ()), node_labels, chosen)
            except ValueError as err:
                raise BinderError(str(err)) from err
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unmatched

    def _check_volume_provisions(
        self, claims: Sequence[PersistentVolumeClaim], node_labels: Mapping[str, str]
    ) -> tuple[bool, bool, list[DynamicProvision]]:
        """``checkVolumeProvisions``: (provisioning possible, enough storage, the provisions)."""
        out: list[DynamicProvision] = []
        for pvc in claims:
            class_name = pvc.storage_class
            if not class_name:
                raise BinderError(f'no class for claim "{pvc.key}"')
            sc = self.listers.storage_class(class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not sc.allows_node_labels(node_labels):
                return False, True, []
            sufficient, capacity = self._has_enough_capacity(sc.provisioner, pvc, class_name, node_labels)
            if not sufficient:
                return True, False, []
            out.append(DynamicProvision(pvc, capacity))
        return True, True, out

    def _has_enough_capacity(
        self, provisioner: str, pvc: PersistentVolumeClaim, class_name: str, node_labels: Mapping[str, str]
    ) -> tuple[bool, CSIStorageCapacity | None]:
        """``hasEnoughCapacity``: only CSI drivers that publish capacity are checked."""
        if pvc.requested_storage is None:
            return True, None
        driver = self.listers.csi_driver(provisioner)
        if driver is None or not driver.storage_capacity:
            return True, None
        size = pvc.request_value
        for cap in self.listers.csi_storage_capacities():
            limit = cap.volume_limit
            if (
                cap.storage_class_name == class_name
                and limit is not None
                and quantity_value(limit) >= size
                and cap.node_has_access(node_labels)
            ):
                return True, cap
        return False, None

    # -- Reserve / Unreserve ------------------------------------------------------------------
    def assume_pod_volumes(
        self, pod: JSONObj, volumes: Sequence[PodVolume], node_name: str, pod_volumes: PodVolumes
    ) -> bool:
        """``AssumePodVolumes``: True when every volume is already bound (nothing to do);
        otherwise records the bindings in the caches and rewrites ``pod_volumes`` with them."""
        if self.pod_volumes_bound(pod, volumes):
            return True
        new_bindings: list[BindingInfo] = []
        for b in pod_volumes.static_bindings:
            obj, dirty = bind_volume_to_claim(b.pv, b.pvc)
            new_pv = PersistentVolume.from_object(obj)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except (NotFoundError, RuntimeError) as err:
                    self._revert(new_bindings, [])
                    raise BinderError(str(err)) from err
            new_bindings.append(BindingInfo(b.pvc, new_pv, obj))
        new_provisions: list[DynamicProvision] = []
        for p in pod_volumes.dynamic_provisions:
            obj = copy.deepcopy(dict(p.pvc.obj))
            md = obj.setdefault("metadata", {})
            annotations = md.get("annotations")
            kept = annotations if isinstance(annotations, Mapping) else {}
            md["annotations"] = {**kept, ANN_SELECTED_NODE: node_name}
            clone = PersistentVolumeClaim.from_object(obj)
            try:
                self.pvc_cache.assume(clone)
            except (NotFoundError, RuntimeError) as err:
                self._revert(new_bindings, new_provisions)
                raise BinderError(str(err)) from err
            new_provisions.append(DynamicProvision(clone, None, obj))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def _revert(self, bindings: Sequence[BindingInfo], provisions: Sequence[DynamicProvision]) -> None:
        for b in bindings:
            self.pv_cache.restore(b.pv)
        for p in provisions:
            self.pvc_cache.restore(p.pvc)

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self._revert(pod_volumes.static_bindings, pod_volumes.dynamic_provisions)

    # -- PreBind ------------------------------------------------------------------------------
    def bind_pod_volumes(self, pod: JSONObj, node_name: str, pod_volumes: PodVolumes) -> None:
        """``BindPodVolumes``: write the bindings, then wait until the PV controller completes
        them (or ``bind_timeout`` passes); raises BinderError with upstream's text."""
        bindings = pod_volumes.static_bindings
        provisions = pod_volumes.dynamic_provisions
        self._bind_api_update(bindings, provisions)
        deadline = self._now() + self.bind_timeout
        while True:
            if not self._sleep(POLL_INTERVAL):
                if self._check_bindings(pod, node_name, bindings, provisions):
                    return
                raise BinderError("binding volumes: context deadline exceeded")
            if self._check_bindings(pod, node_name, bindings, provisions):
                return
            if self._now() >= deadline:
                raise BinderError("binding volumes: context deadline exceeded")

    def _bind_api_update(self, bindings: list[BindingInfo], provisions: list[DynamicProvision]) -> None:
        """``bindAPIUpdate``: PVs first, then claims; on a failure the rest are un-assumed."""
        done_b = done_p = 0
        try:
            for b in bindings:
                if b.write is not None:
                    stored = self._update(b.write)
                    b.pv = PersistentVolume.from_object(stored)
                done_b += 1
            for p in provisions:
                if p.write is not None:
                    stored = self._update(p.write)
                    p.pvc = PersistentVolumeClaim.from_object(stored)
                done_p += 1
        except Exception as err:
            self._revert(bindings[done_b:], provisions[done_p:])
            raise BinderError(str(err)) from err

    def _check_bindings(
        self, pod: JSONObj, node_name: str, bindings: Sequence[BindingInfo], provisions: Sequence[DynamicProvision]
    ) -> bool:
        """``checkBindings``: True when every binding is complete; False to keep waiting;
        BinderError when it can no longer complete."""
        labels = self._node_labels(node_name)
        if labels is None:
            raise BinderError(f'binding volumes: failed to get node "{node_name}": node "{node_name}" not found')
        md = get_obj(pod, "metadata")
        name, namespace = str(md.get("name", "")), str(md.get("namespace") or "default")
        if not self._pod_exists(namespace, name):
            raise BinderError(f'binding volumes: pod does not exist any more: pod "{name}" not found')
        for b in bindings:
            try:
                pv = self.pv_cache.get_api_obj(b.pv.name)
                pvc = self.pvc_cache.get_api_obj(b.pvc.key)
            except NotFoundError as err:
                raise BinderError(f"binding volumes: failed to check binding: {err}") from err
            if _compare_resource_versions(b.pv.resource_version, pv.resource_version) > 0:
                return False  # the informer has not caught up with our write
            if not pv.matches_node_labels(labels):
                raise BinderError(
                    f'binding volumes: pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                    "no matching NodeSelectorTerms"
                )
            if pv.claim_ref is None or not pv.claim_ref.uid:
                raise BinderError(f'binding volumes: ClaimRef got reset for pv "{pv.name}"')
            if not pvc.fully_bound:
                return False
        for p in provisions:
            try:
                pvc = self.pvc_cache.get_api_obj(p.pvc.key)
            except NotFoundError as err:
                raise BinderError(f"binding volumes: failed to check provisioning pvc: {err}") from err
            if _compare_resource_versions(p.pvc.resource_version, pvc.resource_version) > 0:
                return False
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if not pvc.annotations:
                raise BinderError(f'binding volumes: selectedNode annotation reset for PVC "{pvc.name}"')
            if selected != node_name:
                raise BinderError(f'binding volumes: provisioning failed for PVC "{pvc.name}"')
            if pvc.volume_name:
                try:
                    pv = self.pv_cache.get_api_obj(pvc.volume_name)
                except NotFoundError:
                    return False
                if not pv.matches_node_labels(labels):
                    raise BinderError(
                        f'binding volumes: pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                        "no matching NodeSelectorTerms"
                    )
            if not pvc.fully_bound:
                return False
        return True

