"""The per-cycle snapshot of the cluster, with a columnar node table for vectorised plugins.

Upstream's ``pkg/scheduler/backend/cache/snapshot.go`` keeps a list of NodeInfos in node-tree
order and a map by name; the cache refreshes it incrementally before every cycle. We add
``NodeTable``: numpy columns of allocatable and requested resources, updated row by row for the
nodes that changed, so batch Filter/Score plugins evaluate thousands of nodes in a few vector ops.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .node_columns import _EMPTY, PORT_SETS, TAINT_SETS, LabelColumn
from .types import NodeInfo

I64 = npt.NDArray[np.int64]
_A = TypeVar("_A", bound=npt.NDArray[Any])
_epochs = itertools.count(1)


class NodeTable:
    """Columns indexed by a node's position in :attr:`Snapshot.node_infos`."""

    def __init__(self, n: int = 0) -> None:
        self.size = n
        def z() -> I64:
            return np.zeros(n, dtype=np.int64)

        self.alloc_cpu, self.alloc_mem, self.alloc_eph, self.alloc_pods = z(), z(), z(), z()
        self.req_cpu, self.req_mem, self.req_eph, self.pod_count = z(), z(), z(), z()
        self.nz_cpu, self.nz_mem = z(), z()
        #: Allocatable minus requested (pods: minus the pod count), for Filter's one comparison.
        self.free_cpu, self.free_mem, self.free_eph, self.free_pods = z(), z(), z(), z()
        #: ``NodeInfo.generation`` of each row: plugins that keep per-node state compare it to find
        #: the nodes that changed since their last cycle without visiting every NodeInfo.
        self.generation = z()
        self.alloc_scalar: dict[str, I64] = {}
        self.req_scalar: dict[str, I64] = {}
        #: ``np.arange(size)``: pass it as ``indices`` for "every row in table order"; :meth:`take`
        #: then returns whole columns without a gather.
        self.all: npt.NDArray[np.intp] = np.arange(n, dtype=np.intp)
        self.unschedulable = np.zeros(n, dtype=np.bool_)
        #: Id of each row's taint list in :data:`~kubesched.framework.node_columns.TAINT_SETS`.
        self.taint_id = np.zeros(n, dtype=np.int32)
        #: Id of each row's host ports in use in :data:`~kubesched.framework.node_columns.PORT_SETS`.
        self.ports_id = np.zeros(n, dtype=np.int32)
        self._nodes: list[object] = [None] * n
        self._labels: list[Mapping[str, str]] = [_EMPTY] * n
        #: Rows with ``unschedulable`` set, and with a non-empty taint list: when 0, the batch
        #: forms of NodeUnschedulable and TaintToleration have nothing to look at.
        self.unschedulable_count = 0
        self.tainted_count = 0
        #: Rows with a host port in use: when 0, NodePorts' batch form passes every node.
        self.ports_count = 0
        self._label_cols: dict[str, LabelColumn] = {}
        #: Changes whenever a row's node object changes (labels, taints, images) or rows move:
        #: a key for caches derived from node objects only, not from pods.
        self.node_epoch = next(_epochs)
        #: Rows written by :meth:`set_row`, in order, from absolute position ``changes_base``: what
        #: :class:`~kubesched.framework.node_columns.RowTracker` reads to find the rows that changed
        #: since it last looked without comparing every row's generation.
        self.changes: list[int] = []
        self.changes_base = 0

    def take(self, column: _A, indices: npt.NDArray[np.intp]) -> _A:
        """``column[indices]``, without the copy when ``indices`` is :attr:`all` (do not mutate it)."""
        return column if indices is self.all else cast(_A, column[indices])

    def label_column(self, key: str) -> LabelColumn:
        """The value-id column of label ``key``, built on first use."""
        col = self._label_cols.get(key)
        if col is None:
            col = self._label_cols[key] = LabelColumn(key, self._labels)
        return col

    def scalar(self, name: str) -> tuple[I64, I64]:
        """(allocatable, requested) columns of an extended resource; zeros if no node has it."""
        if name not in self.alloc_scalar:
            self.alloc_scalar[name] = np.zeros(self.size, dtype=np.int64)
            self.req_scalar[name] = np.zeros(self.size, dtype=np.int64)
        return self.alloc_scalar[name], self.req_scalar[name]

    def set_row(self, i: int, ni: NodeInfo) -> None:
        changes = self.changes
        changes.append(i)
        if len(changes) > 4 * self.size + 1024:
            # Trackers that fell this far behind recompute everything (RowTracker sees the gap).
            drop = len(changes) // 2
            del changes[:drop]
            self.changes_base += drop
        a, r = ni.allocatable, ni.requested
        self.alloc_cpu[i] = a.milli_cpu
        self.alloc_mem[i] = a.memory
        self.alloc_eph[i] = a.ephemeral_storage
        self.alloc_pods[i] = a.allowed_pod_number
        self.req_cpu[i] = r.milli_cpu
        self.req_mem[i] = r.memory
        self.req_eph[i] = r.ephemeral_storage
        self.pod_count[i] = len(ni.pods)
        self.free_cpu[i] = a.milli_cpu - r.milli_cpu
        self.free_mem[i] = a.memory - r.memory
        self.free_eph[i] = a.ephemeral_storage - r.ephemeral_storage
        self.free_pods[i] = a.allowed_pod_number - len(ni.pods)
        self.nz_cpu[i] = ni.non_zero_requested.milli_cpu
        self.nz_mem[i] = ni.non_zero_requested.memory
        self.generation[i] = ni.generation
        ports_id = PORT_SETS.id_of(ni.used_ports) if ni.used_ports else 0
        if ports_id != self.ports_id[i]:
            self.ports_count += int(ports_id != 0) - int(self.ports_id[i] != 0)
            self.ports_id[i] = ports_id
        if ni.node is not self._nodes[i]:
            # Only a new node object (an update from the informer) can change these.
            self._nodes[i] = ni.node
            labels = self._labels[i] = ni.labels
            for key, col in self._label_cols.items():
                col.values[i] = col.id_of(labels.get(key))
            unschedulable = ni.unschedulable
            taint_id = TAINT_SETS.id_of(ni.taints)
            self.unschedulable_count += int(unschedulable) - int(self.unschedulable[i])
            self.tainted_count += int(taint_id != 0) - int(self.taint_id[i] != 0)
            self.unschedulable[i] = unschedulable
            self.taint_id[i] = taint_id
            self.node_epoch = next(_epochs)
        for name in set(a.scalar_resources) | set(r.scalar_resources) | set(self.alloc_scalar):
            ac, rc = self.scalar(name)
            ac[i] = a.scalar_resources.get(name, 0)
            rc[i] = r.scalar_resources.get(name, 0)

    @classmethod
    def build(cls, node_infos: Sequence[NodeInfo]) -> NodeTable:
        t = cls(len(node_infos))
        for i, ni in enumerate(node_infos):
            t.set_row(i, ni)
        return t


