"""The scheduling queue: activeQ, backoffQ and the unschedulable pool.

Upstream ``pkg/scheduler/backend/queue/scheduling_queue.go``:

* **activeQ** — a heap ordered by the profile's QueueSort ``less``; the scheduler pops from it.
* **backoffQ** — pods waiting out their backoff (initial × 2^(n−1), capped at max), ordered by expiry.
  When activeQ is empty the scheduler may pop a backoffQ pod early (``SchedulerPopFromBackoffQ``).
* **unschedulable pool** — pods that failed and wait for a cluster event that one of the plugins
  that rejected them registered for (checked through that plugin's queueing hint), or for
  5 minutes at the latest. Gated pods (PreEnqueue said no) wait here too.

Events that arrive while a pod is being scheduled are remembered and replayed against it if it
comes back unschedulable, so no event is lost to the race (upstream's in-flight events).
"""

from __future__ import annotations

import enum
import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.config.releases import DEFAULT_RELEASE, NOMINATE_GATED_PODS_ON_ADD, SPLIT_POD_EVENTS, Release
from kubesched.framework.clock import Clock
from kubesched.framework.events import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    event_label,
    pod_resource_name,
)
from kubesched.framework.types import PodInfo, QueuedPodInfo, pod_uid

log = logging.getLogger("kubesched.queue")

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_Q = "unschedulable"
GATED_Q = "gated"


class _Strategy(enum.Enum):
    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


