"""``kubesched simulate --report out.html``: one self-contained HTML page that tells a simulation's
story where people would rather look than read.

- a timeline per node: each pod a bar over virtual time, from its binding to its end (completed,
  preempted, deleted) or the end of the run;
- the cluster's utilisation over time per resource (CPU, memory and each extended resource some
  node offers): the requests of the bound pods over what the nodes allocate, as step lines;
- the pending pods and why they wait;
- per pod: arrival, attempts, every reason it waited, the verdict of each node in its last failed
  attempt, and the scores of the nodes in the attempt that placed it.

Hand-written SVG and a few lines of JavaScript (a filter over the pods): no network, no library, so
the file opens anywhere, offline. Every name and message is HTML-escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework.clock import rfc3339
from kubesched.framework.types import PodInfo
from kubesched.sim.runner import SimResult, pod_state

__all__ = ["render_report"]

_STATE_COLORS = {
    "bound": "#3b82f6",
    "completed": "#10b981",
    "preempted": "#ef4444",
    "deleted": "#9ca3af",
    "pending": "#f59e0b",
}
_WIDTH = 960
_ROW = 22
_LEFT = 170


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


@dataclass
class _Bar:
    node: str
    pod: str
    start: float
    end: float
    state: str


def _bars(result: SimResult) -> list[_Bar]:
    out: list[_Bar] = []
    for p in result.pods:
        if p["node"] is None or p["boundAt"] is None:
            continue
        end = p.get("deletedAt") if p.get("deletedAt") is not None else result.end
        out.append(_Bar(p["node"], f"{p['namespace']}/{p['name']}", p["boundAt"], max(end, p["boundAt"]),
                        pod_state(p)))
    return out


def _x(t: float, start: float, end: float) -> float:
    span = max(end - start, 1e-9)
    return _LEFT + (t - start) / span * (_WIDTH - _LEFT - 10)


def _axis(start: float, end: float, y: float) -> str:
    ticks = []
    for i in range(5):
        t = start + (end - start) * i / 4
        x = _x(t, start, end)
        anchor = "end" if i == 4 else "middle"
        ticks.append(
            f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + 4:.1f}" stroke="#555"/>'
            f'<text x="{x:.1f}" y="{y + 16:.1f}" font-size="10" text-anchor="{anchor}">{_e(rfc3339(t)[11:19])}</text>'
        )
    return "".join(ticks)


def _timeline(result: SimResult, nodes: Sequence[str]) -> str:
    bars = _bars(result)
    height = _ROW * max(len(nodes), 1) + 30
    parts = [f'<svg id="timeline" class="chart" width="{_WIDTH}" height="{height}" role="img" '
             f'aria-label="pods over virtual time, one row per node">']
    row = {n: i for i, n in enumerate(nodes)}
    for n, i in row.items():
        y = i * _ROW
        parts.append(f'<text x="4" y="{y + 15}" font-size="11">{_e(n)}</text>')
        parts.append(f'<line x1="{_LEFT}" y1="{y + _ROW - 1}" x2="{_WIDTH - 10}" y2="{y + _ROW - 1}" stroke="#eee"/>')
    # Pods sharing a node overlap in time: lanes inside the row (first free lane, by start time),
    # as many as the node ever needs at once.
    lanes: dict[str, list[float]] = {}
    placed: list[tuple[_Bar, int]] = []
    for b in sorted(bars, key=lambda b: (b.node, b.start)):
        ends = lanes.setdefault(b.node, [])
        lane = next((k for k, e in enumerate(ends) if e <= b.start), len(ends))
        if lane == len(ends):
            ends.append(b.end)
        else:
            ends[lane] = b.end
        placed.append((b, lane))
    for b, lane in placed:
        index = row.get(b.node)
        if index is None:
            continue
        h = (_ROW - 4) / max(len(lanes[b.node]), 1)
        top = index * _ROW + 2 + lane * h
        x0, x1 = _x(b.start, result.start, result.end), _x(b.end, result.start, result.end)
        parts.append(
            f'<rect class="bar" data-pod="{_e(b.pod)}" x="{x0:.1f}" y="{top:.2f}" width="{max(x1 - x0, 1.5):.1f}" '
            f'height="{max(h - 0.5, 0.5):.2f}" fill="{_STATE_COLORS.get(b.state, "#888")}">'
            f"<title>{_e(b.pod)} on {_e(b.node)}: {_e(rfc3339(b.start))} → {_e(rfc3339(b.end))} ({_e(b.state)})"
            "</title></rect>"
        )
    parts.append(_axis(result.start, result.end, _ROW * len(nodes) + 2))
    parts.append("</svg>")
    return "".join(parts)


def _requests(p: dict[str, Any]) -> dict[str, float]:
    pod = p.get("pod")
    if not isinstance(pod, dict):
        return {}
    r = PodInfo(pod).requests
    out = {"cpu": r.milli_cpu / 1000, "memory": float(r.memory)}
    out.update({k: float(v) for k, v in r.scalar_resources.items()})
    return out


def _utilisation(result: SimResult) -> tuple[dict[str, float], list[tuple[float, dict[str, float]]]]:
    """Allocatable per resource, and the bound requests at each change (time, totals)."""
    sched = result.scheduler
    sched.cache.update_snapshot(sched.snapshot)
    alloc: dict[str, float] = {"cpu": 0.0, "memory": 0.0}
    for ni in sched.snapshot.list():
        a = ni.allocatable
        alloc["cpu"] += a.milli_cpu / 1000
        alloc["memory"] += float(a.memory)
        for k, v in a.scalar_resources.items():
            if v > 0:
                alloc[k] = alloc.get(k, 0.0) + float(v)
    changes: list[tuple[float, int, dict[str, float]]] = []
    for p in result.pods:
        if p["boundAt"] is None:
            continue
        req = _requests(p)
        changes.append((p["boundAt"], 1, req))
        if p.get("deletedAt") is not None:
            changes.append((p["deletedAt"], -1, req))
    changes.sort(key=lambda c: (c[0], c[1]))
    used = dict.fromkeys(alloc, 0.0)
    series: list[tuple[float, dict[str, float]]] = [(result.start, dict(used))]
    for t, sign, req in changes:
        for k in alloc:
            used[k] += sign * req.get(k, 0.0)
        series.append((t, dict(used)))
    series.append((result.end, dict(used)))
    return alloc, series


def _utilisation_chart(result: SimResult) -> str:
    alloc, series = _utilisation(result)
    height = 200
    colors = ["#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2"]
    parts = [f'<svg id="utilisation" class="chart" width="{_WIDTH}" height="{height + 40}" role="img" '
             'aria-label="requested over allocatable per resource, over virtual time">']
    for frac in (0, 0.5, 1):
        y = height - frac * height + 5
        parts.append(f'<line x1="{_LEFT}" y1="{y}" x2="{_WIDTH - 10}" y2="{y}" stroke="#ddd"/>'
                     f'<text x="{_LEFT - 6}" y="{y + 4}" font-size="10" text-anchor="end">{int(frac * 100)}%</text>')
    legend_y = 14
    for i, (res, total) in enumerate(sorted(alloc.items())):
        if total <= 0:
            continue
        color = colors[i % len(colors)]
        points: list[str] = []
        prev_y: float | None = None
        for t, used in series:
            x = _x(t, result.start, result.end)
            y = height - min(used[res] / total, 1.0) * height + 5
            if prev_y is not None:
                points.append(f"{x:.1f},{prev_y:.1f}")
            points.append(f"{x:.1f},{y:.1f}")
            prev_y = y
        parts.append(f'<polyline class="series" data-resource="{_e(res)}" fill="none" stroke="{color}" '
                     f'stroke-width="1.5" points="{" ".join(points)}"/>')
        parts.append(f'<text x="6" y="{legend_y}" font-size="11" fill="{color}">{_e(res)}</text>')
        legend_y += 14
    parts.append(_axis(result.start, result.end, height + 8))
    parts.append("</svg>")
    return "".join(parts)


def _pod_details(result: SimResult) -> str:
    rows: list[str] = []
    for p in sorted(result.pods, key=lambda p: (p["namespace"], p["name"])):
        key = f"{p['namespace']}/{p['name']}"
        state = pod_state(p)
        facts = [
            ("arrived", _t(p.get("createdAt"))),
            ("attempts", str(p.get("attempts", 0))),
            ("first attempt", _t(p.get("firstAttemptAt"))),
            ("bound", f"{_t(p['boundAt'])} on {p['node']}" if p["boundAt"] is not None else "—"),
            ("ended", f"{_t(p['deletedAt'])} ({str(p.get('deletedReason', '')).lower()})"
             if p.get("deletedAt") is not None else "—"),
        ]
        if p.get("preemptedBy"):
            facts.append(("preempted by", str(p["preemptedBy"])))
        body = ["<dl>"] + [f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts] + ["</dl>"]
        waits = list(p.get("waits", ()))
        if waits:
            body.append('<table class="waits"><tr><th>from</th><th>times</th><th>kind</th><th>plugins</th>'
                        "<th>message</th></tr>")
            for w in waits:
                body.append(f"<tr><td>{_e(_t(w.at))}</td><td>{w.times}</td><td>{_e(w.kind)}</td>"
                            f"<td>{_e(', '.join(w.plugins))}</td><td>{_e(w.message)}</td></tr>")
            body.append("</table>")
        statuses: dict[str, str] = p.get("nodeStatuses") or {}
        if statuses and (state == "pending" or waits):
            body.append('<table class="nodes"><tr><th>node</th><th>last failed attempt: plugin and reason</th></tr>')
            body.extend(f"<tr><td>{_e(n)}</td><td>{_e(s)}</td></tr>" for n, s in sorted(statuses.items()))
            body.append("</table>")
        scores: list[tuple[str, int]] = p.get("scores") or []
        if scores:
            body.append('<table class="scores"><tr><th>node</th><th>total score</th></tr>')
            body.extend(f"<tr><td>{_e(n)}</td><td>{s}</td></tr>" for n, s in scores)
            body.append("</table>")
        rows.append(
            f'<details class="pod" data-pod="{_e(key)}" data-state="{_e(state)}"><summary>'
            f'<span class="state {_e(state)}">{_e(state)}</span> {_e(key)}'
            f"{' → ' + _e(p['node']) if p['node'] else ''}</summary>{''.join(body)}</details>"
        )
    return "".join(rows)


def _t(t: float | None) -> str:
    return rfc3339(t) if t is not None else "—"


def _pending(result: SimResult) -> str:
    items = [
        f"<li><b>{_e(p['namespace'])}/{_e(p['name'])}</b>: {_e(p.get('message') or 'not attempted')}</li>"
        for p in result.pods
        if pod_state(p) == "pending"
    ]
    return f'<ul id="pending">{"".join(items)}</ul>' if items else '<p id="pending">No pod is pending.</p>'


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#111;max-width:1000px}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
.summary span{margin-right:1em}.chart{border:1px solid #ddd;background:#fff}
details.pod{border-bottom:1px solid #eee;padding:.2em 0}summary{cursor:pointer}
.state{display:inline-block;min-width:6em;font-size:.85em;color:#fff;border-radius:3px;padding:0 .3em;text-align:center}
.state.bound{background:#3b82f6}.state.completed{background:#10b981}.state.preempted{background:#ef4444}
.state.deleted{background:#9ca3af}.state.pending{background:#f59e0b}
dl{display:grid;grid-template-columns:max-content auto;gap:0 1em}dt{color:#555}dd{margin:0}
table{border-collapse:collapse;margin:.4em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
#filter{margin:.5em 0;padding:4px;width:20em}
"""

