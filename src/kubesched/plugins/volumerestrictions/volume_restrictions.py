"""VolumeRestrictions: volumes that cannot be shared with the pods already on a node
(upstream ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``).

Two checks. Inline disks: a GCE persistent disk, an AWS EBS volume, an RBD image or an iSCSI
target used by a pod on the node conflicts with the same disk in the pod (GCE PD, RBD and iSCSI
may be shared when both mounts are read-only; RBD compares pool, image and overlapping
monitors) — ``node(s) had no available disk``. ReadWriteOncePod claims: a persistentVolumeClaim
volume whose claim has the ReadWriteOncePod access mode must not be used by any pod on any node
of the cluster (the snapshot's PVC reference counts) — ``node(s) unavailable due to ...``; the count
follows the pods preemption removes and the nominated pods it adds (PreFilterExtensions).

PreFilter looks every persistentVolumeClaim volume's claim up (a missing claim rejects the pod:
``persistentvolumeclaim "x" not found``) and Skips a pod with neither inline disks nor a
ReadWriteOncePod claim in use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubesched.api.storage import READ_WRITE_ONCE_POD, RESTRICTED_SOURCES, PodVolume, not_found_message, pod_volumes
from kubesched.config.releases import SPLIT_POD_EVENTS
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.helper.storage_listers import StorageListers, volumes_of
from kubesched.plugins.helper.volumes_signer import VolumesSigner
from kubesched.plugins.jsonview import require_object

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "VolumeRestrictions",
    "is_schedulable_after_assigned_pod_deleted",
    "is_schedulable_after_persistent_volume_claim_added",
    "is_volume_conflict",
]

PRE_FILTER_STATE_KEY = "PreFilter" + names.VOLUME_RESTRICTIONS
#: Upstream ``ErrReasonDiskConflict``.
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
#: Upstream ``ErrReasonReadWriteOncePodConflict``.
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
_CACHE_KEY = names.VOLUME_RESTRICTIONS + "/restricted"


def _restricted(pod: PodInfo) -> tuple[PodVolume, ...]:
    """The pod's inline GCE PD, AWS EBS, RBD and iSCSI volumes (cached per pod)."""
    cached = pod.cache.get(_CACHE_KEY)
    if cached is None:
        cached = tuple(v for v in volumes_of(pod) if v.kind in RESTRICTED_SOURCES)
        pod.cache[_CACHE_KEY] = cached
    restricted: tuple[PodVolume, ...] = cached
    return restricted


def _read_only(source: Mapping[str, object]) -> bool:
    return source.get("readOnly") is True


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def is_volume_conflict(volume: PodVolume, existing: Sequence[PodVolume]) -> bool:
    """Upstream ``isVolumeConflict``: does ``volume`` clash with one of ``existing``?"""
    a = volume.source
    for other in existing:
        if other.kind != volume.kind:
            continue
        b = other.source
        both_read_only = _read_only(a) and _read_only(b)
        if volume.kind == "gcePersistentDisk":
            if a.get("pdName") == b.get("pdName") and not both_read_only:
                return True
        elif volume.kind == "awsElasticBlockStore":
            if a.get("volumeID") == b.get("volumeID"):
                return True
        elif volume.kind == "iscsi":
            if a.get("iqn") == b.get("iqn") and not both_read_only:
                return True
        elif volume.kind == "rbd":
            # The API server defaults the pool to "rbd".
            same_image = (a.get("pool") or "rbd") == (b.get("pool") or "rbd") and a.get("image") == b.get("image")
            overlap = not set(_strings(a.get("monitors"))).isdisjoint(_strings(b.get("monitors")))
            if overlap and same_image and not both_read_only:
                return True
    return False


def _satisfies_volume_conflicts(restricted: Sequence[PodVolume], pods: Sequence[PodInfo]) -> bool:
    """Upstream ``satisfyVolumeConflicts`` over the pods of a node."""
    if not restricted:
        return True
    for existing in pods:
        theirs = _restricted(existing)
        if theirs and any(is_volume_conflict(v, theirs) for v in restricted):
            return False
    return True


