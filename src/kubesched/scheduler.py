"""The scheduler: event handlers, the scheduling cycle and the binding cycle.

Follows ``pkg/scheduler/schedule_one.go`` top to bottom — pop, skip what must be skipped,
PreFilter → Filter (sampled nodes) → PostFilter on failure → PreScore → Score → select host →
assume → Reserve → Permit, then an asynchronous binding cycle (WaitOnPermit → PreBind → Bind →
PostBind). Cleanup (Unreserve, forget) is written out at each exit, as upstream does, so every
failure path can be read where it happens.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.backend.cache import Cache, CacheError
from kubesched.backend.queue import SchedulingQueue
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import Clock
from kubesched.framework.cluster import ClusterBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    UNSCHEDULED_POD_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
)
from kubesched.framework.node_rows import NodeRows, names_of
from kubesched.framework.preemption import NodeToStatus
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework, ScoreResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    ERR_NO_NODES_AVAILABLE,
    Diagnosis,
    FitError,
    InvalidPodError,
    NodeInfo,
    NominatingInfo,
    NominatingMode,
    PodInfo,
    QueuedPodInfo,
    same_parse_inputs,
    same_spec_inputs,
)
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.metrics import SchedulerMetrics

log = logging.getLogger("kubesched.scheduler")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NOTE_LENGTH_LIMIT = 1024

#: Tie-break among nodes with the highest score: upstream's random choice, or the first node in
#: snapshot order (reproducible, as the FGD paper's simulator does).
TIE_BREAK_RANDOM = "random"
TIE_BREAK_NODE_ORDER = "node-order"


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind``: adaptive 50 − n/125 percent, at least 5 %, at least 100 nodes."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def truncate_message(msg: str) -> str:
    """Upstream ``truncateMessage``: events.k8s.io notes are limited to 1024 characters."""
    if len(msg) <= NOTE_LENGTH_LIMIT:
        return msg
    suffix = " ..."
    return msg[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None
    scores: ScoreResult | None = None


#: Bindings :attr:`SchedulerStats.bound_at` remembers, the latest first to stay: a long-running
#: ``kubesched run`` must not keep an entry for every pod it ever bound.
RECENT_BINDINGS = 1000


class SchedulerStats:
    """Counters for reports and tests (the Prometheus metrics carry the same facts).

    Binding cycles run on the backend's threads (``kubesched run``), so what they update goes
    through :meth:`bound` and :meth:`failed`, under one lock; ``attempts`` has one writer, the
    scheduling loop. Read ``bound_at`` while no binding runs (a simulation between steps)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.attempts = 0
        self.scheduled = 0
        self.unschedulable = 0
        self.errors = 0
        #: Pod UID -> when it was bound, for the latest RECENT_BINDINGS bindings, oldest first.
        self.bound_at: dict[str, float] = {}

    def bound(self, uid: str, at: float) -> None:
        with self._lock:
            self.scheduled += 1
            self.bound_at.pop(uid, None)  # bound again: now the newest
            self.bound_at[uid] = at
            if len(self.bound_at) > RECENT_BINDINGS:
                del self.bound_at[next(iter(self.bound_at))]

    def failed(self, rejected: bool) -> None:
        """An attempt that ended Unschedulable (``rejected``) or in an error."""
        with self._lock:
            if rejected:
                self.unschedulable += 1
            else:
                self.errors += 1


class FrameworkHandle:
    """The handle a profile's plugins receive (upstream ``framework.Handle``)."""

    def __init__(self, scheduler: Scheduler, profile_name: str) -> None:
        self._s = scheduler
        self._profile_name = profile_name
        self.framework: Framework | None = None

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> Clock:
        return self._s.clock

    def snapshot_shared_lister(self) -> Snapshot:
        return self._s.snapshot

    def event_recorder(self) -> _Recorder:
        return _Recorder(self._s.cluster, self._profile_name)

    def client(self) -> ClusterBackend:
        return self._s.cluster

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        assert self.framework is not None
        return self.framework.get_waiting_pod(uid)

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        assert self.framework is not None
        self.framework.waiting_pods.iterate(fn)

    def reject_waiting_pod(self, uid: str) -> bool:
        assert self.framework is not None
        return self.framework.reject_waiting_pod(uid)

    def activate(self, pods: Sequence[Mapping[str, Any]]) -> None:
        self._s.queue.activate(pods)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._s.queue.nominated_pods_for_node(node_name)

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        """Upstream ``PodNominator.DeleteNominatedPodIfExists`` (an empty nomination clears it)."""
        self._s.queue.add_nominated_pod(pod, "")

    @property
    def metrics(self) -> SchedulerMetrics:
        return self._s.metrics

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source (host tie-breaks, preemption's candidate offset)."""
        return self._s.rng

    def move_pods_on_event(self, event: ClusterEvent, old: Any = None, new: Any = None) -> None:
        self._s.queue.move_all_to_active_or_backoff(event, old, new)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status:
        assert self.framework is not None
        return self.framework.run_filter_plugins_with_nominated_pods(
            state, pod, node_info, self._s.queue.nominated_pods_for_node(node_info.name)
        )

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        assert self.framework is not None
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        assert self.framework is not None
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)

    @property
    def parallelism(self) -> int:
        return self._s.config.parallelism


