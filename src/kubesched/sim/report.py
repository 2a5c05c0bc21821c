"""Readable reports of simulations and explanations (rich tables)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubesched.api.errors import InvalidObjectError
from kubesched.api.text import printable
from kubesched.framework.clock import rfc3339, to_datetime
from kubesched.framework.types import PodInfo
from kubesched.plugins.capacityscheduling.elasticquota import parse_elastic_quota
from kubesched.plugins.gpushare.requests import RESOURCE_GPU, RESOURCE_GPU_MILLI, gpu_ids
from kubesched.sim.runner import SimResult, pod_state


def _t(text: object, style: str = "") -> Text:
    """Text shown literally: names and messages are never read as console markup, and their
    control characters are escaped (a pod named ``[/]x`` or holding an escape sequence)."""
    return Text(printable(text), style=style)


def _clock(t: float | None, start: float) -> str:
    """A virtual time in the table: ``HH:MM:SS`` on the run's first day, else ``+Nd HH:MM:SS``
    (the header names the first day; full RFC 3339 times are in ``-o json``)."""
    if t is None:
        return ""
    day0 = to_datetime(start).date()
    d = to_datetime(t)
    days = (d.date() - day0).days
    return (f"+{days}d" if days else "") + f"{d.hour:02d}:{d.minute:02d}:{d.second:02d}"


def _waited_for(p: dict[str, Any]) -> str:
    """The plugins a pod waited for, in the order it met them (``×N`` for repeats)."""
    seen: dict[str, int] = {}
    for w in p.get("waits", ()):
        for plugin in w.plugins or (w.kind,):
            seen[plugin] = seen.get(plugin, 0) + w.times
    return ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in seen.items())


def print_simulation(result: SimResult, console: Console) -> None:
    day = rfc3339(result.start)[:10]
    pods = Table(
        title=f"Pods (times UTC on {day}, +Nd: days later; ended ✓ completed, ✗ preempted)",
        title_justify="left",
        show_lines=False,
    )
    for col in ("Pod", "Node", "Arrived", "Bound", "Ended", "Waited for"):
        pods.add_column(col, overflow="fold")
    ordered = sorted(result.pods, key=lambda p: (p["node"] is None, p["namespace"], p["name"]))
    for p in ordered:
        key = f"{p['namespace']}/{p['name']}"
        state = pod_state(p)
        node: Text
        ended = Text()
        if p["node"] is None:
            node = Text("—", style="red")
            nominated = _nominated_node(result, key)
            if nominated:
                node = _t(f"→ {nominated}", "yellow")
        else:
            node = _t(p["node"])
            if state == "preempted":
                node = _t(f"{p['node']} ✗", "red")
                ended = _t(f"{_clock(p['deletedAt'], result.start)} ✗", "red")
            elif p.get("deletedReason") == "Completed":
                ended = _t(f"{_clock(p['deletedAt'], result.start)} ✓", "green")
            elif p.get("deletedReason"):
                ended = _t(f"{_clock(p['deletedAt'], result.start)} deleted")
        pods.add_row(
            _t(key), node, _clock(p.get("createdAt"), result.start), _clock(p["boundAt"], result.start), ended,
            _t(_waited_for(p), "yellow"),
        )
    console.print(pods)
    _print_waits(result, ordered, console)

    sched = result.scheduler
    sched.cache.update_snapshot(sched.snapshot)
    infos = sorted(sched.snapshot.list(), key=lambda n: n.name)
    # Extended resources some node offers (bandwidth for WindowTransfer, GPUs, ...): one column each.
    scalars = sorted({name for ni in infos for name, v in ni.allocatable.scalar_resources.items() if v > 0})
    nodes = Table(title="Nodes at the end", title_justify="left")
    for col in ("Node", "Pods", "CPU requested", "Memory requested", *(_short(n) for n in scalars)):
        nodes.add_column(col, justify="right" if col != "Node" else "left")
    for ni in infos:
        a, r = ni.allocatable, ni.requested
        nodes.add_row(
            _t(ni.name),
            f"{len(ni.pods)}/{a.allowed_pod_number}",
            f"{_pct(r.milli_cpu, a.milli_cpu)} ({r.milli_cpu / 1000:g}/{a.milli_cpu / 1000:g})",
            f"{_pct(r.memory, a.memory)} ({_gib(r.memory)}/{_gib(a.memory)} GiB)",
            *(f"{r.scalar_resources.get(n, 0):g}/{a.scalar_resources.get(n, 0):g}" for n in scalars),
        )
    console.print(nodes)
    _print_gpu_cards(result, console)
    _print_dra_devices(result, console)
    _print_quotas(result, console)

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


def _short(resource: str) -> str:
    """A column header for an extended resource: its name without the domain."""
    return resource.rsplit("/", 1)[-1]


def _print_gpu_cards(result: SimResult, console: Console) -> None:
    """GPU sharing (GpuShare writes ``kubesched.io/gpu-ids`` on each pod it places): per node and
    card, the pods on it with their share (whole GPUs as 1000m)."""
    cards: dict[str, dict[int, list[str]]] = {}
    for pod in result.cluster.pods.values():
        node = (pod.get("spec") or {}).get("nodeName")
        pi = PodInfo(pod)
        ids = gpu_ids(pi)
        if not ids or not node:
            continue
        milli = pi.requests.scalar_resources.get(RESOURCE_GPU_MILLI, 0)
        share = f"{milli}m" if milli and RESOURCE_GPU not in pi.requests.scalar_resources else "1000m"
        for i in ids:
            cards.setdefault(node, {}).setdefault(i, []).append(f"{pi.name} {share}")
    if not cards:
        return
    table = Table(title="GPUs at the end (pods on each card, milli-GPU)", title_justify="left")
    for col in ("Node", "GPU", "Pods"):
        table.add_column(col, overflow="fold")
    for node in sorted(cards):
        for i in sorted(cards[node]):
            table.add_row(_t(node), str(i), _t(", ".join(sorted(cards[node][i]))))
    console.print(table)


def _print_dra_devices(result: SimResult, console: Console) -> None:
    """Dynamic Resource Allocation: per node, how many of the devices its ResourceSlices publish
    claims hold, and who holds them (the pods a claim is reserved for, else the claim)."""
    api = "resource.k8s.io/v1"
    node_of: dict[tuple[str, str, str], str] = {}
    totals: dict[str, int] = {}
    for rs in result.cluster.list_objects(api, "ResourceSlice"):
        spec = rs.get("spec") or {}
        node = spec.get("nodeName")
        if not isinstance(node, str) or not node:
            continue
        pool = str((spec.get("pool") or {}).get("name", ""))
        for d in spec.get("devices") or []:
            if isinstance(d, dict):
                node_of[(str(spec.get("driver")), pool, str(d.get("name")))] = node
                totals[node] = totals.get(node, 0) + 1
    if not totals:
        return
    held: dict[str, dict[str, list[str]]] = {}
    for claim in result.cluster.list_objects(api, "ResourceClaim"):
        status = claim.get("status") or {}
        pods = [str(r.get("name", "")) for r in status.get("reservedFor") or [] if isinstance(r, dict)]
        who = ", ".join(pods) or str((claim.get("metadata") or {}).get("name", ""))
        for r in ((status.get("allocation") or {}).get("devices") or {}).get("results") or []:
            key = (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
            if key in node_of:
                held.setdefault(node_of[key], {}).setdefault(who, []).append(key[2])
    table = Table(title="DRA devices at the end (held/published, and by whom)", title_justify="left")
    for col in ("Node", "Devices", "Held by"):
        table.add_column(col, overflow="fold")
    for node in sorted(totals):
        mine = held.get(node, {})
        count = sum(len(v) for v in mine.values())
        who = "; ".join(f"{w}: {', '.join(sorted(devs, key=_natural))}" for w, devs in sorted(mine.items()))
        table.add_row(_t(node), f"{count}/{totals[node]}", _t(who))
    console.print(table)


def _natural(name: str) -> tuple[str, int]:
    """gpu-2 before gpu-10."""
    head, _, tail = name.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (name, -1)


def _print_quotas(result: SimResult, console: Console) -> None:
    """CapacityScheduling: each ElasticQuota's min and max and what the namespace's pods hold at the
    end (requests of its bound pods), CPU and memory."""
    quotas = []
    for obj in result.cluster.list_objects("", "ElasticQuota"):
        try:
            quotas.append(parse_elastic_quota(obj))
        except InvalidObjectError:
            continue
    if not quotas:
        return
    used: dict[str, tuple[int, int]] = {}
    for ni in result.scheduler.snapshot.list():
        for pi in ni.pods:
            cpu, mem = used.get(pi.namespace, (0, 0))
            req = pi.requests
            used[pi.namespace] = (cpu + req.milli_cpu, mem + req.memory)
    table = Table(title="Elastic quotas at the end (cores / GiB)", title_justify="left")
    for col in ("Namespace", "Min", "Max", "Used"):
        table.add_column(col, justify="right" if col != "Namespace" else "left")
    for q in sorted(quotas, key=lambda q: q.namespace):
        cpu, mem = used.get(q.namespace, (0, 0))
        table.add_row(
            _t(q.namespace), _cpu_mem(q.min.milli_cpu, q.min.memory), _cpu_mem(q.max.milli_cpu, q.max.memory),
            _cpu_mem(cpu, mem),
        )
    console.print(table)


def _cpu_mem(milli_cpu: int, memory: int) -> str:
    return f"{milli_cpu / 1000:g} / {_gib(memory)}"


def _print_waits(result: SimResult, pods: list[dict[str, Any]], console: Console) -> None:
    """Below the table, in full: why each pod waited (every reason, when it began, how often),
    why each pending pod is still pending, and who preempted each victim."""
    lines: list[Text] = []
    for p in pods:
        key = f"{p['namespace']}/{p['name']}"
        state = pod_state(p)
        waits = list(p.get("waits", ()))
        if not waits and state != "pending" and not p.get("preemptedBy"):
            continue
        head = _t(key, "bold")
        attempts = p.get("attempts", 0)
        head.append(f" ({state}, {attempts} attempt{'s' if attempts != 1 else ''})")
        lines.append(head)
        for w in waits:
            who = ", ".join(w.plugins) if w.plugins else w.kind
            times = f" ×{w.times}" if w.times > 1 else ""
            line = Text(f"  {_clock(w.at, result.start)}{times} ")
            line.append(_t(f"{who}" + (" (gated)" if w.kind == "gated" else ""), "yellow"))
            line.append(": ")
            line.append(_t(w.message))
            lines.append(line)
        if state == "pending" and not waits and p.get("message"):
            lines.append(Text("  ").append(_t(p["message"])))
        if p.get("preemptedBy"):
            lines.append(_t(f"  {_clock(p['deletedAt'], result.start)} preempted by {p['preemptedBy']}", "red"))
    if lines:
        console.print(Text("Why pods waited", style="italic"))
        for line in lines:
            console.print(line)


def _nominated_node(result: SimResult, key: str) -> str:
    pod = result.cluster.pods.get(key) or {}
    return str((pod.get("status") or {}).get("nominatedNodeName") or "")


def _pct(used: int, total: int) -> str:
    return f"{100 * used / total:.0f}%" if total else "-"


def _gib(b: int) -> str:
    return f"{b / 2**30:.1f}"


def print_explain(out: dict[str, Any], console: Console) -> None:
    head = Text.assemble(("Pod", "bold"), " ", printable(out["pod"]), "  ", ("profile", "bold"), " ",
                         printable(out["profile"]))
    if out.get("at"):
        head.append("  ")
        head.append("attempt " + str(out["attempt"]) + " at " if out.get("attempt") else "as of ", style="bold")
        head.append(printable(out["at"]))
    console.print(head)
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
    outcome = out.get("outcome")
    if outcome:
        # What the attempt itself then did, PostFilter (preemption) included.
        if outcome["result"] == "bound":
            console.print(Text.assemble("The attempt bound it to ", (printable(outcome["node"]), "bold green")))
        else:
            console.print(Text.assemble(("The attempt failed: ", "bold"), _t(outcome["message"] or "", "yellow")))
        if outcome.get("nominatedNode"):
            console.print(Text.assemble("Nominated node: ", (printable(outcome["nominatedNode"]), "bold")))
        if outcome.get("victims"):
            console.print(_t("Preemption victims: " + ", ".join(outcome["victims"]), "red"))


def _color(code: str) -> Text:
    return Text(code, style={"Success": "green", "Skip": "dim"}.get(code, "red"))
