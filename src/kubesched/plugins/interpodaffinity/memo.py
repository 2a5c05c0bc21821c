"""Per-node results of matching an incoming pod's terms against the node's pods, kept across cycles.

Matching the incoming pod's required (or preferred) terms against every pod of the cluster is the
expensive part of InterPodAffinity. Pods of one workload carry the same terms, and consecutive
cycles mostly see the same nodes unchanged, so each node's contribution is memoised per term set
and trusted only while the node's NodeInfo generation (bumped on every pod or node change) is the
same.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kubesched.framework.types import NodeInfo

__all__ = ["NodeMemo"]

V = TypeVar("V")


class NodeMemo(Generic[V]):
    """LRU of ``key -> node name -> (generation, value)``."""

    __slots__ = ("_max_keys", "_tables")

    def __init__(self, max_keys: int = 32) -> None:
        self._tables: OrderedDict[Hashable, dict[str, tuple[int, V]]] = OrderedDict()
        self._max_keys = max_keys

    def table(self, key: Hashable) -> dict[str, tuple[int, V]]:
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = {}
            if len(self._tables) > self._max_keys:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        return table

    @staticmethod
    def get(table: dict[str, tuple[int, V]], node_info: NodeInfo, compute: Callable[[NodeInfo], V]) -> V:
        entry = table.get(node_info.name)
        if entry is not None and entry[0] == node_info.generation:
            return entry[1]
        value = compute(node_info)
        table[node_info.name] = (node_info.generation, value)
        return value
