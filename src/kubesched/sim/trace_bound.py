"""``kubesched trace bound``: the upper bound of :mod:`kubesched.sim.gpu_bound` for the sequences the
replays of given seeds use, per arrived level, as JSON and a table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from kubesched.sim.alibaba import Trace, arrival
from kubesched.sim.gpu_bound import bound_curve
from kubesched.sim.gpu_replay import REPORT_POINTS, node_specs, pod_shape

__all__ = ["bound_table", "bounds"]


def bounds(trace: Trace, seeds: Sequence[int], tune: float, levels: Sequence[int] = REPORT_POINTS) -> dict[str, Any]:
    """``{"tune", "seeds", "nodes", "gpus", "bound": {level: mean}, "runs": [{"seed", "bound", "method"}]}``:
    each run's bound (% of GPU milli, rounded up to 2 decimals), which bound it is at each level
    ("card-pattern LP", "aggregate MILP", or "arrived" where no event's arrived milli reaches them),
    and their mean."""
    nodes = node_specs(trace)
    per_seed: list[dict[str, float | None]] = []
    methods: list[dict[str, str | None]] = []
    for seed in seeds:
        shapes = [pod_shape(p) for p in arrival(trace, seed, tune).sequence]
        curve = bound_curve(shapes, nodes, levels)
        per_seed.append({str(b.level): b.allocation for b in curve})
        methods.append({str(b.level): b.method for b in curve})
    runs = [{"seed": seed, "bound": b, "method": m} for seed, b, m in zip(seeds, per_seed, methods, strict=True)]
    mean: dict[str, float | None] = {}
    for level in levels:
        values = [v for b in per_seed if (v := b[str(level)]) is not None]
        mean[str(level)] = round(sum(values) / len(values), 2) if values else None
    return {
        "tune": tune,
        "seeds": list(seeds),
        "nodes": len(nodes),
        "gpus": sum(n.gpu_count for n in nodes),
        "bound": mean,
        "runs": runs,
    }


def bound_table(out: dict[str, Any]) -> Table:
    table = Table(
        title=f"Upper bound on GPU allocation (%), tune {out['tune']:g}, {len(out['seeds'])} seed(s)",
        title_justify="left",
    )
    table.add_column("arrived", justify="right")
    table.add_column("bound (mean)", justify="right")
    table.add_column("min..max over seeds", justify="right")
    table.add_column("method")
    for level, mean in out["bound"].items():
        values = [r["bound"][level] for r in out["runs"] if r["bound"][level] is not None]
        spread = f"{min(values):.2f}..{max(values):.2f}" if values else "—"
        names = ", ".join(dict.fromkeys(str(m) for r in out["runs"] if (m := r["method"][level]) is not None))
        table.add_row(f"{level}%", "—" if mean is None else f"{mean:.2f}", spread, names or "—")
    return table
