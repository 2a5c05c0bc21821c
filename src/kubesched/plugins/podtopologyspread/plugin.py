"""PodTopologySpread: spread pods evenly over topology domains
(upstream ``pkg/scheduler/framework/plugins/podtopologyspread/{plugin,common,filtering,scoring}.go``, v1.35).

``whenUnsatisfiable: DoNotSchedule`` constraints filter, ``ScheduleAnyway`` ones score. A pod
without constraints gets the configured defaults: with ``defaultingType: System`` that is
hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway, applied only when Services or the
pod's ReplicationController/ReplicaSet/StatefulSet give a selector (upstream ``DefaultSelector``).
The NodeInclusionPolicy and MatchLabelKeys gates are GA/on in v1.35 and always honoured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, cast

import numpy as np
import numpy.typing as npt

from kubesched.api.errors import InvalidObjectError
from kubesched.config.plugin_args import PodTopologySpreadArgs
from kubesched.config.releases import DEFAULT_RELEASE, HINTS_COUNT_NOMINATED_PODS, SPLIT_POD_EVENTS
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    BatchFilterPlugin,
    EnqueueExtensions,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kubesched.framework.lazy_state import filter_by_batch_mask
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, JSONValue, NodeInfo, NodeScore, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.jsonview import as_pod_info, get_obj

from .batch import LazyPreFilterState, MatchCountIndex
from .batch import filter_mask as batch_filter_mask
from .common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    TopologySpreadConstraint,
    WorkloadIndex,
    filter_constraints,
    node_labels_match_spread_constraints,
    with_selector,
    workload_index,
)
from .filtering import ERR_REASON_NODE_LABEL_NOT_MATCH, PreFilterState
from .memo import MatchCountMemo
from .scoring import PreScoreState, normalize

PRE_FILTER_STATE_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD
PRE_SCORE_STATE_KEY = "PreScore" + names.POD_TOPOLOGY_SPREAD

_Constraints = tuple[list[TopologySpreadConstraint], list[TopologySpreadConstraint]]


class ConstraintsError(ValueError):
    """A constraint's labelSelector cannot be parsed (upstream ``getConstraints`` error)."""


