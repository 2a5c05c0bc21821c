"""Prometheus metrics under kube-scheduler's names, types and labels (``pkg/scheduler/metrics``).

Each scheduler owns its own registry, so several schedulers (tests, side-by-side benchmarks) in one
process never share counters.
"""

from __future__ import annotations

import bisect
import math
import random
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString as _float_to_go_string

from kubesched.config.releases import (
    BATCH_RESCORES_HINTED_NODE,
    DEFAULT_RELEASE,
    POD_SCHEDULED_AFTER_FLUSH_METRIC,
    QUEUED_ENTITIES_METRICS,
    Release,
)
from kubesched.framework.status import Status


def _exp(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class _LightChild:
    __slots__ = ("counts", "sum")

    def __init__(self, n_buckets: int) -> None:
        self.counts = [0] * n_buckets
        self.sum = 0.0


class LightHistogram(Collector):
    """A Prometheus histogram for the scheduling loop's hot path, exposed exactly like
    ``prometheus_client.Histogram`` (same name, help, labels, buckets, ``_bucket``/``_count``/``_sum``
    samples) but observed in about a tenth of the time: one ``bisect`` and two additions under one
    lock, instead of a linear bucket scan and a lock per value. Used for what the scheduler observes
    several times per cycle (extension point and attempt durations)."""

    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str] = (), *, buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.bounds = [float(b) for b in buckets]
        self._lock = threading.Lock()
        self._children: dict[tuple[str, ...], _LightChild] = {}
        registry.register(self)

    def labels(self, *values: str) -> _LightObserver:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected {len(self.labelnames)} label values, got {len(values)}")
        key = tuple(str(v) for v in values)
        with self._lock:
            child = self._children.get(key)
            if child is None:
                # +1: the implicit +Inf bucket.
                child = self._children[key] = _LightChild(len(self.bounds) + 1)
        return _LightObserver(self, child)

    def observe(self, amount: float) -> None:
        """For a histogram without labels."""
        self.labels().observe(amount)

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        with self._lock:
            snapshot = [(k, list(c.counts), c.sum) for k, c in self._children.items()]
        for key, counts, total in snapshot:
            cumulative, buckets = 0, []
            for bound, n in zip([*self.bounds, math.inf], counts, strict=True):
                cumulative += n
                buckets.append((str(_float_to_go_string(bound)), cumulative))  # type: ignore[no-untyped-call]
            family.add_metric(list(key), buckets, total)
        yield family


class _LightObserver:
    __slots__ = ("_bounds", "_child", "_lock")

    def __init__(self, hist: LightHistogram, child: _LightChild) -> None:
        self._bounds = hist.bounds
        self._lock = hist._lock
        self._child = child

    def observe(self, amount: float) -> None:
        i = bisect.bisect_left(self._bounds, amount)  # the first bucket with amount <= bound
        child = self._child
        with self._lock:
            child.counts[i] += 1
            child.sum += amount

    def observe_many(self, amount: float, count: int) -> None:
        """``count`` observations of ``amount`` at once (a batch plugin call answering for
        ``count`` nodes, each counted with the call's mean duration)."""
        if count <= 0:
            return
        i = bisect.bisect_left(self._bounds, amount)
        child = self._child
        with self._lock:
            child.counts[i] += count
            child.sum += amount * count


class _LightCount:
    """One child of a :class:`LightCounter`. ``inc`` takes the lock; the instrumented plugin
    wrappers, which run on every plugin call, add to ``value`` directly (see
    framework/instrumented_plugins.py for why no count is lost)."""

    __slots__ = ("_lock", "value")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self.value = 0

    def inc(self, amount: int = 1) -> None:
        with self._lock:
            self.value += amount


