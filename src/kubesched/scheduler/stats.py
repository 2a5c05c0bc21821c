"""What the scheduler counts for reports and tests (the Prometheus metrics carry the same facts)."""

from __future__ import annotations

import threading

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
