"""FGDOnline: FGDPlus whose workload mix is learned from the pods seen so far (issue 17).

FGD and FGDPlus are handed the workload's typical pods up front (the oracle mix: the whole trace's
pod types and counts). FGDOnline is not: it counts the shapes of the pods it is asked to place
(:meth:`observe`, called once per pod before it is scored, the pod itself included) and rebuilds
FGD's typical pods from those counts, with FGD's own selection (most popular types covering
``coverage`` % of the pods seen). Before the first pod it knows no GPU type, so every node's
fragmentation is its idle GPU milli and all nodes tie.

Rebuilding invalidates every memoized score, so it happens on a schedule that follows how fast the
estimate settles: after each of the first 64 pods, every 16th pod up to 1024, then every 256th.
Everything else (node scores from the fragmentation decrease, the CPU-only pod rule and the shared
pod's GPU choice) is :class:`~kubesched.plugins.gpu.fgdplus.FgdPlus`'s. Measured effect and caveats:
docs/gpu.md, "Learning the mix online: FGDOnline".
"""

from __future__ import annotations

from collections import Counter

from .fgdplus import FgdPlus
from .frag import TypicalPod, TypicalPods
from .types import PodShape, ShapeKey

__all__ = ["DENSE_UNTIL", "FgdOnline", "refresh_due"]

DENSE_UNTIL = 64
"""Up to this many pods seen, the mix is rebuilt after every pod."""
_MEDIUM_UNTIL, _MEDIUM_STEP, _SPARSE_STEP = 1024, 16, 256


def refresh_due(seen: int) -> bool:
    """Whether the typical pods are rebuilt after the ``seen``-th pod (1-based)."""
    if seen <= DENSE_UNTIL:
        return True
    if seen <= _MEDIUM_UNTIL:
        return seen % _MEDIUM_STEP == 0
    return seen % _SPARSE_STEP == 0


def _uninformed() -> TypicalPods:
    """The mix before any pod: one CPU-only type, so F = idle GPU milli on every node (all tie)."""
    return TypicalPods([TypicalPod(cpu=0, gpu_milli=0, gpu_count=0, models=(), count=0, p=1.0)])


class FgdOnline(FgdPlus):
    """FGDPlus with the typical pods estimated online from the shapes of the pods seen so far."""

    name = "FGDOnline"

    def __init__(self, coverage: int = 95) -> None:
        super().__init__(_uninformed())
        self.coverage = coverage
        self.counts: Counter[ShapeKey] = Counter()
        self.seen = 0
        self.refreshes = 0

    def observe(self, pod: PodShape) -> None:
        self.counts[pod.key] += 1
        self.seen += 1
        if refresh_due(self.seen):
            self._set_typical(TypicalPods.from_counts(self.counts, self.coverage))

    def _set_typical(self, typical: TypicalPods) -> None:
        """Switch to a new mix: every memoized F and score depended on the old one."""
        self.typical = typical
        self.refreshes += 1
        self._cluster = None  # the next batch call rebinds: access matrix, F and score tables
        self._node_memo.clear()
        self._gpu_memo.clear()
