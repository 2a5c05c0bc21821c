"""Typed listers of the storage objects the volume plugins read (upstream's informer listers:
``PersistentVolumeClaims(ns).Get``, ``PersistentVolumes().Get``, ``StorageClasses().Get``,
``CSINodes().Get``, ``CSIDrivers().Get``, ``CSIStorageCapacities().List``,
``VolumeAttachments().List``).

They read the backend's stores through the handle's client (``get_object``, ``list_objects``) and
return :mod:`kubesched.api.storage` views, parsed once per object version: a view is kept with
the object it was parsed from and reused while the store still holds that same object (informers
and the simulator replace an object on every update, never mutate it). "Not found" is None; the
caller words upstream's error with :func:`~kubesched.api.storage.not_found_message`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar, cast

from kubesched.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    StorageClass,
    VolumeAttachment,
    pod_volumes,
)
from kubesched.framework.interfaces import Handle
from kubesched.framework.types import JSONObj, PodInfo

__all__ = ["StorageListers", "volumes_of"]

V = TypeVar("V")
CORE = "v1"
STORAGE = "storage.k8s.io/v1"
#: Views kept at most; past it the cache starts over (objects deleted long ago go with it).
_MAX_CACHED = 200_000


_VOLUMES_KEY = "storage/volumes"


def volumes_of(pod: PodInfo) -> tuple[PodVolume, ...]:
    """The pod's volumes (:func:`~kubesched.api.storage.pod_volumes`), parsed once per pod version
    and shared by the volume plugins (most pods have a service-account token volume)."""
    cached = pod.cache.get(_VOLUMES_KEY)
    if cached is None:
        cached = pod.cache[_VOLUMES_KEY] = pod_volumes(pod.pod)
    return cast("tuple[PodVolume, ...]", cached)


class StorageListers:
    """The storage listers of one plugin instance (see the module docstring)."""

    def __init__(self, handle: Handle | None) -> None:
        self._handle = handle
        self._views: dict[tuple[str, str], tuple[JSONObj, object]] = {}

    def _view(self, kind: str, key: str, obj: JSONObj | None, parse: Callable[[JSONObj], V]) -> V | None:
        if obj is None:
            return None
        cached = self._views.get((kind, key))
        if cached is not None and cached[0] is obj:
            return cast(V, cached[1])
        view = parse(obj)
        if len(self._views) >= _MAX_CACHED:
            self._views.clear()
        self._views[(kind, key)] = (obj, view)
        return view

    def _get(self, api_version: str, kind: str, namespace: str, name: str) -> JSONObj | None:
        if self._handle is None:
            return None
        return self._handle.client().get_object(api_version, kind, namespace, name)

    def _list(self, api_version: str, kind: str, parse: Callable[[JSONObj], V]) -> list[V]:
        if self._handle is None:
            return []
        out: list[V] = []
        for obj in self._handle.client().list_objects(api_version, kind):
            md = obj.get("metadata")
            name = md.get("name") if isinstance(md, Mapping) else None
            ns = md.get("namespace") if isinstance(md, Mapping) else None
            view = self._view(kind, f"{ns or ''}/{name or ''}", obj, parse)
            if view is not None:
                out.append(view)
        return out

    # -- lookups ------------------------------------------------------------------------------------
    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        obj = self._get(CORE, "PersistentVolumeClaim", namespace, name)
        return self._view("PersistentVolumeClaim", f"{namespace}/{name}", obj, PersistentVolumeClaim.from_object)

    def pv(self, name: str) -> PersistentVolume | None:
        obj = self._get(CORE, "PersistentVolume", "", name)
        return self._view("PersistentVolume", f"/{name}", obj, PersistentVolume.from_object)

    def storage_class(self, name: str) -> StorageClass | None:
        obj = self._get(STORAGE, "StorageClass", "", name)
        return self._view("StorageClass", f"/{name}", obj, StorageClass.from_object)

    def csi_node(self, name: str) -> CSINode | None:
        obj = self._get(STORAGE, "CSINode", "", name)
        return self._view("CSINode", f"/{name}", obj, CSINode.from_object)

    def csi_driver(self, name: str) -> CSIDriver | None:
        obj = self._get(STORAGE, "CSIDriver", "", name)
        return self._view("CSIDriver", f"/{name}", obj, CSIDriver.from_object)

    # -- lists --------------------------------------------------------------------------------------
    def pvs(self) -> list[PersistentVolume]:
        return self._list(CORE, "PersistentVolume", PersistentVolume.from_object)

    def csi_storage_capacities(self) -> list[CSIStorageCapacity]:
        return self._list(STORAGE, "CSIStorageCapacity", CSIStorageCapacity.from_object)

    def volume_attachments(self) -> list[VolumeAttachment]:
        return self._list(STORAGE, "VolumeAttachment", VolumeAttachment.from_object)
