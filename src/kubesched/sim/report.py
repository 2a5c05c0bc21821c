"""Readable reports of simulations and explanations (rich tables)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.framework.clock import rfc3339
from kubesched.sim.runner import SimResult


def print_simulation(result: SimResult, console: Console) -> None:
    pods = Table(title="Pods", title_justify="left", show_lines=False)
    for col in ("Pod", "Node", "Bound at", "Reason (pending) / end"):
        pods.add_column(col, overflow="fold")
    preempted_by = _preemptors(result)
    for p in sorted(result.pods, key=lambda p: (p["node"] is None, p["namespace"], p["name"])):
        key = f"{p['namespace']}/{p['name']}"
        bound = rfc3339(p["boundAt"]) if p["boundAt"] is not None else ""
        if p["node"] is None:
            note = f"[yellow]{p['message'] or 'pending'}[/]"
            node = "[red]—[/]"
            nominated = _nominated_node(result, key)
            if nominated:
                node = f"[yellow]→ {escape(nominated)} (nominated)[/]"
        else:
            node = p["node"]
            note = ""
            if p.get("deletedReason") == "Preempted":
                # A victim: it ran on the node until a higher-priority pod took its place.
                node = f"[red]{escape(node)} ✗[/]"
                by = preempted_by.get(key)
                note = f"[red]preempted{' by ' + escape(by) if by else ''} at {rfc3339(p['deletedAt'])}[/]"
            elif p.get("deletedReason"):
                note = f"{p['deletedReason'].lower()} at {rfc3339(p['deletedAt'])}"
        pods.add_row(key, node, bound, note)
    console.print(pods)

    nodes = Table(title="Nodes at the end", title_justify="left")
    for col in ("Node", "Pods", "CPU requested", "Memory requested"):
        nodes.add_column(col, justify="right" if col != "Node" else "left")
    sched = result.scheduler
    sched.cache.update_snapshot(sched.snapshot)
    for ni in sorted(sched.snapshot.list(), key=lambda n: n.name):
        a, r = ni.allocatable, ni.requested
        nodes.add_row(
            ni.name,
            f"{len(ni.pods)}/{a.allowed_pod_number}",
            f"{_pct(r.milli_cpu, a.milli_cpu)} ({r.milli_cpu / 1000:g}/{a.milli_cpu / 1000:g})",
            f"{_pct(r.memory, a.memory)} ({_gib(r.memory)}/{_gib(a.memory)} GiB)",
        )
    console.print(nodes)

    s = result.summary()
    hours = (result.end - result.start) / 3600
    preempted = sum(1 for p in result.pods if p.get("deletedReason") == "Preempted")
    counts = f"[green]{s['bound']} bound[/], [{'red' if s['pending'] else 'green'}]{s['pending']} pending[/]"
    if preempted:
        counts += f", [red]{preempted} preempted[/]"
    console.print(
        f"[bold]{s['pods']}[/] pods: {counts}; "
        f"virtual time {rfc3339(result.start)} → {rfc3339(result.end)} ({hours:.2f} h); "
        f"{sched.stats.attempts} scheduling attempts."
    )


def _preemptors(result: SimResult) -> dict[str, str]:
    """Victim ``ns/name`` -> preemptor ``ns/name``, read from the ``Preempted`` events
    (note ``Preempted by pod <uid> on node <node>``); the preemptor's UID when it no longer exists."""
    by_uid = {
        str((pod.get("metadata") or {}).get("uid")): f"{pod['metadata'].get('namespace', 'default')}/"
        f"{pod['metadata'].get('name')}"
        for pod in result.cluster.pods.values()
    }
    out: dict[str, str] = {}
    for e in result.events:
        if e.reason != "Preempted" or not e.note.startswith("Preempted by pod "):
            continue
        uid = e.note[len("Preempted by pod ") :].split(" on node ")[0]
        out[f"{e.namespace or 'default'}/{e.name}"] = by_uid.get(uid, uid)
    return out


def _nominated_node(result: SimResult, key: str) -> str:
    pod = result.cluster.pods.get(key) or {}
    return str((pod.get("status") or {}).get("nominatedNodeName") or "")


def _pct(used: int, total: int) -> str:
    return f"{100 * used / total:.0f}%" if total else "-"


def _gib(b: int) -> str:
    return f"{b / 2**30:.1f}"


def print_explain(out: dict[str, Any], console: Console) -> None:
    console.print(f"[bold]Pod[/] {out['pod']}  [bold]profile[/] {out['profile']}")
    pf = Table(title="PreFilter", title_justify="left")
    pf.add_column("Plugin")
    pf.add_column("Code")
    pf.add_column("Message", overflow="fold")
    for name, s in out["preFilter"].items():
        pf.add_row(name, _color(s["code"]), s["message"])
    console.print(pf)
    nodes = Table(title="Nodes", title_justify="left")
    nodes.add_column("Node")
    nodes.add_column("Filter", overflow="fold")
    nodes.add_column("Scores: raw → normalized (= weighted)", overflow="fold")
    nodes.add_column("Total", justify="right")
    for name, e in sorted(out["nodes"].items(), key=lambda kv: -(kv[1]["total"] or -1)):
        failed = [
            f"{p}: {', '.join(s['reasons']) or s['code']}"
            for p, s in e["filter"].items()
            if s["code"] not in ("Success", "Skip")
        ]
        filt = "[red]" + "; ".join(failed) + "[/]" if failed else "[green]passes[/]"
        scores = ", ".join(f"{p} {s['raw']}→{s['normalized']} (={s['weighted']})" for p, s in e["scores"].items())
        total = "" if e["total"] is None else str(e["total"])
        if name == out["selected"]:
            name = f"[bold green]{name} ✔[/]"
        nodes.add_row(name, filt, scores, total)
    console.print(nodes)
    if out["selected"]:
        console.print(f"Selected node: [bold green]{out['selected']}[/]")
    else:
        console.print(f"[yellow]{out['message']}[/]")


def _color(code: str) -> str:
    return {"Success": "[green]Success[/]", "Skip": "[dim]Skip[/]"}.get(code, f"[red]{code}[/]")
