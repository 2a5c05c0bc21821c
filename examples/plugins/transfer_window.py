"""TransferWindow: schedule pods only inside a daily data-transfer window (UTC).

The example plugin of docs/plugin-guide.md; tests/docs/test_plugin_guide.py tests it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EnqueueExtensions,
    EventResource,
    FieldError,
    FilterPlugin,
    Handle,
    JSONObj,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
    invalid,
)

_HH_MM = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
_DAY = 24 * 3600

#: The event our timer raises when the window opens; pods this plugin rejected wait for it.
WINDOW_OPENED = ClusterEvent(EventResource.TIMER, ActionType.ALL, "TransferWindowOpened")


@dataclass
class TransferWindowArgs:
    """``pluginConfig`` args: the window as ``"HH:MM"`` in UTC; it may wrap midnight (22:00-06:00)."""

    window_start: str
    window_end: str

    def validate(self) -> list[FieldError]:
        errs = [
            invalid(key, value, 'must be a time "HH:MM" (UTC)')
            for key, value in (("windowStart", self.window_start), ("windowEnd", self.window_end))
            if not _HH_MM.fullmatch(value)
        ]
        if not errs and self.window_start == self.window_end:
            errs.append(invalid("windowEnd", self.window_end, "must differ from windowStart"))
        return errs


def _seconds(hh_mm: str) -> int:
    hours, minutes = hh_mm.split(":")
    return int(hours) * 3600 + int(minutes) * 60


class TransferWindow(FilterPlugin, EnqueueExtensions):
    name = "TransferWindow"
    Args = TransferWindowArgs

    def __init__(self, args: TransferWindowArgs | None, handle: Handle) -> None:
        if args is None:
            raise ValueError("args windowStart and windowEnd are required")
        self.window = f"{args.window_start}-{args.window_end} UTC"
        self._start = _seconds(args.window_start)
        self._end = _seconds(args.window_end)
        self._handle = handle
        self._wake_at: float | None = None

    def is_open(self, now: float) -> bool:
        """Start inclusive, end exclusive; a window whose end is before its start wraps midnight."""
        t = now % _DAY
        if self._start < self._end:
            return self._start <= t < self._end
        return t >= self._start or t < self._end

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        now = self._handle.clock.now()
        if self.is_open(now):
            return None
        self._wake_when_open(now)
        return Status.unschedulable(f"outside the data-transfer window {self.window}")

    # EnqueueExtensions: retry the pods we rejected when the window opens, not on every cluster event.
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [ClusterEventWithHint(WINDOW_OPENED, self._hint)]

    def _hint(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        return QueueingHint.QUEUE if self.is_open(self._handle.clock.now()) else QueueingHint.QUEUE_SKIP

    def _wake_when_open(self, now: float) -> None:
        opens = now - now % _DAY + self._start
        if opens <= now:
            opens += _DAY
        if self._wake_at != opens:  # one timer per opening, however many pods we reject
            self._wake_at = opens
            self._handle.clock.call_later(opens - now, self._opened)

    def _opened(self) -> None:
        self._wake_at = None
        self._handle.move_pods_on_event(WINDOW_OPENED)
