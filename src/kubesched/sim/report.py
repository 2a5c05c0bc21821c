"""Readable reports of simulations and explanations (rich tables)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubesched.api.text import printable
from kubesched.framework.clock import rfc3339
from kubesched.sim.runner import SimResult, pod_state


def _t(text: object, style: str = "") -> Text:
    """Text shown literally: names and messages are never read as console markup, and their
    control characters are escaped (a pod named ``[/]x`` or holding an escape sequence)."""
    return Text(printable(text), style=style)


def print_simulation(result: SimResult, console: Console) -> None:
    pods = Table(title="Pods", title_justify="left", show_lines=False)
    for col in ("Pod", "Node", "Bound at", "Reason (pending) / end"):
        pods.add_column(col, overflow="fold")
    preempted_by = _preemptors(result)
    for p in sorted(result.pods, key=lambda p: (p["node"] is None, p["namespace"], p["name"])):
        key = f"{p['namespace']}/{p['name']}"
        bound = rfc3339(p["boundAt"]) if p["boundAt"] is not None else ""
        state = pod_state(p)
        node: Text
        note = Text()
        if p["node"] is None:
            note = _t(p["message"] or ("pending" if state == "pending" else state), "yellow")
            node = Text("—", style="red")
            nominated = _nominated_node(result, key)
            if nominated:
                node = _t(f"→ {nominated} (nominated)", "yellow")
        else:
            node = _t(p["node"])
            if state == "preempted":
                # A victim: it ran on the node until a higher-priority pod took its place.
                node = _t(f"{p['node']} ✗", "red")
                by = preempted_by.get(key)
                note = _t(f"preempted{' by ' + by if by else ''} at {rfc3339(p['deletedAt'])}", "red")
            elif p.get("deletedReason"):
                note = _t(f"{p['deletedReason'].lower()} at {rfc3339(p['deletedAt'])}")
        pods.add_row(_t(key), node, bound, note)
    console.print(pods)

    nodes = Table(title="Nodes at the end", title_justify="left")
    for col in ("Node", "Pods", "CPU requested", "Memory requested"):
        nodes.add_column(col, justify="right" if col != "Node" else "left")
    sched = result.scheduler
    sched.cache.update_snapshot(sched.snapshot)
    for ni in sorted(sched.snapshot.list(), key=lambda n: n.name):
        a, r = ni.allocatable, ni.requested
        nodes.add_row(
            _t(ni.name),
            f"{len(ni.pods)}/{a.allowed_pod_number}",
            f"{_pct(r.milli_cpu, a.milli_cpu)} ({r.milli_cpu / 1000:g}/{a.milli_cpu / 1000:g})",
            f"{_pct(r.memory, a.memory)} ({_gib(r.memory)}/{_gib(a.memory)} GiB)",
        )
    console.print(nodes)

    s = result.summary()
    hours = (result.end - result.start) / 3600
    counts = Text.assemble(
        (f"{s['pods']}", "bold"), " pods: ", (f"{s['bound']} bound", "green"), ", ",
        (f"{s['pending']} pending", "red" if s["pending"] else "green"),
    )
    for word, style in (("preempted", "red"), ("completed", ""), ("deleted", "")):
        if s[word]:
            counts.append(", ")
            counts.append(f"{s[word]} {word}", style=style)
    counts.append(
        f"; virtual time {rfc3339(result.start)} → {rfc3339(result.end)} ({hours:.2f} h); "
        f"{sched.stats.attempts} scheduling attempts."
    )
    console.print(counts)


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
    console.print(Text.assemble(("Pod", "bold"), " ", printable(out["pod"]), "  ", ("profile", "bold"), " ",
                                printable(out["profile"])))
    pf = Table(title="PreFilter", title_justify="left")
    pf.add_column("Plugin")
    pf.add_column("Code")
    pf.add_column("Message", overflow="fold")
    for name, s in out["preFilter"].items():
        pf.add_row(_t(name), _color(s["code"]), _t(s["message"]))
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
        if "excluded" in e:
            failed = [e["excluded"]["message"]]
        filt = _t("; ".join(failed), "red") if failed else Text("passes", style="green")
        scores = ", ".join(f"{p} {s['raw']}→{s['normalized']} (={s['weighted']})" for p, s in e["scores"].items())
        total = "" if e["total"] is None else str(e["total"])
        label = _t(f"{name} ✔", "bold green") if name == out["selected"] else _t(name)
        nodes.add_row(label, filt, _t(scores), total)
    console.print(nodes)
    if out.get("preScore"):
        ps = Table(title="PreScore", title_justify="left")
        ps.add_column("Plugin")
        ps.add_column("Code")
        ps.add_column("Message", overflow="fold")
        for name, st in out["preScore"].items():
            ps.add_row(_t(name), _color(st["code"]), _t(st["message"]))
        console.print(ps)
    if out.get("note"):
        console.print(_t(out["note"], "dim"))
    if out["selected"]:
        console.print(Text.assemble("Selected node: ", (printable(out["selected"]), "bold green")))
    else:
        console.print(_t(out["message"], "yellow"))


def _color(code: str) -> Text:
    return Text(code, style={"Success": "green", "Skip": "dim"}.get(code, "red"))
