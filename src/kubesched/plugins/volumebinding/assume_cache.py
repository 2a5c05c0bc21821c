"""Assume caches of PersistentVolumes and PersistentVolumeClaims (upstream
``volumebinding/passive_assume_cache.go``).

Reserve writes what it is about to bind into these caches (a PV with its new ``claimRef``, a claim
with the ``selected-node`` annotation), so that the next pods are scheduled as if the bindings were
done while PreBind is still writing them. An assumption holds while the informer still has the
version it was made from: any newer version of the object (the binding itself, or anyone else's
change) replaces it. Passive: nothing is copied out of the informer; the backend's store is read on
every lookup, so there is no second copy to keep in step.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.framework.types import JSONObj

__all__ = ["AssumeCache", "NotFoundError", "OutOfSyncError", "PVAssumeCache", "PVCAssumeCache"]


class _Versioned(Protocol):
    @property
    def resource_version(self) -> str: ...


V = TypeVar("V", bound=_Versioned)


class NotFoundError(LookupError):
    """``apierrors.NewNotFound`` with the cache's GroupResource (plural, unlike the listers')."""


class OutOfSyncError(RuntimeError):
    """Assume of an object older (or newer) than the informer's copy."""


class AssumeCache(Generic[V]):
    """Keyed by ``namespace/name`` (``name`` for cluster-scoped kinds)."""

    def __init__(
        self,
        resource: str,
        fetch: Callable[[str], JSONObj | None],
        parse: Callable[[JSONObj], V],
        key_of: Callable[[V], str],
    ) -> None:
        self._resource = resource
        self._fetch = fetch
        self._parse = parse
        self._key_of = key_of
        self._assumed: dict[str, V] = {}
        self._views: dict[str, tuple[JSONObj, V]] = {}
        self._lock = threading.Lock()

    def _api_view(self, key: str, obj: JSONObj | None) -> V | None:
        if obj is None:
            return None
        cached = self._views.get(key)
        if cached is not None and cached[0] is obj:
            return cached[1]
        view = self._parse(obj)
        if len(self._views) > 100_000:
            self._views.clear()
        self._views[key] = (obj, view)
        return view

    def get_api_obj(self, key: str) -> V:
        """The informer's copy (``GetAPIObj``); NotFoundError when absent."""
        view = self._api_view(key, self._fetch(key))
        if view is None:
            raise NotFoundError(f'{self._resource} "{key}" not found')
        return view

    def get(self, key: str) -> V:
        """The assumed version while the informer has not moved past it, else the informer's."""
        with self._lock:
            obj = self.get_api_obj(key)
            assumed = self._assumed.get(key)
            if assumed is None or assumed.resource_version != obj.resource_version:
                return obj
            return assumed

    def substitute(self, view: V) -> V:
        """``replaceAssumed`` for one listed object: its assumed version when still current."""
        assumed = self._assumed.get(self._key_of(view))
        return assumed if assumed is not None and assumed.resource_version == view.resource_version else view

    def assume(self, view: V) -> None:
        """Record ``view`` (a changed copy of the informer's object, same resourceVersion)."""
        key = self._key_of(view)
        with self._lock:
            stored = self.get_api_obj(key)
            if stored.resource_version != view.resource_version:
                raise OutOfSyncError(
                    f'"{key}" is out of sync (stored: {stored.resource_version}, assume: {view.resource_version})'
                )
            self._assumed[key] = view

    def restore(self, view: V) -> None:
        """Drop the assumption made with ``view`` (if it is still the one recorded)."""
        key = self._key_of(view)
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is not None and assumed.resource_version == view.resource_version:
                del self._assumed[key]

    def assumed_count(self) -> int:
        return len(self._assumed)


def _pv_key(pv: PersistentVolume) -> str:
    return pv.name


def _pvc_key(pvc: PersistentVolumeClaim) -> str:
    return pvc.key


class PVAssumeCache(AssumeCache[PersistentVolume]):
    """PersistentVolumes, listed by storage class (upstream's class index)."""

    def __init__(
        self, fetch: Callable[[str], JSONObj | None], list_all: Callable[[], Sequence[JSONObj]]
    ) -> None:
        super().__init__("persistentvolumes", fetch, PersistentVolume.from_object, _pv_key)
        self._list_all = list_all

    def list_pvs(self, storage_class: str) -> list[PersistentVolume]:
        """``ListPVs``: the PVs of the class (``GetPersistentVolumeClass``), assumed versions substituted."""
        out: list[PersistentVolume] = []
        with self._lock:
            for obj in self._list_all():
                md = obj.get("metadata")
                name = md.get("name") if isinstance(md, Mapping) else None
                view = self._api_view(str(name or ""), obj)
                if view is not None:
                    view = self.substitute(view)
                    if view.storage_class == storage_class:
                        out.append(view)
        return out


class PVCAssumeCache(AssumeCache[PersistentVolumeClaim]):
    def __init__(self, fetch: Callable[[str], JSONObj | None]) -> None:
        super().__init__("persistentvolumeclaims", fetch, PersistentVolumeClaim.from_object, _pvc_key)
