"""The contract between the scheduler core and a cluster backend, real or simulated.

Both backends (``kubesched.sim.cluster``, ``kubesched.kube.cluster``) deliver the same events to the
:class:`EventHandlers` registered with them and accept the same actions, so plugins, the queue and
the cache behave identically against kube-apiserver and in the simulator. The scheduler registers
its handlers with the backend, as upstream's ``eventhandlers.go`` (``addAllEventHandlers``) registers
them with the informers: no backend imports the scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .events import ActionType


class BindConflictError(RuntimeError):
    """The pod is already bound or gone (409/404): forget the assumed pod, never bind twice."""


class ObjectConflictError(RuntimeError):
    """An update refused because the object changed since it was read (409), or is gone (404)."""


class RetriableAPIError(RuntimeError):
    """An API error that upstream's ``util.Retriable`` retries (pkg/scheduler/util/utils.go): an
    InternalError, a ServiceUnavailable, or a refused connection. A backend raises it, with the
    API server's text, for errors a retry may fix (the DefaultBinder of v1.37 retries the Binding)."""


class EventHandlers(Protocol):
    """What a backend calls for every change it sees (upstream: the informers' event handlers).

    A backend calls them one at a time (never concurrently), with the object as the API server
    returned it; ``old`` is ``None`` when the backend has no earlier copy."""

    def on_pod_add(self, pod: dict[str, Any]) -> None: ...

    def on_pod_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None: ...

    def on_pod_delete(self, pod: dict[str, Any]) -> None: ...

    def on_node_add(self, node: dict[str, Any]) -> None: ...

    def on_node_update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> None: ...

    def on_node_delete(self, node: dict[str, Any]) -> None: ...

    def on_object_event(self, kind: str, action: ActionType, old: Any, new: Any) -> None:
        """Any other kind a plugin registered for (PVCs, PodGroups, ElasticQuotas, ...)."""
        ...


class ClusterBackend(Protocol):
    def add_event_handlers(self, handlers: EventHandlers) -> None:
        """Deliver every later event to ``handlers`` (one set per backend)."""
        ...

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

    def get_object(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """One object by namespace ("" for cluster-scoped kinds) and name, None when absent."""
        ...

    def update_object_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> None: ...

    def update_object(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """See :meth:`kubesched.framework.interfaces.ClusterClient.update_object`."""
        ...

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """See :meth:`kubesched.framework.interfaces.ClusterClient.create`."""
        ...

    def delete(self, obj: Mapping[str, Any]) -> None:
        """See :meth:`kubesched.framework.interfaces.ClusterClient.delete`."""
        ...

    def submit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` asynchronously (a binding cycle): a thread in the real backend, a
        zero-delay event in the simulator."""
        ...