class _Recorder:
    def __init__(self, cluster: ClusterBackend, controller: str) -> None:
        self._cluster = cluster
        self._controller = controller

    def eventf(
        self,
        regarding: Mapping[str, Any],
        related: Mapping[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        self._cluster.record_event(regarding, related, type_, reason, action, note, self._controller)


class Scheduler:
    def __init__(
        self,
        config: KubeSchedulerConfiguration,
        registry: Registry,
        cluster: ClusterBackend,
        clock: Clock,
        *,
        seed: int | None = None,
        tie_break: str = TIE_BREAK_RANDOM,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.config = config
        self.cluster = cluster
        self.clock = clock
        self.rng = random.Random(seed)
        self.tie_break = tie_break
        self.metrics = metrics or SchedulerMetrics()
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.stats = SchedulerStats()
        self.next_start_node_index = 0
        self.frameworks: dict[str, Framework] = {}
        self.handles: dict[str, FrameworkHandle] = {}
        for profile in config.profiles:
            handle = FrameworkHandle(self, profile.scheduler_name)
            fw = Framework(profile, registry, handle, metrics=self.metrics)
            handle.framework = fw
            self.frameworks[profile.scheduler_name] = fw
            self.handles[profile.scheduler_name] = handle
        self.queue = SchedulingQueue(
            self.frameworks,
            clock,
            pod_initial_backoff=float(config.pod_initial_backoff_seconds),
            pod_max_backoff=float(config.pod_max_backoff_seconds),
            metrics=self.metrics,
        )
        self._bound_uids: set[str] = set()
        self._lock = threading.Lock()
        self._unscheduled_pod_add_events = any(fw.unscheduled_pod_add_events for fw in self.frameworks.values())
        self.log_plugins()
        # Last, once everything the handlers touch exists (upstream's New calls addAllEventHandlers).
        cluster.add_event_handlers(self)

    def log_plugins(self) -> None:
        for name, fw in self.frameworks.items():
            for point, plugins in fw.list_plugins().items():
                log.info("profile %s: %s plugins: %s", name, point, ", ".join(plugins))

    # ------------------------------------------------------------------------------------------
    # event handlers (upstream eventhandlers.go)
    # ------------------------------------------------------------------------------------------
    def responsible_for(self, pod: Mapping[str, Any]) -> bool:
        sched = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        return sched in self.frameworks

    @staticmethod
    def _assigned(pod: Mapping[str, Any]) -> bool:
        return bool((pod.get("spec") or {}).get("nodeName"))

    @staticmethod
    def _terminated(pod: Mapping[str, Any]) -> bool:
        return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")

    def on_pod_add(self, pod: dict[str, Any]) -> None:
        if self._terminated(pod):
            return
        if self._assigned(pod):
            pi = PodInfo(pod)
            self.cache.add_pod(pi)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)
        elif self.responsible_for(pod):
            self.queue.add(pod)
            if self._unscheduled_pod_add_events:
                # Upstream addPodToSchedulingQueue under the GangScheduling feature gate.
                self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, None, pod)

    def on_pod_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        if self._terminated(new):
            self.on_pod_delete(new)
            return
        if self._assigned(new):
            was_assigned = old is not None and self._assigned(old)
            if not was_assigned:
                self.queue.delete(new)  # bound (by us or someone else): out of the queue
            pi = PodInfo(new)
            prev = self.cache.get_pod(pi.uid)
            if prev is not None:
                if same_parse_inputs(prev.pod, new):
                    pi.inherit_parses(prev)  # e.g. the echo of our own binding: nothing to parse again
                elif same_spec_inputs(prev.pod, new):
                    pi.inherit_parses(prev, spec_only=True)  # a binding whose PreBind annotated the pod
            self.cache.update_pod(pi)
            event = ClusterEvent(
                EventResource.ASSIGNED_POD, _pod_update_action(old, new) if was_assigned else ActionType.ADD
            )
            self.queue.move_all_to_active_or_backoff(event, old, new)
        elif self.responsible_for(new):
            if self.cache.is_assumed(str((new.get("metadata") or {}).get("uid") or "")):
                # Upstream updatePodInSchedulingQueue: an assumed pod (its binding cycle patching it,
                # e.g. at PreBind) is not scheduled again.
                return
            event = ClusterEvent(EventResource.UNSCHEDULED_POD, _pod_update_action(old, new))
            self.queue.update(old, new, event)

    def on_pod_delete(self, pod: dict[str, Any]) -> None:
        pi = PodInfo(pod)
        if self._assigned(pod) or (self.cache.get_pod(pi.uid) is not None and not self.cache.is_assumed(pi.uid)):
            self.cache.remove_pod(pi)
            with self._lock:
                # Gone for good: a pod created again under the same UID is a new pod to schedule.
                self._bound_uids.discard(pi.uid)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)
            return
        # Upstream deletePodFromSchedulingQueue: an unbound pod leaves the queue; if it was waiting
        # at Permit it is rejected now (its binding cycle then unreserves and forgets it), and its
        # resources are as good as freed.
        self.queue.delete(pod)
        rejected = [fw.reject_waiting_pod(pi.uid) for fw in self.frameworks.values()]
        if any(rejected):
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    def on_node_add(self, node: dict[str, Any]) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def on_node_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        self.cache.update_node(new)
        action = _node_update_action(old, new)
        if action:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE, action), old, new)

    def on_node_delete(self, node: dict[str, Any]) -> None:
        self.cache.remove_node(node["metadata"]["name"])
        self.queue.move_all_to_active_or_backoff(ClusterEvent(EventResource.NODE, ActionType.DELETE), node, None)

    def on_object_event(self, kind: str, action: ActionType, old: Any, new: Any) -> None:
        """Any other kind (Namespace, PriorityClass, PDB, custom resources) changed."""
        resource = {
            "Namespace": EventResource.NAMESPACE,
            "PriorityClass": EventResource.PRIORITY_CLASS,
            "PodDisruptionBudget": EventResource.POD_DISRUPTION_BUDGET,
        }.get(kind, EventResource.CUSTOM)
        self.queue.move_all_to_active_or_backoff(ClusterEvent(resource, action, kind), old, new)

    # ------------------------------------------------------------------------------------------
    # scheduleOne
    # ------------------------------------------------------------------------------------------
    def schedule_one(self, qpi: QueuedPodInfo | None = None) -> bool:
        """Schedule the next pod; False when the queue had nothing to pop."""
        if qpi is None:
            qpi = self.queue.pop()
            if qpi is None:
                return False
        pi = qpi.pod_info
        fw = self.frameworks.get(pi.scheduler_name)
        if fw is None:
            log.error("no profile for scheduler name %s; pod %s dropped", pi.scheduler_name, pi.key)
            self.queue.done(pi.uid)
            return True
        if pi.deletion_timestamp:
            self.cluster.record_event(
                pi.pod,
                None,
                "Warning",
                "FailedScheduling",
                "Scheduling",
                f"skip schedule deleting pod: {pi.key}",
                fw.profile_name,
            )
            self.queue.done(pi.uid)
            return True
        if self.cache.is_assumed(pi.uid) or pi.uid in self._bound_uids:
            self.queue.done(pi.uid)
            return True
        start = time.perf_counter()
        state = CycleState()
        self.stats.attempts += 1
        try:
            result, assumed, status = self.scheduling_cycle(state, fw, qpi, start)
        except Exception as err:  # a bug outside any guarded plugin call must not lose the pod
            log.error("scheduling cycle of %s failed: %s", pi.key, err)
            log.debug("scheduling cycle of %s failed", pi.key, exc_info=True)
            self._undo_assume(state, fw, pi)
            self.handle_scheduling_failure(fw, qpi, Status.as_status(err), _CLEAR, start)
            return True
        if not status.is_success():
            self.handle_scheduling_failure(fw, qpi, status, result.nominating_info, start)
            return True
        self.cluster.submit(lambda: self._binding_cycle_entry(state, fw, result, qpi, assumed, start))
        return True

    def _undo_assume(self, state: CycleState, fw: Framework, pi: PodInfo) -> None:
        """Unreserve and forget the pod if the failed cycle got as far as assuming it."""
        if not self.cache.is_assumed(pi.uid):
            return
        assumed = self.cache.get_pod(pi.uid)
        if assumed is None:
            return
        fw.waiting_pods.remove(pi.uid)
        fw.run_reserve_plugins_unreserve(state, assumed, assumed.node_name)
        self._forget(assumed)

    def _forget(self, assumed: PodInfo) -> None:
        """Forget an assumed pod, telling the queue (its fingerprint of the assumed pods)."""
        was_assumed = self.cache.is_assumed(assumed.uid)
        self.cache.forget_pod(assumed)
        if was_assumed:
            self.queue.toggle_assumed(assumed.uid)

    def scheduling_cycle(
        self, state: CycleState, fw: Framework, qpi: QueuedPodInfo, start: float
    ) -> tuple[ScheduleResult, PodInfo, Status]:
        pi = qpi.pod_info
        if pi.problems:  # api/objects_validation: an invalid pod never reaches a plugin; it waits for an update
            status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, error=InvalidPodError(pi))
            return ScheduleResult(nominating_info=_CLEAR), pi, status
        try:
            result = self.schedule_pod(fw, state, pi)
        except _NoNodes as err:
            return ScheduleResult(nominating_info=_CLEAR), pi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, error=err)
        except FitError as fit:
            if not fw.has_post_filter_plugins():
                return ScheduleResult(), pi, Status(Code.UNSCHEDULABLE, error=fit)
            # Nodes absent from the map share absent_status (all of them when PreFilter rejected).
            statuses = NodeToStatus(fit.diagnosis.node_to_status, fit.diagnosis.absent_status)
            pf_result, pf_status = fw.run_post_filter_plugins(state, pi, statuses)
            fit.diagnosis.post_filter_msg = pf_status.message()
            if pf_status.code == Code.ERROR:
                log.error("status after running PostFilter plugins for pod %s: %s", pi.key, pf_status.message())
            nominating = pf_result.nominating_info if pf_result is not None else None
            if pf_status.code == Code.ERROR:
                # Upstream goes on as Unschedulable; but an Error here (a failed API call while
                # preempting) is not something a cluster event will fix: back the pod off as an Error.
                return ScheduleResult(nominating_info=nominating), pi, Status(Code.ERROR, error=fit)
            return ScheduleResult(nominating_info=nominating), pi, Status(Code.UNSCHEDULABLE, error=fit)
        except _CycleError as err:
            return ScheduleResult(nominating_info=_CLEAR), pi, err.status

        host = result.suggested_host
        assumed = pi.with_node_name(host)
        try:
            self.cache.assume_pod(assumed, host)
        except CacheError as err:
            return ScheduleResult(nominating_info=_CLEAR), assumed, Status.as_status(err)
        self.queue.toggle_assumed(assumed.uid)
        self.queue.delete_nominated_pod_if_exists(pi.uid)

        # Run the Reserve method of reserve plugins.
        sts = fw.run_reserve_plugins_reserve(state, assumed, host)
        if not sts.is_success():
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            return ScheduleResult(nominating_info=_CLEAR), assumed, self._single_node_failure(pi, host, sts)

        # Run "permit" plugins.
        permit = fw.run_permit_plugins(state, assumed, host, self.clock)
        if not permit.is_wait() and not permit.is_success():
            fw.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            return ScheduleResult(nominating_info=_CLEAR), assumed, self._single_node_failure(pi, host, permit)
        return result, assumed, Status(Code.SUCCESS)

    def _single_node_failure(self, pi: PodInfo, host: str, sts: Status) -> Status:
        """Reserve/Permit/WaitOnPermit/PreBind rejections become a FitError with one node."""
        if not sts.is_rejected():
            return sts
        d = Diagnosis()
        d.node_to_status[host] = sts
        if sts.plugin:
            d.unschedulable_plugins.add(sts.plugin)
        return Status(sts.code, error=FitError(pi, 1, d))

    # ------------------------------------------------------------------------------------------
    # schedulePod
    # ------------------------------------------------------------------------------------------
    def schedule_pod(self, fw: Framework, state: CycleState, pi: PodInfo) -> ScheduleResult:
        self.cache.update_snapshot(self.snapshot)
        if self.snapshot.num_nodes() == 0:
            raise _NoNodes(ERR_NO_NODES_AVAILABLE)
        feasible, diagnosis = self.find_nodes_that_fit_pod(fw, state, pi)
        if not feasible:
            raise FitError(pi, self.snapshot.num_nodes(), diagnosis)
        evaluated = len(feasible) + diagnosis.processed_failures
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        scores = self.prioritize_nodes(fw, state, pi, feasible, diagnosis.feasible_rows)
        host = self.select_host(scores)
        return ScheduleResult(host, evaluated, len(feasible), scores=scores)

    def find_nodes_that_fit_pod(
        self, fw: Framework, state: CycleState, pi: PodInfo
    ) -> tuple[Sequence[NodeInfo], _Diag]:
        diagnosis = _Diag()
        all_nodes = self.snapshot.node_infos
        pre_res, s, narrowing = fw.run_pre_filter_plugins(state, pi, all_nodes)
        # Every plugin whose result narrowed the nodes is a rejector (upstream), also when the
        # narrowing left no node at all.
        diagnosis.unschedulable_plugins |= narrowing
        if not s.is_success():
            if not s.is_rejected():
                raise _CycleError(s)
            diagnosis.absent_status = s
            diagnosis.pre_filter_msg = s.message()
            if s.plugin:
                diagnosis.unschedulable_plugins.add(s.plugin)
            return [], diagnosis

        nominated = str((pi.pod.get("status") or {}).get("nominatedNodeName") or "")
        if nominated:
            ni = self.snapshot.get(nominated)
            if ni is not None:
                st = fw.run_filter_plugins_with_nominated_pods(
                    state, pi, ni, self.queue.nominated_pods_for_node(nominated)
                )
                if st.code == Code.ERROR:
                    raise _CycleError(st)
                if st.is_success():
                    return [ni], diagnosis

        if pre_res is None or pre_res.all_nodes():
            indices = self.snapshot.table.all
        else:
            names = pre_res.node_names or set()
            indices = np.array(sorted(self.snapshot.index[n] for n in names if n in self.snapshot.index), dtype=np.intp)
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",
            )
        feasible = self.find_nodes_that_pass_filters(fw, state, pi, diagnosis, indices)
        processed = len(feasible) + diagnosis.processed_failures
        if all_nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    def _percentage(self, fw: Framework) -> int:
        p = fw.profile.percentage_of_nodes_to_score
        if p is None:
            p = self.config.percentage_of_nodes_to_score or 0
        return int(p)

    def find_nodes_that_pass_filters(
        self, fw: Framework, state: CycleState, pi: PodInfo, diagnosis: _Diag, indices: np.ndarray
    ) -> Sequence[NodeInfo]:
        """Upstream's rotated walk over the nodes until ``numFeasibleNodesToFind`` pass.

        The batch Filters give a mask over every candidate at once; when no per-node plugin is
        left to run (and no node has nominated pods) the walk is the mask's first feasible
        positions, found in one vector operation. The rows of the feasible nodes are kept in
        ``diagnosis.feasible_rows`` for the batch Score plugins."""
        n = len(indices)
        if n == 0:
            return []
        to_find = num_feasible_nodes_to_find(self._percentage(fw), n)
        start = self.next_start_node_index % n
        nodes = self.snapshot.node_infos
        if not fw.has_filter_plugins():
            order = _rotate(indices, start)
            diagnosis.feasible_rows = order[:to_find]
            return NodeRows(nodes, diagnosis.feasible_rows)
        mask = fw.run_batch_filters(state, pi, self.snapshot, indices)
        if isinstance(mask, Status):
            raise _CycleError(mask)
        order, mask = _rotate(indices, start), _rotate(mask, start)
        feasible: Sequence[NodeInfo]
        failed: np.ndarray | list[int]  # rows the batch Filters rejected, in walk order
        per_node = fw.active_per_node_filters(state)
        if not per_node and not self.queue.has_nominated_pods():
            pos = np.flatnonzero(mask)
            cut = n
            if len(pos) >= to_find:
                pos = pos[:to_find]
                cut = int(pos[-1]) + 1
            rows = order[pos]
            failed = order[:cut][~mask[:cut]]  # a list only if their reasons are needed
            feasible = NodeRows(nodes, rows)
        else:
            feasible, failed, rows = self._walk_per_node(fw, per_node, state, pi, diagnosis, order, mask, to_find)
        diagnosis.processed_failures = len(diagnosis.node_to_status) + len(failed)
        if not feasible and len(failed):
            # Only now do the reasons of batch-rejected nodes matter: run the reference per-node
            # chain on them so the message and the rejecting plugins are exactly upstream's.
            feasible = []
            agreed: list[int] = []
            codes, answers = fw.run_filter_plugins_on_rows_coded(state, pi, self.snapshot, failed)
            failed = failed.tolist() if isinstance(failed, np.ndarray) else failed
            statuses = list(map(answers.__getitem__, codes.tolist()))
            pairs = zip(failed, statuses, strict=True)
            counts = np.bincount(codes, minlength=len(answers)).tolist()
            distinct = [(s, n) for s, n in zip(answers, counts, strict=True) if n]
            if all(s.is_rejected() for s, _ in distinct):  # the usual case: record them in bulk
                was_empty = not diagnosis.node_to_status
                diagnosis.node_to_status.update(zip(self.snapshot.names_of_rows(failed), statuses, strict=True))
                diagnosis.unschedulable_plugins.update(s.plugin for s, _ in distinct if s.plugin)
                if was_empty:  # FitError's histogram, counted per distinct status rather than per node
                    diagnosis.set_reason_counts(distinct)
                pairs = zip((), (), strict=True)
            for i, st in pairs:
                ni = nodes[i]
                if st.code == Code.ERROR:
                    raise _CycleError(st)
                if st.is_success():  # a batch form disagreed with its reference: trust the reference
                    log.error("batch filter rejected node %s that the per-node filters accept", ni.name)
                    feasible.append(ni)
                    agreed.append(i)
                    continue
                diagnosis.node_to_status[ni.name] = st
                if st.plugin:
                    diagnosis.unschedulable_plugins.add(st.plugin)
            rows = np.array(agreed, dtype=np.intp)
        diagnosis.feasible_rows = rows
        return feasible

    def _walk_per_node(
        self,
        fw: Framework,
        per_node: Sequence[Any],
        state: CycleState,
        pi: PodInfo,
        diagnosis: _Diag,
        order: np.ndarray,
        mask: np.ndarray,
        to_find: int,
    ) -> tuple[list[NodeInfo], list[int], np.ndarray]:
        """The walk node by node: per-node plugins, and nominated pods added where there are some."""
        nodes = self.snapshot.node_infos
        feasible: list[NodeInfo] = []
        rows: list[int] = []
        failed: list[int] = []
        has_nominated = self.queue.has_nominated_pods()
        for pos, row in enumerate(order.tolist()):
            ni = nodes[row]
            nominated = self.queue.nominated_pods_for_node(ni.name) if has_nominated else None
            if nominated:
                st = fw.run_filter_plugins_with_nominated_pods(state, pi, ni, nominated)
            elif not mask[pos]:
                failed.append(row)
                continue
            elif per_node:
                st = fw.run_filter_plugins_subset(per_node, state, pi, ni)
            else:
                st = _OK
            if st.code == Code.ERROR:
                raise _CycleError(st)
            if st.is_success():
                feasible.append(ni)
                rows.append(row)
                if len(feasible) >= to_find:
                    break
            else:
                diagnosis.node_to_status[ni.name] = st
                if st.plugin:
                    diagnosis.unschedulable_plugins.add(st.plugin)
        return feasible, failed, np.array(rows, dtype=np.intp)

    def prioritize_nodes(
        self, fw: Framework, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo], rows: np.ndarray | None = None
    ) -> ScoreResult:
        """Upstream ``prioritizeNodes``; ``rows`` are the nodes' positions in the snapshot (looked
        up by name when not given)."""
        if not fw.has_score_plugins():
            ones = np.ones(len(nodes), dtype=np.int64)
            return ScoreResult(names_of(nodes), {}, {}, {}, ones)
        st = fw.run_pre_score_plugins(state, pi, nodes)
        if not st.is_success():
            raise _CycleError(st)
        if rows is None:
            index = self.snapshot.index
            rows = np.fromiter((index[n.name] for n in nodes), dtype=np.intp, count=len(nodes))
        res = fw.run_score_plugins(state, pi, nodes, self.snapshot, rows)
        if isinstance(res, Status):
            raise _CycleError(res)
        return res

    def select_host(self, scores: ScoreResult) -> str:
        total = scores.total
        best = total.max()
        winners = np.flatnonzero(total == best)
        if len(winners) == 1 or self.tie_break == TIE_BREAK_NODE_ORDER:
            return scores.nodes[int(winners[0])]
        return scores.nodes[int(winners[self.rng.randrange(len(winners))])]

    # ------------------------------------------------------------------------------------------
    # binding cycle
    # ------------------------------------------------------------------------------------------
    def _binding_cycle_entry(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        start: float,
    ) -> None:
        wp = fw.get_waiting_pod(assumed.uid)
        if wp is None:
            self._binding_cycle(state, fw, result, qpi, assumed, start, Status(Code.SUCCESS))
            return

        def resume(permit: Status) -> None:
            fw.waiting_pods.remove(assumed.uid)
            self.cluster.submit(lambda: self._binding_cycle(state, fw, result, qpi, assumed, start, permit))

        wp.on_done(resume)

    def _binding_cycle(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        start: float,
        permit: Status,
    ) -> None:
        host = result.suggested_host
        try:
            status = self.binding_cycle(state, fw, result, qpi, assumed, permit)
        except Exception as err:  # never lose a pod to a bug in a binding path
            log.error("binding cycle of %s failed: %s", assumed.key, err)
            log.debug("binding cycle of %s failed", assumed.key, exc_info=True)
            status = Status.as_status(err)
        if status.is_success():
            # Upstream metrics.PodScheduled: the attempt from the cycle's start to the binding.
            self.metrics.observe_attempt("scheduled", fw.profile_name, time.perf_counter() - start)
            return
        self.handle_binding_cycle_error(state, fw, qpi, assumed, host, start, status)

    def binding_cycle(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        permit: Status,
    ) -> Status:
        host = result.suggested_host
        # WaitOnPermit
        if not permit.is_success():
            return self._single_node_failure(qpi.pod_info, host, permit)
        # Failures after this point are never "unschedulable": the pod goes to backoff.
        self.queue.done(assumed.uid)
        st = fw.run_pre_bind_plugins(state, assumed, host)
        if not st.is_success():
            return self._single_node_failure(qpi.pod_info, host, st)
        st = self.bind(fw, state, assumed, host)
        if not st.is_success():
            return st
        now = self.clock.now()
        self.stats.bound(assumed.uid, now)
        if self.metrics is not None:
            first = qpi.initial_attempt_timestamp
            self.metrics.observe_scheduled(qpi.attempts, (now - first) if first is not None else None)
        log.debug(
            "successfully bound pod %s to node %s (evaluated %d, feasible %d)",
            assumed.key,
            host,
            result.evaluated_nodes,
            result.feasible_nodes,
        )
        fw.run_post_bind_plugins(state, assumed, host)
        return Status(Code.SUCCESS)

    def bind(self, fw: Framework, state: CycleState, assumed: PodInfo, host: str) -> Status:
        with self._lock:
            if assumed.uid in self._bound_uids:  # belt and braces: never bind a pod twice
                return Status(Code.ERROR, f"pod {assumed.key} was already bound")
        st = fw.run_bind_plugins(state, assumed, host)
        self.cache.finish_binding(assumed)
        if st.is_success():
            with self._lock:
                self._bound_uids.add(assumed.uid)
            self.cluster.record_event(
                assumed.pod,
                None,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
                fw.profile_name,
            )
        elif st.is_skip():
            st = Status(Code.ERROR, "no bind plugin bound the pod")
        return st

    def handle_binding_cycle_error(
        self,
        state: CycleState,
        fw: Framework,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        host: str,
        start: float,
        status: Status,
    ) -> None:
        fw.run_reserve_plugins_unreserve(state, assumed, host)
        self._forget(assumed)
        uid = assumed.uid
        # Forgetting the pod frees what it held: an AssignedPodDelete for the other pods, which
        # undoes the assumption rather than changing the cluster (see the queue's retry_may_help).
        if status.is_rejected():
            self.handle_scheduling_failure(fw, qpi, status, _CLEAR, start)
            self.queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, assumed.pod, None, lambda q: q.pod_info.uid != uid, undo_of_assume=True
            )
        else:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed.pod, None, undo_of_assume=True)
            self.handle_scheduling_failure(fw, qpi, status, _CLEAR, start)

    # ------------------------------------------------------------------------------------------
    # failures
    # ------------------------------------------------------------------------------------------
    def handle_scheduling_failure(
        self, fw: Framework, qpi: QueuedPodInfo, status: Status, nominating: NominatingInfo | None, start: float
    ) -> None:
        pi = qpi.pod_info
        rejected = status.is_rejected()
        reason = "Unschedulable" if rejected else "SchedulerError"
        self.stats.failed(rejected)
        self.metrics.observe_attempt(
            "unschedulable" if rejected else "error", fw.profile_name, time.perf_counter() - start
        )
        err = status.error
        msg = status.message()
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            log.debug("unable to schedule pod %s; no fit; waiting: %s", pi.key, msg)
        elif isinstance(err, _NoNodes):
            log.debug("unable to schedule pod %s; no nodes are registered to the cluster; waiting", pi.key)
        else:
            log.warning("error scheduling pod %s; retrying: %s", pi.key, msg)
        if status.code == Code.PENDING and status.plugin:
            qpi.pending_plugins.add(status.plugin)
        elif rejected and status.plugin and not isinstance(err, FitError):
            qpi.unschedulable_plugins.add(status.plugin)
        qpi.last_failure = msg

        cached = self.cluster.get_pod(pi.namespace, pi.name)
        if cached is None:
            log.info("pod %s doesn't exist in informer cache", pi.key)
            self.queue.done(pi.uid)
        elif (cached.get("spec") or {}).get("nodeName"):
            log.info("pod %s has been assigned to node; abort adding it back to queue", pi.key)
            self.queue.done(pi.uid)
        else:
            if cached is not pi.pod:
                pi.update(cached)
            self.queue.add_unschedulable_if_not_present(qpi, error=not rejected)

        if nominating is not None and nominating.mode == NominatingMode.OVERRIDE:
            self.queue.add_nominated_pod(pi, nominating.nominated_node_name)
        note = truncate_message(msg)
        self.cluster.record_event(pi.pod, None, "Warning", "FailedScheduling", "Scheduling", note, fw.profile_name)
        patch: dict[str, Any] = {
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": reason, "message": msg}]
        }
        if nominating is not None and (nominating.mode == NominatingMode.OVERRIDE):
            patch["nominatedNodeName"] = nominating.nominated_node_name or None
        if cached is not None:
            try:
                self.cluster.patch_pod_status(pi.pod, patch)
            except Exception as e:
                log.warning("error updating pod %s status: %s", pi.key, e)


