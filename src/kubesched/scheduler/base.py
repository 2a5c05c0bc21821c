"""The state every part of the Scheduler shares, declared once so that each part type-checks alone.

The Scheduler is assembled from one mixin per job (event handlers, the scheduling cycle, the
binding cycle, failure handling); :class:`kubesched.scheduler.scheduler.Scheduler` sets these
attributes in its constructor.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.backend.cache import Cache
from kubesched.backend.queue import SchedulingQueue
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import Clock
from kubesched.framework.cluster import ClusterBackend
from kubesched.framework.runtime import Framework, ScoreResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NominatingInfo, QueuedPodInfo
from kubesched.metrics import SchedulerMetrics
from kubesched.scheduler.stats import SchedulerStats
from kubesched.scheduler.story import PodStories


class SchedulerBase:
    """The attributes the Scheduler's constructor sets (no behaviour of its own)."""

    config: KubeSchedulerConfiguration
    cluster: ClusterBackend
    clock: Clock
    rng: random.Random
    tie_break: str
    metrics: SchedulerMetrics
    cache: Cache
    snapshot: Snapshot
    stats: SchedulerStats
    stories: PodStories | None
    before_attempt: Callable[[QueuedPodInfo], None] | None
    next_start_node_index: int
    frameworks: dict[str, Framework]
    queue: SchedulingQueue
    #: UIDs this scheduler bound, under ``_lock`` (binding cycles run on the backend's threads).
    _bound_uids: set[str]
    _lock: threading.Lock
    _unscheduled_pod_add_events: bool


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None
    scores: ScoreResult | None = None
