"""The HTML report of ``kubesched trace sweep``: per pod list, the GPU allocation ratio of each policy
against the arrived workload, as the mean over the seeds with the seeds' spread (min to max) as a
band, and a zoomed panel near saturation where the policies part (at full scale FGD and its
neighbours overlap). Self-contained SVG, no library, no network."""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_sweep_report"]

_COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#db2777"]
_W, _H, _PAD = 460, 280, 40


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


Stats = dict[str, dict[int, tuple[float, float, float]]]  # policy -> arrived -> (mean, low, high)


def _stats(rows: Sequence[dict[str, Any]]) -> dict[str, Stats]:
    values: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for r in rows:
        if r["allocation"] is not None:
            values[(r["trace"], r["policy"], int(r["arrived"]))].append(float(r["allocation"]))
    out: dict[str, Stats] = defaultdict(lambda: defaultdict(dict))
    for (trace, policy, level), vs in values.items():
        out[trace][policy][level] = (sum(vs) / len(vs), min(vs), max(vs))
    return out


#: Arrived level -> the upper bound (%), the mean over the seeds (``trace bound``).
Bound = Mapping[int, float]


def _panel(stats: Stats, levels: Sequence[int], title: str, panel_id: str, bound: Bound | None = None) -> str:
    ys = [v for per in stats.values() for lvl, t in per.items() if lvl in levels for v in t]
    if bound:
        ys += [b for lvl, b in bound.items() if lvl in levels]
    if not ys:
        return ""
    lo, hi = min(ys), max(ys)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    margin = (hi - lo) * 0.05
    lo, hi = lo - margin, hi + margin
    x0, x1 = min(levels), max(levels)

    def px(level: float) -> float:
        return _PAD + (level - x0) / max(x1 - x0, 1) * (_W - 2 * _PAD)

    def py(v: float) -> float:
        return _H - _PAD - (v - lo) / (hi - lo) * (_H - 2 * _PAD)

    parts = [
        f'<svg class="panel" id="{_e(panel_id)}" width="{_W}" height="{_H}" role="img" '
        f'aria-label="{_e(title)}"><text x="{_W / 2}" y="16" text-anchor="middle" font-size="13">'
        f"{_e(title)}</text>"
    ]
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        parts.append(
            f'<line x1="{_PAD}" y1="{py(v):.1f}" x2="{_W - _PAD}" y2="{py(v):.1f}" stroke="#eee"/>'
            f'<text x="{_PAD - 4}" y="{py(v) + 4:.1f}" font-size="10" text-anchor="end">{v:.1f}</text>'
        )
    for level in levels:
        parts.append(
            f'<text x="{px(level):.1f}" y="{_H - _PAD + 14}" font-size="10" text-anchor="middle">{level}%</text>'
        )
    for i, (policy, per) in enumerate(sorted(stats.items())):
        color = _COLORS[i % len(_COLORS)]
        pts = [(lvl, per[lvl]) for lvl in levels if lvl in per]
        if not pts:
            continue
        band = [f"{px(lvl):.1f},{py(t[2]):.1f}" for lvl, t in pts] + [
            f"{px(lvl):.1f},{py(t[1]):.1f}" for lvl, t in reversed(pts)
        ]
        parts.append(
            f'<polygon class="band" data-policy="{_e(policy)}" points="{" ".join(band)}" '
            f'fill="{color}" fill-opacity="0.15" stroke="none"/>'
        )
        line = " ".join(f"{px(lvl):.1f},{py(t[0]):.1f}" for lvl, t in pts)
        parts.append(
            f'<polyline class="mean" data-policy="{_e(policy)}" points="{line}" fill="none" '
            f'stroke="{color}" stroke-width="1.8"><title>{_e(policy)}</title></polyline>'
        )
        parts.append(
            f'<text x="{_W - _PAD + 2}" y="{py(pts[-1][1][0]) + 4:.1f}" font-size="10" '
            f'fill="{color}">{_e(policy)}</text>'
        )
    bpts = [(lvl, bound[lvl]) for lvl in levels if bound and lvl in bound]
    if bpts:
        line = " ".join(f"{px(lvl):.1f},{py(b):.1f}" for lvl, b in bpts)
        parts.append(
            f'<polyline class="bound" points="{line}" fill="none" stroke="#111" stroke-width="1.2" '
            f'stroke-dasharray="5,3"><title>upper bound</title></polyline>'
            f'<text x="{_W - _PAD + 2}" y="{py(bpts[-1][1]) - 4:.1f}" font-size="10">bound</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def render_sweep_report(
    rows: Sequence[dict[str, Any]],
    *,
    tune: float,
    seeds: Sequence[int],
    engine: str,
    bounds: Mapping[str, Bound] | None = None,
) -> str:
    """The page; ``bounds`` (pod list -> level -> upper bound, %) adds the bound as a dashed line on
    both of the list's panels and as a row of its table."""
    stats = _stats(rows)
    bounds = bounds or {}
    seed_label = f"{min(seeds)}..{max(seeds)}" if len(seeds) > 1 else str(seeds[0]) if seeds else "-"
    title = f"GPU allocation by policy — tune {tune:g}, seeds {seed_label} ({len(seeds)}), engine {engine}"
    body = [
        f"<h1>{_e(title)}</h1>",
        "<p>Mean over the seeds (line) and their spread, min to max (band); with --bound the upper "
        "bound on any policy (dashed, mean over the seeds). Right: the same near saturation.</p>",
    ]
    for trace, per in sorted(stats.items()):
        levels = sorted({lvl for p in per.values() for lvl in p})
        zoom = [lvl for lvl in levels if lvl >= 100] or levels[-3:]
        body.append(f'<h2>{_e(trace)}</h2><div class="row" data-trace="{_e(trace)}">')
        bound = bounds.get(trace)
        body.append(_panel(per, levels, f"{trace}: allocation % vs arrived %", f"{trace}-full", bound))
        body.append(_panel(per, zoom, f"{trace}: near saturation", f"{trace}-zoom", bound))
        body.append("</div>")
        body.append("<table><tr><th>policy</th>" + "".join(f"<th>{lvl}%</th>" for lvl in zoom) + "</tr>")
        for policy, p in sorted(per.items()):
            body.append(
                f"<tr><td>{_e(policy)}</td>"
                + "".join(
                    f"<td>{p[lvl][0]:.2f} ({p[lvl][1]:.2f}–{p[lvl][2]:.2f})</td>" if lvl in p else "<td>—</td>"
                    for lvl in zoom
                )
                + "</tr>"
            )
        if bound:
            body.append(
                '<tr class="bound"><td>upper bound</td>'
                + "".join(f"<td>{bound[lvl]:.2f}</td>" if lvl in bound else "<td>—</td>" for lvl in zoom)
                + "</tr>"
            )
        body.append("</table>")
    style = (
        "body{font-family:system-ui,sans-serif;margin:1.5em}h1{font-size:1.3em}.row{display:flex;gap:1em;"
        "flex-wrap:wrap}.panel{border:1px solid #ddd}table{border-collapse:collapse;font-size:.85em}"
        "td,th{border:1px solid #ddd;padding:2px 6px}"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>"
    )
