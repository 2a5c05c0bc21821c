"""An upper bound on the GPU allocation ratio a replay can reach (``kubesched trace bound``).

The replay (``trace alibaba-gpu``) offers the pods of a resampled sequence one at a time, never
removes one, and reports at arrived level k % the mean allocation of the events whose arrived GPU
milli rounds to k % of capacity (``discrete_curve``). No placement policy, online or not, can have
more GPU milli allocated after event i than the most GPU milli a feasible placement of some subset
of the first i pods holds. Allocation never decreases, so the mean over a level's events is at most
the allocation after its last event, and that is at most

    OPT(prefix) = max Σ gpu(p) over subsets S of the prefix with a feasible placement of S.

We bound OPT from above by a relaxation aggregated by node type and pod shape (docs/gpu.md, "An
upper bound", has the proof): variables x[k, t] ≥ 0, integer, the number of pods of shape k put on
nodes of type t (CPU, memory, GPU count and model), with

- Σ_t x[k, t] ≤ n_k (no more pods than the prefix has of the shape), and x[k, t] = 0 when the
  shape cannot run on the type at all (model not allowed, more GPUs or CPU or memory than one node);
- per type: Σ_k cpu_k x ≤ N_t·cpu_t, Σ_k mem_k x ≤ N_t·mem_t, Σ_k x ≤ N_t·max_pods,
  Σ_k gpu_k x ≤ N_t·G_t·1000 (GPU milli), Σ_{whole k} count_k x ≤ N_t·G_t (whole GPUs), and the
  card cut Σ_{whole k} count_k x + Σ_{shared k, milli > 500} x ≤ N_t·G_t: a card holds at most one
  pod asking for more than half a GPU and none beside a whole-GPU pod.

Every feasible placement of a subset, counted per shape and type, satisfies these, so the maximum
of Σ gpu_k x is ≥ OPT. It is solved with HiGHS (``scipy.optimize.milp``, the ``kubesched[bound]``
extra); when the MILP does not finish in its time limit, its LP relaxation (still a bound) is used.

:func:`bound_curve` takes, per level, the least of this and the tighter card-pattern LP with per-node
cuts of :mod:`kubesched.sim.gpu_card_bound`, and says which.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.plugins.gpu.types import MILLI, NodeSpec, PodShape
from kubesched.sim.gpu_bound_base import BoundError, NodeType, fits, node_types, quiet_stdout
from kubesched.sim.gpu_card_bound import card_pattern_bound
from kubesched.sim.gpu_forced import forced_pods

__all__ = [
    "METHODS",
    "BoundError",
    "LevelBound",
    "NodeType",
    "bound_curve",
    "fits",
    "max_packable_gpu_milli",
    "node_types",
    "quiet_stdout",
]


def max_packable_gpu_milli(pods: Sequence[PodShape], nodes: Sequence[NodeSpec], *, time_limit: float = 10.0) -> float:
    """An upper bound on the GPU milli any feasible placement of a subset of ``pods`` holds."""
    try:
        from scipy.optimize import Bounds, LinearConstraint, milp
    except ImportError as err:
        raise BoundError("the bound needs SciPy (HiGHS): pip install 'kubesched[bound]'") from err
    shapes = Counter(p for p in pods if p.total_gpu_milli > 0)
    if not shapes:
        return 0.0
    kinds = sorted(shapes, key=lambda s: (s.gpu_milli, s.gpu_count, s.cpu, s.memory, s.models))
    types = node_types(nodes)
    var: list[tuple[int, int]] = [
        (k, t) for k in range(len(kinds)) for t in range(len(types)) if fits(kinds[k], types[t][0])
    ]
    if not var:
        return 0.0
    n = len(var)
    objective = np.array([-float(kinds[k].total_gpu_milli) for k, _ in var])
    rows: list[np.ndarray[Any, Any]] = []
    upper: list[float] = []

    def add(coeffs: dict[int, float], limit: float) -> None:
        if not coeffs:
            return
        row = np.zeros(n)
        for j, c in coeffs.items():
            row[j] = c
        rows.append(row)
        upper.append(limit)

    for k in range(len(kinds)):
        add({j: 1.0 for j, (kk, _) in enumerate(var) if kk == k}, float(shapes[kinds[k]]))
    for t, (typ, count) in enumerate(types):
        on = [(j, kinds[k]) for j, (k, tt) in enumerate(var) if tt == t]
        add({j: float(s.cpu) for j, s in on}, float(count * typ.cpu))
        add({j: float(s.memory) for j, s in on}, float(count * typ.memory))
        add({j: 1.0 for j, _ in on}, float(count * typ.max_pods))
        add({j: float(s.total_gpu_milli) for j, s in on}, float(count * typ.gpus * MILLI))
        add({j: float(s.gpu_count) for j, s in on if s.gpu_milli == MILLI}, float(count * typ.gpus))
        add(
            {
                j: float(s.gpu_count if s.gpu_milli == MILLI else 1)
                for j, s in on
                if s.gpu_milli == MILLI or s.gpu_milli > MILLI // 2
            },
            float(count * typ.gpus),
        )
    a = np.vstack(rows)
    constraints = LinearConstraint(a, -np.inf, np.array(upper))
    bounds = Bounds(np.zeros(n), np.full(n, np.inf))
    with quiet_stdout():
        return _solve(milp, objective, constraints, bounds, n, time_limit)


def _solve(milp: Any, objective: Any, constraints: Any, bounds: Any, n: int, time_limit: float) -> float:
    res = milp(
        objective,
        constraints=constraints,
        bounds=bounds,
        integrality=np.ones(n),
        options={"time_limit": time_limit, "disp": False},
    )
    if res.x is not None and res.status == 0:
        return float(-res.fun)
    # Not proven optimal in time: the LP relaxation is a bound too (and so is the MILP's dual bound).
    lp = milp(objective, constraints=constraints, bounds=bounds, integrality=np.zeros(n))
    if lp.x is None:
        raise BoundError(f"HiGHS failed on the bound's LP: {lp.message}")
    return float(-lp.fun)


@dataclass(frozen=True)
class LevelBound:
    level: int
    #: Events of the sequence up to the level's last one (the prefix the bound is taken over).
    prefix: int
    #: The bound on the allocation ratio, %, rounded up to 2 decimals (as the curves are rounded).
    allocation: float | None
    #: Which bound is the smallest there: "card-pattern LP", "aggregate MILP" or "arrived".
    method: str | None = None


#: The bounds :func:`bound_curve` takes the least of, by name.
METHODS = ("card-pattern LP", "aggregate MILP")


def bound_curve(
    shapes: Sequence[PodShape], nodes: Sequence[NodeSpec], levels: Sequence[int], *, time_limit: float = 10.0
) -> list[LevelBound]:
    """The bound at each arrived level for the sequence ``shapes`` (in arrival order): the level's
    events are those whose arrived GPU milli rounds to it (or to it ± 1 when none does), as
    ``discrete_curve`` picks them; None where no event is.

    The least of two valid bounds on OPT of the level's last prefix, U (the card-pattern LP of
    :mod:`kubesched.sim.gpu_card_bound` and the aggregate MILP above), caps each event of the level;
    an event's allocation is also at most its arrived milli, so the level's mean allocation is at
    most the mean over its events of min(arrived, U)."""
    total_gpus = sum(n.gpu_count for n in nodes)
    if total_gpus == 0:
        return [LevelBound(k, 0, None) for k in levels]
    arrived = np.cumsum([s.total_gpu_milli for s in shapes], dtype=np.int64)
    arrive = np.round(arrived / total_gpus / 10, 0)
    out: list[LevelBound] = []
    cache: dict[int, tuple[float, str]] = {}
    forced = forced_pods(shapes, nodes)
    for k in levels:
        idx = np.flatnonzero(arrive == k)
        if len(idx) == 0:
            idx = np.flatnonzero((arrive >= k - 1) & (arrive <= k + 1))
        if len(idx) == 0:
            out.append(LevelBound(k, 0, None))
            continue
        prefix = int(idx[-1]) + 1
        if prefix not in cache:
            found = {
                METHODS[0]: card_pattern_bound(
                    Counter(shapes[:prefix]),
                    nodes,
                    Counter(s for s, f in zip(shapes[:prefix], forced[:prefix], strict=True) if f),
                ),
                METHODS[1]: max_packable_gpu_milli(shapes[:prefix], nodes, time_limit=time_limit),
            }
            name = min(found, key=lambda m: (found[m], METHODS.index(m)))
            cache[prefix] = (found[name], name)
        upper, name = cache[prefix]
        capped = np.minimum(arrived[idx].astype(float), upper)
        if bool(np.all(arrived[idx] <= upper)):
            name = "arrived"
        pct = min(float(capped.mean()) / (total_gpus * MILLI) * 100, 100.0)
        out.append(LevelBound(k, prefix, math.ceil(pct * 100 - 1e-9) / 100, name))
    return out
