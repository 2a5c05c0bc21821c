"""One interface per extension point (upstream ``staging/.../framework/interface.go``).

A plugin is a plain class with a ``name`` and the methods of the points it implements; which points
actually run it is decided by the profile's configuration, exactly as in kube-scheduler. The
Protocols below are the contract (and what ``isinstance`` checks use); a plugin need not inherit
from them.

Return conventions: a method returning a Status may return ``None`` for Success. Any exception a
plugin raises is turned into an Error status naming the plugin: the pod is retried with backoff,
the scheduler goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .events import ClusterEventWithHint
from .status import Status, StatusLike
from .types import NodeInfo, NodeScore, PodInfo, PostFilterResult, PreFilterResult, QueuedPodInfo

if TYPE_CHECKING:
    from .clock import Clock
    from .snapshot import Snapshot
    from .waiting_pods import WaitingPod

#: Scores after normalisation lie in [MIN_NODE_SCORE, MAX_NODE_SCORE].
MIN_NODE_SCORE = 0
MAX_NODE_SCORE = 100
#: Permit may not ask to wait longer than this (upstream ``maxTimeout``).
MAX_PERMIT_TIMEOUT = 15 * 60.0


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Called before a pod enters activeQ/backoffQ; non-Success parks it (gated). Must be cheap."""

    def pre_enqueue(self, pod: PodInfo) -> StatusLike: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ. Exactly one per profile, identical across profiles."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Cluster events that may make a pod this plugin rejected schedulable (read once at start)."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when preemption or nominated pods add/remove pods."""

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> StatusLike: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> StatusLike: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Runs once per cycle before Filter. Skip skips this plugin's Filter; a result narrows nodes."""

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, StatusLike]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Can the pod run on this node? Unschedulable / UnschedulableAndUnresolvable reject it."""

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> StatusLike: ...


BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@runtime_checkable
class BatchFilterPlugin(FilterPlugin, Protocol):
    """Optional vectorised Filter over the snapshot's node table.

    Returns a mask over ``indices`` (positions in ``snapshot.node_infos``), True where the per-node
    ``filter`` would return Success, or None when it would return Success on every one of them.
    The per-node form is the reference and gives the reasons of rejected nodes; tests prove both
    agree.
    """

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> BoolArray | None: ...


@runtime_checkable
class BatchFilterStatusesPlugin(BatchFilterPlugin, Protocol):
    """Optional: the statuses the per-node ``filter`` returns on many nodes, computed at once.

    Returns ``(codes, statuses)``: ``codes[k]`` is -1 where the node ``indices[k]`` passes, else the
    index in ``statuses`` of the Status its ``filter`` returns there (nodes with the same reasons share
    one). Asked only when the pod fits no node, to explain why without calling the plugin node by node
    (``Framework.run_filter_plugins_on_rows``); tests prove it agrees with ``filter``.
    """

    def filter_batch_statuses(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> tuple[IntArray, Sequence[Status]]: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs when no node fits (default: preemption)."""

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, StatusLike]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> StatusLike: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> StatusLike: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Ranks feasible nodes; after NormalizeScore every score must be in [0, 100]."""

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, StatusLike]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    """Optional vectorised Score over the given node-table positions (int64 array)."""

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> IntArray: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Reserve is called after the pod is assumed; Unreserve on any later failure (idempotent)."""

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Success, reject, or Wait with a timeout (at most 15 minutes)."""

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[StatusLike, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Skip lets the next binder decide; the first other result is final."""

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


class EventRecorder(Protocol):
    """events.k8s.io recorder: ``eventf(regarding, related, type, reason, action, note)``."""

    def eventf(
        self,
        regarding: Mapping[str, Any],
        related: Mapping[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
    ) -> None: ...


class ClusterClient(Protocol):
    """The API operations plugins may perform through the handle (both backends implement them)."""

    def bind(self, pod: Mapping[str, Any], node_name: str) -> None: ...

    def delete_pod(self, pod: Mapping[str, Any], reason: str = "") -> None: ...

    def patch_pod_metadata(
        self,
        pod: Mapping[str, Any],
        *,
        annotations: Mapping[str, str | None] | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> None: ...

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None: ...

    def list_objects(self, api_version: str, kind: str) -> list[dict[str, Any]]: ...

    def update_object_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> None: ...


class Handle(Protocol):
    """What a plugin's factory receives: the snapshot, waiting pods, events, the clock, the cluster."""

    @property
    def profile_name(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    def snapshot_shared_lister(self) -> Snapshot: ...

    def event_recorder(self) -> EventRecorder: ...

    def client(self) -> ClusterClient: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def activate(self, pods: Sequence[Mapping[str, Any]]) -> None: ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def move_pods_on_event(self, event: Any, old: Any = None, new: Any = None) -> None:
        """Tell the queue a plugin-specific event happened (a custom resource changed, a timer fired)."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status: ...