class Snapshot:
    """An immutable-per-cycle view: plugins read it from Filter/Score through the handle."""

    def __init__(self, node_infos: Iterable[NodeInfo] = ()) -> None:
        self.node_infos: list[NodeInfo] = list(node_infos)
        self.node_info_map: dict[str, NodeInfo] = {ni.name: ni for ni in self.node_infos}
        self.index: dict[str, int] = {ni.name: i for i, ni in enumerate(self.node_infos)}
        self.table = NodeTable.build(self.node_infos)
        self.generation = 0
        self._with_affinity: builtins.list[NodeInfo] | None = None
        self._with_anti_affinity: builtins.list[NodeInfo] | None = None
        self._used_pvcs: set[str] | None = None
        self._names: builtins.list[str] = []
        self._names_of: tuple[object, object] | None = None

    # -- upstream's NodeInfoLister --------------------------------------------------------------
    def list(self) -> list[NodeInfo]:
        return self.node_infos

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def have_pods_with_affinity_list(self) -> builtins.list[NodeInfo]:
        """Nodes with pods that have (anti-)affinity; cached until a node changes."""
        if self._with_affinity is None:
            self._with_affinity = [ni for ni in self.node_infos if ni.pods_with_affinity]
        return self._with_affinity

    def have_pods_with_required_anti_affinity_list(self) -> builtins.list[NodeInfo]:
        if self._with_anti_affinity is None:
            self._with_anti_affinity = [ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]
        return self._with_anti_affinity

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether some pod on a node of the snapshot uses the PVC ``namespace/name`` (upstream
        ``StorageInfos().IsPVCUsedByPods``); the set is built on first use after a change."""
        if self._used_pvcs is None:
            self._used_pvcs = {k for ni in self.node_infos if ni.pvc_ref_counts for k in ni.pvc_ref_counts}
        return key in self._used_pvcs

    def names_of_rows(self, rows: Iterable[int]) -> builtins.list[str]:
        """The names of the nodes at positions ``rows`` (a failed pod's diagnosis names every node)."""
        if self._names_of is None or self._names_of[0] is not self.node_infos or self._names_of[1] is not self.index:
            # Rows keep their node while the list and the index stay (replace_node keeps positions).
            self._names = [ni.name for ni in self.node_infos]
            self._names_of = (self.node_infos, self.index)
        return list(map(self._names.__getitem__, rows))

    def invalidate(self) -> None:
        """Drop derived lists after the node list or a node changed."""
        self._with_affinity = None
        self._with_anti_affinity = None
        self._used_pvcs = None

    def num_nodes(self) -> int:
        return len(self.node_infos)

    # -- maintenance by the cache ---------------------------------------------------------------
    def replace_node(self, ni: NodeInfo) -> None:
        """Swap in an updated NodeInfo for a node already in the snapshot (same position)."""
        i = self.index[ni.name]
        old = self.node_infos[i]
        self.node_infos[i] = ni
        self.node_info_map[ni.name] = ni
        self.table.set_row(i, ni)
        if old.pods_with_affinity or ni.pods_with_affinity:
            self._with_affinity = None
        if old.pods_with_required_anti_affinity or ni.pods_with_required_anti_affinity:
            self._with_anti_affinity = None
        if old.pvc_ref_counts or ni.pvc_ref_counts:
            self._used_pvcs = None
