"""Matching-pod counts per node, kept across scheduling cycles.

Counting a selector's matching pods is the expensive part of PodTopologySpread (every pod of every
node). Consecutive cycles mostly see the same nodes unchanged, and pods of one workload share
their selectors, so counts are memoised per (selector, namespace) and node, and trusted only
while the node's NodeInfo generation, bumped on every pod or node change, is the same.
"""

from __future__ import annotations

from collections import OrderedDict

from kubesched.api.labels import Selector
from kubesched.framework.types import NodeInfo

from .common import count_pods_match_selector

__all__ = ["MatchCountMemo"]


class MatchCountMemo:
    """LRU of ``(selector, namespace) -> node name -> (generation, count)``."""

    __slots__ = ("_max_keys", "_tables")

    def __init__(self, max_keys: int = 64) -> None:
        self._tables: OrderedDict[tuple[Selector, str], dict[str, tuple[int, int]]] = OrderedDict()
        self._max_keys = max_keys

    def table(self, selector: Selector, namespace: str) -> dict[str, tuple[int, int]]:
        key = (selector, namespace)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = {}
            if len(self._tables) > self._max_keys:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        return table

    @staticmethod
    def count(table: dict[str, tuple[int, int]], node_info: NodeInfo, selector: Selector, namespace: str) -> int:
        entry = table.get(node_info.name)
        if entry is not None and entry[0] == node_info.generation:
            return entry[1]
        n = count_pods_match_selector(node_info.pods, selector, namespace)
        table[node_info.name] = (node_info.generation, n)
        return n