_SCRIPT = """
(function () {
  var input = document.getElementById('filter');
  var pods = document.querySelectorAll('details.pod');
  var counter = document.getElementById('shown');
  function apply() {
    var q = input.value.toLowerCase(), shown = 0;
    pods.forEach(function (d) {
      var hit = d.dataset.pod.toLowerCase().indexOf(q) >= 0 || d.dataset.state.indexOf(q) >= 0;
      d.style.display = hit ? '' : 'none';
      if (hit) { shown += 1; }
    });
    counter.textContent = String(shown);
  }
  input.addEventListener('input', apply);
  document.querySelectorAll('rect.bar').forEach(function (r) {
    r.addEventListener('click', function () {
      input.value = r.dataset.pod; apply();
      var d = document.querySelector('details.pod[data-pod="' + CSS.escape(r.dataset.pod) + '"]');
      if (d) { d.open = true; d.scrollIntoView(); }
    });
  });
  apply();
})();
"""


def render_report(result: SimResult, title: str = "kubesched simulation") -> str:
    """The page as one string (UTF-8 HTML5)."""
    sched = result.scheduler
    sched.cache.update_snapshot(sched.snapshot)
    nodes = sorted(ni.name for ni in sched.snapshot.list())
    summary = result.summary()
    counts = "".join(f"<span>{_e(k)}: <b>{v}</b></span>" for k, v in summary.items())
    data = json.dumps({"summary": summary, "start": rfc3339(result.start), "end": rfc3339(result.end)})
    return "".join([
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="summary">{counts}</p>',
        f"<p>Virtual time {_e(rfc3339(result.start))} → {_e(rfc3339(result.end))}; "
        f"{sched.stats.attempts} scheduling attempts.</p>",
        "<h2>Pods on each node over time</h2>",
        "<p>One row per node, each pod a bar from its binding to its end "
        + _legend(_STATE_COLORS.items()) + "; click a bar for the pod's story.</p>",
        _timeline(result, nodes),
        "<h2>Utilisation over time</h2><p>Requests of the bound pods over what the nodes allocate.</p>",
        _utilisation_chart(result),
        "<h2>Pending pods</h2>",
        _pending(result),
        '<h2>Every pod</h2><input id="filter" type="search" placeholder="filter by name or state" '
        'aria-label="filter pods"> <span id="shown"></span> shown',
        f'<div id="pods">{_pod_details(result)}</div>',
        f'<script type="application/json" id="data">{_e(data)}</script>',
        f"<script>{_SCRIPT}</script></body></html>",
    ])


def _legend(items: Iterable[tuple[str, str]]) -> str:
    return "(" + ", ".join(f'<span style="color:{c}">■</span> {_e(s)}' for s, c in items if s != "pending") + ")"
