"""kube-scheduler's gauges of the queue and the cache, read when scraped (pkg/scheduler/metrics).

Upstream keeps ``scheduler_unschedulable_pods``, ``scheduler_inflight_events`` and
``scheduler_cache_size`` current by incrementing and decrementing them at every change (the cache
refreshes its sizes every second). Here each is computed from the queue or the cache at scrape
time: the same values, no work on the scheduling path, and no drift when a pod leaves by a path
that forgot to decrement (upstream's unschedulable count of a pod deleted while waiting stays until
the gauge is reset). Names, types, help and labels are upstream's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Protocol

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.backend.cache import Cache
from kubesched.backend.queue import SchedulingQueue

#: The label of the in-flight marker of a popped pod (metrics.PodPoppedInFlightEvent).
POD_POPPED = "PodPopped"


class _Source(Protocol):
    queue: SchedulingQueue
    cache: Cache


class QueueAndCacheCollector(Collector):
    def __init__(self, queue: SchedulingQueue, cache: Cache) -> None:
        self.queue = queue
        self.cache = cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        unschedulable = GaugeMetricFamily(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for "
            "all plugins that caused it to not schedule and so this metric have meaning only when broken down "
            "by plugin.",
            labels=["plugin", "profile"],
        )
        for (plugin, profile), n in sorted(self.queue.unschedulable_plugin_counts().items()):
            unschedulable.add_metric([plugin, profile], n)
        yield unschedulable

        inflight = GaugeMetricFamily(
            "scheduler_inflight_events",
            "Number of events currently tracked in the scheduling queue.",
            labels=["event"],
        )
        popped, events = self.queue.in_flight_counts()
        counts = Counter(events)
        counts[POD_POPPED] = popped
        for event, n in sorted(counts.items()):
            inflight.add_metric([event], n)
        yield inflight

        size = GaugeMetricFamily(
            "scheduler_cache_size",
            "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            labels=["type"],
        )
        size.add_metric(["assumed_pods"], self.cache.assumed_count())
        size.add_metric(["nodes"], self.cache.node_count())
        size.add_metric(["pods"], self.cache.pod_count())
        yield size


def register(registry: CollectorRegistry, source: _Source) -> QueueAndCacheCollector:
    collector = QueueAndCacheCollector(source.queue, source.cache)
    registry.register(collector)
    return collector