class LightCounter(Collector):
    """A Prometheus counter for what is counted per plugin call (``scheduler_plugin_evaluation_total``),
    exposed like ``prometheus_client.Counter`` without ``_created``: a child is a number, looked
    up once by the caller (the instrumented plugin wrappers), so an increment is an addition."""

    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str], *, registry: CollectorRegistry
    ) -> None:
        self.name = name.removesuffix("_total")
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._lock = threading.Lock()
        self._children: dict[tuple[str, ...], _LightCount] = {}
        registry.register(self)

    def labels(self, *values: str) -> _LightCount:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected {len(self.labelnames)} label values, got {len(values)}")
        key = tuple(str(v) for v in values)
        with self._lock:
            child = self._children.get(key)
            if child is None:
                child = self._children[key] = _LightCount(self._lock)
        return child

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        with self._lock:
            snapshot = [(k, c.value) for k, c in self._children.items()]
        for key, value in snapshot:
            family.add_metric(list(key), value)
        yield family


#: Upstream's ``pluginMetricsSamplePercent`` (pkg/scheduler/schedule_one.go, v1.35): the share of
#: scheduling cycles, and of PreEnqueue runs, whose plugin calls are timed into
#: ``scheduler_plugin_execution_duration_seconds``.
PLUGIN_METRICS_SAMPLE_PERCENT = 10


class PluginDurations:
    """``scheduler_plugin_execution_duration_seconds`` of one plugin at one extension point: the
    label children by status, looked up once (a sampled cycle observes every plugin call)."""

    __slots__ = ("_children", "_hist", "_labels")

    def __init__(self, hist: LightHistogram, plugin: str, point: str) -> None:
        self._hist = hist
        self._labels = (plugin, point)
        self._children: dict[str, _LightObserver] = {}

    def observe(self, status: str, seconds: float, count: int = 1) -> None:
        """``count`` calls (or nodes of one batch call) that ended with ``status`` (upstream's
        ``Code.String()``: Success, Unschedulable, ...) and took ``seconds`` each."""
        if count <= 0:
            return
        child = self._children.get(status)
        if child is None:
            child = self._children[status] = self._hist.labels(*self._labels, status)
        if count == 1:
            child.observe(seconds)
        else:
            child.observe_many(seconds, count)