class _State:
    """The pod's ReadWriteOncePod claims, and how many references to them other pods hold."""

    __slots__ = ("conflicting_pvc_ref_count", "read_write_once_pod_pvcs")

    def __init__(self, pvcs: frozenset[str], count: int) -> None:
        self.read_write_once_pod_pvcs = pvcs
        self.conflicting_pvc_ref_count = count

    def clone(self) -> _State:
        return _State(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)

    def update_with_pod(self, pod: PodInfo, multiplier: int) -> None:
        claims = self.read_write_once_pod_pvcs
        n = sum(1 for v in volumes_of(pod) if v.is_pvc and v.claim_name in claims)
        self.conflicting_pvc_ref_count += multiplier * n


def _state_error() -> Status:
    return Status.as_status(RuntimeError(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState'))


class VolumeRestrictions(VolumesSigner, EnqueueExtensions, PreFilterPlugin, PreFilterExtensions, FilterPlugin):
    name = names.VOLUME_RESTRICTIONS
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.listers = StorageListers(handle)
        self.split_pod_events = handle is None or handle.release.has(SPLIT_POD_EVENTS)

    # -- PreFilter ------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.get("volumes"):
            return None, Status(Code.SKIP)  # the common case, kept as cheap as the stand-ins were
        needs_check = bool(_restricted(pod))
        rwop: set[str] = set()
        for v in volumes_of(pod):
            if not v.is_pvc:
                continue
            pvc = self.listers.pvc(pod.namespace, v.claim_name)
            if pvc is None:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, not_found_message("PersistentVolumeClaim", v.claim_name)
                )
            if pvc.has_access_mode(READ_WRITE_ONCE_POD):
                rwop.add(pvc.name)
        count = 0
        if rwop and self.handle is not None:
            snapshot = self.handle.snapshot_shared_lister()
            count = sum(1 for name in rwop if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not needs_check and count == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _State(frozenset(rwop), count))
        return None, None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            return _state_error()
        s.update_with_pod(pod_to_add, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            return _state_error()
        s.update_with_pod(pod_to_remove, -1)
        return None

    # -- Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not _satisfies_volume_conflicts(_restricted(pod), node_info.pods):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _State):
            return _state_error()
        if s.conflicting_pvc_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    # -- EnqueueExtensions ----------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # v1.35/v1.36 register Pod/Delete, v1.37 AssignedPod/Delete (SplitPodEvents): same hint.
        pods = EventResource.ASSIGNED_POD if self.split_pod_events else EventResource.POD
        return [
            ClusterEventWithHint(ClusterEvent(pods, ActionType.DELETE), is_schedulable_after_assigned_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_persistent_volume_claim_added,
            ),
        ]


def _namespace(obj: JSONObj) -> str:
    md = obj.get("metadata")
    ns = md.get("namespace") if isinstance(md, Mapping) else None
    return ns if isinstance(ns, str) and ns else "default"


def _claim_names(pod: JSONObj) -> set[str]:
    return {v.claim_name for v in pod_volumes(pod) if v.is_pvc}


def is_schedulable_after_persistent_volume_claim_added(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when the new claim is one the pod names (same namespace)."""
    pvc = require_object(new, "PersistentVolumeClaim")
    if _namespace(pvc) != _namespace(pod):
        return QueueingHint.QUEUE_SKIP
    md = pvc.get("metadata")
    name = md.get("name") if isinstance(md, Mapping) else None
    return QueueingHint.QUEUE if name in _claim_names(pod) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_assigned_pod_deleted(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when the deleted pod (same namespace) held a disk that clashed with one of the pod's,
    or used one of its claims."""
    deleted = require_object(old, "Pod")
    if _namespace(deleted) != _namespace(pod):
        return QueueingHint.QUEUE_SKIP
    mine = PodInfo(dict(pod))
    if not _satisfies_volume_conflicts(_restricted(mine), [PodInfo(dict(deleted))]):
        return QueueingHint.QUEUE
    if _claim_names(pod) & _claim_names(deleted):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
