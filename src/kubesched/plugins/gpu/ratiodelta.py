"""RatioDelta: FGDOnline plus a penalty on the CPU/GPU imbalance a GPU pod's placement adds (issue 17).

FGD leaves idle GPUs on nodes whose CPU is used up (about 1 % of the capacity on the Alibaba trace,
docs/gpu.md "Where FGD's last 4.6 % go"). RatioDelta keeps every input of
:class:`~kubesched.plugins.gpu.fgdonline.FgdOnline` (the mix learned online, FGDPlus's rules) and
lowers a GPU pod's node score by how much the placement worsens the node's imbalance between the CPU
it has left and the CPU its *usable* idle GPU milli will need::

    usable(node)    = Σ over its cards of the milli left, counting a card only if at least U is left
    imbalance(node) = |CPU left / c̄ − usable(node)|
    raw score       = 1000 × FGDOnline − round(W × (imbalance after − imbalance before))

- c̄ is the CPU (milli) per GPU milli of the GPU pods seen so far (:meth:`observe`, the pod being
  scheduled included); U is the smallest per-card GPU request (a share's milli, 1000 for whole GPUs)
  above the rarest 2 % of the GPU pods seen (:data:`RARE`), so a card remnant only rare pods fit, such
  as the 190m beside an 810m pod, is not GPU the node's CPU must be kept for. Both are learned
  online, like the mix: RatioDelta is never handed the workload. Before a GPU pod with CPU is
  seen, and for CPU-only pods, the raw score is FGDOnline's × 1000.
- The pod's share of ``usable`` is taken from the card best fit picks (the least milli left that
  fits): the whole card's milli if what it leaves is below U, the pod's milli otherwise.
- Scoring the *change* of the imbalance rather than its value after the placement leaves an empty
  node, balanced before and after, no better than a used one.
- **Guards for pods with few homes or a whole node to fill** (learned online; with no such pod seen,
  nothing changes). A pod's *home* is the nodes that could hold it when empty (GPU model, GPU count,
  CPU and memory capacity); a home with less than half the cluster's GPUs (:data:`NARROW`) is
  narrow: model-restricted pods, and pods only the largest nodes fit (eight GPUs with 120 cores fit
  only the G3 nodes of the Alibaba trace). GPU pods with a wide home lose HOME_GUARD (30) points ×
  the node's home pressure: Σ over the narrow pod classes whose home holds the node of D_c × f / the
  home's idle milli, where D_c is the GPU milli the class asked so far and f = the cluster's idle
  milli / the GPU milli of all GPU pods seen (D_c × f estimates the class's demand still to come if
  arrivals go on until the cluster is full). GPU pods without a model constraint that take a whole
  card of model m also lose CARD_GUARD (100) points per card × the whole cards model-restricted
  whole-GPU pods asked of m so far / the cards of m still whole on nodes with at least c̄ × 1000 CPU
  left. GPU pods asking for fewer GPUs than the largest node has lose NODE_GUARD (10) points on an
  *empty* node × Σ over the pod classes asking for as many GPUs as the largest node has whose home
  holds the node of D_c × f / the idle milli of the home's empty nodes. The first keeps scarce homes
  for the pods that need them, the second whole cards there (which the milli count alone does not
  see), the third empty nodes for the pods that need a whole one (docs/dev/gpu-policy-log.md,
  session 12).
- W (:data:`WEIGHT`, 30 points per GPU of imbalance) makes the penalty outweigh FGDOnline's integer
  steps on most nodes; the raw score is in thousandths of a point, finer than a Score plugin's
  0..100, so :meth:`normalize` (NormalizeScore) keeps its order: the best distinct raw score 100, the
  next 99, and so on (0 from the 101st on). The node kube-scheduler picks, ties included, is the one
  the raw scores pick. (An integer form, clip(FGDOnline − round(10 × Δ / 1000), 0, 100), loses
  0.15 point at 130 % on the default trace to its coarse steps: docs/dev/gpu-policy-log.md.)

Measured effect and caveats: docs/gpu.md, "RatioDelta as a policy".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .cluster import BoolArray, ClusterGpuState, FloatArray, IntArray
from .fgdonline import FgdOnline
from .policies import MAX_NODE_SCORE
from .types import MILLI, NodeGpuState, PodShape

__all__ = ["CARD_GUARD", "HOME_GUARD", "NARROW", "NODE_GUARD", "RARE", "SCALE", "WEIGHT", "RatioDelta",
           "imbalance_penalty", "usable_taken"]

WEIGHT = 30.0
"""Score points per GPU (1000 milli) of imbalance the placement adds."""
SCALE = 1000
"""Raw scores are in 1/SCALE of a score point."""
HOME_GUARD = 30.0
"""Score points per unit of a node's home pressure (see :meth:`RatioDelta.home_pressure`)."""
CARD_GUARD = 100.0
"""Score points per whole card taken, per unit of its model's whole-card pressure (:meth:`RatioDelta.card_pressure`)."""
NODE_GUARD = 10.0
"""Score points per unit of an empty node's pressure (see :meth:`RatioDelta.node_pressure`)."""
NARROW = 0.5
"""A pod class whose home holds less than this share of the cluster's GPUs is narrow."""