class SchedulerMetrics:
    """One scheduler's metrics. ``legacy`` adds the two families kube-scheduler removed after
    v1.14 (``--legacy-metrics``), for dashboards written against the guides of that time; each is
    fed by the observation of its successor (see :meth:`observe_attempt` and
    :meth:`framework_extension_point_duration`)."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        legacy: bool = False,
        plugin_metrics_sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT,
        release: Release = DEFAULT_RELEASE,
    ) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.release = release
        #: Upstream's ``WithPluginMetricsSamplePercent`` (tests set 100 to time every cycle).
        self.plugin_metrics_sample_percent = plugin_metrics_sample_percent
        # Its own generator: drawing from the scheduler's seeded one would change tie-breaks.
        self._sample_rng = random.Random()
        # The counters bumped for every pod are LightCounters: exposed as prometheus_client's
        # Counter is with its *_created samples off, as kubesched serves them (kube/server.py).
        self.schedule_attempts = LightCounter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = LightHistogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exp(0.001, 2, 15),
            registry=r,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=_exp(0.001, 2, 15),
            registry=r,
        )
        self.sli_duration = LightHistogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.",
            ["attempts"],
            buckets=_exp(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_attempts = LightHistogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=_exp(1, 2, 5),
            registry=r,
        )
        self.extension_point_duration = LightHistogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=_exp(0.0001, 2, 12),
            registry=r,
        )
        # Recorded for a sample of scheduling cycles (PLUGIN_METRICS_SAMPLE_PERCENT, upstream's
        # pluginMetricsSamplePercent in schedule_one.go), as runtime/framework.go's run*Plugin do
        # when state.ShouldRecordPluginMetrics(); see plugin_duration_recorder.
        self.plugin_execution_duration = LightHistogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=_exp(0.00001, 1.5, 20),
            registry=r,
        )
        # Counted by the instrumented PreFilter/Filter/PreScore/Score plugins
        # (framework/instrumented_plugins.py, upstream's instrumented_plugins.go).
        self.plugin_evaluation_total = LightCounter(
            "scheduler_plugin_evaluation_total",
            "Number of attempts to schedule pods by each plugin and the extension point "
            "(available only in PreFilter, Filter, PreScore, and Score).",
            ["plugin", "extension_point", "profile"],
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type.",
            ["queue"],
            registry=r,
        )
        self.queue_incoming_pods = LightCounter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        # VolumeBinding (volumebinding/metrics/metrics.go); the cache counter is registered and
        # never incremented, as upstream's.
        self.volume_scheduling_stage_errors = Counter(
            "scheduler_volume_scheduling_stage_error",
            "Volume scheduling stage error count",
            ["operation"],
            registry=r,
        )
        self.volume_binder_cache_requests = Counter(
            "scheduler_volume_binder_cache_requests",
            "Total number for request volume binding cache",
            ["operation"],
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=_exp(1, 2, 7),
            registry=r,
        )
        self.preemption_goroutines_duration = Histogram(
            "scheduler_preemption_goroutines_duration_seconds",
            "Duration in seconds for running goroutines for the preemption.",
            ["result"],
            buckets=_exp(0.01, 2, 20),
            registry=r,
        )
        self.preemption_goroutines_execution = Counter(
            "scheduler_preemption_goroutines_execution",
            "Number of preemption goroutines executed.",
            ["result"],
            registry=r,
        )
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name.",
            ["plugin", "profile"],
            registry=r,
        )

        self.event_handling_duration = LightHistogram(
            "scheduler_event_handling_duration_seconds",
            "Event handling latency in seconds.",
            ["event"],
            buckets=_exp(0.0001, 2, 12),
            registry=r,
        )
        self.goroutines = Gauge(
            "scheduler_goroutines",
            "Number of running goroutines split by the work they do such as binding.",
            ["operation"],
            registry=r,
        )

        # OpportunisticBatching (framework/batch.py), registered whether or not the gate is on.
        # LightCounters: bumped in every cycle of a batching profile.
        self.batch_attempts_total = LightCounter(
            "scheduler_batch_attempts",
            "Counts of results when we attempt to use batching.",
            ["profile", "result"],
            registry=r,
        )
        self.batch_cache_flushed_total = LightCounter(
            "scheduler_batch_cache_flushed",
            "Counts of cache flushes by reason.",
            ["profile", "reason"],
            registry=r,
        )
        self.get_node_hint_duration = LightHistogram(
            "scheduler_get_node_hint_duration_seconds",
            "Latency for getting a node hint.",
            ["hinted", "profile"],
            buckets=_exp(0.00001, 2, 12),
            registry=r,
        )
        rescore = release.has(BATCH_RESCORES_HINTED_NODE)
        self.store_schedule_results_duration = LightHistogram(
            "scheduler_store_schedule_results_duration_seconds",
            # v1.35 and v1.36 ship this help text as it is.
            "Latency for storing scheduling results." if rescore else "Latency for getting a no.",
            ["profile"],
            buckets=_exp(0.00001, 2, 12),
            registry=r,
        )
        self.batch_rescore_attempts: Counter | None = None
        self.batch_rescore_duration: LightHistogram | None = None
        if rescore:
            self.batch_rescore_attempts = Counter(
                "scheduler_batch_rescore_attempts",
                "Counts of rescore attempts during opportunistic batching.",
                ["profile"],
                registry=r,
            )
            self.batch_rescore_duration = LightHistogram(
                "scheduler_batch_rescore_duration_seconds",
                "Latency for rescoring a node during opportunistic batching.",
                ["profile"],
                buckets=_exp(0.00001, 2, 12),
                registry=r,
            )

        # The families a release added (pkg/scheduler/metrics/metrics.go at v1.36.3 and v1.37.2).
        self.pod_scheduled_after_flush: Counter | None = None
        if release.has(POD_SCHEDULED_AFTER_FLUSH_METRIC):
            self.pod_scheduled_after_flush = Counter(
                "scheduler_pod_scheduled_after_flush",
                "Number of pods that were successfully scheduled after being flushed from unschedulableEntities "
                "due to timeout. This metric helps detect potential queueing hint misconfigurations or event "
                "handling issues.",
                registry=r,
            )
        self.queued_entities: Gauge | None = None
        self.queue_incoming_entities: LightCounter | None = None
        if release.has(QUEUED_ENTITIES_METRICS):
            self.queued_entities = Gauge(
                "scheduler_queued_entities",
                "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods that "
                "are not members of any podgroup) by the queue type. 'active' means number of entities in activeQ; "
                "'backoff' means number of entities in backoffQ; 'unschedulable' means number of entities in "
                "unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number "
                "of unschedulable entities that the scheduler never attempted to schedule because they are gated.",
                ["queue", "type"],
                registry=r,
            )
            self.queue_incoming_entities = LightCounter(
                "scheduler_queue_incoming_entities",
                "Number of scheduling entities added to scheduling queues by event, queue type, and entity type. "
                "Entity types are either 'pod' (for individual pods that are not members of any podgroup) or "
                "'podgroup'.",
                ["queue", "event", "type"],
                registry=r,
            )

        # --legacy-metrics: kube-scheduler v1.14's deprecated microsecond histograms
        # (pkg/scheduler/metrics/metrics.go at v1.14.10: DeprecatedE2eSchedulingLatency and
        # DeprecatedBindingLatency, ExponentialBuckets(1000, 2, 15), no labels), removed in v1.15+.
        self.legacy_e2e_scheduling_latency: LightHistogram | None = None
        self.legacy_binding_latency: LightHistogram | None = None
        if legacy:
            self.legacy_e2e_scheduling_latency = LightHistogram(
                "scheduler_e2e_scheduling_latency_microseconds",
                "(Deprecated) E2e scheduling latency in microseconds (scheduling algorithm + binding)",
                buckets=_exp(1000, 2, 15),
                registry=r,
            )
            self.legacy_binding_latency = LightHistogram(
                "scheduler_binding_latency_microseconds",
                "(Deprecated) Binding latency in microseconds",
                buckets=_exp(1000, 2, 15),
                registry=r,
            )

        # Label children by label values: ``labels()`` costs more than the observation itself,
        # and these are observed several times per scheduling cycle.
        self._children: dict[tuple[object, ...], Any] = {}
        self._extension_points: dict[tuple[str, object, str], _LightObserver] = {}

    def binding_goroutines(self, delta: int) -> None:
        """``scheduler_goroutines{operation="binding"}`` up or down by one binding cycle."""
        self._child(self.goroutines, "binding").inc(delta)

    def _child(self, metric: Any, *values: str) -> Any:
        key = (metric, *values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    # Narrow entry points used by the framework and queue -------------------------------------
    def framework_extension_point_duration(self, point: str, status: Status, profile: str, seconds: float) -> None:
        # Children by (point, code, profile): about ten observations a scheduled pod.
        key = (point, status.code, profile)
        child = self._extension_points.get(key)
        if child is None:
            child = self._extension_points[key] = self.extension_point_duration.labels(
                point, status.code.upstream_name, profile
            )
        child.observe(seconds)
        if point == "Bind" and self.legacy_binding_latency is not None and status.is_success():
            # v1.14 observed binding_latency_microseconds next to binding_duration_seconds, after
            # a successful Bind only; the Bind extension point's duration is that successor now.
            self.legacy_binding_latency.observe(seconds * 1e6)

    def sample_plugin_metrics(self) -> bool:
        """Whether this scheduling cycle (or PreEnqueue run) times its plugins: upstream's
        ``rand.Intn(100) < pluginMetricsSamplePercent``."""
        return self._sample_rng.randrange(100) < self.plugin_metrics_sample_percent

    def plugin_duration_recorder(self, plugin: str, point: str) -> PluginDurations:
        """What a plugin's calls at ``point`` are timed into, in sampled cycles."""
        return PluginDurations(self.plugin_execution_duration, plugin, point)

    def observe_plugin_duration(self, point: str, plugin: str, status: str, seconds: float) -> None:
        """Upstream ``ObservePluginDurationAsync(point, plugin, status, seconds)``."""
        self._child(self.plugin_execution_duration, plugin, point, status).observe(seconds)

    def plugin_evaluation_counter(self, plugin: str, point: str, profile: str) -> _LightCount:
        """The ``scheduler_plugin_evaluation_total`` child a wrapped plugin increments."""
        return self.plugin_evaluation_total.labels(plugin, point, profile)

    def queue_incoming(self, queue: str, event: str) -> None:
        self._child(self.queue_incoming_pods, queue, event).inc()
        if self.queue_incoming_entities is not None:
            # Every kubesched entity is a pod outside any pod group (no Workload API yet).
            self._child(self.queue_incoming_entities, queue, event, "pod").inc()

    def batch_attempt(self, profile: str, result: str) -> None:
        self._child(self.batch_attempts_total, profile, result).inc()

    def batch_cache_flushed(self, profile: str, reason: str) -> None:
        self._child(self.batch_cache_flushed_total, profile, reason).inc()

    def observe_get_node_hint(self, profile: str, hinted: bool, seconds: float) -> None:
        self._child(self.get_node_hint_duration, "hint" if hinted else "no_hint", profile).observe(seconds)

    def observe_store_schedule_results(self, profile: str, seconds: float) -> None:
        self._child(self.store_schedule_results_duration, profile).observe(seconds)

    def batch_rescore_attempt(self, profile: str) -> None:
        if self.batch_rescore_attempts is not None:
            self._child(self.batch_rescore_attempts, profile).inc()

    def observe_batch_rescore(self, profile: str, seconds: float) -> None:
        if self.batch_rescore_duration is not None:
            self._child(self.batch_rescore_duration, profile).observe(seconds)

    def observe_scheduled_after_flush(self) -> None:
        if self.pod_scheduled_after_flush is not None:
            self.pod_scheduled_after_flush.inc()

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        self._child(self.schedule_attempts, result, profile).inc()
        self._child(self.attempt_duration, result, profile).observe(seconds)
        if result == "scheduled" and self.legacy_e2e_scheduling_latency is not None:
            # v1.14's e2e_scheduling_latency_microseconds: the attempt from the start of the
            # scheduling cycle to the end of binding, as scheduling_attempt_duration_seconds.
            self.legacy_e2e_scheduling_latency.observe(seconds * 1e6)

    def observe_scheduled(self, attempts: int, since_first_attempt: float | None) -> None:
        self._child(self.pod_scheduling_attempts).observe(attempts)
        if since_first_attempt is not None:
            label = str(attempts) if attempts < 15 else "15+"
            self._child(self.sli_duration, label).observe(since_first_attempt)

    def volume_scheduling_stage_failed(self, operation: str) -> None:
        """VolumeBinding failed at ``operation`` (predicate, assume or bind); thread-safe."""
        self.volume_scheduling_stage_errors.labels(operation).inc()

    def observe_preemption_goroutine(self, result: str, seconds: float) -> None:
        """One background preemption finished (``result``: success or error); thread-safe."""
        self.preemption_goroutines_duration.labels(result).observe(seconds)
        self.preemption_goroutines_execution.labels(result).inc()

    def set_pending(self, counts: Mapping[str, int]) -> None:
        for queue, n in counts.items():
            self.pending_pods.labels(queue).set(n)
            if self.queued_entities is not None:
                self.queued_entities.labels(queue, "pod").set(n)

    def observe_event_handling(self, event: str, seconds: float) -> None:
        self._child(self.event_handling_duration, event).observe(seconds)
