"""``FakeHandle``: the plugin :class:`~kubesched.framework.interfaces.Handle` without a scheduler.

For unit tests that call a plugin's methods directly. Every member of the Protocol is there, with
an inert default: an empty snapshot (or the one given), a virtual clock, no metrics, a seeded
random source, no waiting or nominated pods, a client over a fixed list of objects that records
what it is asked to do, and an event recorder that keeps the events. A test that needs more
overrides one method in a subclass. ``new_framework`` (the real runtime) is the better tool when
the test is about how plugins run together.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.framework.clock import Clock, VirtualClock
from kubesched.framework.cluster import ObjectConflictError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEvent
from kubesched.framework.interfaces import Handle, PluginMetrics
from kubesched.framework.pods_in_pre_bind import PodInPreBind
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, Obj, PodInfo
from kubesched.framework.waiting_pods import WaitingPod

__all__ = ["FakeClient", "FakeHandle", "RecordedEvent"]


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    regarding: JSONObj
    related: JSONObj | None
    type_: str
    reason: str
    action: str
    note: str


class FakeClient:
    """A :class:`~kubesched.framework.interfaces.ClusterClient` over ``objects`` (what informers
    would hold): ``list_objects`` filters them by apiVersion and kind, ``get_pod`` finds a Pod among
    them, every write is appended to ``calls`` and changes nothing, ``submit`` runs at once."""

    def __init__(self, objects: Iterable[Mapping[str, object]] = ()) -> None:
        self.objects: list[Obj] = [dict(o) for o in objects]
        self.calls: list[tuple[str, JSONObj]] = []

    def get_pod(self, namespace: str, name: str) -> Obj | None:
        for o in self.objects:
            meta = o.get("metadata") or {}
            same_namespace = (meta.get("namespace") or "default") == namespace
            if o.get("kind") == "Pod" and meta.get("name") == name and same_namespace:
                return o
        return None

    def bind(self, pod: JSONObj, node_name: str) -> None:
        self.calls.append(("bind", pod))

    def delete_pod(self, pod: JSONObj, reason: str = "") -> None:
        self.calls.append(("delete_pod", pod))

    def patch_pod_metadata(
        self,
        pod: JSONObj,
        *,
        annotations: Mapping[str, str | None] | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> None:
        self.calls.append(("patch_pod_metadata", pod))

    def patch_pod_status(self, pod: JSONObj, patch: JSONObj) -> None:
        self.calls.append(("patch_pod_status", pod))

    def list_objects(self, api_version: str, kind: str) -> list[Obj]:
        return [
            o for o in self.objects
            if o.get("kind") == kind and (not api_version or o.get("apiVersion", "v1") == api_version)
        ]

    def get_object(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        for o in self.list_objects(api_version, kind):
            meta = o.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "") == namespace:
                return o
        return None

    def update_object_status(self, obj: JSONObj, status: JSONObj) -> None:
        self.calls.append(("update_object_status", obj))

    def update_object(self, obj: JSONObj) -> Obj:
        """Replace the stored object of the same kind, namespace and name (recorded in ``calls``):
        refused when the given resourceVersion is not the stored one; the stored copy gets the next
        (numeric) resourceVersion, as from the API server."""
        self.calls.append(("update_object", obj))
        md = cast("Mapping[str, object]", obj.get("metadata") or {})
        for i, o in enumerate(self.objects):
            meta = cast("Mapping[str, object]", o.get("metadata") or {})
            if (
                o.get("kind") == obj.get("kind")
                and meta.get("name") == md.get("name")
                and (meta.get("namespace") or "") == (md.get("namespace") or "")
            ):
                given = str(md.get("resourceVersion") or "")
                stored = str(meta.get("resourceVersion") or "")
                if given and given != stored:  # the API server's optimistic concurrency
                    raise ObjectConflictError(
                        f'Operation cannot be fulfilled on {obj.get("kind")} "{md.get("name")}": the object has '
                        "been modified; please apply your changes to the latest version and try again"
                    )
                new = dict(obj)
                version = str(int(stored) + 1) if stored.isdigit() else stored
                new_md: dict[str, object] = {**md, "resourceVersion": version}
                new["metadata"] = cast("Obj", new_md)
                self.objects[i] = new
                return new
        raise ObjectConflictError(f'{obj.get("kind")} "{md.get("name")}" not found')

    def create(self, obj: JSONObj) -> Obj:
        """Store a copy (recorded in ``calls``): ``generateName`` completed with ``0``, ``1``, ...
        (upstream's fake clientset's reactor), UID ``<name>-uid``, resourceVersion ``1``."""
        self.calls.append(("create", obj))
        md: dict[str, object] = dict(cast("Mapping[str, object]", obj.get("metadata") or {}))
        if not md.get("name") and md.get("generateName"):
            md["name"] = f"{md['generateName']}{sum(1 for c in self.calls if c[0] == 'create') - 1}"
        md["uid"] = f"{md.get('name')}-uid"
        md["resourceVersion"] = "1"
        new: Obj = {**{k: v for k, v in obj.items() if k != "status"}, "metadata": cast("Obj", md)}
        self.objects.append(new)
        return new

    def delete(self, obj: JSONObj) -> None:
        """Remove the object of the same kind, namespace and name (recorded in ``calls``)."""
        self.calls.append(("delete", obj))
        md = cast("Mapping[str, object]", obj.get("metadata") or {})
        self.objects = [
            o
            for o in self.objects
            if not (
                o.get("kind") == obj.get("kind")
                and (o.get("metadata") or {}).get("name") == md.get("name")
                and ((o.get("metadata") or {}).get("namespace") or "") == (md.get("namespace") or "")
            )
        ]

    def submit(self, fn: Callable[[], None]) -> None:
        fn()


class _Recorder:
    def __init__(self, events: list[RecordedEvent]) -> None:
        self._events = events

    def eventf(
        self, regarding: JSONObj, related: JSONObj | None, type_: str, reason: str, action: str, note: str
    ) -> None:
        self._events.append(RecordedEvent(regarding, related, type_, reason, action, note))


class FakeHandle:
    """Every member of :class:`~kubesched.framework.interfaces.Handle`, inert (see the module)."""

    def __init__(
        self,
        snapshot: Snapshot | None = None,
        objects: Iterable[Mapping[str, object]] = (),
        *,
        clock: Clock | None = None,
        profile_name: str = "default-scheduler",
        metrics: PluginMetrics | None = None,
        seed: int = 0,
        release: Release = DEFAULT_RELEASE,
    ) -> None:
        self.snapshot = snapshot or Snapshot()
        self._release = release
        self._client = FakeClient(objects)
        self._clock: Clock = clock or VirtualClock(0.0)
        self._profile_name = profile_name
        self._metrics = metrics
        self._rng = random.Random(seed)
        self.events: list[RecordedEvent] = []
        #: Pods passed to :meth:`activate`, and events passed to :meth:`move_pods_on_event`.
        self.activated: list[JSONObj] = []
        self.moved: list[ClusterEvent] = []

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def metrics(self) -> PluginMetrics | None:
        return self._metrics

    @property
    def rng(self) -> random.Random:
        return self._rng

    @property
    def parallelism(self) -> int:
        return 16

    @property
    def release(self) -> Release:
        return self._release

    def snapshot_shared_lister(self) -> Snapshot:
        return self.snapshot

    def event_recorder(self) -> _Recorder:
        return _Recorder(self.events)

    def client(self) -> FakeClient:
        return self._client

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return None

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        return None

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        return False

    def activate(self, pods: Sequence[JSONObj]) -> None:
        self.activated.extend(pods)

    def move_pods_on_event(self, event: ClusterEvent, old: object = None, new: object = None) -> None:
        self.moved.append(event)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status:
        return Status(Code.SUCCESS)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return Status(Code.SUCCESS)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return Status(Code.SUCCESS)


if TYPE_CHECKING:
    from kubesched.scheduler import FrameworkHandle

    def _scheduler_handle_is_a_handle(h: FrameworkHandle) -> Handle:
        return h

    def _fake_handle_is_a_handle(h: FakeHandle) -> Handle:
        return h
