"""Namespace labels for ``namespaceSelector``, read at most once per scheduling cycle.

Upstream reads namespaces from an informer lister; we ask the handle's client, which may be a
real API list. So the list is taken lazily (many cycles never need it) and shared by PreFilter
and PreScore of the same cycle through CycleState.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import cast

from kubesched.api.labels import Selector
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_obj

STATE_KEY = "Namespaces" + names.INTER_POD_AFFINITY


class NamespaceIndex:
    """Namespace name -> labels, listed from the cluster on first use."""

    __slots__ = ("_handle", "_labels")

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._labels: dict[str, Mapping[str, str]] | None = None

    def clone(self) -> NamespaceIndex:
        return self

    def _load(self) -> dict[str, Mapping[str, str]]:
        if self._labels is None:
            out: dict[str, Mapping[str, str]] = {}
            for ns in self._handle.client().list_objects("v1", "Namespace"):
                meta = get_obj(ns, "metadata")
                labels = meta.get("labels")
                out[str(meta.get("name", ""))] = _string_map(labels)
            self._labels = out
        return self._labels

    def labels_of(self, namespace: str) -> Mapping[str, str]:
        """Labels of ``namespace``; a namespace that does not exist has none (upstream logs and goes on)."""
        return _LazyLabels(self, namespace)

    def select(self, selector: Selector) -> frozenset[str]:
        """Names of the namespaces whose labels ``selector`` matches (``nsLister.List(selector)``)."""
        return frozenset(name for name, labels in self._load().items() if selector.matches(labels))


class _LazyLabels(Mapping[str, str]):
    """A namespace's labels, fetched only if a selector actually looks at them."""

    __slots__ = ("_index", "_namespace", "_value")

    def __init__(self, index: NamespaceIndex, namespace: str) -> None:
        self._index = index
        self._namespace = namespace
        self._value: Mapping[str, str] | None = None

    def _get(self) -> Mapping[str, str]:
        if self._value is None:
            self._value = self._index._load().get(self._namespace, {})
        return self._value

    def __getitem__(self, key: str) -> str:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __contains__(self, key: object) -> bool:
        return key in self._get()


def namespace_index(state: CycleState, handle: Handle) -> NamespaceIndex:
    """The cycle's namespace index, created on first request."""
    idx = state.get(STATE_KEY)
    if isinstance(idx, NamespaceIndex):
        return idx
    idx = NamespaceIndex(handle)
    state.write(STATE_KEY, idx)
    return idx


def _string_map(value: object) -> Mapping[str, str]:
    """Namespace labels as listed (the API server has validated them); anything but an object is none."""
    return cast("Mapping[str, str]", value) if isinstance(value, Mapping) else {}
