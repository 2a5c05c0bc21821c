"""Pods held at Permit (upstream ``framework/runtime/waiting_pods_map.go``).

A waiting pod proceeds when every plugin that asked it to wait allows it; one rejection, or one
plugin's timeout, rejects it. The outcome is delivered once, to the callback the scheduler
registered, which continues (or unwinds) the binding cycle.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from .clock import Clock, Timer
from .status import Code, Status
from .types import PodInfo


class WaitingPod:
    """A pod held at Permit. ``plugin_timeouts`` are seconds as the plugins returned them (capped
    at 15 min by the framework); zero or negative ones time out at once, as Go's
    ``time.AfterFunc`` does, and the rejection message prints the value as upstream does."""

    def __init__(self, pod: PodInfo, node_name: str, plugin_timeouts: dict[str, float], clock: Clock) -> None:
        self.pod_info = pod
        self.node_name = node_name
        self._pending = set(plugin_timeouts)
        self._lock = threading.Lock()
        self._result: Status | None = None
        self._callback: Callable[[Status], None] | None = None
        #: One timer per waiting plugin; a plugin's Allow stops its own timer (upstream).
        self._timers: dict[str, Timer] = {}
        for plugin, timeout in plugin_timeouts.items():
            self._timers[plugin] = clock.call_later(timeout, self._timeout_fn(plugin, timeout))

    def _timeout_fn(self, plugin: str, timeout: float) -> Callable[[], None]:
        def fire() -> None:
            self.reject(plugin, f"rejected due to timeout after waiting {_go_duration(timeout)} at plugin {plugin}")

        return fire

    @property
    def pod(self) -> dict[str, object]:
        return self.pod_info.pod

    def get_pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        with self._lock:
            if self._result is not None:
                return
            self._pending.discard(plugin)
            timer = self._timers.pop(plugin, None)
            if timer is not None:
                timer.cancel()
            if self._pending:
                return
            self._result = Status(Code.SUCCESS)
        self._finish()

    def reject(self, plugin: str, message: str) -> None:
        self._stop(Code.UNSCHEDULABLE, plugin, message)

    def preempt(self, plugin: str, message: str) -> bool:
        """Upstream ``Preempt`` (v1.36+): stop waiting with an Error, so the pod backs off and is
        retried instead of waiting for an event as a rejected pod does. False if the pod was no
        longer waiting (allowed, rejected or timed out): the preemptor then deletes it."""
        return self._stop(Code.ERROR, plugin, message)

    def _stop(self, code: Code, plugin: str, message: str) -> bool:
        with self._lock:
            if self._result is not None:
                return False
            self._result = Status(code, message, plugin=plugin)
        self._finish()
        return True

    def on_done(self, callback: Callable[[Status], None]) -> None:
        """Register the continuation; called at once if the outcome is already known."""
        with self._lock:
            self._callback = callback
            done = self._result is not None
        if done:
            self._deliver()

    def _finish(self) -> None:
        for t in self._timers.values():
            t.cancel()
        self._deliver()

    def _deliver(self) -> None:
        with self._lock:
            cb, result = self._callback, self._result
            if cb is None or result is None:
                return
            self._callback = None
        cb(result)


class WaitingPodsMap:
    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, wp: WaitingPod) -> None:
        with self._lock:
            self._pods[wp.pod_info.uid] = wp

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def iterate(self, fn: Callable[[WaitingPod], None]) -> None:
        with self._lock:
            pods = list(self._pods.values())
        for wp in pods:
            fn(wp)

    def __len__(self) -> int:
        return len(self._pods)


_NS = 10**9
_INT64 = 2**63


def _go_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration.String`` prints it ("15m0s", "1.5s", "500ms", "-5s"):
    rounded to nanoseconds and held in int64's range, as a Duration is."""
    ns = round(seconds * _NS) if math.isfinite(seconds) else (_INT64 if seconds > 0 else -_INT64)
    ns = max(-_INT64, min(ns, _INT64 - 1))
    u = abs(ns)
    if u == 0:
        return "0s"
    if u < 1000:
        text = f"{u}ns"
    elif u < 10**6:
        text = _decimal(u, 1000) + "µs"
    elif u < _NS:
        text = _decimal(u, 10**6) + "ms"
    else:
        h, rem = divmod(u, 3600 * _NS)
        m, rem = divmod(rem, 60 * _NS)
        text = (f"{h}h" if h else "") + (f"{m}m" if h or m else "") + _decimal(rem, _NS) + "s"
    return "-" + text if ns < 0 else text


def _decimal(value: int, unit: int) -> str:
    """``value / unit`` in decimal without trailing zeros (Go's ``fmtFrac``)."""
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{frac:0{digits}d}".rstrip("0")