class QueueProfile(Protocol):
    """What the queue needs of a profile's framework."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...

    def run_pre_enqueue_plugins(self, pod: PodInfo) -> Any: ...

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]: ...


def _sort_key_of(profile: QueueProfile) -> Callable[[QueuedPodInfo], tuple[Any, ...]] | None:
    """The QueueSort plugin's ``sort_key`` when it has one: a kubesched extension, a function such
    that ``less(a, b) == (sort_key(a) < sort_key(b))`` (PrioritySort's), which lets activeQ compare
    tuples instead of calling ``less`` twice a comparison (about 13 µs a pod at 10000 pending pods).
    Only trusted when the class that defines ``less`` defines it too (a subclass overriding
    ``less`` alone keeps ``less``)."""
    plugin = getattr(profile, "queue_sort", None)
    if plugin is None:
        return None
    plugin = getattr(plugin, "plugin", plugin)  # an instrumented wrapper's plugin
    key = getattr(plugin, "sort_key", None)
    if key is None or _defined_in(type(plugin), "sort_key") is not _defined_in(type(plugin), "less"):
        return None
    return key  # type: ignore[no-any-return]


def _defined_in(cls: type, attr: str) -> type | None:
    return next((c for c in cls.__mro__ if attr in c.__dict__), None)


class _Item:
    __slots__ = ("less", "qpi", "seq")

    def __init__(self, qpi: QueuedPodInfo, seq: int, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self.qpi = qpi
        self.seq = seq
        self.less = less

    def __lt__(self, other: _Item) -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.seq < other.seq


_GroupKey = tuple[str, frozenset[str]]


def _group_key(qpi: QueuedPodInfo) -> _GroupKey:
    """What decides which events can requeue a parked pod: its profile and its rejecting plugins
    (the gating plugin of a gated pod), as :meth:`SchedulingQueue._worth_requeuing` reads them."""
    if qpi.gated:
        return qpi.pod_info.scheduler_name, frozenset((qpi.gating_plugin,))
    return qpi.pod_info.scheduler_name, frozenset(qpi.unschedulable_plugins | qpi.pending_plugins)


class _Pool(dict[str, tuple[QueuedPodInfo, float]]):
    """The unschedulable pool (uid -> (pod, since)), also grouped by :func:`_group_key`, so that a
    cluster event visits only the pods whose rejecting plugins registered for it: with thousands
    of pods that never fit, every binding would otherwise ask each of them again.

    Group members remember their place in the pool's (insertion) order, so requeued pods keep the
    order a plain scan of the pool would give."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: dict[_GroupKey, dict[str, int]] = {}
        self._key_of: dict[str, _GroupKey] = {}
        self._order: dict[str, int] = {}
        self._seq = itertools.count()

    def __setitem__(self, uid: str, entry: tuple[QueuedPodInfo, float]) -> None:
        if uid in self:
            self._unindex(uid)
        else:
            self._order[uid] = next(self._seq)
        super().__setitem__(uid, entry)
        key = self._key_of[uid] = _group_key(entry[0])
        self.groups.setdefault(key, {})[uid] = self._order[uid]

    def __delitem__(self, uid: str) -> None:
        super().__delitem__(uid)
        self._unindex(uid)
        del self._order[uid]

    def pop(self, uid: str, *default: Any) -> Any:
        if uid in self:
            entry = super().pop(uid)
            self._unindex(uid)
            del self._order[uid]
            return entry
        if default:
            return default[0]
        raise KeyError(uid)

    def _unindex(self, uid: str) -> None:
        key = self._key_of.pop(uid)
        members = self.groups[key]
        del members[uid]
        if not members:
            del self.groups[key]


@dataclass
class _InFlight:
    qpi: QueuedPodInfo
    events_from: int


class SchedulingQueue:
    def __init__(
        self,
        profiles: Mapping[str, QueueProfile],
        clock: Clock,
        *,
        pod_initial_backoff: float = 1.0,
        pod_max_backoff: float = 10.0,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        pop_from_backoff_q: bool = True,
        metrics: Any = None,
        release: Release = DEFAULT_RELEASE,
    ) -> None:
        self.profiles = profiles
        #: v1.37 names pod events UnscheduledPod/TargetPod, not UnschedulablePod (metric labels).
        self.split_pod_events = release.has(SPLIT_POD_EVENTS)
        self.nominate_gated_on_add = release.has(NOMINATE_GATED_PODS_ON_ADD)
        unscheduled = pod_resource_name(EventResource.UNSCHEDULED_POD, self.split_pod_events)
        self._add_label = unscheduled + "Add"
        #: Upstream's Update of a pod in no queue: v1.35 moves it to activeQ as an
        #: UnschedulablePodUpdate, v1.37 adds it (addPod) as an UnscheduledPodAdd.
        self._update_add_label = unscheduled + ("Add" if self.split_pod_events else "Update")
        self.clock = clock
        self.initial_backoff = pod_initial_backoff
        self.max_backoff = pod_max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.pop_from_backoff_q = pop_from_backoff_q
        self.metrics = metrics
        #: Called with (pod UID, plugin, message) when PreEnqueue gates a pod (the simulator's
        #: per-pod story); None: nobody listens.
        self.on_gated: Callable[[str, str, str], None] | None = None
        self._cond = threading.Condition(threading.RLock())
        self._seq = itertools.count()
        #: Heap of (sort key, item): the QueueSort plugin's ``sort_key`` with the sequence number
        #: when every profile's plugin has one (:func:`_sort_key_of`), else the item itself (its
        #: ``__lt__`` calls ``less``).
        self._active: list[tuple[Any, _Item]] = []
        self._active_uids: dict[str, _Item] = {}
        keys = {name: _sort_key_of(fw) for name, fw in profiles.items()}
        sorters = {type(getattr(fw, "queue_sort", None)) for fw in profiles.values()}
        self._sort_keys: dict[str, Callable[[QueuedPodInfo], tuple[Any, ...]]] | None = None
        if keys and len(sorters) == 1 and all(k is not None for k in keys.values()):
            self._sort_keys = {name: k for name, k in keys.items() if k is not None}
        self._backoff: list[tuple[float, int, str]] = []
        #: Pods whose last attempt ended in an Error: never popped before their backoff expires.
        self._error_backoff: list[tuple[float, int, str]] = []
        self._backoff_pods: dict[str, QueuedPodInfo] = {}
        #: uid -> sequence number of the pod's live backoff heap entry; older entries are stale
        #: (the pod left backoffQ and came back with a new expiry) and must not release it.
        self._backoff_seq: dict[str, int] = {}
        #: Counts the cluster events the queue has seen, but for the scheduler undoing its own
        #: assumption of a pod; with the assumed pods' fingerprint it is the state a scheduling
        #: attempt sees (:meth:`_state`), which tells whether retrying a pod can give another
        #: result (the simulator's end, :meth:`retry_may_help`).
        self.events_seen = 0
        #: XOR of the hashes of the pods the scheduler assumed and has not forgotten (see
        #: :meth:`toggle_assumed`).
        self.assumed_fingerprint = 0
        #: uid -> the state its last attempt started from, and its attempts since a cluster event.
        self._attempt_state: dict[str, tuple[int, int]] = {}
        self._attempts_since_event: dict[str, int] = {}
        self._futile_limit = _attempts_to_max_backoff(pod_initial_backoff, pod_max_backoff)
        #: The simulator's setting: a retry that would start from the state of the pod's last
        #: attempt is not made early — a backoffQ pod is not popped before its backoff expires (it
        #: waits in ``_futile_backoff``), and undoing an assumption does not move it — since a
        #: deterministic retry cannot fare differently, and on a virtual clock such retries can
        #: repeat at one instant, or ping-pong between two pods, forever. A real cluster retries
        #: as upstream does.
        self.skip_futile_early_pops = False
        self._futile_backoff: list[tuple[float, int, str]] = []
        self._futile_state: tuple[int, int] | None = None
        self._unschedulable = _Pool()
        #: (profile, rejecting plugins, event) -> whether one of them registered for the event.
        self._interest: dict[tuple[_GroupKey, ClusterEvent], bool] = {}
        self._in_flight: dict[str, _InFlight] = {}
        self._events: list[tuple[ClusterEvent, Any, Any]] = []
        self._events_base = 0
        self._closed = False
        self.scheduling_cycle = 0
        self._nominated: dict[str, dict[str, PodInfo]] = {}
        self._nominated_node_of: dict[str, str] = {}
        self._events_by_profile = {name: fw.events_to_register() for name, fw in profiles.items()}
        self._leftover_timer_armed = False

    # ------------------------------------------------------------------------------------------
    # adding pods
    # ------------------------------------------------------------------------------------------
    def _profile(self, pi: PodInfo) -> QueueProfile:
        return self.profiles[pi.scheduler_name]

    def add(self, pod: dict[str, Any], event: str | None = None) -> None:
        """A new unscheduled pod for one of our profiles; ``event`` labels the metric
        (upstream's ``EventUnscheduledPodAdd.Label()`` by default)."""
        event = event or self._add_label
        with self._cond:
            pi = PodInfo(pod)
            if self._find(pi.uid) is not None:
                return
            pi.share_spec_parses()
            qpi = QueuedPodInfo(pi, timestamp=self.clock.now())
            self._sign(pi)
            # The nomination a new pod carries in its status (a previous scheduler's, or one made
            # before a restart) is recorded: v1.37 always, before it only for a pod entering activeQ.
            nominated = str((pod.get("status") or {}).get("nominatedNodeName") or "")
            if nominated and self.nominate_gated_on_add:
                self.add_nominated_pod(pi, nominated)
            if self._move_to_active_or_gate(qpi, event) and nominated and not self.nominate_gated_on_add:
                self.add_nominated_pod(pi, nominated)

    def _sign(self, pi: PodInfo) -> None:
        """Upstream ``signPod`` (v1.36+, OpportunisticBatching on): the profile's
        ``sign_queued_pod`` when it has one (the framework's decides by release and gate)."""
        sign = getattr(self._profile(pi), "sign_queued_pod", None)
        if sign is not None:
            sign(pi)

    def _find(self, uid: str) -> QueuedPodInfo | None:
        item = self._active_uids.get(uid)
        if item is not None:
            return item.qpi
        if uid in self._backoff_pods:
            return self._backoff_pods[uid]
        entry = self._unschedulable.get(uid)
        if entry is not None:
            return entry[0]
        fl = self._in_flight.get(uid)
        return fl.qpi if fl else None

    def _move_to_active_or_gate(self, qpi: QueuedPodInfo, event: str) -> bool:
        """PreEnqueue, then activeQ; a rejected pod is parked as gated. True if it went active."""
        status = self._profile(qpi.pod_info).run_pre_enqueue_plugins(qpi.pod_info)
        if not status.is_success():
            qpi.gating_plugin = status.plugin or "PreEnqueue"
            qpi.last_failure = status.message()
            if self.on_gated is not None:
                self.on_gated(qpi.pod_info.uid, qpi.gating_plugin, qpi.last_failure)
            # A gated pod is never attempted: a flush that woke it must not count for it later.
            qpi.was_flushed_from_unschedulable = False
            self._unschedulable[qpi.pod_info.uid] = (qpi, self.clock.now())
            self._inc("gated", event)
            return False
        qpi.gating_plugin = ""
        self._push_active(qpi)
        self._inc(ACTIVE_Q, event)
        return True

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        item = _Item(qpi, next(self._seq), self._profile(qpi.pod_info).less)
        heapq.heappush(self._active, (self._heap_key(item), item))
        self._active_uids[qpi.pod_info.uid] = item
        self._cond.notify()

    def _heap_key(self, item: _Item) -> Any:
        keys = self._sort_keys
        if keys is None:
            return item
        return keys[item.qpi.pod_info.scheduler_name](item.qpi), item.seq

    def _inc(self, queue: str, event: str) -> None:
        if self.metrics is not None:
            self.metrics.queue_incoming(queue, event)

    # ------------------------------------------------------------------------------------------
    # popping
    # ------------------------------------------------------------------------------------------
    def pop(self, block: bool = False, timeout: float | None = None) -> QueuedPodInfo | None:
        """Next pod to schedule, or None (non-blocking, or after ``timeout``, or when closed)."""
        with self._cond:
            while True:
                qpi = self._pop_nowait()
                if qpi is not None or not block or self._closed:
                    return qpi
                if not self._cond.wait(timeout):
                    return None

    def _pop_nowait(self) -> QueuedPodInfo | None:
        while self._active:
            _, item = heapq.heappop(self._active)
            if self._active_uids.get(item.qpi.pod_info.uid) is not item:
                continue  # stale entry of a deleted/updated pod
            del self._active_uids[item.qpi.pod_info.uid]
            return self._start(item.qpi)
        if self.pop_from_backoff_q:
            self._unpark_futile()
            now = self.clock.now()
            while self._backoff:
                entry = heapq.heappop(self._backoff)
                expiry, seq, uid = entry
                if self._backoff_seq.get(uid) != seq:
                    continue  # stale
                if self.skip_futile_early_pops and expiry > now and self._futile(uid):
                    heapq.heappush(self._futile_backoff, entry)
                    self._futile_state = self._state()
                    continue
                qpi = self._take_backoff(uid, seq)
                if qpi is not None:
                    return self._start(qpi)
        return None

    def _state(self) -> tuple[int, int]:
        """What a scheduling attempt starting now sees, as far as the queue can tell."""
        return self.events_seen, self.assumed_fingerprint

    def _capped(self, uid: str) -> bool:
        """No cluster event since the pod's last attempt, and it has had as many attempts since
        the last one as it takes its backoff to reach the maximum: no retry can fare differently."""
        last = self._attempt_state.get(uid)
        return (
            last is not None
            and last[0] == self.events_seen
            and self._attempts_since_event.get(uid, 0) >= self._futile_limit
        )

    def _futile(self, uid: str) -> bool:
        """An immediate retry would start from the state of the pod's last attempt (or it is capped)."""
        return self._attempt_state.get(uid) == self._state() or self._capped(uid)

    def _park_if_capped(self, qpi: QueuedPodInfo, event: str) -> bool:
        """In a simulation, a capped pod waits in the unschedulable pool for a cluster event
        instead of being retried (see :meth:`retry_may_help`)."""
        if not (self.skip_futile_early_pops and self._capped(qpi.pod_info.uid)):
            return False
        self._unschedulable[qpi.pod_info.uid] = (qpi, self.clock.now())
        self._inc(UNSCHEDULABLE_Q, event)
        return True

    def _unpark_futile(self) -> None:
        """The state changed since pods were parked as futile: they may be popped early again."""
        if self._futile_backoff and self._futile_state != self._state():
            self._backoff.extend(self._futile_backoff)
            heapq.heapify(self._backoff)
            self._futile_backoff.clear()

    def toggle_assumed(self, uid: str) -> None:
        """The scheduler assumed the pod, or forgot the pod it had assumed. Forgetting restores what
        the assumption changed, so an attempt after both sees the state of one before both;
        confirmations need no call, as each comes with a cluster event."""
        with self._cond:
            self.assumed_fingerprint ^= hash(uid)

    def _take_backoff(self, uid: str, seq: int) -> QueuedPodInfo | None:
        """The pod of a backoff heap entry, removed from backoffQ; None for a stale entry."""
        if self._backoff_seq.get(uid) != seq:
            return None
        del self._backoff_seq[uid]
        return self._backoff_pods.pop(uid)

    def _drop_backoff(self, uid: str) -> QueuedPodInfo | None:
        """Take a pod out of backoffQ (its heap entry becomes stale)."""
        self._backoff_seq.pop(uid, None)
        return self._backoff_pods.pop(uid, None)

    def _start(self, qpi: QueuedPodInfo) -> QueuedPodInfo:
        self.scheduling_cycle += 1
        uid = qpi.pod_info.uid
        state = self._state()
        last = self._attempt_state.get(uid)
        since = self._attempts_since_event.get(uid, 0) + 1 if last is not None and last[0] == state[0] else 1
        self._attempt_state[uid] = state
        self._attempts_since_event[uid] = since
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self.clock.now()
        self._in_flight[qpi.pod_info.uid] = _InFlight(qpi, self._events_base + len(self._events))
        return qpi

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over (bound, or back in the queue)."""
        with self._cond:
            self._in_flight.pop(uid, None)
            self._trim_events()

    def _trim_events(self) -> None:
        if not self._in_flight:
            self._events_base += len(self._events)
            self._events.clear()

    # ------------------------------------------------------------------------------------------
    # failures
    # ------------------------------------------------------------------------------------------
    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        n = qpi.consecutive_errors if qpi.consecutive_errors else qpi.unschedulable_count
        if n <= 0 or self.max_backoff <= 0:
            return 0.0
        d = self.initial_backoff
        for _ in range(1, n):
            d *= 2
            if d >= self.max_backoff:
                return self.max_backoff
        return min(d, self.max_backoff)

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + self.backoff_duration(qpi)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, *, error: bool = False) -> None:
        """Upstream ``AddUnschedulableIfNotPresent``: the pod failed its attempt.

        Errors and pods with no rejecting plugin go to backoffQ; others wait in the unschedulable
        pool unless an event that arrived during their attempt already makes them worth retrying.
        """
        with self._cond:
            uid = qpi.pod_info.uid
            fl = self._in_flight.pop(uid, None)
            if uid in self._active_uids or uid in self._backoff_pods or uid in self._unschedulable:
                self._trim_events()
                return
            qpi.timestamp = self.clock.now()
            qpi.was_flushed_from_unschedulable = False  # back after an attempt
            rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
            # Upstream counts every failure without a rejecting plugin as an error: it backs off
            # in the error queue, which is never popped early (else it would be retried at once,
            # forever, while activeQ is empty).
            error = error or not rejectors
            if error:
                qpi.consecutive_errors += 1
            else:
                qpi.consecutive_errors = 0
                qpi.unschedulable_count += 1
            if error:
                self._push_backoff(qpi, "ScheduleAttemptFailure")
            else:
                strategy = _Strategy.SKIP
                if fl is None:
                    # Rejected after its attempt was marked done (PreBind, Bind): upstream retries it
                    # after backoff rather than waiting for an event.
                    strategy = _Strategy.AFTER_BACKOFF
                else:
                    start = fl.events_from - self._events_base
                    for event, old, new in self._events[max(start, 0) :]:
                        s = self._worth_requeuing(qpi, event, old, new)
                        if s == _Strategy.IMMEDIATELY:
                            strategy = s
                            break
                        if s == _Strategy.AFTER_BACKOFF:
                            strategy = s
                            if not qpi.pending_plugins:  # only a Pending plugin could do better
                                break
                if strategy == _Strategy.SKIP:
                    self._unschedulable[uid] = (qpi, self.clock.now())
                    self._inc(UNSCHEDULABLE_Q, "ScheduleAttemptFailure")
                    self._arm_leftover_flush()
                else:
                    self._requeue(qpi, strategy, "ScheduleAttemptFailure")
            self._trim_events()

    def _push_backoff(self, qpi: QueuedPodInfo, event: str) -> None:
        expiry = self.backoff_expiry(qpi)
        uid = qpi.pod_info.uid
        self._backoff_pods[uid] = qpi
        seq = next(self._seq)
        self._backoff_seq[uid] = seq
        heap = self._error_backoff if qpi.consecutive_errors else self._backoff
        heapq.heappush(heap, (expiry, seq, uid))
        # Housekeeping for the simulator's clock: whether the retry matters is retry_may_help().
        self.clock.call_later(max(0.0, expiry - self.clock.now()), self.flush_backoff_q_completed, daemon=True)
        self._inc(BACKOFF_Q, event)
        self._cond.notify()

    def _requeue(self, qpi: QueuedPodInfo, strategy: _Strategy, event: str) -> None:
        if self._park_if_capped(qpi, event):
            return
        if strategy == _Strategy.AFTER_BACKOFF and self.backoff_expiry(qpi) > self.clock.now():
            self._push_backoff(qpi, event)
        else:
            self._move_to_active_or_gate(qpi, event)

    def flush_backoff_q_completed(self) -> None:
        """Move pods whose backoff expired to activeQ (runs on a timer)."""
        with self._cond:
            now = self.clock.now()
            for heap in (self._backoff, self._error_backoff, self._futile_backoff):
                while heap and heap[0][0] <= now:
                    _, seq, uid = heapq.heappop(heap)
                    qpi = self._take_backoff(uid, seq)
                    if qpi is not None and not self._park_if_capped(qpi, "BackoffComplete"):
                        self._move_to_active_or_gate(qpi, "BackoffComplete")

    def _arm_leftover_flush(self) -> None:
        if self._leftover_timer_armed:
            return
        self._leftover_timer_armed = True
        self.clock.call_later(UNSCHEDULABLE_FLUSH_PERIOD, self.flush_unschedulable_leftover, daemon=True)

    def flush_unschedulable_leftover(self) -> None:
        """Pods that sat in the pool longer than the maximum are retried (safety net)."""
        with self._cond:
            self._leftover_timer_armed = False
            now = self.clock.now()
            due = [
                qpi
                for qpi, since in self._unschedulable.values()
                if not qpi.gated and now - since > self.max_in_unschedulable
            ]
            for qpi in due:
                del self._unschedulable[qpi.pod_info.uid]
                # scheduler_pod_scheduled_after_flush_total counts it if this flush gets it bound.
                qpi.was_flushed_from_unschedulable = True
                self._requeue(qpi, _Strategy.AFTER_BACKOFF, str(UNSCHEDULABLE_TIMEOUT.label))
            if any(not q.gated for q, _ in self._unschedulable.values()):
                self._arm_leftover_flush()

    # ------------------------------------------------------------------------------------------
    # cluster events
    # ------------------------------------------------------------------------------------------
    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> _Strategy:
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if qpi.gated:
            rejectors = {qpi.gating_plugin}
        if not rejectors:
            return _Strategy.AFTER_BACKOFF
        if event.resource == EventResource.WILDCARD and event.action == ActionType.ALL:
            # Wildcard events (UnschedulableTimeout, ForceActivate, a plugin's WildCard) requeue
            # without asking any hint; ForceActivate names the one pod it is for.
            if event == FORCE_ACTIVATE and isinstance(new, Mapping) and pod_uid(new) != qpi.pod_info.uid:
                return _Strategy.SKIP
            return _Strategy.AFTER_BACKOFF
        registered = self._events_by_profile.get(qpi.pod_info.scheduler_name, {})
        strategy = _Strategy.SKIP
        for plugin in sorted(rejectors):
            for ewh in registered.get(plugin, ()):
                if not ewh.event.matches(event):
                    continue
                hint = QueueingHint.QUEUE
                if ewh.hint is not None:
                    try:
                        hint = ewh.hint(qpi.pod, old, new)
                    except Exception as err:  # upstream: an error from the hint means Queue
                        log.warning(
                            "queueing hint of plugin %s failed for pod %s on %s; requeuing: %s",
                            plugin, qpi.pod_info.key, event, " ".join(str(err).split()) or type(err).__name__,
                        )
                        log.debug("queueing hint of %s failed", plugin, exc_info=True)
                        hint = QueueingHint.QUEUE
                if hint != QueueingHint.QUEUE:
                    continue
                if plugin in qpi.pending_plugins:
                    return _Strategy.IMMEDIATELY
                strategy = _Strategy.AFTER_BACKOFF
        return strategy

    def _may_requeue(self, key: _GroupKey, event: ClusterEvent) -> bool:
        """Whether :meth:`_worth_requeuing` can be anything but SKIP for pods of group ``key`` —
        the same tests, without the queueing hints (those still run, pod by pod, when it can)."""
        cached = self._interest.get((key, event))
        if cached is not None:
            return cached
        profile, rejectors = key
        if not rejectors or (event.resource == EventResource.WILDCARD and event.action == ActionType.ALL):
            interested = True
        else:
            registered = self._events_by_profile.get(profile, {})
            interested = any(
                ewh.event.matches(event) for plugin in rejectors for ewh in registered.get(plugin, ())
            )
        if len(self._interest) > 4096:
            self._interest.clear()
        self._interest[(key, event)] = interested
        return interested

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        precheck: Callable[[QueuedPodInfo], bool] | None = None,
        *,
        undo_of_assume: bool = False,
    ) -> None:
        """A cluster event: retry the unschedulable/gated pods it may help (upstream name).

        ``undo_of_assume``: the event is the scheduler forgetting a pod it assumed (its binding
        cycle failed). It moves pods as any event, but it is no change of the cluster for
        :meth:`retry_may_help` — the assumed-pod fingerprint records it (:meth:`toggle_assumed`)."""
        with self._cond:
            if not undo_of_assume:
                self.events_seen += 1
            if self._in_flight:
                self._events.append((event, old, new))
            if not self._unschedulable:
                return
            moved = []
            pool = self._unschedulable
            candidates = sorted(
                (order, uid)
                for key, members in pool.groups.items()
                if self._may_requeue(key, event)
                for uid, order in members.items()
            )
            # In a simulation, undoing an assumption does not retry a pod whose last attempt
            # started without it: the retry would start from that attempt's state again.
            futile = undo_of_assume and self.skip_futile_early_pops
            for _, uid in candidates:
                qpi = pool[uid][0]
                if precheck is not None and not precheck(qpi):
                    continue
                if futile and self._futile(uid):
                    continue
                strategy = self._worth_requeuing(qpi, event, old, new)
                if strategy == _Strategy.SKIP:
                    continue
                moved.append((uid, qpi, strategy))
            for uid, qpi, strategy in moved:
                del self._unschedulable[uid]
                label = event_label(event, self.split_pod_events)
                if qpi.gated:
                    self._move_to_active_or_gate(qpi, label)
                else:
                    self._requeue(qpi, strategy, label)

    def activate(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """Move the given pods to activeQ now (upstream ``Activate``)."""
        with self._cond:
            for pod in pods:
                uid = PodInfo(dict(pod)).uid
                qpi = None
                if uid in self._unschedulable:
                    qpi = self._unschedulable.pop(uid)[0]
                elif uid in self._backoff_pods:
                    qpi = self._drop_backoff(uid)
                elif uid in self._in_flight:
                    # Replayed only against this pod when its attempt ends (see _worth_requeuing).
                    self._events.append((FORCE_ACTIVATE, None, pod))
                if qpi is not None:
                    self._move_to_active_or_gate(qpi, "ForceActivate")

    # ------------------------------------------------------------------------------------------
    # updates and deletes of unscheduled pods
    # ------------------------------------------------------------------------------------------
    def update(
        self,
        old: dict[str, Any] | None,
        new: dict[str, Any],
        events: ClusterEvent | Sequence[ClusterEvent] | None = None,
    ) -> None:
        """The pending pod itself was updated (upstream ``Update``): ``events`` are its
        ``PodSchedulingPropertiesChange(new, old, isTargetPod=true)``; a parked pod is asked about
        each in turn and moved by the first whose hint says Queue, under that event's label."""
        if isinstance(events, ClusterEvent):
            events = (events,)
        events = events or ()
        with self._cond:
            self.events_seen += 1
            uid = PodInfo(new).uid
            item = self._active_uids.get(uid)
            if item is not None:
                key = self._heap_key(item)
                item.qpi.pod_info.update(new)
                self._sign(item.qpi.pod_info)
                if self._sort_keys is not None and self._heap_key(item) != key:
                    # Its place in activeQ changed (upstream's heap Update): a new entry, the old stale.
                    self._push_active(item.qpi)
                return
            if uid in self._backoff_pods:
                self._backoff_pods[uid].pod_info.update(new)
                self._sign(self._backoff_pods[uid].pod_info)
                return
            entry = self._unschedulable.get(uid)
            if entry is not None:
                qpi = entry[0]
                qpi.pod_info.update(new)
                self._sign(qpi.pod_info)
                split = self.split_pod_events
                if qpi.gated:
                    # PreEnqueue decides again (any update may open a plugin's gate).
                    del self._unschedulable[uid]
                    label = event_label(events[0], split) if events else self._update_add_label
                    self._move_to_active_or_gate(qpi, label)
                    return
                for event in events:
                    strategy = self._worth_requeuing(qpi, event, old, new)
                    if strategy != _Strategy.SKIP:
                        del self._unschedulable[uid]
                        self._requeue(qpi, strategy, event_label(event, split))
                        return
                return
            fl = self._in_flight.get(uid)
            if fl is not None:
                fl.qpi.pod_info.update(new)
                # The update may resolve what rejects the pod in this very attempt: replay it.
                self._events.extend((event, old, new) for event in events)
                return
            self.add(new, self._update_add_label)

    def delete(self, pod: Mapping[str, Any]) -> None:
        with self._cond:
            self.events_seen += 1
            uid = pod_uid(pod)
            self._attempt_state.pop(uid, None)
            self._attempts_since_event.pop(uid, None)
            self._active_uids.pop(uid, None)
            self._drop_backoff(uid)
            self._unschedulable.pop(uid, None)
            self.delete_nominated_pod_if_exists(uid)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # ------------------------------------------------------------------------------------------
    # nominator
    # ------------------------------------------------------------------------------------------
    def add_nominated_pod(self, pi: PodInfo, node_name: str) -> None:
        with self._cond:
            self.delete_nominated_pod_if_exists(pi.uid)
            if not node_name:
                return
            self._nominated.setdefault(node_name, {})[pi.uid] = pi
            self._nominated_node_of[pi.uid] = node_name

    def delete_nominated_pod_if_exists(self, uid: str) -> None:
        node = self._nominated_node_of.pop(uid, None)
        if node is not None:
            pods = self._nominated.get(node, {})
            pods.pop(uid, None)
            if not pods:
                self._nominated.pop(node, None)

    def has_nominated_pods(self) -> bool:
        return bool(self._nominated)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self._nominated.get(node_name)
        return list(pods.values()) if pods else []

    def nominated_node_of(self, uid: str) -> str:
        return self._nominated_node_of.get(uid, "")

    # ------------------------------------------------------------------------------------------
    # introspection
    # ------------------------------------------------------------------------------------------
    def pending_pods(self) -> list[tuple[QueuedPodInfo, str]]:
        with self._cond:
            out = [(i.qpi, ACTIVE_Q) for i in self._active_uids.values()]
            out += [(q, BACKOFF_Q) for q in self._backoff_pods.values()]
            out += [(q, GATED_Q if q.gated else UNSCHEDULABLE_Q) for q, _ in self._unschedulable.values()]
            return out

    def unschedulable_plugin_counts(self) -> dict[tuple[str, str], int]:
        """(plugin, profile) -> pods waiting in the queue that the plugin rejected or gates, as
        upstream's ``scheduler_unschedulable_pods`` (counted from a failure or a gate until the pod
        is popped again; pods in their attempt are not counted)."""
        out: dict[tuple[str, str], int] = {}
        with self._cond:
            waiting = [i.qpi for i in self._active_uids.values()]
            waiting += list(self._backoff_pods.values())
            waiting += [q for q, _ in self._unschedulable.values()]
            for qpi in waiting:
                plugins = qpi.unschedulable_plugins | qpi.pending_plugins
                if qpi.gated:
                    plugins = plugins | {qpi.gating_plugin}
                for plugin in plugins:
                    key = (plugin, qpi.pod_info.scheduler_name)
                    out[key] = out.get(key, 0) + 1
        return out

    def in_flight_counts(self) -> tuple[int, list[str]]:
        """Pods in their scheduling attempt, and the label of every event kept for them
        (upstream's ``scheduler_inflight_events``)."""
        with self._cond:
            split = self.split_pod_events
            return len(self._in_flight), [event_label(event, split) for event, _, _ in self._events]

    def counts(self) -> dict[str, int]:
        with self._cond:
            gated = sum(1 for q, _ in self._unschedulable.values() if q.gated)
            return {
                ACTIVE_Q: len(self._active_uids),
                BACKOFF_Q: len(self._backoff_pods),
                UNSCHEDULABLE_Q: len(self._unschedulable) - gated,
                GATED_Q: gated,
            }

    def has_active(self) -> bool:
        if self._active_uids:
            return True
        if not self.pop_from_backoff_q:
            return False
        if any(self._backoff_seq.get(uid) == seq for _, seq, uid in self._backoff):
            return True
        return self._futile_state != self._state() and any(
            self._backoff_seq.get(uid) == seq for _, seq, uid in self._futile_backoff
        )

    def retry_may_help(self) -> bool:
        """Could a pod waiting out its backoff get another result when retried?

        Yes when a cluster event arrived since its last attempt started. Without one, a pod gets
        no more attempts than it takes its backoff to reach the maximum (5 with the defaults):
        while its backoff grows (a transient failure), or when the set of assumed pods differs
        from the one its last attempt saw. The scheduler forgetting a pod it assumed (a failed
        binding cycle) is no cluster event: it restores the state of before the assumption.

        That is what ends a simulation whose pods fail for good — a Bind plugin that always
        raises, a Permit that always rejects or times out — with each pod pending and its last
        error. It provably ends: in a simulation a pod that used up its attempts is retried by no
        path until a cluster event (see ``skip_futile_early_pops``); timers of the input
        (arrivals, completions) are finite, and the scheduler's own events (bindings, preemption's
        deletions) are bounded by the pods, so the attempts are bounded too.
        """
        with self._cond:
            state = self._state()
            for uid, qpi in self._backoff_pods.items():
                last = self._attempt_state.get(uid)
                if last is None or last[0] != state[0]:
                    return True
                if self._capped(uid):
                    continue
                if last != state or self.backoff_duration(qpi) < self.max_backoff:
                    return True
            return False


def _attempts_to_max_backoff(initial: float, maximum: float) -> int:
    """Attempts after which the backoff (initial × 2^(n−1)) reaches the maximum: 5 for 1 s and 10 s."""
    if initial <= 0 or maximum <= initial:
        return 1
    n, d = 1, initial
    while d < maximum:
        d *= 2
        n += 1
    return n
