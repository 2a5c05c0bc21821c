"""NodePorts: the pod's host ports must be free on the node
(upstream ``pkg/scheduler/framework/plugins/nodeports/node_ports.go``).

Host ports are those of containers and of restartable (sidecar) init containers with a
``hostPort`` (``util.GetHostPorts``), parsed once per pod in ``PodInfo.host_ports``; a node's used
ports are kept in ``NodeInfo.used_ports``. ``0.0.0.0`` conflicts with every IP of the same
protocol and port.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState, StateNotFoundError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import BatchFilterPlugin, EnqueueExtensions, Handle, PreFilterPlugin
from kubesched.framework.node_columns import per_port_set
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import HostPortInfo, JSONObj, NodeInfo, PodInfo, PreFilterResult, spec
from kubesched.plugins import names
from kubesched.plugins.jsonview import require_object

PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_PORTS
#: Upstream ``ErrReason``.
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

HostPort = tuple[str, str, int]
#: A pod's verdicts per interned port set, in its cache.
_BATCH_CACHE_KEY = names.NODE_PORTS + "/batch"


class _PreFilterState:
    __slots__ = ("ports",)

    def __init__(self, ports: list[HostPort]) -> None:
        self.ports = ports

    def clone(self) -> _PreFilterState:
        # Not affected by adding or removing pods.
        return self


def fits_ports(want: Sequence[HostPort], ports_in_use: HostPortInfo) -> bool:
    """Upstream ``fitsPorts``: no wanted (ip, protocol, port) conflicts with a used one."""
    return not any(ports_in_use.check_conflict(ip, proto, port) for ip, proto, port in want)


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    """Upstream ``Fits``."""
    return fits_ports(pod.host_ports, node_info.used_ports)


class NodePorts(EnqueueExtensions, PreFilterPlugin, BatchFilterPlugin):
    name = names.NODE_PORTS
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        pass

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on the pod's host ports (OpportunisticBatching)."""
        return [SignFragment(sign.HOST_PORTS_SIGNER, sign.host_ports(pod))], None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        ports = pod.host_ports
        if not ports:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status.as_status(StateNotFoundError(f"reading {PRE_FILTER_STATE_KEY!r} from cycleState"))
        if not fits_ports(s.ports, node_info.used_ports):
            return Status(Code.UNSCHEDULABLE, ERR_REASON)
        return None

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_] | None:
        """Each distinct set of ports in use is checked once per pod (the replicas of one
        Deployment leave one set on every node they hold), then looked up per node; None when no
        node has a host port in use."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            raise StateNotFoundError(f"reading {PRE_FILTER_STATE_KEY!r} from cycleState")
        t = snapshot.table
        if not t.ports_count:
            return None
        want = s.ports
        ok = per_port_set(pod.cache, _BATCH_CACHE_KEY, lambda used: fits_ports(want, used))
        out: npt.NDArray[np.bool_] = ok[t.take(t.ports_id, indices)]
        return out

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            # Container ports are immutable, so pod updates are not registered.
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]


def is_schedulable_after_pod_deleted(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue only if the deleted pod was placed (or nominated) and held a port this pod wants."""
    deleted = require_object(old, "Pod")
    status = deleted.get("status")
    nominated = status.get("nominatedNodeName") if isinstance(status, Mapping) else ""
    if not spec(deleted).get("nodeName") and not nominated:
        return QueueingHint.QUEUE_SKIP
    deleted_ports = PodInfo(dict(deleted)).host_ports
    if not deleted_ports:
        return QueueingHint.QUEUE_SKIP
    in_use = HostPortInfo()
    for ip, proto, port in deleted_ports:
        in_use.add(ip, proto, port)
    if fits_ports(PodInfo(dict(pod)).host_ports, in_use):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


__all__ = ["ERR_REASON", "NodePorts", "fits", "fits_ports", "is_schedulable_after_pod_deleted"]
