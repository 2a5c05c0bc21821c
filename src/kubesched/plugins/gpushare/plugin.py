"""GpuShare: whole and fractional GPUs per device, topology-aware, with the FGD paper's policies.

PreFilter parses the pod's GPU request (Skip for pods without one); Filter checks that its GPUs fit on
the node (model, whole GPUs free or one GPU with enough milli left, and for ``require-single-group``
inside one GPU group); Score rates nodes with the configured policy of the GPU engine
(:mod:`kubesched.plugins.gpu`), NormalizeScore applies the policy's normalisation and the topology
preference; Reserve picks concrete GPU indexes and Unreserve gives them back; PreBind records them on
the pod as ``kubesched.io/gpu-ids``. Filter and Score have batch forms over the engine's columnar
state, whose rows are the snapshot's nodes. See docs/gpu.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kubesched.config.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchFilterStatusesPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    Handle,
    PreBindPreFlightPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, NodeScore, PodInfo, PreFilterResult
from kubesched.gorand import GoRand
from kubesched.plugins import names
from kubesched.plugins.gpu import NodeGpuState, PodShape, Policy, RandomPolicy, accessible, make_policy
from kubesched.plugins.gpu.fit import REASON_GPU_MODEL, REASON_INSUFFICIENT_GPU, REASON_NO_GPU
from kubesched.plugins.jsonview import get_obj

from .args import TOPOLOGY_NONE, TOPOLOGY_REQUIRE_SINGLE_GROUP, GpuShareArgs
from .requests import (
    ANNOTATION_GPU_GROUPS,
    ANNOTATION_GPU_IDS,
    LABEL_GPU_PRODUCT,
    RESOURCE_GPU,
    GpuRequestError,
    format_gpu_ids,
    pod_shape,
)
from .state import NrtIndex, SnapshotGpuState
from .topology import NRT_API_VERSION, NRT_KIND, GpuTopology, pack

__all__ = ["NAME", "REASON_NOT_IN_ONE_GROUP", "REASON_TOO_MANY_FOR_ONE_GROUP", "GpuShare"]

log = logging.getLogger("kubesched.plugins.gpushare")

NAME = names.GPU_SHARE
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
REASON_NOT_IN_ONE_GROUP = "Insufficient GPU in a single GPU group"
REASON_TOO_MANY_FOR_ONE_GROUP = "GPU group too small"

_FLAT_SPAN = 1 << 8 | 1  # (1 group, 1 zone), encoded as groups << 8 | zones


@dataclass(slots=True)
class _PreFilterState:
    shape: PodShape

    def clone(self) -> _PreFilterState:
        return self


@dataclass(slots=True)
class _ScoreState:
    """Per-cycle scoring data: Random's feasible nodes and pick, the placements' topology spans."""

    nodes: Sequence[NodeInfo] = ()
    chosen: str | None = None
    spans: dict[str, int] = field(default_factory=dict)
    span_array: npt.NDArray[np.int64] | None = None
    #: The policy's cluster_context for this cycle (computed at the first per-node Score).
    context: tuple[object | None] | None = None

    def clone(self) -> _ScoreState:
        return _ScoreState(self.nodes, self.chosen, dict(self.spans), self.span_array, self.context)


def _clamp(scores: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Policies normalise by the Alibaba cluster's largest node (128 cores, 8 GPUs): on bigger nodes
    DotProd could leave [0, 100], which the framework rejects."""
    return np.minimum(np.maximum(scores, MIN_NODE_SCORE), MAX_NODE_SCORE)


#: Pod UIDs remembered by :meth:`GpuShare._observe` before the set is cleared (bounds memory).
_OBSERVED_LIMIT = 1 << 20