def _rotate(a: np.ndarray, start: int) -> np.ndarray:
    """``np.roll(a, -start)`` (upstream's rotated start index), cheaper for one dimension."""
    return np.concatenate((a[start:], a[:start])) if start else a


class _NoNodes(Exception):
    pass


class _CycleError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


_CLEAR = NominatingInfo("", NominatingMode.OVERRIDE)
_OK = Status(Code.SUCCESS)


class _Diag(Diagnosis):
    """Diagnosis plus the bookkeeping of lazily computed reasons for batch-rejected nodes."""

    __slots__ = ("feasible_rows", "processed_failures")

    def __init__(self) -> None:
        super().__init__()
        self.processed_failures = 0
        self.feasible_rows: np.ndarray | None = None


def _pod_update_action(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> ActionType:
    if old is None:
        return ActionType.UPDATE_OTHER
    action = ActionType(0)
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    os_, ns = old.get("spec") or {}, new.get("spec") or {}
    if om.get("labels") != nm.get("labels"):
        action |= ActionType.UPDATE_POD_LABEL
    if os_.get("tolerations") != ns.get("tolerations"):
        action |= ActionType.UPDATE_POD_TOLERATION
    if os_.get("schedulingGates") and not ns.get("schedulingGates"):
        action |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if os_.get("containers") != ns.get("containers") or os_.get("resources") != ns.get("resources"):
        action |= ActionType.UPDATE_POD_SCALE_DOWN
    return action or ActionType.UPDATE_OTHER


def _node_update_action(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> ActionType:
    if old is None:
        return ActionType.UPDATE_OTHER
    action = ActionType(0)
    ost, nst = old.get("status") or {}, new.get("status") or {}
    if ost.get("allocatable") != nst.get("allocatable"):
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    if om.get("labels") != nm.get("labels"):
        action |= ActionType.UPDATE_NODE_LABEL
    if om.get("annotations") != nm.get("annotations"):
        action |= ActionType.UPDATE_NODE_ANNOTATION
    os_, ns = old.get("spec") or {}, new.get("spec") or {}
    if os_.get("taints") != ns.get("taints") or os_.get("unschedulable") != ns.get("unschedulable"):
        action |= ActionType.UPDATE_NODE_TAINT
    if ost.get("conditions") != nst.get("conditions"):
        action |= ActionType.UPDATE_NODE_CONDITION
    return action
