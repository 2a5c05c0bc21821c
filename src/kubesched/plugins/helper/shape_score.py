"""Piecewise-linear scoring shapes (upstream ``pkg/scheduler/framework/plugins/helper/shape_score.go``),
shared by RequestedToCapacityRatio and VolumeBinding's storage-capacity scorer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubesched.config.plugin_args import MAX_CUSTOM_PRIORITY_SCORE, UtilizationShapePoint
from kubesched.framework.interfaces import MAX_NODE_SCORE

__all__ = ["FunctionShapePoint", "build_broken_linear_function", "scaled_shape"]


@dataclass(frozen=True)
class FunctionShapePoint:
    """Upstream ``helper.FunctionShapePoint``."""

    utilization: int
    score: int


def _div_trunc(a: int, b: int) -> int:
    """Go's integer division (towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def build_broken_linear_function(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """Upstream ``BuildBrokenLinearFunction``: shape[0] below the first point, the last above the last,
    linear (Go integer division) in between."""
    points = tuple(shape)

    def f(p: int) -> int:
        for i, pt in enumerate(points):
            if p <= pt.utilization:
                if i == 0:
                    return points[0].score
                prev = points[i - 1]
                return prev.score + _div_trunc(
                    (pt.score - prev.score) * (p - prev.utilization), pt.utilization - prev.utilization
                )
        return points[-1].score

    return f


def scaled_shape(shape: Sequence[UtilizationShapePoint]) -> list[FunctionShapePoint]:
    """Shape scores (0..MaxCustomPriorityScore) scaled to node scores (0..MaxNodeScore)."""
    return [
        FunctionShapePoint(p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for p in shape
    ]
