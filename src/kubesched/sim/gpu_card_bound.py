"""A tighter upper bound on the GPU milli a subset of pods can hold: card patterns and per-node cuts.

The aggregate relaxation of :mod:`kubesched.sim.gpu_bound` pools a node type's GPU milli, so an 810m
pod's 190m left over counts as room for a 470m pod, and it pools the type's CPU, so two nodes with
CPU for 1.5 pods each look like room for three. This LP keeps each *card* whole and cuts what one
*node* can hold (docs/gpu.md, "An upper bound", has the proof):

- A card pattern is a multiset of shared-GPU milli values (those of the prefix's shapes that may run
  on the type) with sum ≤ 1000, maximal (no value can be added). Every card holding shared pods
  holds a sub-multiset of some maximal pattern.
- Variables, per node type t: x[k, t] ≥ 0 pods of shape k on t, q[t, p] ≥ 0 cards of t filled
  with pattern p.
- Σ_t x[k, t] ≤ n_k; per type: Σ_p q[t, p] + Σ_{whole k} gpus_k·x[k, t] ≤ N_t·G_t (a card holds
  shared pods or belongs to one whole-GPU pod); per shared milli value m:
  Σ_{k of milli m} x[k, t] ≤ Σ_p mult_p(m)·q[t, p]; GPU milli, CPU, memory and pods within the
  type's totals.
- Per-node cuts: one node holds at most ⌊C_t / v⌋ pods asking for v or more CPU, ⌊M_t / v⌋ asking
  for v or more memory, ⌊G_t / j⌋ asking for j or more whole GPUs; so
  Σ_{k: cpu_k ≥ v} x[k, t] ≤ N_t·⌊C_t / v⌋ for every CPU request v of the prefix (and alike).

- With ``forced`` (the pods every replay must place, :mod:`kubesched.sim.gpu_forced`):
  Σ_t x[k, t] ≥ f_k. The replay's placement holds them, so it stays feasible.

A feasible placement of a subset, counted per shape and type (x) and per card by the maximal
pattern containing its shared pods' milli (q), satisfies all of these with the same GPU milli, so
the LP's optimum is ≥ OPT. Solved with HiGHS (``scipy.optimize.linprog``). When a type's shared
shares have more than MAX_PATTERNS maximal patterns (many small shares), the shares are rounded down
to a coarser grid for the card rows only: every placement still fits, so it is still a bound.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

import numpy as np

from kubesched.plugins.gpu.types import MILLI, NodeSpec, PodShape
from kubesched.sim.gpu_bound_base import BoundError, dual_bound, fits, node_types, quiet_stdout

__all__ = ["card_pattern_bound", "maximal_patterns"]


#: Most card patterns a node type may have; past it the shared milli are coarsened (see _packing).
MAX_PATTERNS = 20_000
#: Grids (milli) the shared pods' card share is rounded down to, finest first, until the patterns fit.
GRIDS = (1, 10, 25, 50, 100, 250)


class _TooMany(Exception):
    """More maximal patterns than MAX_PATTERNS."""


@cache
def maximal_patterns(millis: tuple[int, ...], limit: int = MAX_PATTERNS) -> tuple[tuple[int, ...], ...]:
    """Every maximal multiset of ``millis`` (sorted, distinct, each 1..999) fitting one card, as a
    count per value: no value can be added without passing 1000 milli. :class:`_TooMany` past
    ``limit`` patterns (small values have astronomically many)."""
    smallest = millis[0] if millis else MILLI
    out: list[tuple[int, ...]] = []
    steps = [0]

    def walk(i: int, left: int, counts: list[int]) -> None:
        steps[0] += 1
        if steps[0] > 50 * limit:  # the walk visits non-maximal multisets too
            raise _TooMany
        if i == len(millis):
            if left < smallest and any(counts):
                out.append(tuple(counts))
                if len(out) > limit:
                    raise _TooMany
            return
        for n in range(left // millis[i], -1, -1):
            counts.append(n)
            walk(i + 1, left - n * millis[i], counts)
            counts.pop()

    walk(0, MILLI, [])
    return tuple(out)


def _packing(millis: set[int]) -> tuple[int, tuple[tuple[int, ...], ...]]:
    """The finest grid whose rounded-down values have at most MAX_PATTERNS maximal patterns, and those
    patterns. Rounding a pod's card share down only lets more fit on a card, so the LP stays a bound
    (its objective keeps the true milli); a share rounded to 0 takes no card room."""
    for grid in GRIDS:
        try:
            return grid, maximal_patterns(tuple(sorted({m // grid * grid for m in millis} - {0})))
        except _TooMany:
            continue
    return GRIDS[-1], maximal_patterns(tuple(sorted({m // GRIDS[-1] * GRIDS[-1] for m in millis} - {0})), 1 << 62)


def _request(shape: PodShape, what: str) -> int:
    """CPU, memory, or whole GPUs (0 for a shared pod) a pod asks of its node."""
    if what == "cpu":
        return shape.cpu
    if what == "memory":
        return shape.memory
    return shape.gpu_count if shape.gpu_milli == MILLI else 0


def card_pattern_bound(
    pods: Iterable[PodShape] | Mapping[PodShape, int],
    nodes: Sequence[NodeSpec],
    forced: Mapping[PodShape, int] | None = None,
) -> float:
    """An upper bound on the GPU milli any feasible placement of a subset of ``pods`` holds; with
    ``forced`` (shape -> count, at most the pods'), of a subset holding at least those pods."""
    try:
        from scipy.optimize import linprog
        from scipy.sparse import coo_matrix
    except ImportError as err:
        raise BoundError("the bound needs SciPy (HiGHS): pip install 'kubesched[bound]'") from err
    counts = Counter(dict(pods)) if isinstance(pods, Mapping) else Counter(pods)
    shapes = sorted(
        (s for s, n in counts.items() if s.total_gpu_milli > 0 and n > 0),
        key=lambda s: (s.gpu_milli, s.gpu_count, s.cpu, s.memory, s.models),
    )
    types = [(t, n) for t, n in node_types(nodes) if t.gpus > 0]
    objective: list[float] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    limits: list[float] = []

    most: list[float] = []  # an upper bound on each variable, for the dual bound below

    def var(gpu: float, at_most: float) -> int:
        objective.append(-gpu)
        most.append(at_most)
        return len(objective) - 1

    def row(entries: Iterable[tuple[int, float]], limit: float) -> None:
        r = len(limits)
        for j, coef in entries:
            rows.append(r)
            cols.append(j)
            vals.append(coef)
        limits.append(limit)

    on_shape: dict[int, list[int]] = {k: [] for k in range(len(shapes))}
    for typ, n in types:
        here = [
            (k, var(float(shapes[k].total_gpu_milli), float(counts[shapes[k]])))
            for k in range(len(shapes))
            if fits(shapes[k], typ)
        ]
        if not here:
            continue
        for k, j in here:
            on_shape[k].append(j)
        grid, patterns = _packing({shapes[k].gpu_milli for k, _ in here if shapes[k].gpu_milli < MILLI})
        packed = {k: shapes[k].gpu_milli // grid * grid for k, _ in here if shapes[k].gpu_milli < MILLI}
        millis = tuple(sorted(set(packed.values()) - {0}))
        q = [var(0.0, float(n * typ.gpus)) for _ in patterns]
        whole = [(j, float(shapes[k].gpu_count)) for k, j in here if shapes[k].gpu_milli == MILLI]
        row([(j, 1.0) for j in q] + whole, float(n * typ.gpus))
        for i, m in enumerate(millis):
            row(
                [(j, 1.0) for k, j in here if packed.get(k) == m]
                + [(q[p], -float(pat[i])) for p, pat in enumerate(patterns) if pat[i]],
                0.0,
            )
        # The type's GPU milli (implied by the patterns unless shares were coarsened).
        row([(j, float(shapes[k].total_gpu_milli)) for k, j in here], float(n * typ.gpus * MILLI))
        row([(j, float(shapes[k].cpu)) for k, j in here], float(n * typ.cpu))
        row([(j, float(shapes[k].memory)) for k, j in here], float(n * typ.memory))
        row([(j, 1.0) for k, j in here], float(n * typ.max_pods))
        # Per-node cuts: at most ⌊capacity / v⌋ pods asking for v or more fit one node.
        for what, capacity in (("cpu", typ.cpu), ("memory", typ.memory), ("gpus", typ.gpus)):
            asks = {j: _request(shapes[k], what) for k, j in here}
            for v in sorted(set(asks.values()) - {0}):
                if capacity // v < typ.max_pods:
                    row([(j, 1.0) for j, a in asks.items() if a >= v], float(n * (capacity // v)))
    for k, js in on_shape.items():
        if js:
            row([(j, 1.0) for j in js], float(counts[shapes[k]]))
            if forced and forced.get(shapes[k], 0) > 0:
                row([(j, -1.0) for j in js], -float(forced[shapes[k]]))
    if not objective or not limits:
        return 0.0
    a = coo_matrix((vals, (rows, cols)), shape=(len(limits), len(objective))).tocsr()
    with quiet_stdout():
        res = linprog(np.array(objective), A_ub=a, b_ub=np.array(limits), bounds=(0, None), method="highs")
    if res.status == 2 and forced:  # infeasible: cannot be with sound inputs; do without them
        return card_pattern_bound(counts, nodes)
    if res.status != 0:
        raise BoundError(f"HiGHS failed on the card-pattern LP: {res.message}")
    return dual_bound(a, np.array(objective), np.array(limits), np.array(most), res.ineqlin.marginals)
