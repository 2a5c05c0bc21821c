"""client-go's metrics that kube-scheduler exposes next to its own, under their upstream names
(``k8s.io/component-base/metrics/prometheus/restclient`` and ``.../leaderelection``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)


class ClientMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests_total = Counter(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=registry,
        )
        self.rate_limiter_duration = Histogram(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            ["verb", "host"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "
            "'name' is the string used to identify the lease.",
            ["name"],
            registry=registry,
        )
