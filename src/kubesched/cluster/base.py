"""What the scheduler core asks of a cluster backend, real or simulated.

Both backends deliver the same events to the scheduler (``Scheduler.on_*``) and accept the same
actions, so plugins, the queue and the cache behave identically against kube-apiserver and in the
simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol


class BindConflictError(RuntimeError):
    """The pod is already bound or gone (409/404): forget the assumed pod, never bind twice."""


class ClusterBackend(Protocol):
    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The informer's current copy of a pod (None if deleted)."""
        ...

    def bind(self, pod: Mapping[str, Any], node_name: str) -> None: ...

    def delete_pod(self, pod: Mapping[str, Any], reason: str = "") -> None: ...

    def patch_pod_metadata(
        self,
        pod: Mapping[str, Any],
        *,
        annotations: Mapping[str, str | None] | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> None: ...

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None: ...

    def record_event(
        self,
        regarding: Mapping[str, Any],
        related: Mapping[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
        reporting_controller: str,
    ) -> None: ...

    def list_objects(self, api_version: str, kind: str) -> list[dict[str, Any]]: ...

    def update_object_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> None: ...

    def submit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` asynchronously (a binding cycle): a thread in the real backend, a
        zero-delay event in the simulator."""
        ...
