"""NodeName: a pod with ``spec.nodeName`` fits only that node
(upstream ``pkg/scheduler/framework/plugins/nodename/node_name.go``, v1.35.4 and v1.37.2).

From v1.37 (:data:`~kubesched.config.releases.NODE_NAME_PRE_FILTER`) it also has a PreFilter that
narrows such a pod to its node, so the other nodes are not filtered at all: they read
``node(s) didn't satisfy plugin(s) [NodeName]`` and are no preemption candidates. Which extension
points a plugin has is decided by the methods it has (``isinstance`` against the Protocols of
kubesched.framework.interfaces), so a v1.35/v1.36 NodeName must not even define ``pre_filter``:
constructing :class:`NodeName` with a v1.37 handle builds a :class:`NodeNameWithPreFilter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.config.releases import NODE_NAME_PRE_FILTER
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interfaces import BatchFilterPlugin, EnqueueExtensions, Handle, PreFilterPlugin
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names

#: Upstream ``ErrReason``.
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    """Upstream ``Fits``: no node name requested, or it is this node's."""
    return not pod.node_name or pod.node_name == node_info.name


class NodeName(EnqueueExtensions, BatchFilterPlugin):
    name = names.NODE_NAME
    args_type = None

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on ``spec.nodeName`` (OpportunisticBatching)."""
        return [SignFragment(sign.NODE_NAME_SIGNER, pod.node_name)], None

    def __new__(cls, args: object = None, handle: Handle | None = None) -> NodeName:
        # The registry's factory is this class; the release picks which class it builds.
        if cls is NodeName and handle is not None and handle.release.has(NODE_NAME_PRE_FILTER):
            return super().__new__(NodeNameWithPreFilter)
        return super().__new__(cls)

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


class NodeNameWithPreFilter(NodeName, PreFilterPlugin):
    """NodeName as of v1.37: the PreFilter narrows a pod with ``spec.nodeName`` to that node
    (upstream's case: an assigned pod scheduled again, e.g. for a deferred resize)."""

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if pod.node_name:
            return PreFilterResult({pod.node_name}), None
        return None, None

    def pre_filter_extensions(self) -> None:
        return None
