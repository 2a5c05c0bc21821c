"""FGDPlus: FGD with two fit rules where FGD's own score is indifferent (issue 6, "go beyond").

FGD (:class:`~kubesched.plugins.gpu.policies.Fgd`) scores a node by how much its fragmentation F
(measured against the workload's typical pods) drops, truncated to an integer sigmoid. Two of its
decisions are left to an arbitrary order, and both matter on the Alibaba trace:

* **CPU-only pods.** Placing a pod without GPU request never frees GPU milli, so F can only grow
  (typical GPU pods may lose the CPU they need): Δ <= 0 and the score is at most 50, which it reaches
  exactly when the pod strands nothing (Δ = 0). Among those harmless nodes FGD takes the first in node
  order, which may be a node whose idle GPUs will later need that CPU. FGDPlus scores such a node
  ``50 + 50·(8000 − idle GPU milli) div 8000`` (51..100), so CPU-only pods go where the fewest idle GPUs
  are left to strand, i.e. onto nodes whose GPUs are already used; a node where the pod raises F keeps
  FGD's score (< 50). Nodes are compared on FGD's score first, then on idle GPU milli in steps of 160.
* **GPU choice of a shared pod.** FGD tries the pod on every GPU that fits and takes the best integer
  score, ties to the lowest index. FGDPlus breaks those ties by best fit: the GPU with the least milli
  left (then the lowest index), keeping emptier GPUs whole for larger shares.

Everything else (GPU pods' node scores, fragmentation, memoization) is FGD's. Measured effect and
caveats: docs/gpu.md, "Beyond FGD: FGDPlus".
"""

from __future__ import annotations

import numpy as np

from .cluster import ClusterGpuState, IntArray
from .policies import Fgd
from .types import MAX_SPEC_GPU, NodeGpuState, PodShape

__all__ = ["NEUTRAL_SCORE", "FgdPlus", "cpu_pod_score"]

NEUTRAL_SCORE = 50
"""FGD's score for Δ = 0 (sigmoid(0) = ½): the best a CPU-only pod can get from FGD."""


def cpu_pod_score(fgd_score: IntArray, gpu_idle_milli: IntArray) -> IntArray:
    """FGDPlus's score of a CPU-only pod from FGD's score and the node's idle GPU milli.

    Nodes where the pod fragments nothing (FGD 50) get 50 + 50·(8000 − idle) div 8000; others keep
    FGD's score (< 50), so FGD's order comes first and idle GPU milli breaks its ties.
    """
    idle = np.minimum(gpu_idle_milli, MAX_SPEC_GPU)
    bonus = NEUTRAL_SCORE * (MAX_SPEC_GPU - idle) // MAX_SPEC_GPU
    return np.where(fgd_score == NEUTRAL_SCORE, NEUTRAL_SCORE + bonus, fgd_score)


class FgdPlus(Fgd):
    """FGD, plus: CPU-only pods onto the harmless node with the fewest idle GPUs, and best-fit GPU
    choice among a shared pod's equally scored GPUs."""

    name = "FGDPlus"

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        value = super().score(node, pod, pre)
        if pod.wants_gpu:
            return value
        return int(cpu_pod_score(np.array([value], dtype=np.int64),
                                 np.array([node.gpu_milli_left], dtype=np.int64))[0])

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        scores = super().score_batch(cluster, nodes, pod)
        if pod.wants_gpu:
            return scores
        return cpu_pod_score(scores, cluster.gpu_sum[nodes])

    def select_gpus(self, node: NodeGpuState, pod: PodShape) -> tuple[int, ...]:
        if not pod.is_shared:
            return super().select_gpus(node, pod)
        cols, scores = self._gpu_scores(node, pod)
        if len(scores) == 0:
            raise ValueError("no GPU fits the pod")
        best = cols[scores == scores.max()]  # ascending GPU index
        left = np.array(node.gpu_left, dtype=np.int64)[best]
        return (int(best[int(np.argmin(left))]),)
