"""Pods every replay must place: the replay refuses a pod only when it fits on no node.

Before pod j arrives, any policy's cluster holds some feasible placement of a subset of pods 0..j-1
(CPU-only pods included: they take CPU, memory and pod slots). A node on which pod j could run
when empty is *blocked* for it only if at least one of these *reasons* holds on the node:

- cpu: its used CPU exceeds C − cpu_j (so ≥ C − cpu_j + 1 milli of the pods before j sit there);
- memory: its used memory exceeds M − mem_j; pods: it holds max_pods pods;
- cards: (a shared pod of m milli) each of its G cards has more than 1000 − m used, i.e. at least
  1001 − m; (a pod of g whole GPUs) fewer than g cards are untouched, so at least G − g + 1 cards
  hold a GPU pod.

Two tests, each a proof that some node is free for pod j in every reachable state (docs/gpu.md,
"Pods every replay must place"):

- *Budgets* (cheap): the earlier pods' total CPU, memory, count and card touches are four budgets;
  the most eligible nodes each can block is found greedily, cheapest first. If the four maxima sum to
  fewer than the eligible nodes, pod j is forced.
- *Assignment LP* (tighter): a blocked node needs one reason only, and each earlier pod sits on one
  node, so it serves at most one reason. With y[t, r] blocked nodes of type t by reason r and x[k, r]
  earlier pods of shape k serving reason r: max Σ y s.t. Σ_r y[t, r] ≤ N_t,
  Σ_t thr[t, r]·y[t, r] ≤ Σ_k gives_k(r)·x[k, r], Σ_r x[k, r] ≤ n_k. A pod of v milli on one card gives
  the cards reason of a shared pod of m milli min(1, v / (1001 − m)); a pod of whole GPUs, one per card.
  If the LP's maximum (certified from above by weak duality) is below the eligible nodes, pod j is
  forced. The budgets test may call forced a pod the LP does not (the LP is fractional); either proof
  suffices.

Both only grow with the prefix, so for each pod shape the forced pods are its first occurrences: a
binary search per shape finds them. A forced pod is placed by every policy and stays (no departures),
so at any later event the placement holds every forced pod, and a bound may require them
(:mod:`kubesched.sim.gpu_card_bound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.plugins.gpu.types import MILLI, NodeSpec, PodShape
from kubesched.sim.gpu_bound_base import BoundError, NodeType, dual_bound, fits, node_types, quiet_stdout

__all__ = ["forced_pods"]

#: The reasons a node is blocked for a pod, in the order of the LP's columns.
REASONS = ("cpu", "memory", "pods", "cards")


def _blockable(costs: list[tuple[int, int]], budget: int) -> int:
    """The most nodes (cost, count pairs) a budget can pay for, cheapest first."""
    blocked = 0
    for cost, count in sorted(costs):
        if cost <= 0:
            blocked += count
            continue
        n = min(count, budget // cost)
        blocked += n
        budget -= n * cost
        if n < count:
            break
    return blocked


def _thresholds(pod: PodShape, t: NodeType) -> tuple[int, int, int, int]:
    """What each reason needs on one node of type t to block ``pod`` (cpu, memory, pods, cards)."""
    cards = t.gpus - pod.gpu_count + 1 if pod.gpu_milli == MILLI else t.gpus
    return (t.cpu - pod.cpu + 1, t.memory - pod.memory + 1, t.max_pods, cards)


def _gives(pod: PodShape, earlier: PodShape) -> tuple[float, float, float, float]:
    """What one earlier pod contributes to each reason of blocking a node for ``pod``."""
    cards = 0.0
    if earlier.gpu_milli > 0:
        if pod.gpu_milli == MILLI or earlier.gpu_milli == MILLI:
            cards = float(earlier.gpu_count)  # touches (whole: each card is full)
        else:
            cards = min(1.0, earlier.gpu_milli / (MILLI - pod.gpu_milli + 1))
    return (float(earlier.cpu), float(earlier.memory), 1.0, cards)


def _budgets_block_all(pod: PodShape, eligible: list[tuple[NodeType, int]], spent: tuple[int, int, int, int]) -> bool:
    """The budgets test: whether the earlier pods' four budgets, each spent on its own, can block
    every eligible node (so the test cannot call the pod forced)."""
    total = sum(n for _, n in eligible)
    blocked = sum(
        _blockable([(_thresholds(pod, t)[r], n) for t, n in eligible], spent[r]) for r in range(len(REASONS))
    )
    return blocked >= total


def _lp_most_blocked(pod: PodShape, eligible: list[tuple[NodeType, int]], shapes: Sequence[PodShape],
                     counts: np.ndarray) -> float:
    """The assignment LP's maximum of blocked nodes, certified from above (weak duality)."""
    from scipy.optimize import linprog

    present = [k for k in range(len(shapes)) if counts[k] > 0]
    n_r, n_t = len(REASONS), len(eligible)
    ny, n = n_t * n_r, n_t * n_r + len(present) * n_r
    a = np.zeros((n_t + len(present) + n_r, n))
    b = np.zeros(a.shape[0])
    most = np.zeros(n)
    for i, (t, count) in enumerate(eligible):
        a[i, i * n_r:(i + 1) * n_r] = 1.0
        b[i] = count
        most[i * n_r:(i + 1) * n_r] = count
        for r, thr in enumerate(_thresholds(pod, t)):
            a[n_t + len(present) + r, i * n_r + r] = thr
    for j, k in enumerate(present):
        cols = slice(ny + j * n_r, ny + (j + 1) * n_r)
        a[n_t + j, cols] = 1.0
        b[n_t + j] = counts[k]
        most[cols] = counts[k]
        a[n_t + len(present):, cols] = -np.diag(_gives(pod, shapes[k]))
    c = np.zeros(n)
    c[:ny] = -1.0
    with quiet_stdout():
        res = linprog(c, A_ub=a, b_ub=b, bounds=(0, None), method="highs")
    if res.status != 0:
        raise BoundError(f"HiGHS failed on the forced-pods LP: {res.message}")
    return dual_bound(a, c, b, most, res.ineqlin.marginals)


