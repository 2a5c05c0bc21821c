"""Clocks: the only source of time for the scheduler and its plugins.

The simulator drives a :class:`VirtualClock` (time jumps from one pending timer to the next, so a
night of transfer windows takes milliseconds); the real backend uses :class:`RealClock`. Both give
``now()`` in epoch seconds and ``call_later`` timers, which is all backoff, Permit timeouts and
plugin windows need.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float: ...

    def call_later(self, delay: float, fn: Callable[[], None], *, daemon: bool = False) -> Timer:
        """Run ``fn`` after ``delay`` seconds. ``daemon`` timers (housekeeping) do not keep a
        simulation alive on their own."""
        ...


#: The range a datetime can hold (years 0001 to 9999): a time printed outside it is clamped, so
#: reporting a far-away timer can never raise.
_MIN_TS = datetime(1, 1, 1, tzinfo=UTC).timestamp()
_MAX_TS = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


def to_datetime(ts: float) -> datetime:
    if not _MIN_TS <= ts <= _MAX_TS:  # also NaN
        ts = _MAX_TS if ts > _MIN_TS else _MIN_TS
    return datetime.fromtimestamp(ts, tz=UTC)


def rfc3339(ts: float) -> str:
    """``2026-01-01T00:00:00Z`` (whole seconds, as Kubernetes prints times)."""
    d = to_datetime(ts)  # strftime's %Y does not pad years before 1000 to four digits
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z"


def micro_time(ts: float) -> str:
    """Kubernetes MicroTime, required by events.k8s.io ``eventTime``."""
    d = to_datetime(ts)
    return f"{rfc3339(ts)[:-1]}.{d.microsecond:06d}Z"


class _Entry:
    __slots__ = ("cancelled", "daemon", "fn", "seq", "when")

    def __init__(self, when: float, seq: int, fn: Callable[[], None], daemon: bool = False) -> None:
        self.when = when
        self.seq = seq
        self.fn = fn
        self.cancelled = False
        self.daemon = daemon

    def __lt__(self, other: _Entry) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """Deterministic time: timers fire in (time, creation order) when the driver advances."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._heap: list[_Entry] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, fn: Callable[[], None], *, daemon: bool = False) -> _Entry:
        e = _Entry(self._now + max(0.0, delay), next(self._seq), fn, daemon)
        heapq.heappush(self._heap, e)
        return e

    def call_at(self, when: float, fn: Callable[[], None], *, daemon: bool = False) -> _Entry:
        return self.call_later(when - self._now, fn, daemon=daemon)

    def has_live_timers(self) -> bool:
        """Any pending non-daemon timer: something that can still change the simulation."""
        return any(not e.cancelled and not e.daemon for e in self._heap)

    def next_time(self) -> float | None:
        """When the next live timer fires, or None."""
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0].when if self._heap else None

    def run_due(self) -> int:
        """Run every timer due at the current time (including ones they schedule for now)."""
        n = 0
        while self._heap and self._heap[0].when <= self._now:
            e = heapq.heappop(self._heap)
            if not e.cancelled:
                e.fn()
                n += 1
        return n

    def advance_to(self, when: float) -> None:
        if when > self._now:
            self._now = when

    def step(self, delta: float) -> None:
        """Advance by ``delta`` seconds, firing every timer on the way in order (handy in tests)."""
        target = self._now + delta
        while True:
            nxt = self.next_time()
            if nxt is None or nxt > target:
                break
            self.advance_to(nxt)
            self.run_due()
        self.advance_to(target)
        self.run_due()


class RealClock:
    """Wall-clock time with one timer thread (a heap), so thousands of timers cost one thread."""

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def now(self) -> float:
        return time.time()

    def call_later(self, delay: float, fn: Callable[[], None], *, daemon: bool = False) -> _Entry:
        e = _Entry(time.time() + max(0.0, delay), next(self._seq), fn, daemon)
        with self._cond:
            heapq.heappush(self._heap, e)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kubesched-timers", daemon=True)
                self._thread.start()
            self._cond.notify()
        return e

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped:
                    if self._heap and self._heap[0].cancelled:
                        heapq.heappop(self._heap)
                        continue
                    wait = (self._heap[0].when - time.time()) if self._heap else None
                    if wait is not None and wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._stopped:
                    return
                e = heapq.heappop(self._heap)
            try:
                e.fn()
            except Exception:  # a failing timer callback must not kill the timer thread
                import logging

                logging.getLogger(__name__).exception("timer callback failed")