RARE = 2.0
"""Per cent of the GPU pods seen, smallest per-card requests first, whose sizes do not make a card
remnant usable (U is the next size): on the Alibaba trace the ≤ 190m shares are 1.5 % of the GPU pods,
so the 190m beside an 810m pod does not count and U = 220."""

HomeKey = tuple[tuple[str, ...], int, int, int]
"""What a pod's home depends on: (allowed models, GPU count, CPU, memory)."""


@dataclass(frozen=True, slots=True)
class _Layout:
    """For the first ``classes`` keys of ``demands``: each node's set of homes (a row of ``members``)
    and the distinct sets (sets x classes, 1.0 where the set holds the class's home)."""

    demands: dict[HomeKey, int]
    classes: int
    node_signature: IntArray
    members: FloatArray


def _home_key(pod: PodShape) -> HomeKey:
    return (pod.models, pod.gpu_count, pod.cpu, pod.memory)


def _percentile(counts: Counter[int], rare: float) -> int:
    """The smallest value whose cumulative count (smallest values first) exceeds ``rare``; 1 if none."""
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen > rare:
            return value
    return 1


def usable_taken(gpu_left: IntArray, pod: PodShape, least: int) -> tuple[IntArray, IntArray]:
    """Per node (rows of per-card milli left): the usable idle milli (cards with at least ``least``
    left) and how much of it the pod takes (best-fit card for a share)."""
    usable: IntArray = np.where(gpu_left >= least, gpu_left, 0).sum(axis=1)
    if not pod.is_shared:
        return usable, np.full(len(gpu_left), pod.total_gpu_milli, dtype=np.int64)
    card = np.where(gpu_left >= pod.gpu_milli, gpu_left, np.iinfo(np.int64).max).min(axis=1, initial=MILLI)
    card = np.minimum(card, MILLI)  # a node without a fitting card is not feasible; keep it finite
    counted = np.where(card >= least, card, 0)
    taken: IntArray = np.where(card - pod.gpu_milli < least, counted, pod.gpu_milli)
    return usable, taken


def imbalance_penalty(cpu_left: IntArray, usable: IntArray, taken: IntArray, pod: PodShape, per: float,
                      weight: float) -> IntArray:
    """round(weight × (|after| − |before|)) per node (1/SCALE points per milli of change, as
    weight points per 1000 milli), the imbalance |CPU left / ``per`` − usable| before and after."""
    before = np.abs(cpu_left / per - usable)
    after = np.abs((cpu_left - pod.cpu) / per - (usable - taken))
    penalty: IntArray = np.rint(weight * (after - before) * SCALE / MILLI).astype(np.int64)
    return penalty


