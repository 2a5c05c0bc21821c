"""NodeVolumeLimits: a node must be able to attach the pod's CSI volumes
(upstream ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``, ``utils.go``).

The node's CSINode says how many volumes each CSI driver can attach (``allocatable.count``). The
pod's volumes are counted per driver by their unique name ``driver/handle``: a claim's bound CSI
volume, an in-tree volume migrated to CSI (by its translation, when the migration is on for that
plugin and node), or, for a claim not bound yet, the driver its StorageClass provisions with.
Volumes already attached on the node (used by its pods, or in a VolumeAttachment) are counted
once; ``node(s) exceed max volume count`` when a driver's count would pass its limit. From v1.37
(VolumeLimitScaling) a driver whose CSIDriver sets ``preventPodSchedulingIfMissing`` must also be
installed on the node: ``<driver> CSI driver is not installed on the node``. Pods without claims,
generic ephemeral volumes or migratable in-tree volumes Skip.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence

from kubesched.api.csi_translation import (
    AWS_EBS,
    AZURE_DISK,
    CINDER,
    GCE_PD,
    PORTWORX,
    TranslationError,
    inline_plugin,
    plugin_by_in_tree_name,
    pv_plugin,
    translate_inline_volume,
    translate_pv,
)
from kubesched.api.storage import (
    CSINode,
    PersistentVolumeClaim,
    PodVolume,
    ephemeral_claim_name,
    not_found_message,
    pod_volumes,
    volume_is_for_pod,
)
from kubesched.config.releases import (
    DEFAULT_RELEASE,
    PORTWORX_MIGRATION_WITHOUT_ANNOTATION,
    SPLIT_POD_EVENTS,
    VOLUME_LIMIT_SCALING,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, FilterPlugin, Handle, PreFilterPlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.helper.storage_listers import StorageListers, volumes_of
from kubesched.plugins.helper.volumes_signer import VolumesSigner
from kubesched.plugins.jsonview import as_object, require_object

__all__ = [
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "NodeVolumeLimits",
    "is_schedulable_after_assigned_pod_deleted",
    "is_schedulable_after_csi_node_updated",
    "is_schedulable_after_pvc_added",
]

#: Upstream ``ErrReasonMaxVolumeCountExceeded``.
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
#: In-tree plugins whose CSI migration is always on (``isCSIMigrationOn``).
_MIGRATED = frozenset(p.in_tree_name for p in (AWS_EBS, GCE_PD, AZURE_DISK, CINDER))


class _Pod:
    """The pod fields the counting reads."""

    __slots__ = ("name", "namespace", "uid", "volumes")

    def __init__(self, pod: JSONObj) -> None:
        md = pod.get("metadata")
        md = md if isinstance(md, Mapping) else {}
        self.name = str(md.get("name") or "")
        self.namespace = str(md.get("namespace") or "default")
        self.uid = str(md.get("uid") or "")
        self.volumes = pod_volumes(pod)


def _claim_name(pod: _Pod, v: PodVolume) -> str | None:
    """The claim a PVC or generic ephemeral volume uses; None for other volumes."""
    if v.is_pvc:
        return v.claim_name
    if v.is_ephemeral:
        return ephemeral_claim_name(pod.name, v.name)
    return None


class _LookupError(Exception):
    """A volume of the pod being scheduled that cannot be counted: the Filter's status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


