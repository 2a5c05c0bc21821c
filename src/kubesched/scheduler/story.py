"""Each pod's story as the scheduler lived it: when it was attempted, why it waited (the plugins
that rejected or gated it, with their message) and when it was bound. The simulator reports it
(``kubesched simulate`` and its JSON); a long-running ``kubesched run`` does not keep it.

Kept per pod UID, under a lock (binding cycles run on the backend's threads against a real
cluster); consecutive waits for the same reason collapse into one, with a count, so a pod retried
for hours costs one entry.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = ["PodStories", "PodStory", "Wait"]


@dataclass
class Wait:
    """One reason a pod waited: from ``at``, ``times`` attempts (or gatings) in a row."""

    at: float
    kind: str  # "unschedulable", "error" or "gated"
    plugins: tuple[str, ...]
    message: str
    times: int = 1


@dataclass
class PodStory:
    attempts: int = 0
    first_attempt_at: float | None = None
    last_attempt_at: float | None = None
    waits: list[Wait] = field(default_factory=list)
    #: The last failed cycle's verdict per node: "Plugin: reason, reason" (at most MAX_NODES).
    node_statuses: dict[str, str] = field(default_factory=dict)
    #: The scheduling cycle that placed it: the best nodes and their total scores, best first
    #: (empty when a single node was feasible, which is not scored).
    scores: list[tuple[str, int]] = field(default_factory=list)


#: Nodes whose verdict a story keeps, and scored nodes it keeps.
MAX_NODES = 200
MAX_SCORES = 10


#: Waits kept per pod (the first ones and the latest stay when a pod keeps changing reason).
MAX_WAITS = 50


class PodStories:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_uid: dict[str, PodStory] = {}

    def _story(self, uid: str) -> PodStory:
        story = self.by_uid.get(uid)
        if story is None:
            story = self.by_uid[uid] = PodStory()
        return story

    def attempt(self, uid: str, at: float) -> None:
        with self._lock:
            story = self._story(uid)
            story.attempts += 1
            if story.first_attempt_at is None:
                story.first_attempt_at = at
            story.last_attempt_at = at

    def waited(self, uid: str, at: float, kind: str, plugins: tuple[str, ...], message: str) -> None:
        with self._lock:
            waits = self._story(uid).waits
            last = waits[-1] if waits else None
            if last is not None and (last.kind, last.plugins, last.message) == (kind, plugins, message):
                last.times += 1
                return
            if len(waits) >= MAX_WAITS:
                del waits[MAX_WAITS // 2]
            waits.append(Wait(at, kind, plugins, message))

    def rejected_on(self, uid: str, statuses: dict[str, str]) -> None:
        with self._lock:
            self._story(uid).node_statuses = dict(list(statuses.items())[:MAX_NODES])

    def scored(self, uid: str, totals: list[tuple[str, int]]) -> None:
        with self._lock:
            self._story(uid).scores = sorted(totals, key=lambda t: -t[1])[:MAX_SCORES]

    def get(self, uid: str) -> PodStory | None:
        with self._lock:
            return self.by_uid.get(uid)
