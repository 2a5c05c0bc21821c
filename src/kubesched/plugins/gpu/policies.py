"""The FGD paper's node-scoring policies and their GPU choice, per node and vectorized.

Each policy scores one feasible node for one pod as an integer (``score``, the reference form a
Scheduling Framework Score plugin calls per node) and all feasible nodes of a cluster at once
(``score_batch``, the same numbers from numpy). ``select_gpus`` picks GPU indexes on the chosen node,
as the simulator's Reserve does. Formulas and float order follow the FGD simulator
(hkust-adsl/kubernetes-scheduler-simulator, ``pkg/simulator/plugin/*_score.go`` and
``open_gpu_share.go``); see ../shared/reference/fgd-method.md §3.3-§5. Choosing a policy by name
(``make_policy``, ``POLICY_NAMES``) is :mod:`.factory`'s job, above this module and :mod:`.fgdplus`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.gorand import GoRand

from .cluster import ClusterGpuState, IntArray
from .frag import BoolArray, FloatArray, TypicalPods
from .types import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, NodeGpuState, PodShape, ShapeKey, gpu_class

__all__ = [
    "BestFit",
    "DotProd",
    "Fgd",
    "GpuClustering",
    "GpuPacking",
    "Policy",
    "RandomPolicy",
    "best_fit_gpus",
    "exclusive_gpus",
    "random_fit_gpus",
]

#: Entries kept in a per-node memo before it is cleared (bounds memory on a long-running scheduler).
_MEMO_LIMIT = 1 << 18
#: Up to this many states, candidate scores are computed on Python numbers (:meth:`Fgd._candidate_scores_small`).
_SMALL_BATCH = 2

MAX_NODE_SCORE = 100


def _trunc_div(a: IntArray, b: int) -> IntArray:
    """Go's integer division (truncates toward zero) for a positive divisor."""
    return np.where(a >= 0, a // b, -((-a) // b))


# ---- GPU choice ------------------------------------------------------------------------------------


def exclusive_gpus(gpu_left: Sequence[int], pod: PodShape) -> tuple[int, ...]:
    """The lowest-index fully free GPUs covering the pod's total milli (AllocateExclusiveGpuId)."""
    need = pod.total_gpu_milli
    out: list[int] = []
    for j, left in enumerate(gpu_left):
        if need <= 0:
            break
        if left == MILLI:
            out.append(j)
            need -= MILLI
    if need > 0:
        raise ValueError("not enough fully free GPUs for the pod")
    return tuple(out)


def best_fit_gpus(gpu_left: Sequence[int], pod: PodShape) -> tuple[int, ...]:
    """``best`` GPU selection: a shared pod takes the GPU with the least milli left that still fits
    (lowest index on ties); a whole-GPU pod takes the lowest-index free GPUs."""
    if not pod.wants_gpu:
        return ()
    if not pod.is_shared:
        return exclusive_gpus(gpu_left, pod)
    best = -1
    for j, left in enumerate(gpu_left):
        if left >= pod.gpu_milli and (best < 0 or left < gpu_left[best]):
            best = j
    if best < 0:
        raise ValueError("no GPU fits the pod")
    return (best,)


def random_fit_gpus(gpu_left: Sequence[int], pod: PodShape, rng: GoRand) -> tuple[int, ...]:
    """``random`` GPU selection: reservoir sampling over fitting GPUs with ``rng.Intn`` (one draw per
    fitting GPU, as allocateGpuIdBasedOnRandomFit); whole-GPU pods as in ``best``."""
    if not pod.wants_gpu:
        return ()
    if not pod.is_shared:
        return exclusive_gpus(gpu_left, pod)
    chosen = -1
    seen = 0
    for j, left in enumerate(gpu_left):
        if left >= pod.gpu_milli:
            seen += 1
            if rng.Intn(seen) == 0:
                chosen = j
    if chosen < 0:
        raise ValueError("no GPU fits the pod")
    return (chosen,)


# ---- policies --------------------------------------------------------------------------------------


class Policy(ABC):
    """A node-scoring policy: per-node ``score``, vectorized ``score_batch`` and GPU choice."""

    name: ClassVar[str]
    #: Scores outside 0..100 that :meth:`normalize` maps into it (the plugin does not clamp them).
    raw_scores: ClassVar[bool] = False

    def observe(self, pod: PodShape) -> None:
        """Told of every pod once, before it is scheduled: policies that learn the workload online
        (FGDOnline) count it; the others ignore it."""
        return None

    def pre_score(self, nodes: Sequence[NodeGpuState], pod: PodShape) -> object | None:
        """Per-cycle state computed once over the feasible nodes (PreScore); most policies need none."""
        return None

    def cluster_context(self, cluster: ClusterGpuState, pod: PodShape) -> object | None:
        """Per-cycle state from the whole cluster, handed to the per-node :meth:`score` as ``pre``
        (:meth:`score_batch` sees the cluster itself); most policies need none (RatioDelta does)."""
        return None

    @abstractmethod
    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        """Score of one feasible node (0..100 before normalization)."""

    @abstractmethod
    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        """Scores of the feasible nodes ``nodes`` (row indexes of ``cluster``), same values as ``score``."""

    def normalize(self, scores: IntArray) -> IntArray:
        """NormalizeScore over the feasible nodes; identity unless the policy defines one."""
        return scores

    def select_gpus(self, node: NodeGpuState, pod: PodShape) -> tuple[int, ...]:
        """GPU indexes the pod gets on its chosen node (Reserve)."""
        return best_fit_gpus(node.gpu_left, pod)


class RandomPolicy(Policy):
    """Random: PreScore picks one feasible node uniformly (``Intn``); it scores 100, the others 0.

    The node order given decides which node an ``Intn`` draw means; the GPU of a shared pod is also
    random (``random`` GPU selection). Both draw from the run's Go stream.
    """

    name = "Random"

    def __init__(self, rng: GoRand) -> None:
        self.rng = rng

    def pre_score(self, nodes: Sequence[NodeGpuState], pod: PodShape) -> object | None:
        return nodes[self.rng.Intn(len(nodes))].name

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        return MAX_NODE_SCORE if node.name == pre else 0

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        out = np.zeros(len(nodes), dtype=np.int64)
        out[self.rng.Intn(len(nodes))] = MAX_NODE_SCORE
        return out

    def select_gpus(self, node: NodeGpuState, pod: PodShape) -> tuple[int, ...]:
        return random_fit_gpus(node.gpu_left, pod, self.rng)


class DotProd(Policy):
    """DotProd (Tetris): 100·(1 − dot/2) with dot = cpuLeft·cpu/128000² + gpuLeft·gpuReq/8000²."""

    name = "DotProd"

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        cpu = pod.score_cpu
        if node.cpu_left < cpu:
            return 0
        dot = (node.cpu_left / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU) + (
            node.gpu_milli_left / MAX_SPEC_GPU
        ) * (pod.total_gpu_milli / MAX_SPEC_GPU)
        return int(MAX_NODE_SCORE * (1.0 - dot / 2.0))

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        cpu = pod.score_cpu
        cpu_left = cluster.cpu_left[nodes]
        dot = (cpu_left / MAX_SPEC_CPU) * (cpu / MAX_SPEC_CPU) + (
            cluster.gpu_sum[nodes] / MAX_SPEC_GPU
        ) * (pod.total_gpu_milli / MAX_SPEC_GPU)
        raw = (MAX_NODE_SCORE * (1.0 - dot / 2.0)).astype(np.int64)
        return np.where(cpu_left < cpu, 0, raw)


class GpuClustering(Policy):
    """GpuClustering: prefer nodes whose GPU pods are all of the pod's class (share-gpu / k-gpu).

    base = 25·(8000 − gpuLeft) div 8000, plus 75 (only this class on the node), 50 (this class among
    others), 25 (no GPU pods) or 0 (only other classes). CPU-only pods score 0.
    """

    name = "GpuClustering"

    @staticmethod
    def _base(gpu_left_total: int) -> int:
        numerator = (MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - gpu_left_total)
        return -(-numerator // MAX_SPEC_GPU) if numerator < 0 else numerator // MAX_SPEC_GPU

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        cls = gpu_class(pod)
        if cls is None:
            return 0
        base = self._base(node.gpu_milli_left)
        classes = node.classes()
        if classes.get(cls, 0) > 0:
            return base + (75 if len(classes) == 1 else 50)
        return base + (25 if not classes else 0)

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        cls = gpu_class(pod)
        if cls is None:
            return np.zeros(len(nodes), dtype=np.int64)
        base = _trunc_div((MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - cluster.gpu_sum[nodes]), MAX_SPEC_GPU)
        n_classes = cluster.n_classes[nodes]
        c = cluster.class_index.get(cls)
        own = cluster.class_counts[nodes, c] > 0 if c is not None else np.zeros(len(nodes), dtype=np.bool_)
        bonus = np.where(own, np.where(n_classes == 1, 75, 50), np.where(n_classes == 0, 25, 0))
        return base + bonus


class GpuPacking(Policy):
    """GpuPacking: shared GPUs first, then free GPUs on used nodes, then idle nodes.

    All GPUs free: max(33 − f, f) with f free GPUs. Otherwise take the first k GPUs (ascending milli
    left) that fit; if u > 0 of them are free: max(50 − u, 33); else max(100 − Σ⌊left·100/1000⌋ div 10, 50).
    CPU-only pods score 0.
    """

    name = "GpuPacking"

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        if not pod.wants_gpu:
            return 0
        left = node.gpu_left
        free = sum(1 for v in left if v == MILLI)
        if free == len(left):
            return max(MAX_NODE_SCORE // 3 - free, free)
        need = pod.gpu_count
        used_free = 0
        ratio = 0
        for v in sorted(left):
            if need == 0:
                break
            if v >= pod.gpu_milli:
                need -= 1
                ratio += v * 100 // MILLI
                used_free += v == MILLI
        if need:
            return 0
        if used_free:
            return max(MAX_NODE_SCORE // 2 - used_free, MAX_NODE_SCORE // 3)
        return max(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        if not pod.wants_gpu:
            return np.zeros(len(nodes), dtype=np.int64)
        free = cluster.gpu_free[nodes]
        all_free = free == cluster.gpu_count[nodes]
        if pod.gpu_milli == MILLI:
            # the first k GPUs that fit a whole-GPU pod are free ones: u = k
            on_free = max(MAX_NODE_SCORE // 2 - pod.gpu_count, MAX_NODE_SCORE // 3)
            partly = np.where(free < pod.gpu_count, 0, on_free)
        else:
            # a shared pod (one GPU) takes the least-left GPU that fits (padding GPUs never fit)
            left = cluster.gpu_left[nodes]
            least = np.where(left >= pod.gpu_milli, left, MILLI + 1).min(axis=1)
            shared = np.maximum(MAX_NODE_SCORE - least * 100 // MILLI // 10, MAX_NODE_SCORE // 2)
            on_free = max(MAX_NODE_SCORE // 2 - 1, MAX_NODE_SCORE // 3)
            partly = np.where(least > MILLI, 0, np.where(least == MILLI, on_free, shared))
        return np.where(all_free, np.maximum(MAX_NODE_SCORE // 3 - free, free), partly)


class BestFit(Policy):
    """BestFit: 100·(1 − s), s = ½(cpuLeft − cpu)/128000 + ½(gpuLeft − gpuReq)/8000, then min-max
    normalised over the feasible nodes (which keeps the set of best nodes)."""

    name = "BestFit"

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        s = (node.cpu_left - pod.score_cpu) / MAX_SPEC_CPU * 0.5
        s = s + (node.gpu_milli_left - pod.total_gpu_milli) / MAX_SPEC_GPU * 0.5
        return int((1.0 - s) * MAX_NODE_SCORE)

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        s = (cluster.cpu_left[nodes] - pod.score_cpu) / MAX_SPEC_CPU * 0.5
        s = s + (cluster.gpu_sum[nodes] - pod.total_gpu_milli) / MAX_SPEC_GPU * 0.5
        return ((1.0 - s) * MAX_NODE_SCORE).astype(np.int64)

    def normalize(self, scores: IntArray) -> IntArray:
        """plugin_utils.go NormalizeScore: (s − lo)·100 div (hi − lo), all 0 when hi = lo."""
        if len(scores) == 0:
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        if hi == lo:
            return np.zeros_like(scores)
        return (scores - lo) * MAX_NODE_SCORE // (hi - lo)  # numerator >= 0: Go's division is floor here


def _sigmoid_score(d: float) -> int:
    """trunc(100 / (1 + e^(−Δ/1000))) of one Δ, with ``math.exp`` (so every form agrees exactly)."""
    x = -(d / 1000.0)
    return 0 if x > 709.0 else int(1.0 / (1.0 + math.exp(x)) * MAX_NODE_SCORE)


def _sigmoid_scores(delta: FloatArray) -> IntArray:
    """:func:`_sigmoid_score` of each Δ."""
    return np.array([_sigmoid_score(d) for d in delta.tolist()], dtype=np.int64)


class Fgd(Policy):
    """FGD: score = sigmoid of the node's fragmentation decrease (F before − F after) in GPUs.

    A shared pod is tried on every GPU that fits and the node keeps its best GPU's score; that GPU
    (lowest index among the best) is also the one chosen at Reserve. Scores are memoized per
    (fragmentation state, pod shape): per node state in ``score``, per interned cluster state id in
    ``score_batch`` (only the last-bound node changes state, so almost every lookup hits).
    """

    name = "FGD"

    def __init__(self, typical: TypicalPods) -> None:
        self.typical = typical
        self._node_memo: dict[tuple[tuple[str, int, tuple[int, ...]], ShapeKey], int] = {}
        self._gpu_memo: dict[tuple[str, int, tuple[int, ...], ShapeKey], tuple[IntArray, IntArray]] = {}
        self._cluster: ClusterGpuState | None = None
        self._access = np.zeros((0, len(typical)), dtype=np.bool_)
        self._frag = np.zeros(0, dtype=np.float64)
        self._tables: dict[ShapeKey, npt.NDArray[np.int16]] = {}
        self.misses = 0

    # -- the computation shared by both forms --

    def _candidate_scores(
        self, access: BoolArray, cpu: IntArray, gpu: IntArray, frag_before: FloatArray | None,
        pod: PodShape,
    ) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
        """Scores of every candidate placement: (owning state row, GPU column or -1, score), and F of
        the states. Unknown ``frag_before`` is computed in the same batch as the after-states."""
        if len(cpu) <= _SMALL_BATCH:
            return self._candidate_scores_small(access, cpu, gpu, frag_before, pod)
        cpu_pod = pod.score_cpu
        expand: IntArray | None = None
        if pod.is_shared:
            rows, cols = np.nonzero(gpu >= pod.gpu_milli)
            # The share on either of two GPUs with the same milli left gives the same state up to the
            # GPUs' order, which F ignores: compute each (state, milli left) once.
            first, expand = _first_of_each(rows * (MILLI + 1) + gpu[rows, cols])
            after_rows, after_cols = rows[first], cols[first]
            gpu_after = gpu[after_rows].copy()
            gpu_after[np.arange(len(after_rows)), after_cols] -= pod.gpu_milli
            cpu_after = cpu[after_rows] - cpu_pod
        else:
            rows = after_rows = np.arange(len(cpu))
            cols = np.full(len(cpu), -1, dtype=np.int64)
            ok = cpu >= cpu_pod  # NodeResource.Sub leaves the node unchanged when the CPU does not fit
            cpu_after = np.where(ok, cpu - cpu_pod, cpu)
            gpu_after = gpu
            if pod.wants_gpu:
                ordered = np.sort(gpu, axis=1)
                fits = ordered >= pod.gpu_milli
                taken = fits & (np.cumsum(fits, axis=1) <= pod.gpu_count) & ok[:, None]
                gpu_after = ordered - pod.gpu_milli * taken
        if frag_before is None:
            n = len(cpu)
            both = self.typical.fragmentation(
                np.concatenate([access, access[after_rows]]),
                np.concatenate([cpu, cpu_after]),
                np.concatenate([gpu, gpu_after]),
            )
            frag_before, frag_after = both[:n], both[n:]
        else:
            frag_after = self.typical.fragmentation(access[after_rows], cpu_after, gpu_after)
        if expand is not None:
            frag_after = frag_after[expand]
        return rows, cols, _sigmoid_scores(frag_before[rows] - frag_after), frag_before

    def _candidate_scores_small(
        self, access: BoolArray, cpu: IntArray, gpu: IntArray, frag_before: FloatArray | None,
        pod: PodShape,
    ) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
        """:meth:`_candidate_scores` of one or two states on Python numbers: the same candidates in
        the same order, the same integers and the same float operations (F of each state by
        ``TypicalPods``' scalar form), without numpy's per-call cost, which was most of the time of
        the 6400 such calls in a replay of the default trace."""
        typical = self.typical
        cpu_pod = pod.score_cpu
        states = list(zip(access.tolist(), cpu.tolist(), gpu.tolist(), strict=True))
        if frag_before is None:
            before = [typical.fragmentation_one(a, c, g) for a, c, g in states]
        else:
            before = frag_before.tolist()
        rows: list[int] = []
        cols: list[int] = []
        scores: list[int] = []
        if pod.is_shared:
            milli = pod.gpu_milli
            for r, (a, c, g) in enumerate(states):
                # one F per (state, milli left on the chosen GPU): F ignores the GPUs' order
                after_of: dict[int, float] = {}
                for j, left in enumerate(g):
                    if left < milli:
                        continue
                    f_after = after_of.get(left)
                    if f_after is None:
                        after = list(g)
                        after[j] = left - milli
                        f_after = after_of[left] = typical.fragmentation_one(a, c - cpu_pod, after)
                    rows.append(r)
                    cols.append(j)
                    scores.append(_sigmoid_score(before[r] - f_after))
        else:
            for r, (a, c, g) in enumerate(states):
                ok = c >= cpu_pod  # NodeResource.Sub leaves the node unchanged when the CPU does not fit
                after = g
                if pod.wants_gpu:
                    after = sorted(g)
                    need = pod.gpu_count if ok else 0
                    for j, left in enumerate(after):
                        if need and left >= pod.gpu_milli:
                            after[j] = left - pod.gpu_milli
                            need -= 1
                f_after = typical.fragmentation_one(a, c - cpu_pod if ok else c, after)
                rows.append(r)
                cols.append(-1)
                scores.append(_sigmoid_score(before[r] - f_after))
        return (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
                np.array(scores, dtype=np.int64), np.array(before, dtype=np.float64))

    # -- per node --

    def node_fragmentation(self, node: NodeGpuState) -> float:
        return self.typical.node_fragmentation(node)

    def _gpu_scores(self, node: NodeGpuState, pod: PodShape) -> tuple[IntArray, IntArray]:
        """(GPU column, score) of every placement of ``pod`` on ``node``, memoized per node state
        (GPUs in index order) and pod shape: read-only arrays."""
        key = (node.model, node.cpu_left, node.gpu_left, pod.key)
        hit = self._gpu_memo.get(key)
        if hit is None:
            access = self.typical.access_row(node.model)[None, :]
            cpu = np.array([node.cpu_left], dtype=np.int64)
            gpu = np.array(node.gpu_left, dtype=np.int64).reshape(1, -1)
            _, cols, scores, _ = self._candidate_scores(access, cpu, gpu, None, pod)
            cols.setflags(write=False)
            scores.setflags(write=False)
            if len(self._gpu_memo) >= _MEMO_LIMIT:
                self._gpu_memo.clear()
            hit = self._gpu_memo[key] = (cols, scores)
        return hit

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        key = (node.frag_key, pod.key)
        hit = self._node_memo.get(key)
        if hit is None:
            _, scores = self._gpu_scores(node, pod)
            hit = self._node_memo[key] = int(scores.max(initial=0))
        return hit

    def select_gpus(self, node: NodeGpuState, pod: PodShape) -> tuple[int, ...]:
        if not pod.is_shared:
            return best_fit_gpus(node.gpu_left, pod)
        cols, scores = self._gpu_scores(node, pod)
        if len(scores) == 0:
            raise ValueError("no GPU fits the pod")
        return (int(cols[int(np.argmax(scores))]),)

    # -- vectorized over a cluster --

    def _bind(self, cluster: ClusterGpuState) -> None:
        if self._cluster is not cluster:
            self._cluster = cluster
            self._access = self.typical.access_matrix(cluster.models)
            self._frag = np.full(64, np.nan)
            self._tables = {}

    def _grow_frag(self, cluster: ClusterGpuState) -> None:
        if len(self._frag) < cluster.n_states:
            grown = np.full(max(cluster.n_states, 2 * len(self._frag)), np.nan)
            grown[: len(self._frag)] = self._frag
            self._frag = grown

    def state_fragmentation(self, cluster: ClusterGpuState, sids: IntArray) -> FloatArray:
        """F of interned states ``sids`` of ``cluster`` (computed once per state)."""
        self._bind(cluster)
        self._grow_frag(cluster)
        values = self._frag[sids]
        unknown = np.isnan(values)
        if unknown.any():
            todo = np.unique(sids[unknown])
            model, cpu, gpu = cluster.state_arrays(todo)
            self._frag[todo] = self.typical.fragmentation(self._access[model], cpu, gpu)
            values = self._frag[sids]
        return values

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        self._bind(cluster)
        key = pod.key
        table = self._tables.get(key)
        if table is None or len(table) < cluster.n_states:
            grown = np.full(max(cluster.n_states, 64, 2 * (0 if table is None else len(table))), -1,
                            dtype=np.int16)
            if table is not None:
                grown[: len(table)] = table
            table = self._tables[key] = grown
        sids = cluster.node_sid[nodes]
        scores = table[sids]
        missing = scores < 0
        if missing.any():
            todo = sids[missing]
            todo = todo[_first_of_each(todo)[0]]  # each missing state once
            self.misses += len(todo)
            self._grow_frag(cluster)
            cached = self._frag[todo]
            known = None if np.isnan(cached).any() else cached
            model, cpu, gpu = cluster.state_arrays(todo)
            rows, _, cand, before = self._candidate_scores(self._access[model], cpu, gpu, known, pod)
            self._frag[todo] = before
            best = np.zeros(len(todo), dtype=np.int64)
            np.maximum.at(best, rows, cand)
            table[todo] = best
            scores = table[sids]
        return scores.astype(np.int64)


def _first_of_each(keys: IntArray) -> tuple[IntArray, IntArray]:
    """(position of the first occurrence of each distinct key, index of each key's distinct value):
    ``keys == keys[first][expand]``. A placement has a handful of candidates, where a dict beats
    np.unique's sort."""
    if len(keys) > 64:
        _, first, expand = np.unique(keys, return_index=True, return_inverse=True)
        return first, expand
    seen: dict[int, int] = {}
    firsts: list[int] = []
    out: list[int] = []
    for pos, k in enumerate(keys.tolist()):
        j = seen.get(k)
        if j is None:
            j = seen[k] = len(firsts)
            firsts.append(pos)
        out.append(j)
    return np.array(firsts, dtype=np.int64), np.array(out, dtype=np.int64)
