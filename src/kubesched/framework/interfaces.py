"""One interface per extension point (upstream ``pkg/scheduler/framework/interface.go``).

A plugin is a class with a ``name`` and the methods of the points it implements; which points
actually run it is decided by the profile's configuration, exactly as in kube-scheduler. The
Protocols below are the contract. In-tree plugins name the ones they implement as base classes
(``class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions)``), so mypy
checks every signature; a plugin that does not inherit from them works the same, because the
framework decides which points a plugin has by ``isinstance`` against these runtime-checkable
Protocols, which a class passes either by naming the Protocol or by having its members. A class
that names a Protocol must define every method of it: the Protocols' bodies are stubs.

Return conventions: a method returning a Status may return ``None`` for Success. Any exception a
plugin raises is turned into an Error status naming the plugin: the pod is retried with backoff,
the scheduler goes on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .events import ClusterEvent, ClusterEventWithHint
from .signature import SignFragment
from .status import Status, StatusLike
from .types import (
    JSONObj,
    NodeInfo,
    NodeScore,
    Obj,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from kubesched.config.releases import Release

    from .clock import Clock
    from .pods_in_pre_bind import PodInPreBind
    from .snapshot import Snapshot
    from .waiting_pods import WaitingPod

#: Scores after normalisation lie in [MIN_NODE_SCORE, MAX_NODE_SCORE].
MIN_NODE_SCORE = 0
MAX_NODE_SCORE = 100
#: Permit may not ask to wait longer than this (upstream ``maxTimeout``).
MAX_PERMIT_TIMEOUT = 15 * 60.0


@runtime_checkable
class Plugin(Protocol):
    """What every plugin has: the name it is registered and configured under."""

    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Decides whether a pod may enter the scheduling queue's activeQ/backoffQ at all.

    Runs whenever a pod is added to the queue or moved back to it, before any scheduling cycle.
    Success lets the pod in; any other code parks it among the unschedulable pods as gated (named
    after this plugin) until an event this plugin registered lets it try again. It runs inside the
    event handlers, so it must be cheap: no calls to the API server or other remote endpoints.
    """

    def pre_enqueue(self, pod: PodInfo) -> StatusLike: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ: ``less(a, b)`` is True when ``a`` should be scheduled before ``b``.

    Exactly one QueueSort plugin is enabled per profile, and it must be the same in every profile,
    because all profiles share one queue. It is called under the queue's lock: keep it cheap.
    """

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """The cluster events that may make a pod this plugin rejected schedulable again.

    Read once, when the scheduler starts (never per pod). Each event may carry a queueing hint:
    given the pod and the object's old and new versions, it answers QUEUE (retry the pod now) or
    QUEUE_SKIP (the change cannot help it). A plugin at a point that can reject pods but without
    this interface is treated as interested in every event. Returning events that are too narrow
    leaves pods stuck until the periodic flush; too wide only costs retries.
    """

    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Keeps a plugin's PreFilter state right when pods are added to or removed from a node copy.

    The framework calls ``add_pod``/``remove_pod`` while it evaluates "what if" questions on a
    copy of a node: preemption removes victims, and Filter with nominated pods adds the pods
    nominated to the node. They update the CycleState the plugin's PreFilter wrote, for the
    ``pod`` being scheduled, so its Filter answers for the changed node. Success is the only
    expected result; anything else is an Error for the pod being scheduled.
    """

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> StatusLike: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> StatusLike: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Prepares a scheduling cycle: runs once per pod and cycle, before any Filter.

    Usually computes what Filter will need into the CycleState. Success goes on. Skip means this
    plugin has nothing to check for the pod: its Filter and its PreFilterExtensions are not called
    in this cycle (the returned result is ignored). Unschedulable or UnschedulableAndUnresolvable
    rejects the pod for every node without running Filter (the message is the whole diagnosis);
    Error ends the cycle with an error and the pod is retried with backoff. A PreFilterResult
    narrows the nodes Filter evaluates to the named ones (results of several plugins intersect;
    an empty intersection rejects the pod). ``pre_filter_extensions`` returns the object handling
    add/remove pod, or None.
    """

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, StatusLike]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Can the pod run on this node? Called for each candidate node, possibly concurrently.

    Success: the node fits as far as this plugin is concerned. Unschedulable: it does not, but
    preemption (removing lower-priority pods) might help. UnschedulableAndUnresolvable: it does
    not, and preemption cannot help; the node is not a preemption candidate. Error: the plugin
    failed; the cycle ends and the pod is retried with backoff. Read the node from ``node_info``,
    never from the snapshot: during preemption and for nominated pods the framework passes a
    modified copy.
    """

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
    (``NodeFilter.statuses_coded``); tests prove it agrees with ``filter``.
    """

    def filter_batch_statuses(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> tuple[IntArray, Sequence[Status]]: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs only when no node fits: after PreFilter or Filter rejected the pod (default: preemption).

    ``filtered_node_status`` has the status each node got. Success: the plugin made the pod
    schedulable, or will (a PostFilterResult may nominate a node, which the framework records in
    the pod's ``status.nominatedNodeName``); later PostFilter plugins do not run. Unschedulable:
    the plugin could not help (an informational plugin always returns it, and should be
    configured first); the next PostFilter plugin runs. Error: the plugin failed; the pod is
    retried with backoff. The pod itself stays unschedulable in this cycle either way.
    """

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, StatusLike]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Prepares scoring: runs once per cycle with the nodes that passed Filter, before any Score.

    Usually computes what Score will need into the CycleState. Success goes on. Skip means this
    plugin has nothing to score for the pod: its Score is not called in this cycle. Any other
    code ends the cycle with an error for the pod (it is retried with backoff). It does not run
    when Filter left a single node: there is nothing to rank.
    """

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> StatusLike: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """Rescales a Score plugin's raw scores once every node of the cycle has one.

    ``normalize_score`` receives this plugin's scores of all the cycle's nodes and rewrites them in
    place, typically to [MIN_NODE_SCORE, MAX_NODE_SCORE] (the framework requires that range
    afterwards, and then applies the plugin's weight). Success is the only expected result; any
    other code ends the cycle with an error for the pod.
    """

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> StatusLike: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Ranks one feasible node: returns an integer score and a status, for each node that passed Filter.

    Success is the only expected status; any other code ends the cycle with an error for the pod.
    Without a ScoreExtensions (``score_extensions`` returns None) the raw score must already lie
    in [MIN_NODE_SCORE, MAX_NODE_SCORE]; the framework multiplies it by the plugin's weight and
    sums over plugins to pick the node.
    """

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
    """Claims the chosen node's resources in the plugin's own state, before the pod is bound.

    ``reserve`` runs after the pod is assumed on the node in the scheduler's cache. Success goes
    on to Permit; any other code fails the cycle, and then ``unreserve`` runs for every Reserve
    plugin. ``unreserve`` runs whenever the pod is rejected after Reserve (a later Reserve plugin,
    Permit, PreBind or Bind fails, or a waiting pod is rejected): it must be idempotent and must
    cope with being called without a matching ``reserve``.
    """

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Approves, rejects or delays the binding of a reserved pod (gangs, time windows).

    Success approves. Wait holds the pod, with the returned timeout in seconds (at most
    MAX_PERMIT_TIMEOUT), until a plugin allows or rejects it through the handle's waiting pods;
    the timeout rejects it. The wait starts only after every Permit plugin has run and none
    rejected. Unschedulable or UnschedulableAndUnresolvable rejects the pod (it is unreserved and
    goes back to the queue); Error does too, retried with backoff.
    """

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[StatusLike, float]: ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """A PreFilter, Filter, PreScore or Score plugin that can say which parts of a pod its results
    depend on (upstream ``SignPlugin``, v1.35, OpportunisticBatching): fragments naming a pod
    field (``framework/signature.py``) and its canonical value. Pods whose fragments are all equal
    get the same results on the same nodes, so a profile may reuse one pod's scored nodes for the
    next. Unschedulable (or Error) means this pod cannot be compared with others. A profile with
    any such plugin that lacks ``sign_pod`` never batches. A plugin whose answer depends on the
    pod's spec and status only may set the class attribute ``signs_by_spec = True``: the framework
    then keeps its answer for every pod of that spec."""

    def sign_pod(self, pod: PodInfo) -> tuple[Sequence[SignFragment], StatusLike]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Work that must be done before the pod is bound (attach a volume, write an annotation).

    Runs in the binding cycle, after Permit allowed the pod. Success goes on to the next PreBind
    plugin and then to Bind; Skip says the plugin had nothing to do for this pod. Any other code
    rejects the pod: it is not bound, Unreserve runs and the pod goes back to the queue.
    """

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...


@runtime_checkable
class PreBindPreFlightPlugin(PreBindPlugin, Protocol):
    """A PreBind plugin that says beforehand whether it will work for this pod (upstream
    ``PreBindPreFlight``, v1.35): Success if its PreBind will do something, Skip if not (its PreBind
    is then not called), Error to fail the binding cycle. When some plugin will work (or the pod
    waits at Permit) the scheduler writes the pod's ``status.nominatedNodeName`` first, so other
    components see where it is going while it waits. A PreBind plugin without this method is taken
    to return Success (its PreBind always runs)."""

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds the pod to the node (default: the API's ``pods/binding``).

    Bind plugins run in order after PreBind. Skip lets the next binder decide; the first other
    result is final: Success means bound, Error (or any failure) rejects the pod, which is
    unreserved and retried. A profile needs at least one Bind plugin.
    """

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> StatusLike: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Told that a pod was bound: informational, it cannot fail the pod.

    Runs after Bind succeeded, in the binding cycle. The place to clean up state a plugin kept
    for the pod while it was being scheduled.
    """

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


class EventRecorder(Protocol):
    """events.k8s.io recorder: ``eventf(regarding, related, type, reason, action, note)``."""

    def eventf(
        self,
        regarding: JSONObj,
        related: JSONObj | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
    ) -> None: ...


class ClusterClient(Protocol):
    """The API operations plugins may perform through the handle (both backends implement them)."""

    def get_pod(self, namespace: str, name: str) -> Obj | None:
        """The informer's current copy of a pod (None when it is gone)."""
        ...

    def bind(self, pod: JSONObj, node_name: str) -> None: ...

    def delete_pod(self, pod: JSONObj, reason: str = "") -> None: ...

    def patch_pod_metadata(
        self,
        pod: JSONObj,
        *,
        annotations: Mapping[str, str | None] | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> None: ...

    def patch_pod_status(self, pod: JSONObj, patch: JSONObj) -> None: ...

    def list_objects(self, api_version: str, kind: str) -> Sequence[JSONObj]: ...

    def get_object(self, api_version: str, kind: str, namespace: str, name: str) -> JSONObj | None:
        """One object from the informer's store (upstream's listers' ``Get``), None when there is
        none; ``namespace`` is "" for cluster-scoped kinds."""
        ...

    def update_object_status(self, obj: JSONObj, status: JSONObj) -> None: ...

    def create(self, obj: JSONObj) -> JSONObj:
        """A client ``Create`` of a namespaced or cluster-scoped object (not a pod or node):
        ``metadata.generateName`` is completed; returns the object as created (name, UID,
        resourceVersion). DynamicResources creates a pod's extended-resource claim with it."""
        ...

    def delete(self, obj: JSONObj) -> None:
        """A client ``Delete`` of the object's kind, namespace and name; gone already is no error."""
        ...

    def update_object(self, obj: JSONObj) -> JSONObj:
        """Write back an object read from this client with its ``metadata.annotations`` and
        ``spec`` changed (upstream: a client ``Update``; what VolumeBinding's PreBind writes).
        Optimistic on ``metadata.resourceVersion``: raises
        :class:`~kubesched.framework.cluster.ObjectConflictError` when the object changed since
        it was read, or is gone. Returns the object as stored."""
        ...

    def submit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` asynchronously: a thread against a real cluster, a zero-delay event in the simulator."""
        ...


class Counter(Protocol):
    def inc(self, amount: float = 1) -> None: ...


class Observer(Protocol):
    def observe(self, amount: float) -> None: ...


class PluginMetrics(Protocol):
    """The part of the scheduler's metrics (``kubesched.metrics.SchedulerMetrics``) plugins feed."""

    #: The scheduler's Prometheus registry: a plugin registers its own collectors there.
    @property
    def registry(self) -> CollectorRegistry: ...

    #: ``scheduler_preemption_attempts``.
    @property
    def preemption_attempts(self) -> Counter: ...

    #: ``scheduler_preemption_victims``.
    @property
    def preemption_victims(self) -> Observer: ...

    def observe_preemption_goroutine(self, result: str, seconds: float) -> None:
        """One background preemption finished (``result``: success or error)."""
        ...

    def volume_scheduling_stage_failed(self, operation: str) -> None:
        """``scheduler_volume_scheduling_stage_error_total{operation}`` (VolumeBinding)."""
        ...


class Handle(Protocol):
    """Everything a plugin may use of the scheduler (upstream ``framework.Handle``): what its
    factory receives, ``factory(args, handle)``.

    Every member is always there; what a backend or a test may lack is typed so (``metrics`` may
    be None), never probed with ``getattr``. ``kubesched.testing.FakeHandle`` implements it with
    inert defaults for unit tests.
    """

    @property
    def profile_name(self) -> str:
        """The ``schedulerName`` of the profile the plugin belongs to."""
        ...

    @property
    def clock(self) -> Clock:
        """The scheduler's clock: the only source of time a plugin may read (virtual in simulations)."""
        ...

    @property
    def metrics(self) -> PluginMetrics | None:
        """The scheduler's metrics, or None where there are none (a bare unit test)."""
        ...

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source (preemption's candidate offset): runs reproduce."""
        ...

    @property
    def parallelism(self) -> int:
        """The configuration's ``parallelism``."""
        ...

    @property
    def release(self) -> Release:
        """The kube-scheduler release the scheduler behaves as (``--emulated-version``): a plugin
        whose behaviour changed between releases asks ``release.has(change)``
        (:mod:`kubesched.config.releases`)."""
        ...

    # -- the cluster -----------------------------------------------------------------------------
    def snapshot_shared_lister(self) -> Snapshot:
        """The cycle's snapshot of nodes and their pods (upstream ``SnapshotSharedLister``)."""
        ...

    def event_recorder(self) -> EventRecorder: ...

    def client(self) -> ClusterClient: ...

    # -- waiting pods (Permit) -------------------------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        """The pod's binding cycle, if it is in PreBind (v1.36+: preemption cancels it)."""
        ...

    # -- the queue and the nominator -------------------------------------------------------------
    def activate(self, pods: Sequence[JSONObj]) -> None:
        """Move these pods (if pending) to activeQ now (upstream ``Activate``)."""
        ...

    def move_pods_on_event(self, event: ClusterEvent, old: object = None, new: object = None) -> None:
        """Tell the queue a plugin-specific event happened (a custom resource changed, a timer fired)."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        """Forget the pod's nomination in the scheduler's memory (upstream ``DeleteNominatedPodIfExists``)."""
        ...

    # -- running other plugins -------------------------------------------------------------------
    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status: ...
