"""TaintToleration: a node's NoSchedule/NoExecute taints must be tolerated; fewer untolerated
PreferNoSchedule taints score higher (upstream
``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``).

The Filter reason is upstream's v1.35 text ``node(s) had untolerated taint(s)``: since
kubernetes/kubernetes#134740 (in v1.35, cherry-picked to v1.34) the pod status no longer names
the taint's key and value, which may be sensitive. Score counts intolerable PreferNoSchedule taints;
NormalizeScore reverses the default normalisation so a node with none scores 100.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeAlias

import numpy as np
import numpy.typing as npt

from kubesched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubesched.framework import signature as sign
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
    BatchFilterPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    Handle,
    PreScorePlugin,
    ScoreExtensions,
)
from kubesched.framework.node_columns import per_taint_set
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, NodeScore, PodInfo, pod_uid, spec
from kubesched.plugins import names
from kubesched.plugins.helper.normalize_score import default_normalize_score, default_normalize_score_batch
from kubesched.plugins.jsonview import as_object

PRE_SCORE_STATE_KEY = "PreScore" + names.TAINT_TOLERATION
#: Upstream v1.35 Filter reason (kubernetes/kubernetes#134740 dropped the taint's key and value).
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
#: Pod cache keys of the per-taint-set arrays (tolerated for Filter, intolerable count for Score).
_FILTER_CACHE_KEY = names.TAINT_TOLERATION + "/tolerated"
_SCORE_CACHE_KEY = names.TAINT_TOLERATION + "/intolerable"

Taint: TypeAlias = JSONObj
Toleration: TypeAlias = JSONObj


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """Upstream ``helper.DoNotScheduleTaintsFilterFunc``: only NoSchedule and NoExecute taints."""
    effect = taint.get("effect")
    return effect in (NO_SCHEDULE, NO_EXECUTE)


def _tolerations_of(pod: JSONObj) -> Sequence[Toleration]:
    t = spec(pod).get("tolerations")
    return t if isinstance(t, list) else []


def _taints_of(node: JSONObj | None) -> Sequence[Taint]:
    t = spec(node or {}).get("taints")
    return t if isinstance(t, list) else []


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> list[Toleration]:
    """``getAllTolerationPreferNoSchedule``: tolerations with effect PreferNoSchedule or empty (all)."""
    return [t for t in tolerations if not t.get("effect") or t.get("effect") == PREFER_NO_SCHEDULE]


def count_intolerable_taints_prefer_no_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> int:
    return sum(
        1
        for taint in taints
        if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint)
    )


class _PreScoreState:
    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations: list[Toleration]) -> None:
        self.tolerations_prefer_no_schedule = tolerations

    def clone(self) -> _PreScoreState:
        return self


class TaintToleration(EnqueueExtensions, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin, ScoreExtensions):
    name = names.TAINT_TOLERATION
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        self.handle = handle

    # -- Filter -----------------------------------------------------------------------------------
    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on the pod's tolerations (OpportunisticBatching)."""
        return [SignFragment(sign.TOLERATIONS_SIGNER, sign.tolerations(pod))], None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        taint = find_matching_untolerated_taint(node_info.taints, pod.tolerations, do_not_schedule_taints_filter)
        if taint is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_] | None:
        """Each distinct taint list is checked once (cached on the pod), then looked up per node
        (None: no node has taints, so every node passes)."""
        if not snapshot.table.tainted_count:
            return None
        tolerations = pod.tolerations

        def tolerated(taints: Sequence[Taint]) -> bool:
            return find_matching_untolerated_taint(taints, tolerations, do_not_schedule_taints_filter) is None

        ok = per_taint_set(pod.cache, _FILTER_CACHE_KEY, tolerated)
        t = snapshot.table
        out: npt.NDArray[np.bool_] = ok[t.take(t.taint_id, indices)]
        return out

    # -- Score ------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        tolerations = pod.cache.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            tolerations = pod.cache[PRE_SCORE_STATE_KEY] = prefer_no_schedule_tolerations(pod.tolerations)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tolerations))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return 0, Status.as_status(
                KeyError(f"failed to read {PRE_SCORE_STATE_KEY!r} from cycleState: not found")
            )
        return count_intolerable_taints_prefer_no_schedule(node_info.taints, s.tolerations_prefer_no_schedule), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            raise KeyError(f"failed to read {PRE_SCORE_STATE_KEY!r} from cycleState: not found")
        tolerations = s.tolerations_prefer_no_schedule

        def intolerable(taints: Sequence[Taint]) -> int:
            return count_intolerable_taints_prefer_no_schedule(taints, tolerations)

        t = snapshot.table
        if not t.tainted_count:
            return np.zeros(len(indices), dtype=np.int64)
        counts = per_taint_set(pod.cache, _SCORE_CACHE_KEY, intolerable)
        out: npt.NDArray[np.int64] = counts[t.take(t.taint_id, indices)].astype(np.int64, copy=False)
        return out

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_score_batch(
        self, state: CycleState, pod: PodInfo, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        return default_normalize_score_batch(scores, reverse=True)

    # -- queueing ---------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                is_schedulable_after_pod_toleration_change,
            ),
        ]


def is_schedulable_after_node_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue only when the node went from having an untolerated NoSchedule/NoExecute taint to none."""
    modified = as_object(new, "Node")
    original = as_object(old, "Node")
    tolerations = _tolerations_of(pod)
    was_untolerated = True
    if original is not None:
        was_untolerated = (
            find_matching_untolerated_taint(_taints_of(original), tolerations, do_not_schedule_taints_filter)
            is not None
        )
    is_untolerated = (
        find_matching_untolerated_taint(_taints_of(modified), tolerations, do_not_schedule_taints_filter)
        is not None
    )
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_toleration_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Only an update of the rejected pod itself that changed its tolerations can help it."""
    original = as_object(old, "Pod")
    modified = as_object(new, "Pod")
    if modified is None or pod_uid(modified) != pod_uid(pod):
        return QueueingHint.QUEUE_SKIP
    if original is not None and list(_tolerations_of(original)) == list(_tolerations_of(modified)):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE
