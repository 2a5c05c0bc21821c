"""The Scheduler: its construction from a configuration, one framework per profile (upstream ``scheduler.go``)."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable

from kubesched.backend.cache import Cache
from kubesched.backend.metrics import register as register_queue_and_cache_metrics
from kubesched.backend.queue import SchedulingQueue
from kubesched.config.feature_gates import OPPORTUNISTIC_BATCHING, FeatureGates
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import Clock
from kubesched.framework.cluster import ClusterBackend
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import QueuedPodInfo
from kubesched.metrics import SchedulerMetrics
from kubesched.scheduler.eventhandlers import EventHandlersMixin
from kubesched.scheduler.handle import FrameworkHandle
from kubesched.scheduler.schedule_one import TIE_BREAK_RANDOM, ScheduleOneMixin
from kubesched.scheduler.stats import SchedulerStats
from kubesched.scheduler.story import PodStories

log = logging.getLogger("kubesched.scheduler")


class Scheduler(EventHandlersMixin, ScheduleOneMixin):
    """Event handlers, the scheduling cycle and the binding cycle over one cache and one queue.

    Each job is a mixin in its own module (eventhandlers.py, schedule_one.py, binding_cycle.py,
    failure.py); this class only builds the shared state and registers with the cluster."""

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
        feature_gates: FeatureGates | None = None,
    ) -> None:
        self.config = config
        #: ``--feature-gates`` of the configuration's release (every gate at its default if None).
        self.feature_gates = feature_gates or FeatureGates(release=str(config.release))
        batching = self.feature_gates.enabled(OPPORTUNISTIC_BATCHING)
        self.cluster = cluster
        self.clock = clock
        self.rng = random.Random(seed)
        self.tie_break = tie_break
        self.metrics = metrics or SchedulerMetrics(release=config.release)
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.stats = SchedulerStats()
        #: Each pod's attempts and waits (the simulator's report); None: not kept.
        self.stories: PodStories | None = None
        #: Called with each pod popped for an attempt, before its cycle (``explain --pod NS/NAME``).
        self.before_attempt: Callable[[QueuedPodInfo], None] | None = None
        self.next_start_node_index = 0
        self.frameworks: dict[str, Framework] = {}
        self.handles: dict[str, FrameworkHandle] = {}
        for profile in config.profiles:
            handle = FrameworkHandle(self, profile.scheduler_name)
            fw = Framework(profile, registry, handle, metrics=self.metrics, opportunistic_batching=batching)
            if batching and config.extenders and fw.signatures_enabled:
                # Upstream ``computeBatchablePlugins``: a profile with extenders never signs pods.
                log.info("Disabling signatures for profile %s because it has extenders configured", fw.profile_name)
                fw.signatures_enabled = False
            handle.framework = fw
            self.frameworks[profile.scheduler_name] = fw
            self.handles[profile.scheduler_name] = handle
        self.queue = SchedulingQueue(
            self.frameworks,
            clock,
            pod_initial_backoff=float(config.pod_initial_backoff_seconds),
            pod_max_backoff=float(config.pod_max_backoff_seconds),
            metrics=self.metrics,
            release=config.release,
        )
        self._bound_uids: set[str] = set()
        self._lock = threading.Lock()
        self._unscheduled_pod_add_events = any(fw.unscheduled_pod_add_events for fw in self.frameworks.values())
        self.log_plugins()
        # The queue's and the cache's gauges, read when scraped (backend/metrics.py).
        register_queue_and_cache_metrics(self.metrics.registry, self)
        # Last, once everything the handlers touch exists (upstream's New calls addAllEventHandlers).
        cluster.add_event_handlers(self)

    def log_plugins(self) -> None:
        for name, fw in self.frameworks.items():
            for point, plugins in fw.list_plugins().items():
                log.info("profile %s: %s plugins: %s", name, point, ", ".join(plugins))
