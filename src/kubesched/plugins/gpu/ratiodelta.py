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
- **Model guard**: a GPU pod without a model constraint also loses GUARD (100) points × the node's
  model pressure: the GPU milli that model-restricted pods seen so far asked of that model, over the
  model's idle milli in the cluster (:meth:`RatioDelta.pressure`). Pods that may go anywhere leave
  scarce models to the pods that cannot; with no restricted pod seen, nothing changes.
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

import numpy as np

from .cluster import ClusterGpuState, IntArray
from .fgdonline import FgdOnline
from .policies import MAX_NODE_SCORE
from .types import MILLI, NodeGpuState, PodShape

__all__ = ["GUARD", "RARE", "SCALE", "WEIGHT", "RatioDelta", "imbalance_penalty", "usable_taken"]

WEIGHT = 30.0
"""Score points per GPU (1000 milli) of imbalance the placement adds."""
SCALE = 1000
"""Raw scores are in 1/SCALE of a score point."""
GUARD = 100.0
"""Score points per unit of a model's restricted pressure (see :meth:`RatioDelta.pressure`)."""
RARE = 2.0
"""Per cent of the GPU pods seen, smallest per-card requests first, whose sizes do not make a card
remnant usable (U is the next size): on the Alibaba trace the ≤ 190m shares are 1.5 % of the GPU pods,
so the 190m beside an 810m pod does not count and U = 220."""


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
        #: GPU milli asked by the model-restricted GPU pods seen, per model (split evenly over a pod's models).
        self.restricted: dict[str, float] = {}

    def observe(self, pod: PodShape) -> None:
        super().observe(pod)
        if pod.wants_gpu:
            self.cpu_sum += pod.cpu
            self.gpu_sum += pod.total_gpu_milli
            self.per_card[pod.gpu_milli] += 1
            self.gpu_pods += 1
            for model in pod.models:
                self.restricted[model] = self.restricted.get(model, 0.0) + pod.total_gpu_milli / len(pod.models)

    @property
    def least_useful(self) -> int:
        """U: the smallest per-card GPU request above the rarest :data:`RARE` % of the GPU pods seen
        (1 while none is seen): a remnant only that few pods fit does not count as usable."""
        if self._least is None or self._least[0] != self.gpu_pods:
            self._least = (self.gpu_pods, _percentile(self.per_card, self.gpu_pods * RARE / 100))
        return self._least[1]

    def pressure(self, cluster: ClusterGpuState) -> dict[str, float]:
        """Per GPU model: the GPU milli the model-restricted pods seen so far asked of it, over the
        cluster's idle milli of that model. The model guard charges GPU pods without a constraint
        GUARD × this on a node of the model, so they leave scarce models to the pods that need them
        (a model no restricted pod asked for costs nothing; without restricted pods, nothing changes)."""
        if not self.restricted:
            return {}
        idle = np.bincount(cluster.model_idx, weights=cluster.gpu_sum, minlength=len(cluster.models))
        return {model: self.restricted[model] / max(float(idle[i]), 1.0)
                for i, model in enumerate(cluster.models) if model in self.restricted}

    def cluster_context(self, cluster: ClusterGpuState, pod: PodShape) -> object | None:
        return self.pressure(cluster) if self._guarded(pod) else None

    def _guarded(self, pod: PodShape) -> bool:
        return pod.wants_gpu and not pod.models and bool(self.restricted)

    def _adjust(self, base: IntArray, cpu_left: IntArray, gpu_left: IntArray, pod: PodShape) -> IntArray:
        raw: IntArray = base.astype(np.int64) * SCALE
        if not pod.wants_gpu or self.cpu_sum == 0 or self.gpu_sum == 0:
            return raw
        usable, taken = usable_taken(gpu_left, pod, self.least_useful)
        out: IntArray = raw - imbalance_penalty(cpu_left, usable, taken, pod, self.cpu_sum / self.gpu_sum,
                                                self.weight)
        return out

    def _guard(self, pressure: dict[str, float], models: list[str]) -> IntArray:
        guard: IntArray = np.rint(np.array([pressure.get(m, 0.0) for m in models]) * GUARD * SCALE).astype(np.int64)
        return guard

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        base = np.array([super().score(node, pod, None)], dtype=np.int64)
        cpu = np.array([node.cpu_left], dtype=np.int64)
        cards = np.array([node.gpu_left], dtype=np.int64).reshape(1, len(node.gpu_left))
        out = int(self._adjust(base, cpu, cards, pod)[0])
        if isinstance(pre, dict) and self._guarded(pod):
            out -= int(self._guard(pre, [node.model])[0])
        return out

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = super().score_batch(cluster, nodes, pod)
        out = self._adjust(base, cluster.cpu_left[nodes], cluster.gpu_left[nodes], pod)
        if self._guarded(pod):
            per_model = self._guard(self.pressure(cluster), cluster.models)
            out = out - per_model[cluster.model_idx[nodes]]
        return out

    def normalize(self, scores: IntArray) -> IntArray:
        """The dense rank from the top: the best distinct raw score 100, the next 99, ..., at least 0."""
        if len(scores) == 0:
            return scores
        _, inverse = np.unique(-scores, return_inverse=True)
        ranked: IntArray = np.maximum(MAX_NODE_SCORE - inverse.astype(np.int64), 0)
        return ranked