class GpuShare(
    EnqueueExtensions,
    PreFilterPlugin,
    BatchFilterStatusesPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    ScoreExtensions,
    ReservePlugin,
    PreBindPreFlightPlugin,
):
    """The GpuShare plugin (PreFilter, Filter, PreScore, Score, Reserve, PreBind, EnqueueExtensions)."""

    name = NAME
    Args = GpuShareArgs

    def __init__(self, args: GpuShareArgs | None, handle: Handle, *, rng: GoRand | None = None) -> None:
        self.args = args or GpuShareArgs()
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.handle = handle
        #: The random stream of the Random policy (a run's Go stream in trace replays).
        self.rng = rng if rng is not None else GoRand(self.args.random_seed)
        typical = self.args.typical() if self.args.typical_pods else None
        self.policy: Policy = make_policy(self.args.scoring_policy, typical=typical, rng=self.rng,
                                          coverage=self.args.typical_pods_coverage)
        #: UIDs of the pods already shown to the policy (a retried pod is counted once).
        self._observed: set[str] = set()
        self.topology_policy = self.args.topology_policy
        self.gpus = SnapshotGpuState(nrt=self._list_topologies)
        self._normalizes = type(self.policy).normalize is not Policy.normalize

    # ---- plumbing --------------------------------------------------------------------------------

    def _snapshot(self) -> Snapshot:
        snapshot: Snapshot = self.handle.snapshot_shared_lister()
        return snapshot

    def _sync(self) -> None:
        self.gpus.sync(self._snapshot())

    def _list_topologies(self) -> NrtIndex:
        try:
            objs = self.handle.client().list_objects(NRT_API_VERSION, NRT_KIND)
        except Exception as err:  # a cluster without the CRD: no NUMA information
            log.debug("listing %s: %s", NRT_KIND, err)
            return {}
        return {str(get_obj(o, "metadata").get("name", "")): o for o in objs}

    def _shape(self, state: CycleState, pod: PodInfo) -> PodShape:
        s = state.get(PRE_FILTER_STATE_KEY)
        return s.shape if isinstance(s, _PreFilterState) else pod_shape(pod)

    def _packs(self, shape: PodShape) -> bool:
        """Whether the topology policy applies: several whole GPUs and a policy other than none."""
        return shape.gpu_count > 1 and self.topology_policy != TOPOLOGY_NONE

    def _observe(self, uid: str, shape: PodShape) -> None:
        """Show the policy each pod once (FGDOnline and RatioDelta learn the workload mix from them). The
        set of UIDs is forgotten past ``_OBSERVED_LIMIT`` pods: a pod retried after that counts twice."""
        if uid in self._observed:
            return
        if len(self._observed) >= _OBSERVED_LIMIT:
            self._observed.clear()
        self._observed.add(uid)
        self.policy.observe(shape)

    # ---- PreFilter -------------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        self._sync()
        try:
            shape = pod_shape(pod)
        except GpuRequestError as err:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(shape))
        self._observe(pod.uid, shape)
        if not shape.wants_gpu:
            return None, Status(Code.SKIP)
        if self._packs(shape):
            self.gpus.refresh_topologies(self._list_topologies())
        return None, None

    def pre_filter_extensions(self) -> None:
        # Filter derives the state of a NodeInfo with nominated pods added (or victims removed) from
        # its pods, so there is nothing to update incrementally.
        return None

    # ---- Filter ----------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        shape = self._shape(state, pod)
        if not shape.wants_gpu:
            return None
        self._sync()
        i = self.gpus.row_of(node_info)
        if i is not None:
            c = self.gpus.cluster
            if c.gpu_count[i] == 0:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NO_GPU)
            if not c.model_mask(shape.models)[i]:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_GPU_MODEL)
            if shape.gpu_count > c.gpu_count[i]:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_INSUFFICIENT_GPU)
            fits = c.gpu_free[i] >= shape.gpu_count if shape.gpu_milli == 1000 else c.gpu_max[i] >= shape.gpu_milli
            if not fits:
                return Status(Code.UNSCHEDULABLE, REASON_INSUFFICIENT_GPU)
            topology, free = self.gpus.topologies[i], self.gpus.free_gpus(i)
        else:
            node = self.gpus.derived_state(node_info)
            if node.gpu_count == 0:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NO_GPU)
            if not accessible(node.model, shape.models):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_GPU_MODEL)
            if shape.gpu_count > node.gpu_count:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_INSUFFICIENT_GPU)
            if sum(1 for left in node.gpu_left if left >= shape.gpu_milli) < shape.gpu_count:
                return Status(Code.UNSCHEDULABLE, REASON_INSUFFICIENT_GPU)
            topology, free = self._topology_of(node_info, node), _free(node)
        if self.topology_policy == TOPOLOGY_REQUIRE_SINGLE_GROUP and shape.gpu_count > 1:
            if topology.largest_group < shape.gpu_count:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_TOO_MANY_FOR_ONE_GROUP)
            packed = pack(topology, free, shape.gpu_count)
            if packed is None or packed[0][0] > 1:
                return Status(Code.UNSCHEDULABLE, REASON_NOT_IN_ONE_GROUP)
        return None

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        shape = self._shape(state, pod)
        self.gpus.sync(snapshot)
        mask: npt.NDArray[np.bool_] = self.gpus.cluster.gpu_fit(shape)[indices]
        if self.topology_policy == TOPOLOGY_REQUIRE_SINGLE_GROUP and shape.gpu_count > 1:
            grouped = np.flatnonzero(mask & ~self.gpus.flat[indices])
            for pos in grouped.tolist():
                packed = self.gpus.packed(int(indices[pos]), shape)
                mask[pos] = packed is not None and packed[0][0] == 1
        return mask

    def filter_batch_statuses(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> tuple[npt.NDArray[np.int64], list[Status]]:
        """What :meth:`filter` returns on each node of ``indices``, without visiting them one by one:
        ``codes[k]`` is -1 where the node passes, else the index of its Status in the list."""
        shape = self._shape(state, pod)
        self.gpus.sync(snapshot)
        c = self.gpus.cluster
        statuses = [
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NO_GPU),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_GPU_MODEL),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_INSUFFICIENT_GPU),
            Status(Code.UNSCHEDULABLE, REASON_INSUFFICIENT_GPU),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_TOO_MANY_FOR_ONE_GROUP),
            Status(Code.UNSCHEDULABLE, REASON_NOT_IN_ONE_GROUP),
        ]
        codes = np.full(len(indices), -1, dtype=np.int64)
        if not shape.wants_gpu:
            return codes, statuses
        count = c.gpu_count[indices]
        fits = c.gpu_fit(shape)[indices]
        codes = np.select(
            [count == 0, ~c.model_mask(shape.models)[indices], count < shape.gpu_count, ~fits],
            [0, 1, 2, 3], -1,
        ).astype(np.int64)
        if self.topology_policy == TOPOLOGY_REQUIRE_SINGLE_GROUP and shape.gpu_count > 1:
            for pos in np.flatnonzero((codes < 0) & ~self.gpus.flat[indices]).tolist():
                i = int(indices[pos])
                if self.gpus.topologies[i].largest_group < shape.gpu_count:
                    codes[pos] = 4
                else:
                    packed = self.gpus.packed(i, shape)
                    if packed is None or packed[0][0] > 1:
                        codes[pos] = 5
        return codes, statuses

    def _topology_of(self, node_info: NodeInfo, node: NodeGpuState) -> GpuTopology:
        i = self.gpus.cluster.index.get(node_info.name)
        if i is not None and self.gpus.cluster.gpu_count[i] == node.gpu_count:
            return self.gpus.topologies[i]
        return GpuTopology.flat(node.gpu_count)

    # ---- EnqueueExtensions -----------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        node_changes = (ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL
                        | ActionType.UPDATE_NODE_ANNOTATION)
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), _after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_changes), _after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CUSTOM, ActionType.ADD | ActionType.UPDATE, NRT_KIND)),
        ]

    # ---- PreScore / Score / NormalizeScore -------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _ScoreState(nodes=nodes))
        return None

    def _score_state(self, state: CycleState) -> _ScoreState:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _ScoreState):
            s = _ScoreState()
            state.write(PRE_SCORE_STATE_KEY, s)
        return s

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        shape = self._shape(state, pod)
        self._sync()
        i = self.gpus.row_of(node_info)
        node = self.gpus.node_state(i) if i is not None else self.gpus.derived_state(node_info)
        ss = self._score_state(state)
        pre: object | None = None
        if isinstance(self.policy, RandomPolicy):
            if ss.chosen is None:
                if not ss.nodes:
                    return 0, Status(Code.ERROR, "the Random policy needs PreScore's feasible nodes")
                ss.chosen = ss.nodes[self.rng.Intn(len(ss.nodes))].name
            pre = ss.chosen
        else:
            if ss.context is None:
                ss.context = (self.policy.cluster_context(self.gpus.cluster, shape),)
            pre = ss.context[0]
        if self._packs(shape):
            topology = self.gpus.topologies[i] if i is not None else self._topology_of(node_info, node)
            packed = pack(topology, _free(node), shape.gpu_count)
            ss.spans[node_info.name] = _encode(packed[0]) if packed is not None else _FLAT_SPAN
        value = self.policy.score(node, shape, pre)
        if self.policy.raw_scores:  # RatioDelta's thousandths: its NormalizeScore brings them in range
            return int(value), None
        return int(min(max(value, MIN_NODE_SCORE), MAX_NODE_SCORE)), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        shape = self._shape(state, pod)
        self.gpus.sync(snapshot)
        scores = self.policy.score_batch(self.gpus.cluster, indices.astype(np.int64), shape)
        if not self.policy.raw_scores:
            scores = _clamp(scores)
        if self._packs(shape):
            spans = np.full(len(indices), _FLAT_SPAN, dtype=np.int64)
            for pos in np.flatnonzero(~self.gpus.flat[indices]).tolist():
                packed = self.gpus.packed(int(indices[pos]), shape)
                if packed is not None:
                    spans[pos] = _encode(packed[0])
            self._score_state(state).span_array = spans
        return scores

    def score_extensions(self) -> GpuShare | None:
        return self if self._normalizes or self.topology_policy != TOPOLOGY_NONE else None

    def normalize_score_batch(
        self, state: CycleState, pod: PodInfo, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """The policy's normalisation (BestFit's min-max), then the topology preference: when the
        feasible nodes differ in how many GPU groups the pod would span, nodes with the fewest keep
        their score (at least 1) and the others get 0."""
        if self._normalizes:
            scores = self.policy.normalize(scores)
        s = state.get(PRE_SCORE_STATE_KEY)
        spans = s.span_array if isinstance(s, _ScoreState) else None
        if spans is not None and len(spans) == len(scores) and len(spans) and spans.min() != spans.max():
            scores = np.where(spans == spans.min(), np.maximum(scores, 1), 0)
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _ScoreState) and s.spans:
            s.span_array = np.array([s.spans.get(ns.name, _FLAT_SPAN) for ns in scores], dtype=np.int64)
        out = self.normalize_score_batch(state, pod, np.array([ns.score for ns in scores], dtype=np.int64))
        for ns, v in zip(scores, out.tolist(), strict=True):
            ns.score = int(v)
        return None

    # ---- Reserve / Unreserve / PreBind ----------------------------------------------------------

    def _select(self, i: int, shape: PodShape) -> tuple[int, ...] | None:
        if self._packs(shape) and not self.gpus.flat[i]:
            packed = self.gpus.packed(i, shape)
            return packed[1] if packed is not None else None
        try:
            return self.policy.select_gpus(self.gpus.node_state(i), shape)
        except ValueError:
            return None

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        shape = self._shape(state, pod)
        self._sync()
        i = self.gpus.cluster.index.get(node_name)
        if i is None:
            return Status(Code.ERROR, f"node {node_name!r} is not in the GPU state")
        if self.gpus.placed_gpus(node_name, pod.uid) is not None:
            return None  # already reserved (Reserve is not repeated, but cheap to guard)
        gpus: tuple[int, ...] = ()
        if shape.wants_gpu:
            chosen = self._select(i, shape)
            if chosen is None:
                return Status(Code.UNSCHEDULABLE, REASON_INSUFFICIENT_GPU)
            gpus = chosen
        self.gpus.place(i, pod, shape, gpus)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.gpus.unplace(node_name, pod.uid)

    def reserved_gpus(self, pod: PodInfo) -> tuple[int, ...] | None:
        """The GPU indexes reserved for ``pod`` (until it carries them in its annotation)."""
        return self.gpus.reserved.get(pod.uid)

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Work at PreBind (the gpu-ids annotation) only for a pod that was given GPUs."""
        return None if self.gpus.reserved.get(pod.uid) else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        gpus = self.gpus.reserved.get(pod.uid)
        if not gpus:
            return Status(Code.SKIP)
        value = format_gpu_ids(gpus)
        if pod.annotations.get(ANNOTATION_GPU_IDS) != value:
            self.handle.client().patch_pod_metadata(pod.pod, annotations={ANNOTATION_GPU_IDS: value})
        log.info("pod %s gets GPUs %s of node %s", pod.key, value, node_name)
        return None


def _free(node: NodeGpuState) -> list[int]:
    return [j for j, left in enumerate(node.gpu_left) if left == 1000]


def _encode(span: tuple[int, int]) -> int:
    return span[0] << 8 | span[1]


def _wants_gpu(pod: JSONObj) -> bool:
    try:
        return pod_shape(PodInfo(dict(pod))).wants_gpu
    except GpuRequestError:
        return False


def _after_pod_deleted(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A placed pod that held GPUs is gone: its GPUs may be what the pending pod needs."""
    if isinstance(old, Mapping) and get_obj(old, "spec").get("nodeName") and _wants_gpu(old):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _node_gpus(node: JSONObj) -> str:
    return str(get_obj(get_obj(node, "status"), "allocatable").get(RESOURCE_GPU, "0"))


def _after_node_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A node with GPUs was added, or changed its GPU count, model or GPU groups."""
    if not isinstance(new, Mapping) or _node_gpus(new) in ("", "0"):
        return QueueingHint.QUEUE_SKIP
    if not isinstance(old, Mapping):
        return QueueingHint.QUEUE
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    changed = (
        _node_gpus(old) != _node_gpus(new)
        or get_obj(om, "labels").get(LABEL_GPU_PRODUCT) != get_obj(nm, "labels").get(LABEL_GPU_PRODUCT)
        or get_obj(om, "annotations").get(ANNOTATION_GPU_GROUPS)
        != get_obj(nm, "annotations").get(ANNOTATION_GPU_GROUPS)
    )
    return QueueingHint.QUEUE if changed else QueueingHint.QUEUE_SKIP
