"""NodeName: a pod with ``spec.nodeName`` fits only that node
(upstream ``pkg/scheduler/framework/plugins/nodename/node_name.go``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interfaces import BatchFilterPlugin, EnqueueExtensions, Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins import names

#: Upstream ``ErrReason``.
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    """Upstream ``Fits``: no node name requested, or it is this node's."""
    return not pod.node_name or pod.node_name == node_info.name


class NodeName(EnqueueExtensions, BatchFilterPlugin):
    name = names.NODE_NAME
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if fits(pod, node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        if not pod.node_name:
            return np.ones(len(indices), dtype=np.bool_)
        mask: npt.NDArray[np.bool_] = np.asarray(indices) == snapshot.index.get(pod.node_name, -1)
        return mask

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # No hint: a new node is always worth a retry (upstream registers Node/Add only).
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