class RatioDelta(FgdOnline):
    """FGDOnline minus W × the change of the node's CPU/usable-GPU imbalance (GPU pods), ranked."""

    name = "RatioDelta"
    raw_scores = True

    def __init__(self, coverage: int = 95, weight: float = WEIGHT) -> None:
        super().__init__(coverage)
        self.weight = weight
        #: CPU milli and GPU milli requested by the GPU pods seen so far (c̄ = cpu_sum / gpu_sum).
        self.cpu_sum = 0
        self.gpu_sum = 0
        #: GPU pods seen per per-card request (a share's milli, 1000 for whole GPUs), for U.
        self.per_card: Counter[int] = Counter()
        self.gpu_pods = 0
        self._least: tuple[int, int] | None = None
        #: GPU pods seen whose home is not known yet (it needs the cluster: resolved at the next score).
        self._pending: list[PodShape] = []
        #: Per pod class: the nodes that could hold it empty and whether they are a narrow home, for
        #: the cluster they were computed on.
        self._fits: dict[HomeKey, tuple[BoolArray, bool]] = {}
        self._homes_of: ClusterGpuState | None = None
        self._layouts: dict[int, _Layout] = {}
        #: GPU milli asked so far per narrow pod class, and per class asking for a largest node's GPUs.
        self.narrow: dict[HomeKey, int] = {}
        self.largest: dict[HomeKey, int] = {}
        #: Whole cards asked so far by model-restricted whole-GPU pods, per model (split over a pod's models).
        self.whole_restricted: dict[str, float] = {}

    def observe(self, pod: PodShape) -> None:
        super().observe(pod)
        if pod.wants_gpu:
            self.cpu_sum += pod.cpu
            self.gpu_sum += pod.total_gpu_milli
            self.per_card[pod.gpu_milli] += 1
            self.gpu_pods += 1
            self._pending.append(pod)
            if pod.models and not pod.is_shared:
                cards = pod.gpu_count / len(pod.models)
                for model in pod.models:
                    self.whole_restricted[model] = self.whole_restricted.get(model, 0.0) + cards

    @property
    def least_useful(self) -> int:
        """U: the smallest per-card GPU request above the rarest :data:`RARE` % of the GPU pods seen
        (1 while none is seen): a remnant only that few pods fit does not count as usable."""
        if self._least is None or self._least[0] != self.gpu_pods:
            self._least = (self.gpu_pods, _percentile(self.per_card, self.gpu_pods * RARE / 100))
        return self._least[1]

    # ---- homes -----------------------------------------------------------------------------------

    def _bind_homes(self, cluster: ClusterGpuState) -> None:
        if self._homes_of is not cluster:  # another cluster (or the first): homes are per node list
            self._fits, self._layouts, self._homes_of = {}, {}, cluster

    def _fit(self, cluster: ClusterGpuState, key: HomeKey) -> tuple[BoolArray, bool]:
        """The nodes that could hold a pod of class ``key`` when empty, and whether they hold less
        than :data:`NARROW` of the cluster's GPUs (computed once per class and cluster)."""
        self._bind_homes(cluster)
        fit = self._fits.get(key)
        if fit is None:
            models, gpu_count, cpu, memory = key
            mask = (cluster.model_mask(models) & (cluster.gpu_count >= gpu_count)
                    & (cluster.cpu_cap >= cpu) & (cluster.mem_cap >= memory))
            share = int(cluster.gpu_count[mask].sum()) / max(int(cluster.gpu_count.sum()), 1)
            fit = self._fits[key] = (mask, share < NARROW)
        return fit

    def fits(self, cluster: ClusterGpuState, pod: PodShape) -> BoolArray:
        """The nodes that could hold ``pod`` when empty (its allowed models, GPU count, CPU, memory)."""
        return self._fit(cluster, _home_key(pod))[0]

    def home(self, cluster: ClusterGpuState, pod: PodShape) -> BoolArray | None:
        """:meth:`fits` when those nodes hold less than :data:`NARROW` of the cluster's GPUs (a narrow
        home), None otherwise (a wide home: the pod is not guarded for)."""
        mask, narrow = self._fit(cluster, _home_key(pod))
        return mask if narrow else None

    def _settle(self, cluster: ClusterGpuState) -> None:
        """Count the GPU pods seen since the last score into their narrow and largest-node classes."""
        for pod in self._pending:
            key = _home_key(pod)
            if self._fit(cluster, key)[1]:
                self.narrow[key] = self.narrow.get(key, 0) + pod.total_gpu_milli
            if pod.gpu_count >= cluster.slots:
                self.largest[key] = self.largest.get(key, 0) + pod.total_gpu_milli
        self._pending.clear()

    def _layout(self, cluster: ClusterGpuState, demands: dict[HomeKey, int]) -> _Layout:
        """Each node's set of homes among ``demands``' classes, numbered, and the classes of each set,
        per demand dict and cluster. The demand dicts only gain keys, so a layout holds while their
        length does."""
        self._bind_homes(cluster)
        layout = self._layouts.get(id(demands))
        if layout is None or layout.demands is not demands or layout.classes != len(demands):
            homes = np.array([self._fit(cluster, key)[0] for key in demands], dtype=np.bool_)
            homes = homes.reshape(len(demands), len(cluster))
            # A node's set of homes is its column, packed to bytes (any number of classes: gpuspec
            # lists have 65); a dict numbers the distinct ones (np.unique over rows took 5 ms a layout).
            width = (len(demands) + 7) // 8
            packed = np.packbits(homes.T, axis=1).tobytes()
            number: dict[bytes, int] = {}
            node_signature = np.array(
                [number.setdefault(packed[i:i + width], len(number)) for i in range(0, len(packed), width)],
                dtype=np.int64).reshape(len(cluster))
            some = np.zeros(len(number), dtype=np.int64)
            some[node_signature] = np.arange(len(cluster))  # a node of each set (they share the column)
            layout = self._layouts[id(demands)] = _Layout(
                demands, len(demands), node_signature, homes[:, some].T.astype(np.float64))
        return layout

    def _set_pressures(self, cluster: ClusterGpuState, demands: dict[HomeKey, int],
                       within: BoolArray | None) -> tuple[FloatArray, IntArray]:
        """Σ over the classes in ``demands`` whose home holds a node of D_c × f / the idle milli of
        the home's nodes in ``within`` (all when None; f: module docstring), added in ``demands``'
        order, once per set of homes: (the value of each set, each node's set).

        The same additions as one array per class would make: 13884 spreads class by class took
        0.5 s of a replay of the default trace (seed 42), a third of that this way."""
        layout = self._layout(cluster, demands)
        to_come = float(cluster.gpu_sum.sum()) / max(self.gpu_sum, 1)
        idle_milli = cluster.gpu_sum if within is None else np.where(within, cluster.gpu_sum, 0)
        # a home's idle milli, summed per set of homes and then per class: integer sums below 2^53,
        # exact in any order
        per_set = np.bincount(layout.node_signature, weights=idle_milli, minlength=len(layout.members))
        idle = per_set @ layout.members
        demand = np.fromiter(demands.values(), dtype=np.float64, count=len(demands))
        share = demand * to_come / np.maximum(idle, 1.0)
        # cumsum adds along the classes strictly in order (a non-member adds 0.0, which changes nothing)
        values: FloatArray = np.cumsum(layout.members * share, axis=1)[:, -1]
        return values, layout.node_signature

    def _spread(self, cluster: ClusterGpuState, demands: dict[HomeKey, int], within: BoolArray | None) -> FloatArray:
        """:meth:`_set_pressures` per node (zeros without demands)."""
        if not demands:
            return np.zeros(len(cluster), dtype=np.float64)
        values, signature = self._set_pressures(cluster, demands, within)
        pressure: FloatArray = values[signature]
        return pressure

    def home_pressure(self, cluster: ClusterGpuState) -> FloatArray:
        """Per node: Σ over the narrow classes whose home holds it of D_c × f / the home's idle milli
        (module docstring); zeros when no narrow pod was seen."""
        self._settle(cluster)
        return self._spread(cluster, self.narrow, None)

    def _empty(self, cluster: ClusterGpuState) -> BoolArray:
        empty: BoolArray = cluster.gpu_sum == cluster.gpu_count * MILLI
        return empty

    def node_pressure(self, cluster: ClusterGpuState) -> FloatArray:
        """Per node, if it is empty: Σ over the classes asking for a largest node's GPUs whose home
        holds it of D_c × f / the idle milli of the home's empty nodes; 0 on nodes in use."""
        self._settle(cluster)
        empty = self._empty(cluster)
        pressure = self._spread(cluster, self.largest, empty)
        pressure[~empty] = 0.0
        return pressure

    def card_pressure(self, cluster: ClusterGpuState) -> FloatArray:
        """Per model (``cluster.models``): whole cards model-restricted pods asked of it so far over its
        cards still whole on nodes with at least c̄ × 1000 CPU left."""
        if not self.whole_restricted:
            return np.zeros(len(cluster.models), dtype=np.float64)
        whole = cluster.gpu_free  # cards with all their milli left, per node
        if self.gpu_sum:
            whole = np.where(cluster.cpu_left >= self.cpu_sum / self.gpu_sum * MILLI, whole, 0)
        cards = np.bincount(cluster.model_idx, weights=whole, minlength=len(cluster.models))
        asked = np.array([self.whole_restricted.get(m, 0.0) for m in cluster.models])
        pressure: FloatArray = asked / np.maximum(cards, 1.0)
        return pressure

    def guard_penalty(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        """The three guards' thousandths for ``pod`` on ``nodes`` (zeros for a pod they do not charge)."""
        penalty: IntArray = np.zeros(len(nodes), dtype=np.int64)
        if not pod.wants_gpu:
            return penalty
        self._settle(cluster)
        # Each guard's thousandths are rounded once per set of homes, then looked up per node.
        if self.home(cluster, pod) is None and self.narrow:
            values, signature = self._set_pressures(cluster, self.narrow, None)
            penalty += np.rint(HOME_GUARD * values * SCALE).astype(np.int64)[signature[nodes]]
        if not pod.models and self.whole_restricted:
            left = cluster.gpu_left[nodes]
            if pod.is_shared:  # the best-fit card: a whole one only if no partial card fits
                none = np.iinfo(np.int64).max
                card = np.where(left >= pod.gpu_milli, left, none).min(axis=1, initial=none)
                taken = (card == MILLI).astype(np.float64)
            else:
                taken = np.full(len(nodes), float(pod.gpu_count))
            points = CARD_GUARD * taken * self.card_pressure(cluster)[cluster.model_idx[nodes]]
            penalty += np.rint(points * SCALE).astype(np.int64)
        if pod.gpu_count < cluster.slots and self.largest:
            empty = self._empty(cluster)
            values, signature = self._set_pressures(cluster, self.largest, empty)
            points = np.rint(NODE_GUARD * values * SCALE).astype(np.int64)[signature[nodes]]
            penalty += np.where(empty[nodes], points, 0)
        return penalty

    def cluster_context(self, cluster: ClusterGpuState, pod: PodShape) -> object | None:
        """The per-node Score's view of the guards: every node's penalty, by name, once per cycle."""
        if not pod.wants_gpu:
            return None
        penalty = self.guard_penalty(cluster, np.arange(len(cluster)), pod)
        return dict(zip(cluster.names, penalty.tolist(), strict=True)) if penalty.any() else None

    def _adjust(self, base: IntArray, cpu_left: IntArray, gpu_left: IntArray, pod: PodShape) -> IntArray:
        raw: IntArray = base.astype(np.int64) * SCALE
        if not pod.wants_gpu or self.cpu_sum == 0 or self.gpu_sum == 0:
            return raw
        usable, taken = usable_taken(gpu_left, pod, self.least_useful)
        out: IntArray = raw - imbalance_penalty(cpu_left, usable, taken, pod, self.cpu_sum / self.gpu_sum,
                                                self.weight)
        return out

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        base = np.array([super().score(node, pod, None)], dtype=np.int64)
        cpu = np.array([node.cpu_left], dtype=np.int64)
        cards = np.array([node.gpu_left], dtype=np.int64).reshape(1, len(node.gpu_left))
        out = int(self._adjust(base, cpu, cards, pod)[0])
        if isinstance(pre, dict):
            out -= int(pre.get(node.name, 0))
        return out

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = super().score_batch(cluster, nodes, pod)
        out: IntArray = self._adjust(base, cluster.cpu_left[nodes], cluster.gpu_left[nodes], pod)
        return out - self.guard_penalty(cluster, nodes, pod)

    def normalize(self, scores: IntArray) -> IntArray:
        """The dense rank from the top: the best distinct raw score 100, the next 99, ..., at least 0."""
        if len(scores) == 0:
            return scores
        _, inverse = np.unique(-scores, return_inverse=True)
        ranked: IntArray = np.maximum(MAX_NODE_SCORE - inverse.astype(np.int64), 0)
        return ranked
