"""LeastAllocated: favours nodes with more unrequested capacity
(upstream ``pkg/scheduler/framework/plugins/noderesources/least_allocated.go``).

Per resource ``(capacity - requested) * 100 / capacity`` (0 when over capacity), then the
weight-averaged sum over the resources the node has, all in integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.config.plugin_args import ResourceSpec
from kubesched.framework.interfaces import MAX_NODE_SCORE

from .resource_allocation import I64, BatchScorer, Scorer, weighted_mean

__all__ = ["least_requested_score", "least_resource_batch_scorer", "least_resource_dense_scorer",
           "least_resource_scorer"]


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    weights = [r.weight for r in resources]

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            node_score += least_requested_score(req, alloc) * w
            weight_sum += w
        return node_score // weight_sum if weight_sum else 0

    return score


def least_resource_batch_scorer(resources: Sequence[ResourceSpec]) -> BatchScorer:
    weights = np.array([r.weight for r in resources], dtype=np.int64)

    def score(requested: I64, allocatable: I64) -> I64:
        include = allocatable != 0
        safe = np.where(include, allocatable, 1)
        per = np.where(requested > allocatable, 0, (allocatable - requested) * MAX_NODE_SCORE // safe)
        return weighted_mean(np.where(include, per, 0), weights, include)

    return score


def least_resource_dense_scorer(columns: list[tuple[I64, I64, int]], n: int) -> I64:
    """The batch form when every resource is allocatable everywhere (``allocatable > 0``)."""
    total: I64 | None = None
    weight_sum = 0
    for requested, allocatable, w in columns:
        per = np.maximum(allocatable - requested, 0) * MAX_NODE_SCORE // allocatable * w
        total = per if total is None else total + per
        weight_sum += w
    if total is None or weight_sum == 0:
        return np.zeros(n, dtype=np.int64)
    out: I64 = total // weight_sum
    return out
