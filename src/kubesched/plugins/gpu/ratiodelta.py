"""RatioDelta: FGDOnline plus a penalty on the CPU/GPU imbalance a GPU pod's placement adds (issue 17).

FGD leaves idle GPUs on nodes whose CPU is used up (about 1 % of the capacity on the Alibaba trace,
docs/gpu.md "Where FGD's last 4.6 % go"). RatioDelta keeps every decision of
:class:`~kubesched.plugins.gpu.fgdonline.FgdOnline` (the mix learned online, FGDPlus's rules) and
lowers a GPU pod's node score by how much the placement worsens the node's imbalance between the CPU
it has left and the CPU its idle GPUs will need::

    imbalance(node) = |CPU left / c̄ − idle GPU milli|
    score = clip(FGDOnline − round(W × (imbalance after − imbalance before) / 1000), 0, 100)

c̄ is the CPU (milli) per GPU milli of the GPU pods seen so far (:meth:`observe`, the pod being
scheduled included), learned online like the mix: RatioDelta is never handed the workload. Using the
*change* of the imbalance rather than its value after the placement leaves an empty node, balanced
before and after, no better than a used one. CPU-only pods, and every pod before a GPU pod with CPU
has been seen, get FGDOnline's score unchanged. The result stays in a Score plugin's integer range
0..100; ``round`` is numpy's (halves to even), done in float64 on the per-node and the batch path
alike.

``W`` (:data:`WEIGHT`, 10) is a constant, not a GpuShare arg: the research screen found the mean at
130 % arrived flat in it (95.86 / 95.87 % for W = 3 / 10, docs/dev/gpu-policy-log.md).
Measured effect and caveats: docs/gpu.md, "RatioDelta as a policy".
"""

from __future__ import annotations

import numpy as np

from .cluster import ClusterGpuState, IntArray
from .fgdonline import FgdOnline
from .policies import MAX_NODE_SCORE
from .types import MILLI, NodeGpuState, PodShape

__all__ = ["WEIGHT", "RatioDelta", "imbalance_penalty"]

WEIGHT = 10.0
"""Score points per GPU (1000 milli) of imbalance the placement adds."""


def imbalance_penalty(cpu_left: IntArray, idle_milli: IntArray, pod: PodShape, per: float,
                      weight: float) -> IntArray:
    """round(weight × (|after| − |before|) / 1000) per node, with the node's imbalance
    |CPU left / ``per`` − idle GPU milli| before and after placing ``pod``."""
    before = np.abs(cpu_left / per - idle_milli)
    after = np.abs((cpu_left - pod.cpu) / per - (idle_milli - pod.total_gpu_milli))
    penalty: IntArray = np.rint(weight * (after - before) / MILLI).astype(np.int64)
    return penalty


class RatioDelta(FgdOnline):
    """FGDOnline minus W × the change of the node's CPU/GPU imbalance (GPU pods), clipped to 0..100."""

    name = "RatioDelta"

    def __init__(self, coverage: int = 95, weight: float = WEIGHT) -> None:
        super().__init__(coverage)
        self.weight = weight
        #: CPU milli and GPU milli requested by the GPU pods seen so far (c̄ = cpu_sum / gpu_sum).
        self.cpu_sum = 0
        self.gpu_sum = 0

    def observe(self, pod: PodShape) -> None:
        super().observe(pod)
        if pod.wants_gpu:
            self.cpu_sum += pod.cpu
            self.gpu_sum += pod.total_gpu_milli

    def _adjust(self, base: IntArray, cpu_left: IntArray, idle_milli: IntArray, pod: PodShape) -> IntArray:
        if not pod.wants_gpu or self.cpu_sum == 0 or self.gpu_sum == 0:
            return base
        per = self.cpu_sum / self.gpu_sum
        penalty = imbalance_penalty(cpu_left, idle_milli, pod, per, self.weight)
        out: IntArray = np.clip(base - penalty, 0, MAX_NODE_SCORE)
        return out

    def score(self, node: NodeGpuState, pod: PodShape, pre: object | None = None) -> int:
        base = np.array([super().score(node, pod, pre)], dtype=np.int64)
        cpu = np.array([node.cpu_left], dtype=np.int64)
        idle = np.array([node.gpu_milli_left], dtype=np.int64)
        return int(self._adjust(base, cpu, idle, pod)[0])

    def score_batch(self, cluster: ClusterGpuState, nodes: IntArray, pod: PodShape) -> IntArray:
        base = super().score_batch(cluster, nodes, pod)
        return self._adjust(base, cluster.cpu_left[nodes], cluster.gpu_sum[nodes], pod)
