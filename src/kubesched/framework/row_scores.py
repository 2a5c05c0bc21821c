"""A plugin's answers per node-table row, kept across cycles for the last few pod shapes.

Some scores depend on nothing but the pod's requests and the node's own row (allocatable and
requested resources): NodeResourcesFit's strategies and NodeResourcesBalancedAllocation; so does
NodeResourcesFit's Filter verdict (a boolean per row, ``dtype=np.bool_``). Pods of a
workload share a few request vectors, and between two cycles only the nodes that got or lost a pod
change, so most of a cycle's scores are the ones computed the last time the same rows were sampled.

:class:`RowScores` keeps, per pod key, a score and a validity flag for every row. A cycle:

* takes the rows rewritten since this key was last used (``RowTracker``); a few are rescored at once
  by the plugin's per-node form, more are marked invalid; a new table (nodes came or went) starts over;
* scores the requested rows still invalid with the plugin's batch form (all of them the first time a
  row is sampled), and returns the scores of the requested rows.

Both forms are the plugin's own, which the property tests keep equal (tests/plugins/test_batch_*.py;
tests/framework/test_row_scores.py checks the cache across cycles of pods coming and going). On
SchedulingBasic at 5000 nodes this took NodeResourcesFit and BalancedAllocation from about 27 and
41 µs a cycle to about 6 and 10 µs.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .node_columns import RowTracker
from .types import NodeInfo

if TYPE_CHECKING:
    from .snapshot import Snapshot

I64 = npt.NDArray[np.int64]
Rows = npt.NDArray[np.intp]
#: ``batch(rows) -> scores``: the plugin's batch form over some rows of the snapshot's table.
BatchForm = Callable[[Rows], npt.NDArray[Any]]
#: ``one(node_info) -> score``: the plugin's per-node form.
OneForm = Callable[[NodeInfo], Any]

#: Changed rows up to this many are rescored at once by the per-node form (a few µs each); more are
#: marked invalid and rescored by the batch form when next sampled.
EAGER_ROWS = 8
#: Pod keys remembered per plugin: each costs 9 bytes a node.
MAX_KEYS = 8


class _Entry:
    __slots__ = ("dtype", "invalid", "tracker", "valid", "values")

    def __init__(self, dtype: type) -> None:
        self.dtype = dtype
        self.tracker = RowTracker()
        self.values: npt.NDArray[Any] = np.zeros(0, dtype=dtype)
        self.valid = np.zeros(0, dtype=np.bool_)
        #: Rows not valid (``valid`` false), so a cycle with none skips looking.
        self.invalid = 0

    def reset(self, n: int) -> None:
        self.values = np.zeros(n, dtype=self.dtype)
        self.valid = np.zeros(n, dtype=np.bool_)
        self.invalid = n


class RowScores:
    """Scores per row for the last :data:`MAX_KEYS` pod keys of one plugin (module docstring)."""

    def __init__(self, max_keys: int = MAX_KEYS, dtype: type = np.int64) -> None:
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._max = max_keys
        self._dtype = dtype

    def scores(
        self, snapshot: Snapshot, indices: Rows, key: Hashable, batch: BatchForm, one: OneForm
    ) -> npt.NDArray[Any]:
        """The answers for rows ``indices`` (a new array) for the pod ``key`` stands for."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(self._dtype)
            if len(self._entries) > self._max:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        table = snapshot.table
        changed = entry.tracker.changes(table)
        if changed is None or len(entry.values) != table.size:
            entry.reset(table.size)
        elif changed:
            self._rescore(entry, snapshot, changed, one)
        if entry.invalid:
            ok = entry.valid[indices]
            if not ok.all():
                need = indices[~ok]
                fresh: npt.NDArray[Any]
                if len(need) <= EAGER_ROWS:
                    infos = snapshot.node_infos
                    fresh = np.fromiter((one(infos[r]) for r in need.tolist()), dtype=entry.dtype, count=len(need))
                else:
                    fresh = np.asarray(batch(need), dtype=entry.dtype)
                entry.values[need] = fresh
                entry.valid[need] = True
                entry.invalid = len(entry.valid) - int(np.count_nonzero(entry.valid))
        if indices is table.all:
            return entry.values.copy()
        out: npt.NDArray[Any] = entry.values[indices]
        return out

    @staticmethod
    def _rescore(entry: _Entry, snapshot: Snapshot, changed: list[int], one: OneForm) -> None:
        valid, values = entry.valid, entry.values
        if len(changed) > EAGER_ROWS:
            rows = np.array(changed, dtype=np.intp)
            entry.invalid += int(np.count_nonzero(valid[rows]))
            valid[rows] = False
            return
        infos = snapshot.node_infos
        for r in changed:
            if not valid[r]:
                continue
            valid[r] = False  # until rescored: the per-node form may raise
            entry.invalid += 1
            values[r] = one(infos[r])
            valid[r] = True
            entry.invalid -= 1


__all__ = ["EAGER_ROWS", "MAX_KEYS", "BatchForm", "OneForm", "RowScores"]
