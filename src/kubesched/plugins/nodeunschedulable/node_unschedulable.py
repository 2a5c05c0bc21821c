"""NodeUnschedulable: nodes with ``spec.unschedulable`` reject pods that do not tolerate the
``node.kubernetes.io/unschedulable:NoSchedule`` taint
(upstream ``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.api.taints import NO_SCHEDULE, tolerations_tolerate_taint
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import BatchFilterPlugin, EnqueueExtensions, Handle
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, pod_uid, spec
from kubesched.plugins import names
from kubesched.plugins.jsonview import as_object

#: Upstream ``ErrReasonUnschedulable``.
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: ``v1.TaintNodeUnschedulable``
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT: Mapping[str, str] = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE}
_TOLERATES_KEY = names.NODE_UNSCHEDULABLE + "/tolerates"


def tolerates_unschedulable(tolerations: Sequence[JSONObj]) -> bool:
    return tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable(EnqueueExtensions, BatchFilterPlugin):
    name = names.NODE_UNSCHEDULABLE
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        pass

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on the pod's tolerations (OpportunisticBatching)."""
        return [SignFragment(sign.TOLERATIONS_SIGNER, sign.tolerations(pod))], None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not node_info.unschedulable:
            return None
        # A pod tolerating the unschedulable taint also tolerates spec.unschedulable.
        if tolerates_unschedulable(pod.tolerations):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_] | None:
        """The node table's ``unschedulable`` column, unless the pod tolerates the taint (None: every
        node passes)."""
        t = snapshot.table
        if not t.unschedulable_count:
            return None
        tolerates = pod.cache.get(_TOLERATES_KEY)
        if tolerates is None:
            tolerates = pod.cache[_TOLERATES_KEY] = tolerates_unschedulable(pod.tolerations)
        if tolerates:
            return None
        mask: npt.NDArray[np.bool_] = ~t.take(t.unschedulable, indices)
        return mask

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
    """Queue when a node became schedulable, or a schedulable node was added."""
    original = as_object(old, "Node")
    modified = as_object(new, "Node") or {}
    now = bool(spec(modified).get("unschedulable"))
    if original is None:
        return QueueingHint.QUEUE_SKIP if now else QueueingHint.QUEUE
    if spec(original).get("unschedulable") and not now:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_toleration_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue when the rejected pod itself now tolerates the unschedulable taint."""
    as_object(old, "Pod")
    modified = as_object(new, "Pod")
    if modified is None or pod_uid(modified) != pod_uid(pod):
        return QueueingHint.QUEUE_SKIP
    tolerations = spec(modified).get("tolerations")
    if tolerates_unschedulable(tolerations if isinstance(tolerations, list) else []):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
