"""``kubesched trace ... --report FILE.html``: GPU allocation and fragmentation vs arrived workload.

One figure with two panels (GPU allocation ratio, fragmentation ratio; one line per policy, the mean
over the seeds), written as a PNG beside the HTML page, which embeds it and tabulates the numbers.
Plotting needs matplotlib, the optional extra ``kubesched[plot]``.
"""

from __future__ import annotations

import base64
import html
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.sim.gpu_replay import REPORT_POINTS

from .trace import PolicyRuns, summaries

__all__ = ["PlotUnavailableError", "require_matplotlib", "write_report"]

MISSING_MATPLOTLIB = "--report needs matplotlib: pip install 'kubesched[plot]'"


class PlotUnavailableError(RuntimeError):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise PlotUnavailableError(MISSING_MATPLOTLIB) from None
    matplotlib.use("Agg")  # files only, never a window
    return importlib.import_module("matplotlib.pyplot")


def require_matplotlib() -> None:
    """Raise :class:`PlotUnavailableError` now rather than after a long replay."""
    _pyplot()


def plot(runs: Sequence[PolicyRuns], png: Path, title: str) -> None:
    plt = _pyplot()
    fig, (alloc_ax, frag_ax) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    x = np.arange(131)
    for pr in runs:
        label = pr.policy if len(pr.results) == 1 else f"{pr.policy} (mean of {len(pr.results)} seeds)"
        alloc_ax.plot(x, pr.mean_curve("allocation"), label=label)
        frag_ax.plot(x, pr.mean_curve("fragmentation"), label=label)
    alloc_ax.plot([0, 100, 130], [0, 100, 100], color="grey", linestyle=":", linewidth=1, label="ideal")
    alloc_ax.set(xlabel="arrived workload (% of GPU capacity)", ylabel="GPU allocation ratio (%)",
                 title="GPU allocation", xlim=(0, 130), ylim=(0, 102))
    frag_ax.set(xlabel="arrived workload (% of GPU capacity)", ylabel="fragmented share of idle GPU (%)",
                title="Fragmentation ratio", xlim=(0, 130), ylim=(0, 102))
    for ax in (alloc_ax, frag_ax):
        ax.grid(True, alpha=0.3)
    alloc_ax.legend(loc="upper left", fontsize="small")
    fig.suptitle(title)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def write_report(path: str | Path, runs: Sequence[PolicyRuns], *, nodes: int, title: str) -> Path:
    """Write ``path`` (HTML) and the PNG beside it (same name, ``.png``); returns the PNG's path."""
    html_path = Path(path)
    png = html_path.with_suffix(".png")
    plot(runs, png, title)
    rows = []
    for s in summaries(runs, nodes):
        seeds = s["seed"] if isinstance(s["seed"], list) else [s["seed"]]
        cells = "".join(f"<td>{_fmt(s['allocation'][str(k)])}</td>" for k in REPORT_POINTS)
        frag = "".join(f"<td>{_fmt(s['fragmentation'][str(k)])}</td>" for k in REPORT_POINTS)
        rows.append(
            f"<tr><th rowspan=2>{html.escape(s['policy'])}</th><td rowspan=2>{len(seeds)}</td>"
            f"<td>allocation</td>{cells}<td rowspan=2>{s['failed_pods']}</td>"
            f"<td rowspan=2>{s['seconds']:.2f}</td></tr><tr><td>fragmentation</td>{frag}</tr>"
        )
    head = "".join(f"<th>{k}%</th>" for k in REPORT_POINTS)
    image = base64.b64encode(png.read_bytes()).decode("ascii")
    html_path.write_text(f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}</style></head>
<body><h1>{html.escape(title)}</h1>
<p><img src="data:image/png;base64,{image}" alt="GPU allocation and fragmentation vs arrived workload"
 style="max-width:100%"></p>
<p>The same figure: <a href="{html.escape(png.name)}">{html.escape(png.name)}</a>. Values are percentages at each
arrived workload (% of the cluster's GPU capacity); with several seeds, means over the seeds.</p>
<table><tr><th>policy</th><th>seeds</th><th>metric</th>{head}<th>failed pods</th><th>s/run</th></tr>
{"".join(rows)}</table></body></html>
""", encoding="utf-8")
    return png


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"
