"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable, on the node
(upstream ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go``).

PreFilter rejects pods whose claims are missing, lost, being deleted, not owned (ephemeral) or
unbound with an Immediate class; Filter asks the binder (:mod:`.binder`) what the claims need on
each node; Score (v1.37, StorageCapacityScoring) prefers nodes by the capacity the volumes would
use; Reserve assumes the chosen bindings, PreBind writes them and waits for the PV controller,
Unreserve forgets them. Pods without claims Skip at PreFilter and cost nothing after it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from kubesched.api.storage import (
    MIGRATED_PLUGINS_ANNOTATION,
    CSIStorageCapacity,
    not_found_message,
    pod_volumes,
    quantity_value,
    volume_is_for_pod,
)
from kubesched.config.plugin_args import VolumeBindingArgs
from kubesched.config.releases import DEFAULT_RELEASE, STORAGE_CAPACITY_SCORING
from kubesched.framework.clock import RealClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    BatchScorePlugin,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    PreBindPreFlightPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.helper.shape_score import build_broken_linear_function, scaled_shape
from kubesched.plugins.helper.storage_listers import StorageListers, volumes_of
from kubesched.plugins.helper.volumes_signer import VolumesSigner
from kubesched.plugins.jsonview import as_object, get_list, get_obj, require_object

from .assume_cache import PVAssumeCache, PVCAssumeCache
from .binder import BinderError, PodVolumeClaims, PodVolumes, VolumeBinder, claim_name_of

__all__ = ["STATE_KEY", "VolumeBinding", "build_scorer"]

STATE_KEY = names.VOLUME_BINDING
MAX_UTILIZATION = 100
#: StorageResource per class: (requested, capacity).
ClassResources = dict[str, list[int]]


class _State:
    """Upstream's ``stateData``; shared (not copied) by clones, as upstream's ``Clone`` returns itself."""

    __slots__ = ("all_bound", "claims", "has_static_bindings", "lock", "pod_volumes_by_node")

    def __init__(self, claims: PodVolumeClaims | None = None) -> None:
        self.all_bound = False
        self.claims = claims
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False
        self.lock = threading.Lock()

    def clone(self) -> _State:
        return self


def build_scorer(args: VolumeBindingArgs) -> Callable[[ClassResources], int]:
    """``buildScorerFunction`` over the args' shape (scores scaled to 0..100)."""
    raw = build_broken_linear_function(scaled_shape(args.shape or []))

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(resources: ClassResources) -> int:
        if not resources:
            return 0
        total = sum(class_score(r, c) for r, c in resources.values())
        # math.Round: half away from zero (the scores are non-negative).
        return math.floor(total / len(resources) + 0.5)

    return scorer


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


