"""WindowTransfer: bulk transfers only inside a daily window, on nodes with enough free bandwidth.

Issue 5. Outside the window a transfer pod is not scheduled: with ``outsideWindow: Wait`` it is
gated at PreEnqueue (no scheduling cycle), pending with a message naming the next opening; with
``Reject`` it fails its cycle with FailedScheduling. Either way one clock timer per opening raises
the plugin's ``WindowTransferOpened`` event, whose queueing hint sends the pods back the moment the
window opens, with no polling loop. Inside the window Filter keeps nodes whose free bandwidth
(allocatable minus the requests of the pods on the node) covers the pod's request and stays at or
above ``bandwidthThreshold``; Score prefers the most free bandwidth after placement; Permit lets a
pod through only while the window is still open at the end of its cycle.

The PreEnqueue gate runs even when a profile enables the plugin only at filter/score/permit (the
configuration of issue 5): the class sets ``implied_pre_enqueue`` (framework/runtime.py). Filter,
Score and Permit never depend on PreFilter/PreScore having run, since that configuration does not
enable them; when they do run (``multiPoint``), PreFilter rejects a pod outside the window once per
cycle instead of once per node, and both Skip pods the ``podSelector`` leaves out.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    BatchFilterPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    Handle,
    PermitPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, NodeScore, PodInfo, PreFilterResult, pod_uid, spec
from kubesched.plugins import names
from kubesched.plugins.helper.normalize_score import default_normalize_score, default_normalize_score_batch
from kubesched.plugins.jsonview import as_pod_info, get_obj

from .args import WAIT, WindowTransferArgs, pod_selector, time_zone
from .metrics import metrics_for
from .window import DailyWindow, parse_hh_mm

#: Raised by the plugin's timer when a window opens; pods the plugin gated or rejected wait for it.
WINDOW_OPENED = ClusterEvent(EventResource.TIMER, ActionType.ALL, "WindowTransferOpened")

ERR_REASON_BANDWIDTH = "node(s) had insufficient free bandwidth"
#: Event reasons recorded on a pod (``handle.event_recorder()``).
REASON_WAITING = "WaitingForTransferWindow"
REASON_OPENED = "TransferWindowOpened"


@dataclass(frozen=True, slots=True)
class _PodData:
    """What the plugin parses from a pod once (memoised in ``PodInfo.cache``)."""

    applies: bool
    request: int


def _node(obj: object) -> NodeInfo | None:
    return NodeInfo(dict(obj)) if isinstance(obj, Mapping) else None


class WindowTransfer(
    PreEnqueuePlugin,
    EnqueueExtensions,
    PreFilterPlugin,
    BatchFilterPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    ScoreExtensions,
    PermitPlugin,
):
    name = names.WINDOW_TRANSFER
    args_type = WindowTransferArgs
    implied_pre_enqueue = True

    def __init__(self, args: WindowTransferArgs | None, handle: Handle) -> None:
        if args is None:
            raise ValueError("args windowStart and windowEnd are required")
        zone = time_zone(args.time_zone)
        if zone is None:  # validated at load; a programmatic caller may skip it
            raise ValueError(f"unknown time zone {args.time_zone!r}")
        self.args = args
        self.window = DailyWindow(parse_hh_mm(args.window_start), parse_hh_mm(args.window_end), zone)
        self.resource = args.bandwidth_resource
        self.threshold = args.bandwidth_threshold
        self.wait = args.outside_window == WAIT
        self.selector = pod_selector(args.pod_selector)
        self._handle = handle
        self._lock = threading.Lock()
        #: uid -> the opening the pod waits for (gated, or rejected because the window was closed).
        self._waiting: dict[str, float] = {}
        self._wake_at: float | None = None
        self._metrics = metrics_for(handle)
        self._metrics.waiting_pods.labels(handle.profile_name).set_function(self.waiting_pods)
        self._metrics.window_openings.labels(handle.profile_name)  # exported as 0 until the first opening

    # -- the pod ----------------------------------------------------------------------------------
    def _pod(self, pod: PodInfo) -> _PodData:
        data = pod.cache.get(self.name)
        if not isinstance(data, _PodData):
            applies = self.selector.matches(pod.labels)
            request = pod.requests.scalar_resources.get(self.resource, 0) if applies else 0
            data = pod.cache[self.name] = _PodData(applies, request)
        return data

    def _now(self) -> float:
        return self._handle.clock.now()

    # -- PreEnqueue -------------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not self._pod(pod).applies:
            return None
        now = self._now()
        is_open, opens = self.window.state(now)
        if is_open:
            self._stop_waiting(pod)
            return None
        if not self.wait:
            return None  # Reject: the scheduling cycle fails with FailedScheduling
        self._wait_for(pod, opens, now)
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"waiting for the transfer window {self.window}, which opens at {self.window.format_instant(opens)}",
        )

    # -- PreFilter (optional: runs when enabled, e.g. through multiPoint) -------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self._pod(pod).applies:
            return None, Status(Code.SKIP)
        return None, self._check_window(pod)

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        data = self._pod(pod)
        if not data.applies:
            return None
        closed = self._check_window(pod)
        if closed is not None:
            return closed
        alloc = node_info.allocatable.scalar_resources.get(self.resource, 0)
        free = alloc - node_info.requested.scalar_resources.get(self.resource, 0)
        if free - data.request >= self.threshold:
            return None
        if not self.args.preempt_in_window or alloc - data.request < self.threshold:
            # Preemption is off, or even the empty node would not do: evicting pods cannot help.
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_BANDWIDTH)
        return Status(Code.UNSCHEDULABLE, ERR_REASON_BANDWIDTH)

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        data = self._pod(pod)
        if not data.applies:
            return np.ones(len(indices), dtype=np.bool_)
        if self._check_window(pod) is not None:
            return np.zeros(len(indices), dtype=np.bool_)
        alloc, used = snapshot.table.scalar(self.resource)
        ok: npt.NDArray[np.bool_] = alloc[indices] - used[indices] - data.request >= self.threshold
        return ok

    def _check_window(self, pod: PodInfo) -> Status | None:
        """None inside the window; outside it, the rejection (preemption cannot open a window)."""
        now = self._now()
        is_open, opens = self.window.state(now)
        if is_open:
            self._stop_waiting(pod)
            return None
        self._wait_for(pod, opens, now)
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"outside the transfer window {self.window} (next opening {self.window.format_instant(opens)})",
        )

    # -- PreScore / Score -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if self._pod(pod).applies else Status(Code.SKIP)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Free bandwidth left after placing the pod (0 for pods the plugin does not apply to)."""
        data = self._pod(pod)
        if not data.applies:
            return 0, None
        free = node_info.allocatable.scalar_resources.get(self.resource, 0) - node_info.requested.scalar_resources.get(
            self.resource, 0
        )
        return max(free - data.request, 0), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        data = self._pod(pod)
        if not data.applies:
            return np.zeros(len(indices), dtype=np.int64)
        alloc, used = snapshot.table.scalar(self.resource)
        left: npt.NDArray[np.int64] = np.maximum(alloc[indices] - used[indices] - data.request, 0)
        return left

    def score_extensions(self) -> WindowTransfer:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        """Upstream's ``DefaultNormalizeScore``: the most free bandwidth scores 100, the rest pro rata."""
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_batch(
        self, state: CycleState, pod: PodInfo, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        return default_normalize_score_batch(scores, False)

    # -- Permit -----------------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """Only while the window is still open at the end of the scheduling cycle."""
        if not self._pod(pod).applies:
            return None, 0.0
        now = self._now()
        is_open, opens = self.window.state(now)
        if is_open:
            self._stop_waiting(pod)
            return None, 0.0
        self._wait_for(pod, opens, now)
        return Status(
            Code.UNSCHEDULABLE,
            f"the transfer window {self.window} closed during the scheduling cycle "
            f"(next opening {self.window.format_instant(opens)})",
        ), 0.0

    # -- waiting for the window -------------------------------------------------------------------
    def _wait_for(self, pod: PodInfo, opens: float, now: float) -> None:
        """The pod waits for the opening at ``opens``: one event per pod and opening, one timer per opening."""
        with self._lock:
            new = self._waiting.get(pod.uid) != opens
            if new:
                self._waiting[pod.uid] = opens
            if self._wake_at != opens:
                self._wake_at = opens
                # Not a daemon: the opening can make pods schedulable, so it keeps a simulation alive.
                self._handle.clock.call_later(opens - now, self._window_opened)
        if new:
            self._handle.event_recorder().eventf(
                pod.pod,
                None,
                "Normal",
                REASON_WAITING,
                "Scheduling",
                f"Waiting for the transfer window {self.window}, which opens at {self.window.format_instant(opens)}",
            )

    def _stop_waiting(self, pod: PodInfo) -> None:
        if pod.uid not in self._waiting:
            return
        with self._lock:
            opens = self._waiting.pop(pod.uid, None)
        if opens is not None:
            self._handle.event_recorder().eventf(
                pod.pod,
                None,
                "Normal",
                REASON_OPENED,
                "Scheduling",
                f"The transfer window {self.window} opened at {self.window.format_instant(opens)}",
            )

    def _window_opened(self) -> None:
        """The timer: count the opening and send the waiting pods back through the queue's event."""
        with self._lock:
            opened = self._wake_at
            self._wake_at = None
            if opened is not None:
                # Entries for earlier openings belong to pods deleted while they waited.
                self._waiting = {uid: t for uid, t in self._waiting.items() if t >= opened}
        self._metrics.window_openings.labels(self._handle.profile_name).inc()
        self._handle.move_pods_on_event(WINDOW_OPENED)

    def waiting_pods(self) -> int:
        """Pods waiting for an opening still to come (the ``waiting_pods`` gauge)."""
        now = self._now()
        with self._lock:
            return sum(1 for t in self._waiting.values() if t > now)

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(WINDOW_OPENED, self._is_schedulable_after_window_opened),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                self._is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self._is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
                self._is_schedulable_after_label_change,
            ),
        ]

    def _is_schedulable_after_window_opened(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        return QueueingHint.QUEUE if self.window.is_open(self._now()) else QueueingHint.QUEUE_SKIP

    def _waits_for_window(self, pod: JSONObj) -> bool:
        """A pod that waits for a future opening is sent back by that opening, not by this event."""
        opens = self._waiting.get(pod_uid(pod))
        return opens is not None and opens > self._now()

    def _is_schedulable_after_pod_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """A placed (or nominated) pod that held bandwidth was deleted or scaled down its request."""
        if self._waits_for_window(pod) or not isinstance(old, Mapping):
            return QueueingHint.QUEUE_SKIP
        if not spec(old).get("nodeName") and not get_obj(old, "status").get("nominatedNodeName"):
            return QueueingHint.QUEUE_SKIP
        before = PodInfo(dict(old))
        held = before.requests.scalar_resources.get(self.resource, 0)
        changed = as_pod_info(new)
        if changed is None:
            return QueueingHint.QUEUE if held > 0 else QueueingHint.QUEUE_SKIP
        after = changed.requests.scalar_resources.get(self.resource, 0)
        return QueueingHint.QUEUE if after < held else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_node_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """A node whose bandwidth, when empty, leaves the threshold free, and (updates) that gained bandwidth."""
        if self._waits_for_window(pod):
            return QueueingHint.QUEUE_SKIP
        after = _node(new)
        if after is None:
            return QueueingHint.QUEUE_SKIP
        request = self._pod(PodInfo(dict(pod))).request
        alloc = after.allocatable.scalar_resources.get(self.resource, 0)
        if alloc - request < self.threshold:
            return QueueingHint.QUEUE_SKIP
        before = _node(old)
        if before is None:
            return QueueingHint.QUEUE
        grew = alloc > before.allocatable.scalar_resources.get(self.resource, 0)
        return QueueingHint.QUEUE if grew else QueueingHint.QUEUE_SKIP

    def _is_schedulable_after_label_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """The pod itself no longer matches ``podSelector``: the plugin no longer holds it back."""
        if not isinstance(new, Mapping) or pod_uid(new) != pod_uid(pod):
            return QueueingHint.QUEUE_SKIP
        labels = get_obj(get_obj(new, "metadata"), "labels")
        # Label values are strings (the API server validated them).
        matches = self.selector.matches(cast("Mapping[str, str]", labels))
        return QueueingHint.QUEUE_SKIP if matches else QueueingHint.QUEUE
