"""Label and taint columns of the NodeTable, for the batch forms of label- and taint-based plugins.

* **Labels**: for each label key some plugin asked about, an int32 column of *value ids* (0: the node
  has no such label, ``1 + i``: the i-th distinct value seen). A requirement on the key becomes a
  lookup table over value ids (``In``: the ids of its values; ``Gt``: the values that parse above the
  bound...), evaluated once per distinct value instead of once per node, then one gather.
* **Taints**: every distinct taint list gets an id, interned for the life of the process, so a pod's
  tolerations are checked once per distinct list and cached on the pod by id.

Columns are created on first use and kept current by ``NodeTable.set_row`` for the rows that change.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .types import HostPortInfo

I32 = npt.NDArray[np.int32]
Bools = npt.NDArray[np.bool_]

_EMPTY: Mapping[str, str] = {}


class LabelColumn:
    """Value ids of one label key for every row (0: absent)."""

    __slots__ = ("_luts", "ids", "strings", "values")

    def __init__(self, key: str, rows: Sequence[Mapping[str, str]]) -> None:
        self.strings: list[str] = []
        self.ids: dict[str, int] = {}
        self._luts: dict[Any, Bools] = {}
        self.values: I32 = np.fromiter(
            (self.id_of(labels.get(key)) for labels in rows), dtype=np.int32, count=len(rows)
        )

    def id_of(self, value: str | None) -> int:
        """1 + index of ``value`` among the distinct values (0 for an absent label)."""
        if value is None:
            return 0
        i = self.ids.get(value)
        if i is None:
            self.strings.append(value)
            i = self.ids[value] = len(self.strings)
        return i

    def lut(self, absent: bool, present: Any) -> Bools:
        """A lookup table over value ids: ``absent`` for id 0, ``present(value)`` for the others."""
        out = np.empty(len(self.strings) + 1, dtype=np.bool_)
        out[0] = absent
        for i, s in enumerate(self.strings, 1):
            out[i] = bool(present(s))
        return out

    def cached_lut(self, key: Any, absent: bool, present: Any) -> Bools:
        """:meth:`lut`, remembered under ``key`` and only extended for values seen since."""
        old = self._luts.get(key)
        n = len(self.strings) + 1
        if old is not None and len(old) == n:
            return old
        out = np.empty(n, dtype=np.bool_)
        start = 1
        if old is not None:
            out[: len(old)] = old
            start = len(old)
        out[0] = absent
        for i in range(start, n):
            out[i] = bool(present(self.strings[i - 1]))
        self._luts[key] = out
        return out

    def lut_in(self, values: frozenset[str] | set[str], absent: bool, negate: bool = False) -> Bools:
        """Lookup table of "value in ``values``" (or not in, with ``negate``) over value ids."""
        out = np.full(len(self.strings) + 1, negate, dtype=np.bool_)
        for v in values:
            i = self.ids.get(v)
            if i is not None:
                out[i] = not negate
        out[0] = absent
        return out


def taint_key(taints: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """What toleration matching reads of a taint list: (key, value, effect) of each taint, in order."""
    return tuple((str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or "")) for t in taints)


class TaintSets:
    """Process-wide interning of node taint lists: id -> the list (id 0 is "no taints")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: dict[tuple[tuple[str, str, str], ...], int] = {(): 0}
        self.lists: list[Sequence[Mapping[str, Any]]] = [()]

    def id_of(self, taints: Sequence[Mapping[str, Any]]) -> int:
        if not taints:
            return 0
        key = taint_key(taints)
        i = self._ids.get(key)
        if i is None:
            with self._lock:
                i = self._ids.get(key)
                if i is None:
                    i = len(self.lists)
                    self.lists.append(list(taints))
                    self._ids[key] = i
        return i

    def __len__(self) -> int:
        return len(self.lists)


TAINT_SETS = TaintSets()


def per_taint_set(cache: dict[str, Any], key: str, fn: Any) -> npt.NDArray[Any]:
    """``fn(taints)`` for every interned taint list, as an array indexed by taint-set id, cached in
    ``cache`` (a pod's cache) and extended when new lists appear."""
    arr: npt.NDArray[Any] | None = cache.get(key)
    n = len(TAINT_SETS)
    if arr is None or len(arr) < n:
        start = 0 if arr is None else len(arr)
        fresh = np.array([fn(TAINT_SETS.lists[i]) for i in range(start, n)])
        arr = fresh if arr is None else np.concatenate([arr, fresh])
        cache[key] = arr
    return arr


class PortSets:
    """Process-wide interning of the host ports in use on a node (``HostPortInfo.key()``): id ->
    a HostPortInfo holding them (id 0 is "no port in use"), as :class:`TaintSets` for taints."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: dict[frozenset[tuple[str, str, int]], int] = {frozenset(): 0}
        self.sets: list[HostPortInfo] = [HostPortInfo()]

    def id_of(self, used: HostPortInfo) -> int:
        if not used:
            return 0
        key = used.key()
        i = self._ids.get(key)
        if i is None:
            with self._lock:
                i = self._ids.get(key)
                if i is None:
                    i = len(self.sets)
                    self.sets.append(used.clone())
                    self._ids[key] = i
        return i

    def __len__(self) -> int:
        return len(self.sets)


PORT_SETS = PortSets()


def per_port_set(cache: dict[str, Any], key: str, fn: Any) -> npt.NDArray[Any]:
    """``fn(ports_in_use)`` for every interned port set, as an array indexed by port-set id, cached
    in ``cache`` (a pod's cache) and extended when new sets appear."""
    arr: npt.NDArray[Any] | None = cache.get(key)
    n = len(PORT_SETS)
    if arr is None or len(arr) < n:
        start = 0 if arr is None else len(arr)
        fresh = np.array([fn(PORT_SETS.sets[i]) for i in range(start, n)])
        arr = fresh if arr is None else np.concatenate([arr, fresh])
        cache[key] = arr
    return arr


class RowTracker:
    """Which node-table rows were rewritten since the last look, from the table's change log
    (``NodeTable.changes``: every ``set_row``, i.e. every node whose pods or object changed).

    For per-plugin indexes kept across cycles: ``changes`` returns the rewritten rows (in order,
    once each), or None when the table itself was replaced (a node came or went: rows moved) or
    the log no longer reaches back that far, meaning "recompute all"."""

    __slots__ = ("_pos", "_table")

    def __init__(self) -> None:
        self._table: Any = None
        self._pos = 0

    def changes(self, table: Any) -> list[int] | None:
        log: list[int] = table.changes
        end = table.changes_base + len(log)
        if table is not self._table or self._pos < table.changes_base:
            self._table = table
            self._pos = end
            return None
        start = self._pos - table.changes_base
        self._pos = end
        if start == len(log):
            return []
        return list(dict.fromkeys(log[start:]))
