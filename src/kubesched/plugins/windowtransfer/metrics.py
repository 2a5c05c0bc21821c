"""WindowTransfer's Prometheus metrics, in the registry of the scheduler that runs the plugin.

Each scheduler owns a registry (``kubesched.metrics``); the collectors are created once per
registry and labelled by profile, so two profiles using the plugin share them without clashing.
"""

from __future__ import annotations

import threading
import weakref

from prometheus_client import CollectorRegistry, Counter, Gauge

from kubesched.framework.interfaces import Handle

WAITING_PODS = "kubesched_window_transfer_waiting_pods"
WINDOW_OPENINGS = "kubesched_window_transfer_window_openings"


class WindowTransferMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.waiting_pods = Gauge(
            WAITING_PODS,
            "Number of pods waiting for their transfer window to open, by profile.",
            ["profile"],
            registry=registry,
        )
        self.window_openings = Counter(
            WINDOW_OPENINGS,
            "Number of transfer-window openings at which pods were waiting and were released, by profile.",
            ["profile"],
            registry=registry,
        )


_lock = threading.Lock()
_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, WindowTransferMetrics] = weakref.WeakKeyDictionary()


def metrics_for(handle: Handle) -> WindowTransferMetrics:
    """The collectors in the registry of the handle's scheduler (``handle.metrics``); a handle
    without one, as in a bare unit test, gets a registry of its own."""
    metrics = handle.metrics if handle is not None else None  # no handle: a Framework checking a configuration
    registry = metrics.registry if metrics is not None else CollectorRegistry()
    with _lock:
        m = _by_registry.get(registry)
        if m is None:
            m = _by_registry[registry] = WindowTransferMetrics(registry)
        return m