class NodeVolumeLimits(VolumesSigner, EnqueueExtensions, PreFilterPlugin, FilterPlugin):
    name = names.NODE_VOLUME_LIMITS
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        release = handle.release if handle is not None else DEFAULT_RELEASE
        self.listers = StorageListers(handle)
        self.volume_limit_scaling = release.has(VOLUME_LIMIT_SCALING)
        self.portworx_needs_annotation = not release.has(PORTWORX_MIGRATION_WITHOUT_ANNOTATION)
        self.split_pod_events = release.has(SPLIT_POD_EVENTS)
        #: Upstream ``rand.String(32)``: names the not-yet-provisioned volume of an unbound claim.
        self.random_volume_id_prefix = uuid.uuid4().hex

    # -- PreFilter / Filter ---------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.get("volumes"):
            return None, Status(Code.SKIP)  # the common case, kept as cheap as the stand-ins were
        for v in volumes_of(pod):
            if v.is_pvc or v.is_ephemeral or inline_plugin(v) is not None:
                return None, None
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not pod.spec.get("volumes"):
            return None
        csi_node = self.listers.csi_node(node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable_volumes(_Pod(pod.pod), csi_node, True, new_volumes)
        except _LookupError as err:
            return err.status
        if not new_volumes:
            return None
        if self.volume_limit_scaling:
            for driver in new_volumes.values():
                if not self._driver_installed(driver, csi_node):
                    return Status(Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node")
        drivers = csi_node.drivers if csi_node is not None else ()
        limits = {d.name: d.allocatable_count for d in drivers if d.allocatable_count is not None}
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for existing in node_info.pods:
                self._attachable_volumes(_Pod(existing.pod), csi_node, False, attached)
        except _LookupError as err:
            return err.status
        attached_count: dict[str, int] = {}
        for unique_name, driver in attached.items():
            new_volumes.pop(unique_name, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        for unique_name, driver in self._node_volume_attachments(node_info.name).items():
            if unique_name not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    # -- counting -------------------------------------------------------------------------------
    def _csi_migration_on(self, csi_node: CSINode | None, plugin: str) -> bool:
        """``isCSIMigrationOn``: always for AWS EBS, GCE PD, Azure Disk and Cinder; Portworx from
        v1.36 (v1.35: when the node's migrated-plugins annotation names it); never without a CSINode."""
        if csi_node is None or not plugin:
            return False
        if plugin in _MIGRATED:
            return True
        if plugin == PORTWORX.in_tree_name:
            return not self.portworx_needs_annotation or plugin in csi_node.migrated_plugins
        return False

    def _attachable_volumes(self, pod: _Pod, csi_node: CSINode | None, new_pod: bool, result: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: adds ``driver/handle -> driver`` of the pod's
        attachable volumes to ``result``; raises _LookupError with the status upstream's error
        becomes (a missing claim is only an error for the pod being scheduled)."""
        for v in pod.volumes:
            claim_name = _claim_name(pod, v)
            if claim_name is None:
                self._inline_volume(pod, v, csi_node, result)
                continue
            if not claim_name:
                raise _LookupError(Status.as_status(ValueError("PersistentVolumeClaim had no name")))
            pvc = self.listers.pvc(pod.namespace, claim_name)
            if pvc is None:
                if new_pod:
                    raise _LookupError(Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        f"looking up PVC {pod.namespace}/{claim_name}: "
                        f"{not_found_message('PersistentVolumeClaim', claim_name)}",
                    ))
                continue
            if v.is_ephemeral:
                problem = volume_is_for_pod(pod.namespace, pod.name, pod.uid, pvc)
                if problem is not None:
                    raise _LookupError(Status.as_status(ValueError(problem)))
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    def _inline_volume(self, pod: _Pod, v: PodVolume, csi_node: CSINode | None, result: dict[str, str]) -> None:
        """Upstream ``checkAttachableInlineVolume``."""
        plugin = inline_plugin(v)
        if plugin is None or not self._csi_migration_on(csi_node, plugin.in_tree_name):
            return
        try:
            driver, handle = translate_inline_volume(v, pod.namespace)
        except TranslationError as err:
            raise _LookupError(
                Status.as_status(ValueError(f"converting volume({v.name}) from inline to csi: {err}"))
            ) from err
        result[f"{driver}/{handle}"] = driver

    def _csi_driver_info(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfo``: from the bound PV, else from the claim's StorageClass."""
        if not pvc.volume_name:
            return self._csi_driver_info_from_class(csi_node, pvc)
        pv = self.listers.pv(pvc.volume_name)
        if pv is None:
            return self._csi_driver_info_from_class(csi_node, pvc)
        if pv.csi is not None:
            return pv.csi.driver, pv.csi.volume_handle
        plugin = pv_plugin(pv)
        if plugin is None or not self._csi_migration_on(csi_node, plugin.in_tree_name):
            return "", ""
        try:
            return translate_pv(pv)
        except TranslationError:
            return "", ""

    def _csi_driver_info_from_class(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfoFromSC``: a volume still to be provisioned counts under the
        class's provisioner (its CSI driver for a migrated in-tree provisioner)."""
        class_name = pvc.storage_class
        if not class_name:
            return "", ""
        sc = self.listers.storage_class(class_name)
        if sc is None:
            return "", ""
        handle = f"{self.random_volume_id_prefix}-{pvc.namespace}/{pvc.name}"
        plugin = plugin_by_in_tree_name(sc.provisioner)
        if plugin is not None:
            if not self._csi_migration_on(csi_node, sc.provisioner):
                return "", ""
            return plugin.driver_name, handle
        return sc.provisioner, handle

    def _driver_installed(self, driver: str, csi_node: CSINode | None) -> bool:
        """Upstream ``checkCSIDriverOnNode`` (v1.37): only a CSIDriver asking for it
        (``preventPodSchedulingIfMissing``) must be on the node."""
        csi_driver = self.listers.csi_driver(driver)
        if csi_driver is None or not csi_driver.prevent_pod_scheduling_if_missing:
            return True
        return csi_node is not None and csi_node.driver(driver) is not None

    def _node_volume_attachments(self, node_name: str) -> dict[str, str]:
        """Upstream ``getNodeVolumeAttachmentInfo``: the CSI volumes VolumeAttachments attach to the node."""
        out: dict[str, str] = {}
        for va in self.listers.volume_attachments():
            if va.node_name != node_name or not va.attacher or va.persistent_volume_name is None:
                continue
            pv = self.listers.pv(va.persistent_volume_name)
            if pv is None or pv.csi is None:
                continue
            out[f"{va.attacher}/{pv.csi.volume_handle}"] = va.attacher
        return out

    # -- EnqueueExtensions ----------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        pods = EventResource.ASSIGNED_POD if self.split_pod_events else EventResource.POD
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE), is_schedulable_after_csi_node_updated
            ),
            ClusterEventWithHint(ClusterEvent(pods, ActionType.DELETE), is_schedulable_after_assigned_pod_deleted),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), is_schedulable_after_pvc_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
                self.is_schedulable_after_volume_attachment_deleted,
            ),
        ]

    def is_schedulable_after_volume_attachment_deleted(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Queue when the pod has a claim (its volume may have been the one detached), or an inline
        migratable volume whose CSI driver is the attacher."""
        va = require_object(old, "VolumeAttachment")
        spec = va.get("spec")
        attacher = spec.get("attacher") if isinstance(spec, Mapping) else None
        p = _Pod(pod)
        for v in p.volumes:
            if v.is_pvc:
                return QueueingHint.QUEUE
            if inline_plugin(v) is None:
                continue
            try:
                driver, _ = translate_inline_volume(v, p.namespace)
            except TranslationError as err:
                raise ValueError(f"converting volume({v.name}) from inline to csi: {err}") from err
            if driver == attacher:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def is_schedulable_after_assigned_pod_deleted(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when the deleted pod was placed (or nominated) and had a volume that counts."""
    deleted = require_object(old, "Pod")
    d = _Pod(deleted)
    if not d.volumes:
        return QueueingHint.QUEUE_SKIP
    spec = deleted.get("spec")
    status = deleted.get("status")
    node = spec.get("nodeName") if isinstance(spec, Mapping) else None
    nominated = status.get("nominatedNodeName") if isinstance(status, Mapping) else None
    if not node and not nominated:
        return QueueingHint.QUEUE_SKIP
    if any(v.is_pvc or v.is_ephemeral or inline_plugin(v) is not None for v in d.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pvc_added(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when the new claim is one of the pod's (a claim or an ephemeral volume's claim)."""
    pvc = require_object(new, "PersistentVolumeClaim")
    md = pvc.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    p = _Pod(pod)
    if str(md.get("namespace") or "default") != p.namespace:
        return QueueingHint.QUEUE_SKIP
    name = md.get("name")
    if any(_claim_name(p, v) == name for v in p.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _limits(drivers: Iterable[object]) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in drivers:
        if not isinstance(d, Mapping):
            continue
        alloc = d.get("allocatable")
        count = alloc.get("count") if isinstance(alloc, Mapping) else None
        out[str(d.get("name") or "")] = count if isinstance(count, int) else 0
    return out


def is_schedulable_after_csi_node_updated(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when some driver's attach limit rose (a driver or a limit that was absent counts as 0)."""
    before = as_object(old, "CSINode")
    after = require_object(new, "CSINode")

    def drivers(obj: JSONObj | None) -> list[object]:
        spec = obj.get("spec") if obj is not None else None
        raw = spec.get("drivers") if isinstance(spec, Mapping) else None
        return list(raw) if isinstance(raw, list) else []

    old_limits = _limits(drivers(before))
    for name, limit in _limits(drivers(after)).items():
        if limit > old_limits.get(name, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