@dataclass(frozen=True)
class _Prefixes:
    """The sequence as the tests read it: each pod's shape index and the budgets spent before it."""

    shapes: list[PodShape]
    ids: np.ndarray
    spent: np.ndarray  # (pods + 1) x REASONS: CPU, memory, pods and card touches before each pod

    def forced(self, pod: PodShape, eligible: list[tuple[NodeType, int]], j: int) -> bool:
        """Whether pod ``pod``, arriving as event j, is placed by every replay."""
        cpu, memory, count, touches = (int(v) for v in self.spent[j])
        if not _budgets_block_all(pod, eligible, (cpu, memory, count, touches)):
            return True
        counts = np.bincount(self.ids[:j], minlength=len(self.shapes))
        return _lp_most_blocked(pod, eligible, self.shapes, counts) < sum(n for _, n in eligible)


def forced_pods(pods: Sequence[PodShape], nodes: Sequence[NodeSpec]) -> list[bool]:
    """For each pod of the sequence (arrival order): whether every replay must place it."""
    try:
        import scipy.optimize  # noqa: F401
    except ImportError as err:
        raise BoundError("the bound needs SciPy (HiGHS): pip install 'kubesched[bound]'") from err
    types = node_types(nodes)
    shapes = list(dict.fromkeys(pods))
    index = {s: k for k, s in enumerate(shapes)}
    ids = np.fromiter((index[p] for p in pods), dtype=np.int64, count=len(pods))
    spent = np.zeros((len(pods) + 1, len(REASONS)), dtype=np.int64)
    for i, p in enumerate(pods):
        spent[i + 1] = spent[i] + (p.cpu, p.memory, 1, p.gpu_count if p.gpu_milli > 0 else 0)
    seq = _Prefixes(shapes, ids, spent)
    out = [False] * len(pods)
    for k, shape in enumerate(shapes):
        eligible = [(t, n) for t, n in types if fits(shape, t)]
        if shape.total_gpu_milli <= 0 or not any(n for _, n in eligible):
            continue
        at = np.flatnonzero(ids == k)
        lo, hi = 0, len(at)  # binary search: the first occurrence that is not forced
        while lo < hi:
            mid = (lo + hi) // 2
            if seq.forced(shape, eligible, int(at[mid])):
                lo = mid + 1
            else:
                hi = mid
        for j in at[:lo]:
            out[int(j)] = True
    return out
