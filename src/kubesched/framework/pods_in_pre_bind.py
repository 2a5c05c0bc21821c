"""Pods whose binding cycle is in PreBind, so preemption can cancel their binding (v1.36+).

Upstream ``pkg/scheduler/framework/runtime/pods_in_prebind_map.go``: a pod is registered when its
PreBindPreFlight succeeded (some plugin works at PreBind) and removed when its binding cycle
leaves PreBind. Preemption's ``CancelPod`` succeeds unless the pod already finished PreBind
(``MarkPrebound``); a cancelled pod's binding cycle then ends with the cancellation as its Error,
and the pod goes to backoffQ instead of being deleted through the API. Upstream cancels the
PreBind calls' context too; a Python plugin call cannot be interrupted, so the cancellation is
seen when PreBind returns, before Bind.
"""

from __future__ import annotations

import threading


class PodInPreBind:
    """Upstream ``podInPreBind``: cancelled or pre-bound, whichever comes first."""

    __slots__ = ("_lock", "canceled", "cause", "finished")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.finished = False
        self.canceled = False
        self.cause = ""

    def cancel_pod(self, message: str) -> bool:
        """Cancel the binding unless PreBind already finished; True if it is (or was) cancelled."""
        with self._lock:
            if self.finished:
                return False
            if not self.canceled:
                self.cause = message
            self.canceled = True
            return True

    def mark_prebound(self) -> bool:
        """PreBind is over: False if the binding was cancelled meanwhile."""
        with self._lock:
            if self.canceled:
                return False
            self.finished = True
            return True


class PodsInPreBindMap:
    def __init__(self) -> None:
        self._pods: dict[str, PodInPreBind] = {}
        self._lock = threading.Lock()

    def add(self, uid: str) -> PodInPreBind:
        entry = PodInPreBind()
        with self._lock:
            self._pods[uid] = entry
        return entry

    def get(self, uid: str) -> PodInPreBind | None:
        with self._lock:
            return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)


__all__ = ["PodInPreBind", "PodsInPreBindMap"]
