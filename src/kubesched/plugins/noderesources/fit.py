"""NodeResourcesFit: does the node have room for the pod's requests, and how well does it fit?
(upstream ``pkg/scheduler/framework/plugins/noderesources/fit.go``).

Filter keeps every failure reason ("Insufficient cpu", "Too many pods", ...); a request larger
than the node's whole allocatable is UnschedulableAndUnresolvable, since preemption cannot help.
Score follows the configured ``scoringStrategy``: LeastAllocated (default), MostAllocated or
RequestedToCapacityRatio, over the configured resources and weights (resource_allocation.py).
Both Filter and Score have batch forms that evaluate all nodes from the snapshot's columnar table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.api.dra.extended_resource import DeviceClassResolver
from kubesched.api.resources import Resource, is_extended_resource_name
from kubesched.config.errors import ConfigError
from kubesched.config.feature_gates import known_feature_gates
from kubesched.config.plugin_args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
)
from kubesched.config.releases import DEFAULT_RELEASE
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    object_event,
)
from kubesched.framework.interfaces import (
    BatchFilterStatusesPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    Handle,
    PreFilterPlugin,
    PreScorePlugin,
)
from kubesched.framework.row_scores import RowScores
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names

from .fit_hints import (
    is_schedulable_after_device_class_event,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_event,
)
from .fits_request import InsufficientResource, fits_request
from .least_allocated import least_resource_batch_scorer, least_resource_dense_scorer, least_resource_scorer
from .most_allocated import most_resource_batch_scorer, most_resource_scorer
from .requested_to_capacity_ratio import (
    requested_to_capacity_ratio_batch_scorer,
    requested_to_capacity_ratio_scorer,
)
from .resource_allocation import I64, ResourceAllocationScorer, ResourcesNotFoundError

__all__ = ["PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY", "Fit", "InsufficientResource", "build_scorer", "fits_request"]

PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_FIT
DRA_API_VERSION = "resource.k8s.io/v1"


@dataclass(slots=True)
class _PreFilterState:
    request: Resource
    #: The requested resources a DeviceClass provides (DRAExtendedResource on).
    dra_backed: frozenset[str] = frozenset()

    def clone(self) -> _PreFilterState:
        return self


@dataclass(slots=True)
class _PreScoreState:
    #: The pod's request for each configured resource, in the configured order.
    pod_requests: list[int]

    def clone(self) -> _PreScoreState:
        return self


def build_scorer(args: NodeResourcesFitArgs) -> ResourceAllocationScorer:
    """Upstream ``nodeResourceStrategyTypeMap``: the scorer for the configured strategy."""
    strategy = args.scoring_strategy
    resources = list(strategy.resources)
    dense = None
    if strategy.type == LEAST_ALLOCATED:
        scorer, batch = least_resource_scorer(resources), least_resource_batch_scorer(resources)
        dense = least_resource_dense_scorer
    elif strategy.type == MOST_ALLOCATED:
        scorer, batch = most_resource_scorer(resources), most_resource_batch_scorer(resources)
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO and strategy.requested_to_capacity_ratio is not None:
        shape = strategy.requested_to_capacity_ratio.shape
        scorer = requested_to_capacity_ratio_scorer(resources, shape)
        batch = requested_to_capacity_ratio_batch_scorer(resources, shape)
    else:
        raise ValueError(f"scoring strategy {strategy.type} is not supported")
    return ResourceAllocationScorer(strategy.type, resources, scorer, batch, use_requested=False, dense_scorer=dense)


class Fit(EnqueueExtensions, PreFilterPlugin, BatchFilterStatusesPlugin, PreScorePlugin, BatchScorePlugin):
    name = names.NODE_RESOURCES_FIT
    args_type = NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or NodeResourcesFitArgs()
        self.handle = handle
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.scorer = build_scorer(self.args)
        self._rows = RowScores()
        self._fits = RowScores(dtype=np.bool_)
        self.ignored_resources = set(self.args.ignored_resources)
        self.ignored_resource_groups = set(self.args.ignored_resource_groups)
        release = handle.release if handle is not None else DEFAULT_RELEASE
        gate = known_feature_gates(str(release)).get("DRAExtendedResource")
        self.enable_dra_extended_resource = gate is not None and gate.default

    # -- PreFilter --------------------------------------------------------------------------------
    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on the pod's requests (OpportunisticBatching). As upstream
        (v1.36+), a pod requesting an extended resource that a DeviceClass provides is not signed:
        its devices are allocated per pod (the wording of the reason is kubesched's)."""
        if self._dra_backed(pod):
            return [], Status(Code.UNSCHEDULABLE, "pods with extended resources backed by DRA are not signable")
        return [SignFragment(sign.RESOURCES_SIGNER, sign.resources(pod))], None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.requests, self._dra_backed(pod)))
        return None, None

    def _dra_backed(self, pod: PodInfo) -> frozenset[str]:
        """The pod's requested resources some DeviceClass provides (the DRA manager's
        DeviceClassResolver), read once per cycle; empty with DRAExtendedResource off."""
        if not self.enable_dra_extended_resource or self.handle is None:
            return frozenset()
        requested = [n for n, q in pod.requests.scalar_resources.items() if q]
        if not requested:
            return frozenset()
        resolver = DeviceClassResolver(self.handle.client().list_objects(DRA_API_VERSION, "DeviceClass"))
        return frozenset(n for n in requested if resolver.get_device_class(n) is not None)

    def pre_filter_extensions(self) -> None:
        return None

    def _request(self, state: CycleState, pod: PodInfo) -> Resource:
        return self._pre_filter_state(state).request

    def _pre_filter_state(self, state: CycleState) -> _PreFilterState:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, _PreFilterState):
            return s
        raise KeyError(f"error reading {PRE_FILTER_STATE_KEY!r} from cycleState: not found")

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        insufficient = fits_request(s.request, node_info, self.ignored_resources,
                                    self.ignored_resource_groups, s.dra_backed)
        if not insufficient:
            return None
        code = Code.UNSCHEDULABLE
        if any(r.unresolvable for r in insufficient):
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return Status(code, *(r.reason for r in insufficient))

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        # A node's verdict depends on the pod's requests and the node's row only: kept per row
        # across cycles (framework/row_scores.py), instead of comparing every row every cycle
        # (about 10 -> 3 µs at 5000 nodes).
        s = self._pre_filter_state(state)
        req, dra = s.request, s.dra_backed
        key = (req.milli_cpu, req.memory, req.ephemeral_storage, tuple(req.scalar_resources.items()), dra)
        ignored, groups = self.ignored_resources, self.ignored_resource_groups
        fits: npt.NDArray[np.bool_] = self._fits.scores(
            snapshot, indices, key,
            lambda rows: self._filter_rows(req, snapshot, rows, dra),
            lambda ni: not fits_request(req, ni, ignored, groups, dra),
        )  # fmt: skip
        return fits

    def _filter_rows(
        self, req: Resource, snapshot: Snapshot, indices: npt.NDArray[np.intp], dra_backed: frozenset[str] = frozenset()
    ) -> npt.NDArray[np.bool_]:
        """The batch form: whether each row of ``indices`` has room for ``req``."""
        t = snapshot.table
        take = t.take
        ok: npt.NDArray[np.bool_] = take(t.free_pods, indices) >= 1
        if req.milli_cpu > 0:
            ok &= take(t.free_cpu, indices) >= req.milli_cpu
        if req.memory > 0:
            ok &= take(t.free_mem, indices) >= req.memory
        if req.ephemeral_storage > 0:
            ok &= take(t.free_eph, indices) >= req.ephemeral_storage
        for name, q in req.scalar_resources.items():
            if q == 0 or self._ignored(name):
                continue
            alloc, used = t.scalar(name)
            a = take(alloc, indices)
            fits = q <= a - take(used, indices)
            if name in dra_backed:
                fits |= a <= 0  # left to DynamicResources on nodes without it
            ok &= fits
        return ok

    def filter_batch_statuses(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> tuple[npt.NDArray[np.int64], list[Status]]:
        """What :meth:`filter` returns on each node of ``indices`` (``fits_request``'s reasons, in its
        order), from the node table: -1 where the node fits, else the index of its Status."""
        s = self._pre_filter_state(state)
        req = s.request
        t = snapshot.table
        take = t.take
        # (reason, insufficient, unresolvable) per check, in fits_request's order; the table's free
        # columns are allocatable minus requested (pods: minus the pod count)
        insufficient = [take(t.free_pods, indices) < 1]
        hard = np.zeros(len(indices), dtype=np.bool_)  # some check fails by more than allocatable
        reasons = ["Too many pods"]
        if req.milli_cpu or req.memory or req.ephemeral_storage or req.scalar_resources:
            for reason, q, alloc, free in (
                ("Insufficient cpu", req.milli_cpu, t.alloc_cpu, t.free_cpu),
                ("Insufficient memory", req.memory, t.alloc_mem, t.free_mem),
                ("Insufficient ephemeral-storage", req.ephemeral_storage, t.alloc_eph, t.free_eph),
            ):
                if q > 0:
                    reasons.append(reason)
                    short = q > take(free, indices)
                    insufficient.append(short)
                    hard |= short & (q > take(alloc, indices))
            for name, q in req.scalar_resources.items():
                if q == 0 or self._ignored(name):
                    continue
                alloc, used = t.scalar(name)
                a = take(alloc, indices)
                reasons.append(f"Insufficient {name}")
                short = q > a - take(used, indices)
                if name in s.dra_backed:
                    short &= a > 0  # left to DynamicResources on nodes without it
                insufficient.append(short)
                hard |= short & (q > a)
        k = len(reasons)
        ins = np.vstack(insufficient)
        # key: bit 0 unresolvable, bit j+1 check j failed (0 where the node fits)
        key_of = (np.left_shift(1, np.arange(1, k + 1, dtype=np.int64)) @ ins) + hard
        failing = key_of > 0
        # Distinct keys in increasing order, and each node's rank among them: the keys are small,
        # so a lookup table does what np.unique would, without its sort.
        if k <= 10:
            present = np.bincount(key_of, minlength=1)
            present[0] = 0
            keys = np.flatnonzero(present)
            rank = np.full(len(present), -1, dtype=np.int64)
            rank[keys] = np.arange(len(keys))
            codes = rank[key_of]
        else:  # many extended resources: too many possible keys for a table
            codes = np.full(len(indices), -1, dtype=np.int64)
            keys, codes[failing] = np.unique(key_of[failing], return_inverse=True)
        statuses = []
        for key in keys.tolist():
            names = [reasons[j] for j in range(k) if key >> (j + 1) & 1]
            statuses.append(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if key & 1 else Code.UNSCHEDULABLE, *names))
        return codes, statuses

    def _ignored(self, name: str) -> bool:
        if not is_extended_resource_name(name):
            return False
        return name in self.ignored_resources or name.split("/")[0] in self.ignored_resource_groups

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # InPlacePodVerticalScaling is GA in v1.35: a placed pod scaling down frees resources too.
        pod_actions = ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
        events = [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, pod_actions), is_schedulable_after_pod_event),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions), is_schedulable_after_node_change),
        ]
        if self.enable_dra_extended_resource:

            def node_hint(pod: JSONObj, old: object, new: object) -> QueueingHint:
                backed = self._dra_backed(PodInfo(dict(pod)))
                return is_schedulable_after_node_change(pod, old, new, backed)

            events[1] = ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions), node_hint)
            # A pod may wait for a class providing one of its extended resources.
            events.append(
                ClusterEventWithHint(
                    object_event("DeviceClass", ActionType.ADD | ActionType.UPDATE),
                    is_schedulable_after_device_class_event,
                )
            )
        return events

    # -- PreScore / Score -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self.scorer.pod_requests(pod)))
        return None

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        s = state.get(PRE_SCORE_STATE_KEY)
        # Without PreScore (disabled) compute here; it is memoised on the pod anyway.
        return s.pod_requests if isinstance(s, _PreScoreState) else self.scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            return self.scorer.score(node_info, self._pod_requests(state, pod)), None
        except ResourcesNotFoundError as err:
            return 0, Status(Code.ERROR, str(err))

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> I64:
        # A node's score depends on the pod's requests and the node's row only: kept per row
        # across cycles (framework/row_scores.py).
        requests = self._pod_requests(state, pod)
        scorer = self.scorer
        return self._rows.scores(
            snapshot, indices, tuple(requests),
            lambda rows: scorer.score_batch(snapshot.table, rows, requests),
            lambda ni: scorer.score(ni, requests),
        )  # fmt: skip

    def score_extensions(self) -> None:
        return None
