"""RequestedToCapacityRatio: a piecewise-linear function of each resource's utilisation
(upstream ``pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio.go`` and
``pkg/scheduler/framework/plugins/helper/shape_score.go``).

Shape scores (0..10) are scaled by ``MaxNodeScore / MaxCustomPriorityScore`` = 10; resources that
score 0 are left out of the weighted mean, which is rounded half away from zero (``math.Round``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kubesched.config.plugin_args import ResourceSpec, UtilizationShapePoint
from kubesched.plugins.helper.shape_score import FunctionShapePoint, build_broken_linear_function, scaled_shape

from .resource_allocation import I64, BatchScorer, Scorer, div_trunc_array, round_half_away

MAX_UTILIZATION = 100


def build_broken_linear_function_batch(shape: Sequence[FunctionShapePoint]) -> Callable[[I64], I64]:
    points = tuple(shape)

    def f(p: I64) -> I64:
        out = np.full(p.shape, points[-1].score, dtype=np.int64)
        # The first point with p <= utilization wins: assign from the last point back to the first.
        for i in range(len(points) - 1, -1, -1):
            pt = points[i]
            if i == 0:
                value = np.full(p.shape, pt.score, dtype=np.int64)
            else:
                prev = points[i - 1]
                value = prev.score + div_trunc_array(
                    (pt.score - prev.score) * (p - prev.utilization), pt.utilization - prev.utilization
                )
            out = np.where(p <= pt.utilization, value, out)
        return out

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    raw = build_broken_linear_function(scaled_shape(shape))
    weights = [r.weight for r in resources]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            s = resource_score(req, alloc)
            if s > 0:
                node_score += s * w
                weight_sum += w
        return round_half_away(node_score, weight_sum) if weight_sum else 0

    return score


def requested_to_capacity_ratio_batch_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> BatchScorer:
    raw = build_broken_linear_function_batch(scaled_shape(shape))
    weights = np.array([r.weight for r in resources], dtype=np.int64)

    def score(requested: I64, allocatable: I64) -> I64:
        present = allocatable != 0
        safe = np.where(present, allocatable, 1)
        util = np.where(requested > allocatable, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe)
        per = raw(util)
        include = present & (per > 0)
        w = np.where(include, weights[:, None], 0)
        total = (per * w).sum(axis=0)
        wsum = w.sum(axis=0)
        safe_sum = np.where(wsum == 0, 1, wsum)
        out: I64 = np.where(wsum == 0, 0, (2 * total + wsum) // (2 * safe_sum))
        return out

    return score