class VolumeBinding(
    VolumesSigner,
    EnqueueExtensions,
    PreFilterPlugin,
    FilterPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    ReservePlugin,
    PreBindPreFlightPlugin,
):
    name = names.VOLUME_BINDING
    args_type = VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or VolumeBindingArgs()
        self.handle = handle
        release = handle.release if handle is not None else DEFAULT_RELEASE
        self.capacity_scoring = release.has(STORAGE_CAPACITY_SCORING)
        self.scorer = build_scorer(self.args) if self.capacity_scoring else None
        self.listers = StorageListers(handle)
        client = handle.client if handle is not None else None

        def fetch_pv(name: str) -> JSONObj | None:
            return client().get_object("v1", "PersistentVolume", "", name) if client else None

        def list_pvs() -> Sequence[JSONObj]:
            return client().list_objects("v1", "PersistentVolume") if client else []

        def fetch_pvc(key: str) -> JSONObj | None:
            ns, _, name = key.partition("/")
            return client().get_object("v1", "PersistentVolumeClaim", ns, name) if client else None

        def update(obj: JSONObj) -> JSONObj:
            if client is None:
                raise BinderError("no API client")
            return client().update_object(obj)

        def node_labels(name: str) -> Mapping[str, str] | None:
            node = client().get_object("v1", "Node", "", name) if client else None
            if node is None:
                return None
            labels = get_obj(get_obj(node, "metadata"), "labels")
            return {str(k): str(v) for k, v in labels.items()}

        def pod_exists(namespace: str, name: str) -> bool:
            return client is not None and client().get_pod(namespace, name) is not None

        real = handle is not None and isinstance(handle.clock, RealClock)

        def sleep(seconds: float) -> bool:
            if not real:
                return False
            time.sleep(seconds)
            return True

        self.binder = VolumeBinder(
            self.listers,
            PVAssumeCache(fetch_pv, list_pvs),
            PVCAssumeCache(fetch_pvc),
            update=update,
            get_node_labels=node_labels,
            pod_exists=pod_exists,
            sleep=sleep,
            bind_timeout=float(self.args.bind_timeout_seconds),
        )

    def _stage_failed(self, operation: str) -> None:
        metrics = self.handle.metrics if self.handle is not None else None
        if metrics is not None:
            metrics.volume_scheduling_stage_failed(operation)

    # -- PreFilter ------------------------------------------------------------------------------
    def _pod_has_pvcs(self, pod: PodInfo) -> tuple[bool, str | None]:
        """``podHasPVCs``: whether the pod has claims, and the first problem with them."""
        has = False
        for vol in volumes_of(pod):
            name = claim_name_of(pod.name, vol)
            if name is None:
                continue
            has = True
            pvc = self.listers.pvc(pod.namespace, name)
            if pvc is None:
                if vol.is_ephemeral:
                    return has, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return has, not_found_message("PersistentVolumeClaim", name)
            if pvc.phase == "Lost":
                return has, (
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
                )
            if pvc.deleting:
                return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if vol.is_ephemeral:
                problem = volume_is_for_pod(pod.namespace, pod.name, pod.uid, pvc)
                if problem is not None:
                    return has, problem
        return has, None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spec.get("volumes"):
            state.write(STATE_KEY, _State())
            return None, Status(Code.SKIP)
        has, problem = self._pod_has_pvcs(pod)
        if problem is not None:
            return None, _unresolvable(problem)
        if not has:
            state.write(STATE_KEY, _State())
            return None, Status(Code.SKIP)
        try:
            claims = self.binder.get_pod_volume_claims(pod.pod, volumes_of(pod))
        except BinderError as err:
            return None, Status(Code.ERROR, str(err))
        if claims.immediate:
            return None, _unresolvable("pod has unbound immediate PersistentVolumeClaims")
        state.write(STATE_KEY, _State(claims))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status(Code.ERROR, "not found")
        if s.claims is None:
            return None  # upstream would find nothing to check
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(s.claims, node_info.name, node_info.labels)
        except BinderError as err:
            self._stage_failed("predicate")
            return Status(Code.ERROR, str(err))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        with s.lock:
            s.pod_volumes_by_node[node_info.name] = pod_volumes
            s.has_static_bindings = s.has_static_bindings or bool(pod_volumes.static_bindings)
        return None

    # -- PreScore / Score -----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if self.scorer is None:
            return Status(Code.SKIP)
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status(Code.ERROR, "not found")
        if s.has_static_bindings or self.capacity_scoring:
            return None
        return Status(Code.SKIP)

    def _class_resources(self, pod_volumes: PodVolumes) -> ClassResources:
        resources: ClassResources = {}
        if pod_volumes.static_bindings or not self.capacity_scoring:
            for b in pod_volumes.static_bindings:
                r = resources.setdefault(b.storage_class_name, [0, 0])
                r[0] += b.pvc.request_value
                r[1] += b.pv.capacity_value
        else:
            for p in pod_volumes.dynamic_provisions:
                cap: CSIStorageCapacity | None = p.node_capacity
                if cap is None:
                    continue
                r = resources.setdefault(p.pvc.storage_class_name or "", [0, 0])
                r[1] = quantity_value(cap.capacity)
                r[0] += p.pvc.request_value
        return resources

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self.scorer is None:
            return 0, None
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return 0, Status(Code.ERROR, "not found")
        pod_volumes = s.pod_volumes_by_node.get(node_info.name)
        if pod_volumes is None:
            return 0, None
        return int(self.scorer(self._class_resources(pod_volumes))), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> IntArray:
        """Zero everywhere for a pod without claims (the common case since v1.37, whose PreScore
        lets every pod through to Score); per node otherwise."""
        s = state.get(STATE_KEY)
        out = np.zeros(len(indices), dtype=np.int64)
        if not isinstance(s, _State) or not s.pod_volumes_by_node or self.scorer is None:
            return out
        infos = snapshot.node_infos
        for k, i in enumerate(indices):
            out[k] = self.score(state, pod, infos[int(i)])[0]
        return out

    def score_extensions(self) -> None:
        return None

    # -- Reserve / PreBind ----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status(Code.ERROR, "not found")
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            s.all_bound = True
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod.pod, volumes_of(pod), node_name, pod_volumes)
        except BinderError as err:
            self._stage_failed("assume")
            return Status(Code.ERROR, str(err))
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is not None:
            self.binder.revert_assumed_pod_volumes(pod_volumes)

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status(Code.ERROR, "not found")
        if s.all_bound:
            return Status(Code.SKIP)
        if node_name not in s.pod_volumes_by_node:
            return Status(Code.ERROR, f'no pod volume found for node "{node_name}"')
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return Status(Code.ERROR, "not found")
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return Status(Code.ERROR, f'no pod volume found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod.pod, node_name, pod_volumes)
        except BinderError as err:
            self._stage_failed("bind")
            return Status(Code.ERROR, str(err))
        return None

    # -- EnqueueExtensions ----------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_csi_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE), is_schedulable_after_csi_driver_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_csi_storage_capacity_change,
            ),
        ]


