"""Coscheduling: gang scheduling with PodGroups (scheduler-plugins ``pkg/coscheduling/coscheduling.go``,
KEP 42).

* QueueSort: priority, then the PodGroup's creation time (a pod without a group: its first
  attempt), then the group's ``namespace/name``, then the pod's, so a gang leaves activeQ in one
  run. Every profile must use it, as the profiles share one queue.
* PreEnqueue parks a member whose PodGroup does not exist or has fewer than ``minMember`` pods;
  PreFilter turns away a backing-off group, a group without enough pods, and a group whose
  ``minResources`` the cluster cannot hold (UnschedulableAndUnresolvable: preemption cannot help).
* Permit holds a member (Wait, ``scheduleTimeoutSeconds`` or ``permitWaitingTimeSeconds``) until
  ``minMember`` members are assigned (bound, or assumed and waiting), then allows them all; the
  first waiting member moves its unscheduled siblings to activeQ.
* When a member's wait ends without the gang (timeout, rejection), Unreserve rejects every waiting
  sibling, so no member is bound alone. When a member fits no node, PostFilter rejects the waiting
  siblings unless at most ``podGroupRejectPercentage`` of ``minMember`` is missing, and backs the
  group off for ``podGroupBackoffSeconds``.
* The PodGroup's status is kept current (status.py), as scheduler-plugins' controller would.

Where we differ (docs/gang.md): upstream checks members only at PreFilter; the same check at
PreEnqueue keeps an incomplete gang out of activeQ, and the plugin asks for ``UnscheduledPod``/``Add``
events (upstream's GangScheduling gate) so a sibling's arrival lets it in. A gang that failed is
*parked*: PreFilter turns its members away until the cluster differs from when it failed (its own
members coming and going do not count), where upstream retries it at once, over and over (one
member waits, the next fails, the first is released...). Capacity events wake a parked gang. A
rejection by this plugin's own PreFilter does not re-arm the backoff at PostFilter, and a timer
event ends a group's backoff, where upstream waits for another event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence

from kubesched.framework.clock import rfc3339
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    Handle,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    QueueSortPlugin,
    ReservePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    JSONObj,
    NodeInfo,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    pod_uid,
)
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_obj

from . import status as pg_status
from .args import CoschedulingArgs
from .core import (
    PodGroupManager,
    check_cluster_resource,
    format_resource_gap,
    is_terminal,
    min_resources_request,
)
from .podgroup import KIND, PodGroupInfo, pod_group_full_name

log = logging.getLogger("kubesched.plugins.coscheduling")

#: scheduler-plugins ``util.DefaultWaitTime``: the wait when neither the group nor the args set one.
DEFAULT_WAIT_TIME = 60.0

#: A pod was added (upstream registers ``Pod``/``Add``): an assigned one, or an arriving sibling.
POD_ADD = ClusterEvent(EventResource.POD, ActionType.ADD)
#: A PodGroup was created or changed (upstream ``podgroups.v1alpha1.scheduling.x-k8s.io``).
POD_GROUP_CHANGE = ClusterEvent(EventResource.CUSTOM, ActionType.ADD | ActionType.UPDATE, KIND)
#: Our timer: a group's backoff window ended (``new`` is the group's full name).
BACKOFF_EXPIRED = ClusterEvent(EventResource.TIMER, ActionType.ALL, "PodGroupBackoffExpired")
#: Room may have freed up for a parked gang (or one short of ``minResources``).
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
NODE_CHANGE = ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE)

#: CycleState key: this plugin's PreFilter rejected the pod (PostFilter then leaves the gang be).
PRE_FILTER_REJECTED_KEY = "PreFilter" + names.COSCHEDULING


class _Rejected:
    """CycleState marker: the PreFilter of Coscheduling turned the pod away this cycle."""

    def clone(self) -> _Rejected:
        return self


def _same_group(a: JSONObj, b: JSONObj) -> bool:
    full = pod_group_full_name(a)
    return bool(full) and full == pod_group_full_name(b)


class Coscheduling(
    PreEnqueuePlugin,
    QueueSortPlugin,
    EnqueueExtensions,
    PreFilterPlugin,
    PostFilterPlugin,
    ReservePlugin,
    PermitPlugin,
    PostBindPlugin,
):
    name = names.COSCHEDULING
    Args = CoschedulingArgs
    #: Members wait at PreEnqueue for their siblings: let them in when one arrives.
    unscheduled_pod_add_events = True

    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        self.args = args or CoschedulingArgs()
        self.handle = handle
        self.pg_mgr = PodGroupManager(handle, self.args)
        self.status = pg_status.StatusWriter(handle)
        self._lock = threading.RLock()
        #: UIDs of members this plugin asked to wait at Permit and has not allowed yet.
        self._waiting: set[str] = set()
        #: Groups whose last PreFilter found the cluster short of their ``minResources``.
        self._resource_gap: set[str] = set()

    # -- helpers ----------------------------------------------------------------------------------
    def _info(self, msg: str, *args: object) -> None:
        """Log at INFO with the scheduler's (virtual) time, so a simulation reads as a story."""
        if log.isEnabledFor(logging.INFO):
            log.info("%s " + msg, rfc3339(self.handle.clock.now()), *args)

    def _wait_time(self, pg: PodGroupInfo | None) -> float:
        """scheduler-plugins ``GetWaitTimeDuration``: the group's timeout, else the args', else 60 s."""
        if pg is not None and pg.schedule_timeout_seconds:
            return float(pg.schedule_timeout_seconds)
        return self.pg_mgr.schedule_timeout or DEFAULT_WAIT_TIME

    def _iterate_group_waiting(self, pod: JSONObj, fn: Callable[[WaitingPod], None]) -> None:
        full = pod_group_full_name(pod)

        def visit(wp: WaitingPod) -> None:
            if pod_group_full_name(wp.pod_info.pod) == full:
                fn(wp)

        self.handle.iterate_over_waiting_pods(visit)

    def _reject_waiting(self, pod: JSONObj, message: str) -> int:
        rejected: list[str] = []

        def reject(wp: WaitingPod) -> None:
            rejected.append(wp.pod_info.name)
            wp.reject(self.name, message)

        self._iterate_group_waiting(pod, reject)
        if rejected:
            self._info("PodGroup %s: %s; released %s", pod_group_full_name(pod), message, ", ".join(sorted(rejected)))
        return len(rejected)

    # -- QueueSort --------------------------------------------------------------------------------
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod_info.priority, b.pod_info.priority
        if p1 != p2:
            return p1 > p2
        return self._sort_key(a) < self._sort_key(b)

    def _sort_key(self, q: QueuedPodInfo) -> tuple[float, str, str]:
        """(creation time, group or pod key, pod key): upstream ``GetCreationTimestamp`` falls back
        to the pod's first attempt (its queue time before one) when it has no PodGroup."""
        pi = q.pod_info
        ts = q.initial_attempt_timestamp if q.initial_attempt_timestamp is not None else q.timestamp
        try:
            _, pg = self.pg_mgr.get_pod_group(pi.pod)
        except ValueError:  # an ill-formed PodGroup: order the pod as if it had none
            pg = None
        if pg is None:
            return ts, pi.key, pi.key
        return self.pg_mgr.creation_timestamp(pg), pg.full_name, pi.key

    # -- PreEnqueue -------------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        full, pg = self.pg_mgr.get_pod_group(pod.pod)
        if not full:
            return None
        if pg is None:
            return Status.unresolvable(f"PodGroup {full} not found")
        pods = self.pg_mgr.members(pg.namespace, pg.name)
        with self._lock:
            self.status.write(pg, pg_status.reconcile(pg.status, pg.min_member, pods, pg.creation_timestamp))
        n = sum(1 for p in pods if not is_terminal(p))
        if n < pg.min_member:
            return Status.unresolvable(
                f"pre-enqueue pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {n}, minMember of group: {pg.min_member}"
            )
        return None

    # -- PreFilter --------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Upstream ``PodGroupManager.PreFilter``; any failure is UnschedulableAndUnresolvable."""
        _, pg = self.pg_mgr.get_pod_group(pod.pod)
        if pg is None:
            return None, None
        status = self._pre_filter(pod, pg, nodes)
        if status is not None:
            state.write(PRE_FILTER_REJECTED_KEY, _Rejected())
        return None, status

    def _pre_filter(self, pod: PodInfo, pg: PodGroupInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        full = pg.full_name
        if self.pg_mgr.backed_off_until(full) is not None:
            return Status.unresolvable(f"podGroup {full} failed recently")
        n = len(self.pg_mgr.live_members(pg.namespace, pg.name))
        if n < pg.min_member:
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {n}, minMember of group: {pg.min_member}"
            )
        if self.pg_mgr.still_parked(pg, nodes):
            return Status.unresolvable(f"podGroup {full} failed at its last attempt; waiting for the cluster to change")
        if pg.min_resources is None or self.pg_mgr.is_permitted(full):
            return None
        gap = check_cluster_resource(nodes, min_resources_request(pg), full)
        with self._lock:
            if gap:
                self._resource_gap.add(full)
                return Status.unresolvable(format_resource_gap(gap))
            self._resource_gap.discard(full)
        self.pg_mgr.add_permitted(full)
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # -- PostFilter -------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Reject the gang's waiting members when one member fits nowhere, so the gang does not
        hold resources it cannot complete with."""
        full, pg = self.pg_mgr.get_pod_group(pod.pod)
        if pg is None:
            return PostFilterResult(), Status.unschedulable("can not find pod group")
        if PRE_FILTER_REJECTED_KEY in state:
            # Turned away by our own PreFilter: nothing was tried, nothing to reject or back off.
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        snapshot = self.handle.snapshot_shared_lister()
        assigned = self.pg_mgr.calculate_assigned_pods(snapshot.list(), pg.namespace, pg.name)
        if assigned >= pg.min_member:
            # Enough members already: the gang does not depend on this pod.
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        if (pg.min_member - assigned) * 100 <= self.args.pod_group_reject_percentage * pg.min_member:
            # A small gap to the quorum: let the later members try.
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        self._reject_waiting(pod.pod, "optimistic rejection in PostFilter")
        if self.pg_mgr.park(pg, snapshot.list()):
            self._info("PodGroup %s: %s fits no node; parked until the cluster changes", full, pod.name)
        backoff = float(self.args.pod_group_backoff_seconds)
        if backoff > 0 and len(self.pg_mgr.members(pg.namespace, pg.name)) >= pg.min_member:
            self.pg_mgr.backoff_pod_group(full, backoff)
            self.handle.clock.call_later(backoff, lambda: self.handle.move_pods_on_event(BACKOFF_EXPIRED, None, full))
            self._info("PodGroup %s: backing off for %gs", full, backoff)
        self.pg_mgr.delete_permitted_pod_group(full)
        return PostFilterResult(), Status.unschedulable(
            f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"
        )

    # -- Reserve / Unreserve ----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Nothing to reserve: the plugin is a Reserve plugin for its Unreserve."""
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """A member failed after Reserve (its wait timed out, it was rejected, a later point
        failed): reject every waiting sibling, so none is bound without the gang."""
        full, pg = self.pg_mgr.get_pod_group(pod.pod)
        with self._lock:
            was_waiting = pod.uid in self._waiting
            self._waiting.discard(pod.uid)
        if pg is None:
            return
        released = self._reject_waiting(pod.pod, "rejection in Unreserve")
        if (was_waiting or released) and self.pg_mgr.park(pg, self.handle.snapshot_shared_lister().list()):
            self._info("PodGroup %s: released without its quorum; parked until the cluster changes", full)
        self.pg_mgr.delete_permitted_pod_group(full)

    # -- Permit -----------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        full, pg = self.pg_mgr.get_pod_group(pod.pod)
        if not full:
            return None, 0.0
        if pg is None:
            return Status.unschedulable("PodGroup not found"), 0.0
        snapshot = self.handle.snapshot_shared_lister()
        # The snapshot does not hold this pod yet: it counts as the +1.
        assigned = self.pg_mgr.calculate_assigned_pods(snapshot.list(), pg.namespace, pg.name)
        if assigned + 1 >= pg.min_member:
            allowed: list[str] = []

            def allow(wp: WaitingPod) -> None:
                allowed.append(wp.pod_info.name)
                with self._lock:
                    self._waiting.discard(wp.pod_info.uid)
                wp.allow(self.name)

            self._iterate_group_waiting(pod.pod, allow)
            self.pg_mgr.unpark(full)
            if allowed:
                self._info(
                    "PodGroup %s: %d members assigned; allowed %s", full, assigned + 1, ", ".join(sorted(allowed))
                )
            return None, 0.0
        if assigned == 0:
            self._activate_siblings(pod, pg)
        with self._lock:
            self._waiting.add(pod.uid)
            self.status.write(pg, pg_status.waiting(pg.status, self.handle.clock.now()))
        wait = self._wait_time(pg)
        self._info("PodGroup %s: %s waits at Permit (%d of %d assigned)", full, pod.name, assigned + 1, pg.min_member)
        return Status(Code.WAIT), wait

    def _activate_siblings(self, pod: PodInfo, pg: PodGroupInfo) -> None:
        """Upstream ``ActivateSiblings``: the first member to wait brings its unscheduled siblings
        to activeQ (from the unschedulable pool or backoff, gated ones through PreEnqueue)."""
        siblings = [
            p
            for p in self.pg_mgr.live_members(pg.namespace, pg.name)
            if not get_obj(p, "spec").get("nodeName")
            and str(get_obj(p, "metadata").get("uid") or "") != pod.uid
            and self.handle.get_waiting_pod(str(get_obj(p, "metadata").get("uid") or "")) is None
        ]
        if siblings:
            self.handle.activate(siblings)

    # -- PostBind ---------------------------------------------------------------------------------
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        _, pg = self.pg_mgr.get_pod_group(pod.pod)
        if pg is None:
            return
        with self._lock:
            new = pg_status.bound(pg.status, pg.min_member, self.handle.clock.now())
            pods = self.pg_mgr.members(pg.namespace, pg.name)
            new = pg_status.reconcile(new, pg.min_member, pods, pg.creation_timestamp)
            self.status.write(pg, new)

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(POD_ADD, self._is_schedulable_after_pod_add),
            ClusterEventWithHint(POD_GROUP_CHANGE, self._is_schedulable_after_pod_group_change),
            ClusterEventWithHint(BACKOFF_EXPIRED, self._is_schedulable_after_backoff),
            ClusterEventWithHint(ASSIGNED_POD_DELETE, self._is_schedulable_after_pod_delete),
            ClusterEventWithHint(NODE_CHANGE, self._is_schedulable_after_node_change),
        ]

    def _waits_for_room(self, pod: JSONObj) -> bool:
        """The pod's gang is parked or short of its ``minResources``: freed room may help."""
        full = pod_group_full_name(pod)
        with self._lock:
            short = full in self._resource_gap
        return bool(full) and (short or self.pg_mgr.is_parked(full))

    def _is_schedulable_after_pod_add(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """An assigned pod: Queue, as upstream (which has no hint), unless it is the gang's own
        member or the gang is parked (a pod taking room cannot help it). An arriving pod to
        schedule: Queue only for its siblings, which it may complete."""
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        if get_obj(new, "spec").get("nodeName"):
            if _same_group(pod, new) or self.pg_mgr.is_parked(pod_group_full_name(pod)):
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        if pod_uid(new) == pod_uid(pod):  # its own arrival changes nothing
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if _same_group(pod, new) else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_pod_delete(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Room freed by a pod that is not the gang's own (its own members come and go as it fails)."""
        if isinstance(old, Mapping) and _same_group(pod, old):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if self._waits_for_room(pod) else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_node_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        return QueueingHint.QUEUE if self._waits_for_room(pod) else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_pod_group_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        md = get_obj(new, "metadata")
        full = f"{md.get('namespace') or 'default'}/{md.get('name')}"
        return QueueingHint.QUEUE if full == pod_group_full_name(pod) else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_backoff(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        return QueueingHint.QUEUE if new == pod_group_full_name(pod) else QueueingHint.QUEUE_SKIP


__all__ = [
    "ASSIGNED_POD_DELETE",
    "BACKOFF_EXPIRED",
    "NODE_CHANGE",
    "POD_ADD",
    "POD_GROUP_CHANGE",
    "PRE_FILTER_REJECTED_KEY",
    "Coscheduling",
]
