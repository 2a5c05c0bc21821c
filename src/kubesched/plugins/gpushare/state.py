"""The GPU engine's columnar state, kept row for row in step with the scheduler's snapshot.

Row ``i`` of :attr:`SnapshotGpuState.cluster` is ``snapshot.node_infos[i]``, so batch Filter and Score
index it with the framework's node positions directly. What it holds is derived from the pods on each
node: a pod this plugin reserved keeps the GPUs chosen at Reserve; any other pod (bound before we
started, or by someone else) gets the GPUs of its ``kubesched.io/gpu-ids`` annotation, or, without
one, a best-fit choice until its annotation arrives. Only the nodes whose NodeInfo changed since the
last cycle are looked at (the node table's change log, then its generation column), and on them only
the pods that changed: per cycle that is usually the one node the previous pod went to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from kubesched.framework.node_columns import RowTracker
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo
from kubesched.plugins.gpu import MILLI, ClusterGpuState, NodeGpuState, NodeSpec, PodShape, best_fit_gpus

from .requests import LABEL_GPU_PRODUCT, RESOURCE_GPU, GpuRequestError, gpu_ids, pod_shape
from .topology import GpuTopology, node_topology, pack

__all__ = ["SnapshotGpuState", "node_spec"]

log = logging.getLogger("kubesched.plugins.gpushare")


def node_spec(ni: NodeInfo) -> NodeSpec:
    """What the engine needs of a node: allocatable CPU, memory, pods and GPUs, and the GPU model."""
    a = ni.allocatable
    gpus = int(a.scalar_resources.get(RESOURCE_GPU, 0))
    model = str(ni.labels.get(LABEL_GPU_PRODUCT, "")) if gpus else ""
    return NodeSpec(ni.name, a.milli_cpu, a.memory, max(gpus, 0), model, a.allowed_pod_number)


def accounted_shape(pod: PodInfo) -> PodShape:
    """The shape a placed pod is accounted with: its request, or only CPU and memory when its GPU
    request is one the plugin would not have accepted (someone else bound it)."""
    try:
        return pod_shape(pod)
    except GpuRequestError:
        req = pod.requests
        return PodShape(cpu=req.milli_cpu, memory=req.memory)


@dataclass(slots=True)
class _Placed:
    pod: PodInfo
    shape: PodShape
    gpus: tuple[int, ...]


#: NodeResourceTopology objects by node name (what the plugin listed last).
NrtIndex = Mapping[str, JSONObj]


class SnapshotGpuState:
    """A :class:`ClusterGpuState` following the snapshot, plus each node's GPU topology."""

    def __init__(self, nrt: Callable[[], NrtIndex] | None = None) -> None:
        self.cluster = ClusterGpuState([])
        self.topologies: list[GpuTopology] = []
        #: True for rows whose topology is one flat group (nothing to pack).
        self.flat = np.ones(0, dtype=np.bool_)
        #: GPUs chosen at Reserve, by pod UID, until the pod carries them in its annotation.
        self.reserved: dict[str, tuple[int, ...]] = {}
        self._nrt_source = nrt
        self._nrt: NrtIndex = {}
        self._snapshot: Snapshot | None = None
        self._index: dict[str, int] | None = None
        self._generation = -1
        self._gens = np.zeros(0, dtype=np.int64)
        self._nodes: list[object] = []
        self._specs: list[NodeSpec] = []
        self._placed: list[dict[str, _Placed]] = []
        #: Rows the snapshot rewrote since the last sync (its change log), per cycle usually one.
        self._tracker = RowTracker()
        self.rebuilds = 0

    # ---- following the snapshot ----------------------------------------------------------------

    def sync(self, snapshot: Snapshot) -> None:
        """Bring every row up to date with ``snapshot`` (cheap when nothing changed)."""
        if snapshot is self._snapshot and snapshot.generation == self._generation:
            return
        if snapshot is not self._snapshot or snapshot.index is not self._index:
            self._rebuild(snapshot)
            return
        gens = snapshot.table.generation
        rows = self._tracker.changes(snapshot.table)
        if rows is None:  # the log does not reach back to our last look: compare every row
            changed: list[int] = np.flatnonzero(gens != self._gens).tolist()
        else:
            changed = [i for i in rows if gens[i] != self._gens[i]]
        for i in changed:
            ni = snapshot.node_infos[i]
            if ni.node is not self._nodes[i]:
                if node_spec(ni) != self._specs[i] or self._topology(ni) != self.topologies[i]:
                    self._rebuild(snapshot)
                    return
                self._nodes[i] = ni.node
            self._sync_row(i, ni)
        self._gens[changed] = gens[changed]
        self._generation = snapshot.generation

    def _rebuild(self, snapshot: Snapshot) -> None:
        prior = {uid: p.gpus for row in self._placed for uid, p in row.items() if p.gpus}
        infos = snapshot.node_infos
        self._specs = [node_spec(ni) for ni in infos]
        self.cluster = ClusterGpuState(self._specs)
        if self._nrt_source is not None:
            self._nrt = self._nrt_source()
        self.topologies = [self._topology(ni) for ni in infos]
        self.flat = np.array([t.is_flat for t in self.topologies], dtype=np.bool_)
        self._nodes = [ni.node for ni in infos]
        self._placed = [{} for _ in infos]
        for i, ni in enumerate(infos):
            self._sync_row(i, ni, prior)
        self._snapshot = snapshot
        self._index = snapshot.index
        self._gens = snapshot.table.generation.copy()
        self._tracker.changes(snapshot.table)  # from here on, only rows written after this rebuild
        self._generation = snapshot.generation
        self.rebuilds += 1

    def _topology(self, ni: NodeInfo) -> GpuTopology:
        gpus = int(ni.allocatable.scalar_resources.get(RESOURCE_GPU, 0))
        topo, problems = node_topology(ni.node or {}, max(gpus, 0), self._nrt.get(ni.name))
        for p in problems:
            log.warning("node %s: GPU topology ignored: %s", ni.name, p)
        return topo

    def refresh_topologies(self, nrt: NrtIndex) -> None:
        """Take a newer list of NodeResourceTopology objects; rows whose topology changed are updated."""
        old, self._nrt = self._nrt, nrt
        if self._snapshot is None or (not old and not nrt):  # no NodeResourceTopology before or now
            return
        for i, ni in enumerate(self._snapshot.node_infos):
            if old.get(ni.name) is not nrt.get(ni.name):
                self.topologies[i] = self._topology(ni)
                self.flat[i] = self.topologies[i].is_flat

    def _sync_row(self, i: int, ni: NodeInfo, prior: Mapping[str, tuple[int, ...]] | None = None) -> None:
        placed = self._placed[i]
        pods = ni.pods
        if len(pods) == len(placed):
            for p in pods:
                e = placed.get(p.uid)
                if e is None or e.pod is not p:
                    break
            else:
                return
        current = {p.uid: p for p in pods}
        for uid in [u for u in placed if u not in current]:
            e = placed.pop(uid)
            self.cluster.release(i, e.shape, e.gpus)
            self.reserved.pop(uid, None)
        todo: list[tuple[str, PodInfo, PodShape, tuple[int, ...] | None]] = []
        for uid, p in current.items():
            e = placed.get(uid)
            if e is not None and e.pod is p:
                continue
            shape = accounted_shape(p)
            want = gpu_ids(p)
            if e is not None:
                if e.shape == shape and (want is None or want == e.gpus):
                    e.pod = p
                    if want is not None:
                        self.reserved.pop(uid, None)
                    continue
                del placed[uid]
                self.cluster.release(i, e.shape, e.gpus)
            todo.append((uid, p, shape, want))
        for uid, p, shape, want in todo:
            earlier = prior.get(uid) if prior else None
            shape, gpus = self._existing_gpus(i, uid, shape, (want, self.reserved.get(uid), earlier))
            self.cluster.allocate(i, shape, gpus)
            placed[uid] = _Placed(p, shape, gpus)

    def _valid(self, i: int, shape: PodShape, gpus: tuple[int, ...] | None) -> bool:
        if gpus is None or len(gpus) != shape.gpu_count or len(set(gpus)) != len(gpus):
            return False
        n = int(self.cluster.gpu_count[i])
        row = self.cluster.gpu_left[i]
        return all(0 <= j < n and row[j] >= shape.gpu_milli for j in gpus)

    def _existing_gpus(
        self, i: int, uid: str, shape: PodShape, candidates: tuple[tuple[int, ...] | None, ...]
    ) -> tuple[PodShape, tuple[int, ...]]:
        """GPUs of a pod found on a node: its annotation, our reservation, its earlier GPUs, or best fit."""
        if not shape.wants_gpu:
            return shape, ()
        for gpus in candidates:
            if self._valid(i, shape, gpus):
                assert gpus is not None
                return shape, gpus
        chosen = self.best_fit(i, shape)
        if chosen is None:
            log.warning("node %s: pod %s holds GPUs the node does not have free; counted without GPUs",
                        self.cluster.names[i], uid)
            return PodShape(cpu=shape.cpu, memory=shape.memory), ()
        if candidates[0] is not None:
            log.warning("node %s: pod %s has unusable GPU ids %s; counted on GPUs %s",
                        self.cluster.names[i], uid, candidates[0], chosen)
        return shape, chosen

    # ---- placement -------------------------------------------------------------------------------

    def free_gpus(self, i: int) -> list[int]:
        n = int(self.cluster.gpu_count[i])
        return [j for j, v in enumerate(self.cluster.gpu_left[i, :n].tolist()) if v == MILLI]

    def packed(self, i: int, shape: PodShape) -> tuple[tuple[int, int], tuple[int, ...]] | None:
        """Topology packing of a whole-GPU pod on row ``i``: (span, GPUs), None if it does not fit."""
        return pack(self.topologies[i], self.free_gpus(i), shape.gpu_count)

    def best_fit(self, i: int, shape: PodShape) -> tuple[int, ...] | None:
        """Best-fit GPUs, packed by topology for several whole GPUs; None when they do not fit."""
        if shape.gpu_count > 1 and not self.flat[i]:
            packed = self.packed(i, shape)
            return packed[1] if packed is not None else None
        try:
            return best_fit_gpus(self.node_state(i).gpu_left, shape)
        except ValueError:
            return None

    def place(self, i: int, pod: PodInfo, shape: PodShape, gpus: tuple[int, ...]) -> None:
        """Reserve: account ``pod`` on row ``i`` with GPUs ``gpus``."""
        self.cluster.allocate(i, shape, gpus)
        self._placed[i][pod.uid] = _Placed(pod, shape, gpus)
        if gpus:
            self.reserved[pod.uid] = gpus

    def unplace(self, node_name: str, uid: str) -> None:
        """Unreserve: forget the pod's placement (idempotent)."""
        self.reserved.pop(uid, None)
        i = self.cluster.index.get(node_name)
        if i is None:
            return
        e = self._placed[i].pop(uid, None)
        if e is not None:
            self.cluster.release(i, e.shape, e.gpus)

    def placed_gpus(self, node_name: str, uid: str) -> tuple[int, ...] | None:
        i = self.cluster.index.get(node_name)
        e = self._placed[i].get(uid) if i is not None else None
        return e.gpus if e is not None else None

    # ---- per-node views --------------------------------------------------------------------------

    def row_of(self, ni: NodeInfo) -> int | None:
        """The row of ``ni`` when it is the snapshot's own NodeInfo (else the caller derives a state)."""
        i = self.cluster.index.get(ni.name)
        if i is None or self._snapshot is None or self._snapshot.node_infos[i] is not ni:
            return None
        return i

    def node_state(self, i: int) -> NodeGpuState:
        return self.cluster.node_state(i)

    def derived_state(self, ni: NodeInfo) -> NodeGpuState:
        """The GPU state of a NodeInfo that is not the snapshot's (nominated pods added, victims removed
        in a preemption dry run): rebuilt from its pods, keeping the GPUs we know for each."""
        i = self.cluster.index.get(ni.name)
        known = self._placed[i] if i is not None else {}
        state = node_spec(ni).empty_state()
        for p in ni.pods:
            shape = accounted_shape(p)
            if not shape.wants_gpu:
                state = state.allocate(shape, ())
                continue
            e = known.get(p.uid)
            gpus = e.gpus if e is not None and e.shape == shape else gpu_ids(p)
            if gpus is None or len(gpus) != shape.gpu_count or any(
                not 0 <= j < state.gpu_count or state.gpu_left[j] < shape.gpu_milli for j in gpus
            ):
                try:
                    gpus = best_fit_gpus(state.gpu_left, shape)
                except ValueError:
                    state = state.allocate(PodShape(cpu=shape.cpu, memory=shape.memory), ())
                    continue
            state = state.allocate(shape, gpus)
        return state