class PodTopologySpread(
    EnqueueExtensions,
    PreFilterPlugin,
    PreFilterExtensions,
    BatchFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
):
    name = names.POD_TOPOLOGY_SPREAD
    args_type = PodTopologySpreadArgs

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Handle) -> None:
        self.args = args or PodTopologySpreadArgs()
        errs = self.args.validate()
        if errs:
            raise ValueError("; ".join(str(e) for e in errs))
        self.handle = handle
        #: From v1.36 a pod with a nominated node counts in the hints like an assigned one.
        release = handle.release if handle is not None else DEFAULT_RELEASE
        self._hints_count_nominated = release.has(HINTS_COUNT_NOMINATED_PODS)
        self._split_pod_events = release.has(SPLIT_POD_EVENTS)
        self.memo = MatchCountMemo()
        #: Per-row match counts for the batch Filter, kept across cycles (batch.py).
        self._counts = MatchCountIndex()
        #: The default constraints by action, when they do not depend on the pod (no matchLabelKeys).
        self._defaults: dict[str, list[TopologySpreadConstraint]] = {}
        self.system_defaulted = self.args.defaulting_type == PodTopologySpreadArgs.SYSTEM
        self.default_constraints: Sequence[JSONObj] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else list(self.args.default_constraints)
        )

    # ------------------------------------------------------------------------------------------
    # constraints
    # ------------------------------------------------------------------------------------------
    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Spreading depends on where other pods are, so a pod with constraints, its own or the
        defaults (the system defaults of the default profile included), cannot be signed."""
        if sign.get_list(pod.spec, "topologySpreadConstraints"):
            return [], Status(Code.UNSCHEDULABLE, "pods with topology constraints are not signable")
        if self.default_constraints:
            return [], Status(Code.UNSCHEDULABLE, "pods with default topology constraints are not signable")
        return [], None

    @staticmethod
    def _explicit(pod: PodInfo) -> _Constraints:
        """The pod's own (hard, soft) constraints, parsed once per PodInfo."""
        cached = pod.cache.get(names.POD_TOPOLOGY_SPREAD)
        if cached is None:
            raw = pod.spec.get("topologySpreadConstraints") or []
            try:
                cached = (
                    filter_constraints(raw, pod.labels, DO_NOT_SCHEDULE),
                    filter_constraints(raw, pod.labels, SCHEDULE_ANYWAY),
                )
            except InvalidObjectError as err:
                cached = err
            pod.cache[names.POD_TOPOLOGY_SPREAD] = cached
        if isinstance(cached, InvalidObjectError):
            raise cached
        result: _Constraints = cached
        return result

    def constraints(self, pod: PodInfo, action: str, workloads: WorkloadIndex) -> list[TopologySpreadConstraint]:
        """``getConstraints``: the pod's constraints for ``action``, else the default ones.

        Raises ConstraintsError, with upstream's message, for an unparsable selector.
        """
        kind = "hard" if action == DO_NOT_SCHEDULE else "soft"
        if pod.spec.get("topologySpreadConstraints"):
            try:
                hard, soft = self._explicit(pod)
            except InvalidObjectError as err:
                raise ConstraintsError(f"obtaining pod's {kind} topology spread constraints: {err}") from err
            return hard if action == DO_NOT_SCHEDULE else soft
        # buildDefaultConstraints: no selector from the pod's workloads means no default spreading.
        defaults = self._defaults.get(action)
        if defaults is None:
            defaults = filter_constraints(self.default_constraints, pod.labels, action)
            if not any(c.get("matchLabelKeys") for c in self.default_constraints):
                self._defaults[action] = defaults  # the same for every pod: parsed once
        if not defaults:
            return []
        selector = workloads.default_selector(pod)
        if selector.empty:
            return []
        return with_selector(defaults, selector)

    # ------------------------------------------------------------------------------------------
    # PreFilter / Filter
    # ------------------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE, workload_index(state, self.handle))
        except ConstraintsError as err:
            return None, Status(Code.ERROR, f"get constraints from pod: {err}", error=err)
        if not constraints:
            return None, Status(Code.SKIP)
        snapshot = self.handle.snapshot_shared_lister() if self.handle is not None else None
        if snapshot is None or nodes is not snapshot.node_infos:
            s = PreFilterState(pod, constraints)
            s.count(nodes, self.memo)
            state.write(PRE_FILTER_STATE_KEY, s)
            return None, None
        # The batch data decides; the reference counts are filled only if a per-node path reads them.
        memo = self.memo

        def fill(st: PreFilterState) -> None:
            st.count(nodes, memo)

        mask = batch_filter_mask(snapshot, pod, constraints, self._counts)
        state.write(PRE_FILTER_STATE_KEY, LazyPreFilterState(pod, constraints, pending=fill, batch_mask=mask))
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_add, node_info, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_remove, node_info, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        reason = s.violation(node_info)
        if reason is None:
            return None
        # A node without the topology label can never satisfy the constraint: preemption cannot help.
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if reason == ERR_REASON_NODE_LABEL_NOT_MATCH else Code.UNSCHEDULABLE
        return Status(code, reason)

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            raise KeyError(s.message())
        mask = s.batch_mask if isinstance(s, LazyPreFilterState) else None
        return filter_by_batch_mask(self, state, pod, snapshot, indices, mask)

    # ------------------------------------------------------------------------------------------
    # PreScore / Score / NormalizeScore
    # ------------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self.handle.snapshot_shared_lister().list()
        if not all_nodes:
            return Status(Code.SKIP)
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY, workload_index(state, self.handle))
        except ConstraintsError as err:
            return Status(Code.ERROR, f"calculating preScoreState: {err}", error=err)
        if not constraints:
            return Status(Code.SKIP)
        # Only explicit or List-defaulted constraints need every topology label: with the system
        # defaults, nodes without a zone label still get hostname spreading.
        require_all = bool(pod.spec.get("topologySpreadConstraints")) or not self.system_defaulted
        s = PreScoreState(pod, constraints, memo=self.memo)
        s.init(nodes, require_all)
        s.count(all_nodes, require_all)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return s.score(node_info), None

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return s
        normalize(scores, s.ignored_nodes)
        return None

    # ------------------------------------------------------------------------------------------
    # EnqueueExtensions
    # ------------------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # With QueueingHints on (v1.35), a new toleration of the pending pod itself is an event too.
        pod_actions = (
            ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE
        )
        node_actions = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        node_event = ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, node_actions), self.is_schedulable_after_node_change
        )
        if self._split_pod_events:
            # v1.37: assigned pods' changes and the pending pod's own, each with its hint.
            assigned = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
            target = ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL
            return [
                ClusterEventWithHint(
                    ClusterEvent(EventResource.ASSIGNED_POD, assigned), self.is_schedulable_after_assigned_pod_change
                ),
                ClusterEventWithHint(
                    ClusterEvent(EventResource.TARGET_POD, target), self.is_schedulable_after_target_pod_change
                ),
                node_event,
            ]
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, pod_actions), self.is_schedulable_after_pod_change),
            node_event,
        ]

    def _hard_constraints(self, pod: PodInfo) -> list[TopologySpreadConstraint]:
        return self.constraints(pod, DO_NOT_SCHEDULE, WorkloadIndex(self.handle))

    def _involved(self, changed: PodInfo, target: PodInfo, *, same_pod: bool) -> bool:
        """``involvedInTopologySpreading``: the pending pod itself (before v1.37, where it has its
        own TargetPod hint), or a pod of its namespace that is assigned or (from v1.36) nominated."""
        if same_pod and changed.uid == target.uid:
            return True
        if not changed.node_name and not (self._hints_count_nominated and _nominated(changed)):
            return False
        return changed.namespace == target.namespace

    def is_schedulable_after_assigned_pod_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """v1.37 ``isSchedulableAfterAssignedPodChange``: the pending pod itself is not involved."""
        return self._after_pod_change(pod, old, new, same_pod=False)

    def is_schedulable_after_target_pod_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """v1.37 ``isSchedulableAfterTargetPodChange``: a new toleration (with a Honor constraint)
        or a label change that flips a constraint's selector."""
        before, after = as_pod_info(old), as_pod_info(new)
        if before is None or after is None:
            return QueueingHint.QUEUE
        try:
            constraints = self._hard_constraints(PodInfo(dict(pod)))
        except ConstraintsError:
            return QueueingHint.QUEUE
        if after.tolerations != before.tolerations and any(c.node_taints_policy == HONOR for c in constraints):
            return QueueingHint.QUEUE
        return _after_label_change(before, after, constraints)

    def is_schedulable_after_pod_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """v1.35/v1.36 ``isSchedulableAfterPodChange`` (the pending pod's own updates included)."""
        return self._after_pod_change(pod, old, new, same_pod=True)

    def _after_pod_change(self, pod: JSONObj, old: object, new: object, *, same_pod: bool) -> QueueingHint:
        target = PodInfo(dict(pod))
        before, after = as_pod_info(old), as_pod_info(new)
        if any(p is not None and not self._involved(p, target, same_pod=same_pod) for p in (after, before)):
            return QueueingHint.QUEUE_SKIP
        try:
            constraints = self._hard_constraints(target)
        except ConstraintsError:
            return QueueingHint.QUEUE
        if before is not None and after is not None:
            if (
                same_pod
                and after.uid == target.uid
                and after.tolerations != before.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            return _after_label_change(before, after, constraints)
        changed = after if after is not None else before
        if changed is not None and any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        try:
            constraints = self._hard_constraints(PodInfo(dict(pod)))
        except ConstraintsError:
            return QueueingHint.QUEUE
        old_labels, new_labels = _labels(old), _labels(new)
        old_match = old is not None and node_labels_match_spread_constraints(old_labels, constraints)
        new_match = new is not None and node_labels_match_spread_constraints(new_labels, constraints)
        if old is not None and new is not None:
            if old_match != new_match:
                return QueueingHint.QUEUE
            if new_match and (
                any(old_labels.get(c.topology_key) != new_labels.get(c.topology_key) for c in constraints)
                or _taints(old) != _taints(new)
            ):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_match else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_match else QueueingHint.QUEUE_SKIP


def _nominated(p: PodInfo) -> bool:
    status = p.pod.get("status")
    return isinstance(status, Mapping) and bool(status.get("nominatedNodeName"))


def _after_label_change(
    before: PodInfo, after: PodInfo, constraints: Sequence[TopologySpreadConstraint]
) -> QueueingHint:
    """``isSchedulableAfterPodLabelChange``: Queue when a constraint's selector matches one side only."""
    if dict(after.labels) == dict(before.labels):
        return QueueingHint.QUEUE_SKIP
    for c in constraints:
        if c.selector.matches(before.labels) != c.selector.matches(after.labels):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _labels(obj: object) -> Mapping[str, str]:
    labels = get_obj(cast("JSONObj", obj or {}), "metadata").get("labels")
    return cast("Mapping[str, str]", labels) if isinstance(labels, Mapping) else {}


def _taints(obj: object) -> list[JSONValue]:
    taints = get_obj(cast("JSONObj", obj or {}), "spec").get("taints")
    return list(taints) if isinstance(taints, list) else []


def _pre_filter_state(state: CycleState) -> PreFilterState | Status:
    s = state.get(PRE_FILTER_STATE_KEY)
    if isinstance(s, PreFilterState):
        return s
    return Status(Code.ERROR, f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')


def _pre_score_state(state: CycleState) -> PreScoreState | Status:
    s = state.get(PRE_SCORE_STATE_KEY)
    if isinstance(s, PreScoreState):
        return s
    return Status(Code.ERROR, f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