# -- queueing hints (volume_binding.go) ------------------------------------------------------------


def _meta(obj: JSONObj) -> JSONObj:
    return get_obj(obj, "metadata")


def _pod_claim_names(pod: JSONObj) -> list[str]:
    name = str(_meta(pod).get("name", ""))
    return [c for c in (claim_name_of(name, v) for v in pod_volumes(pod)) if c is not None]


def is_schedulable_after_csi_node_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A new CSINode, or a change of its migrated-plugins annotation."""
    before = as_object(old, "CSINode")
    after = require_object(new, "CSINode")
    if before is None:
        return QueueingHint.QUEUE
    a = get_obj(_meta(before), "annotations").get(MIGRATED_PLUGINS_ANNOTATION)
    b = get_obj(_meta(after), "annotations").get(MIGRATED_PLUGINS_ANNOTATION)
    return QueueingHint.QUEUE if a != b else QueueingHint.QUEUE_SKIP


def is_schedulable_after_persistent_volume_claim_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A claim of the pod (persistentVolumeClaim or ephemeral) was added or changed."""
    pvc = require_object(new, "PersistentVolumeClaim")
    if (_meta(pvc).get("namespace") or "default") != (_meta(pod).get("namespace") or "default"):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if _meta(pvc).get("name") in _pod_claim_names(pod) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_storage_class_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A new class, or a change of a class's allowedTopologies."""
    before = as_object(old, "StorageClass")
    after = require_object(new, "StorageClass")
    if before is None:
        return QueueingHint.QUEUE
    # Semantic.DeepEqual: nil and empty slices differ only in Go; both read as "no topologies".
    if (after.get("allowedTopologies") or None) != (before.get("allowedTopologies") or None):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_csi_storage_capacity_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A new capacity, or a volume limit that appeared or grew."""
    before = as_object(old, "CSIStorageCapacity")
    after = require_object(new, "CSIStorageCapacity")
    if before is None:
        return QueueingHint.QUEUE
    old_limit = CSIStorageCapacity.from_object(before).volume_limit
    new_limit = CSIStorageCapacity.from_object(after).volume_limit
    if new_limit is not None and (old_limit is None or quantity_value(new_limit) > quantity_value(old_limit)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_csi_driver_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A CSI inline volume's driver stopped publishing storage capacity."""
    before = require_object(old, "CSIDriver")
    after = require_object(new, "CSIDriver")
    driver = str(_meta(after).get("name", ""))
    was = get_obj(before, "spec").get("storageCapacity") is True
    now = get_obj(after, "spec").get("storageCapacity") is True
    for v in get_list(get_obj(pod, "spec"), "volumes"):
        csi = v.get("csi") if isinstance(v, Mapping) else None
        if isinstance(csi, Mapping) and csi.get("driver") == driver and was and not now:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


__all__ += [
    "is_schedulable_after_csi_driver_change",
    "is_schedulable_after_csi_node_change",
    "is_schedulable_after_csi_storage_capacity_change",
    "is_schedulable_after_persistent_volume_claim_change",
    "is_schedulable_after_storage_class_change",
]
