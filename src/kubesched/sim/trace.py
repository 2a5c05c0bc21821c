"""Trace replay through the Scheduling Framework: the FGD paper's experiment on our scheduler.

The Alibaba trace becomes Nodes and Pods (:mod:`kubesched.sim.alibaba`), and each pod of the run's
arrival sequence is created on a simulated cluster and scheduled by the real :class:`Scheduler` —
queue, PreFilter, Filter, Score, Reserve, PreBind, binding — with a profile of PrioritySort,
NodeResourcesFit (Filter), GpuShare (every point; the only Score plugin) and DefaultBinder. A pod that
fits nowhere is deleted, as in the paper's simulator; nothing departs.

What makes the result the paper's:

* ``percentageOfNodesToScore: 100`` and ``--tie-break node-order``; the nodes are created in the order
  of their published tie-break rank (their ``%04d-`` names), so the first of the best nodes in
  snapshot order is the one the paper's simulator picks;
* GpuShare's ``typicalPods`` are the trace's pod types with their counts, and the Random policy draws
  from the run's Go ``math/rand`` stream (the factory hands it over);
* after each pod event the replay records arrived and allocated GPU milli and the cluster's
  fragmentation, measured on its own GPU state built from the pods' ``kubesched.io/gpu-ids``.

The standalone replay (:mod:`kubesched.sim.gpu_replay`) is the reference this one is tested
against: for the deterministic policies both give identical series.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.table import Table

from kubesched.config.load import load_config
from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.registry import Registry
from kubesched.plugins.gpu import ONLINE_POLICIES, POLICY_NAMES, ClusterGpuState, Fgd, TypicalPods
from kubesched.plugins.gpu.frag import FloatArray
from kubesched.plugins.gpushare import ANNOTATION_GPU_IDS, NAME, GpuShare, GpuShareArgs
from kubesched.plugins.registry import default_registry
from kubesched.scheduler import TIE_BREAK_NODE_ORDER
from kubesched.sim.alibaba import DEFAULT_TUNE, Arrival, Trace, arrival, manifests
from kubesched.sim.gpu_replay import REPORT_POINTS, ReplayResult, node_specs, pod_shape, replay_arrival
from kubesched.sim.simulation import DEFAULT_START, new_simulation

__all__ = [
    "MAX_SEEDS",
    "PolicyRuns",
    "Progress",
    "canonical_policy",
    "parse_policies",
    "parse_seeds",
    "replay_config",
    "replay_framework",
    "replay_trace",
    "run_replays",
    "summary",
    "summary_of_runs",
    "table",
    "typical_pod_args",
]

#: ``progress(done, total)`` after every ``PROGRESS_EVERY`` pods and at the end.
Progress = Callable[[int, int], None]
PROGRESS_EVERY = 250
#: The replay's virtual clock starts where every simulation does.
START = DEFAULT_START


def canonical_policy(name: str) -> str:
    """The policy's canonical name (``fgd`` -> ``FGD``); ValueError for an unknown one."""
    for p in POLICY_NAMES:
        if p.lower() == name.lower():
            return p
    raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}")


def typical_pod_args(trace: Trace) -> list[dict[str, Any]]:
    """GpuShare's ``typicalPods``: every pod type of the trace's original pods with its count."""
    counts = Counter(pod_shape(p).key for p in trace.pods)
    return [
        {"milliCPU": cpu, "gpuMilli": milli, "gpuCount": k, "gpuModels": list(models), "count": n}
        for (cpu, milli, k, models), n in counts.items()
    ]


def replay_config(
    policy: str, typical_pods: list[dict[str, Any]], registry: Registry, *, release: Release = DEFAULT_RELEASE
) -> KubeSchedulerConfiguration:
    """One profile: PrioritySort, NodeResourcesFit (PreFilter/Filter), GpuShare, DefaultBinder."""
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": n} for n in ("PrioritySort", "NodeResourcesFit", NAME, "DefaultBinder")],
                    "disabled": [{"name": "*"}],
                },
                "preScore": {"enabled": [{"name": NAME}], "disabled": [{"name": "*"}]},
                "score": {"enabled": [{"name": NAME}], "disabled": [{"name": "*"}]},
            },
            "pluginConfig": [{"name": NAME, "args": {
                "scoringPolicy": canonical_policy(policy),
                # FGDOnline and RatioDelta learn the mix from the pods they see: never handed the trace's
                "typicalPods": [] if canonical_policy(policy) in ONLINE_POLICIES else typical_pods,
            }}],
        }],
    }
    return load_config(raw, args_types=registry.args_types(), release=release)


def _registry(arr: Arrival) -> Registry:
    """The in-tree registry with GpuShare built on the run's Go stream (what Random draws from)."""
    reg = default_registry(entry_points=False)
    if NAME in reg:
        reg.unregister(NAME)

    def factory(args: Any, handle: Any) -> GpuShare:
        return GpuShare(args, handle, rng=arr.rng)

    reg.register(NAME, factory, args_type=GpuShareArgs)
    return reg


def replay_framework(
    arr: Arrival,
    policy: str,
    *,
    typical_pods: list[dict[str, Any]] | None = None,
    progress: Progress | None = None,
) -> ReplayResult:
    """Schedule ``arr``'s pods one by one with the framework and GpuShare's ``policy``.

    ``typical_pods`` defaults to :func:`typical_pod_args` of the trace (pass it to reuse it across
    runs). Consumes ``arr.rng`` (Random policy): build a fresh arrival per replay.
    """
    started = time.perf_counter()
    trace = arr.trace
    typical = typical_pods if typical_pods is not None else typical_pod_args(trace)
    registry = _registry(arr)
    config = replay_config(policy, typical, registry)
    # No pod stories: a trace replay reports curves, and recording every node's score per pod cost
    # about 40 % of a replay (2026-12-05 profile).
    sim = new_simulation(config, registry, start=START, tie_break=TIE_BREAK_NODE_ORDER, stories=False)
    clock, cluster, sched = sim.clock, sim.cluster, sim.scheduler
    node_objs, pod_objs = manifests(arr)
    for node_obj in sorted(node_objs, key=lambda n: str(n["metadata"]["name"])):  # rank order
        cluster.add_node(node_obj)

    # The replay's own view of the placements, for fragmentation: rows in trace order, as the engine.
    specs = node_specs(trace)
    names = [str(n["metadata"]["name"]) for n in node_objs]
    own = ClusterGpuState(specs)
    row_of = dict(zip(names, range(len(names)), strict=True))
    shapes = [pod_shape(p) for p in arr.sequence]
    n = len(shapes)
    arrived = np.zeros(n, dtype=np.int64)
    used = np.zeros(n, dtype=np.int64)
    sid_before = np.zeros(n, dtype=np.int64)
    sid_after = np.zeros(n, dtype=np.int64)
    bound = np.zeros(n, dtype=np.bool_)
    initial_sids = own.node_sid.copy()
    total_arrived = total_used = failed = failed_milli = 0
    stored = cluster.pods
    for e, (obj, shape) in enumerate(zip(pod_objs, shapes, strict=True)):
        total_arrived += shape.total_gpu_milli
        arrived[e] = total_arrived
        # What admission would set (sim.manifests.admit_pod), without hashing a UUID per pod:
        # names are unique in a run.
        meta = obj["metadata"]
        meta["uid"] = f"trace-{meta['name']}"
        obj["spec"]["priority"] = 0
        key = f"{meta['namespace']}/{meta['name']}"
        cluster.create_pod(obj)
        sched.schedule_one()
        clock.run_due()
        current = stored[key]
        host = (current.get("spec") or {}).get("nodeName")
        if host:
            i = row_of[str(host)]
            ids = str(((current.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_GPU_IDS, ""))
            gpus = tuple(int(g) for g in ids.split(",")) if shape.wants_gpu else ()
            sid_before[e] = own.node_sid[i]
            own.allocate(i, shape, gpus)
            sid_after[e] = own.node_sid[i]
            bound[e] = True
            total_used += shape.total_gpu_milli
        else:
            failed += 1
            failed_milli += shape.total_gpu_milli
            cluster.delete_pod(current, "FailedScheduling")
        used[e] = total_used
        if progress is not None and (e + 1) % PROGRESS_EVERY == 0:
            progress(e + 1, n)
    if progress is not None:
        progress(n, n)
    tracker = Fgd(TypicalPods.from_shapes(pod_shape(p) for p in trace.pods))
    frag_of = tracker.state_fragmentation(own, np.arange(own.n_states, dtype=np.int64))
    delta = np.where(bound, frag_of[sid_after] - frag_of[sid_before], 0.0)
    fragmentation = float(frag_of[initial_sids].sum()) + np.cumsum(delta)
    return ReplayResult(
        policy=canonical_policy(policy),
        seed=arr.seed,
        tune=arr.tune,
        total_gpu_milli=own.total_gpu_milli,
        arrived=arrived,
        used=used,
        fragmentation=fragmentation,
        failed=failed,
        failed_gpu_milli=failed_milli,
        seconds=time.perf_counter() - started,
    )


def replay_trace(
    trace: Trace, policy: str, seed: int, tune: float = DEFAULT_TUNE, *, progress: Progress | None = None,
    typical_pods: list[dict[str, Any]] | None = None,
) -> ReplayResult:
    """:func:`replay_framework` of the run ``seed`` of ``trace`` at workload ``tune``."""
    return replay_framework(arrival(trace, seed, tune), policy, typical_pods=typical_pods, progress=progress)


def _point(v: float) -> float | None:
    return None if np.isnan(v) else round(float(v), 2)


def summary(result: ReplayResult, nodes: int, points: Sequence[int] = REPORT_POINTS) -> dict[str, Any]:
    """The ``kubesched trace alibaba-gpu -o json`` object of one run."""
    alloc = result.allocation_curve()
    frag = result.fragmentation_ratio_curve()
    return {
        "policy": result.policy,
        "seed": result.seed,
        "tune": result.tune,
        "nodes": nodes,
        "gpus": result.total_gpus,
        "pods": result.pods,
        "allocation": {str(k): _point(alloc[k]) for k in points},
        "fragmentation": {str(k): _point(frag[k]) for k in points},
        "failed_pods": result.failed,
        "seconds": round(result.seconds, 3),
    }


def summary_of_runs(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several seeds of one policy: the same keys, ``seed`` the list of seeds, numbers the means over
    the runs (curves rounded to 2 decimals, counts to integers), and ``runs`` each run's object."""
    if len(runs) == 1:
        return dict(runs[0])

    def mean(values: Sequence[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return round(float(np.mean(present)), 2) if present else None

    first = runs[0]
    return {
        "policy": first["policy"],
        "seed": [r["seed"] for r in runs],
        "tune": first["tune"],
        "nodes": first["nodes"],
        "gpus": first["gpus"],
        "pods": round(float(np.mean([r["pods"] for r in runs]))),
        "allocation": {k: mean([r["allocation"][k] for r in runs]) for k in first["allocation"]},
        "fragmentation": {k: mean([r["fragmentation"][k] for r in runs]) for k in first["fragmentation"]},
        "failed_pods": round(float(np.mean([r["failed_pods"] for r in runs]))),
        "seconds": round(float(np.mean([r["seconds"] for r in runs])), 3),
        "runs": list(runs),
    }


# ---- several policies and seeds (the CLI) ---------------------------------------------------------


@dataclass
class PolicyRuns:
    """Every seed's replay of one policy."""

    policy: str
    results: list[ReplayResult]

    def mean_curve(self, which: str) -> FloatArray:
        """Mean over the seeds of ``allocation`` or ``fragmentation`` (ratio) at 0..130 % arrived."""
        curves = [r.allocation_curve() if which == "allocation" else r.fragmentation_ratio_curve()
                  for r in self.results]
        with np.errstate(invalid="ignore"):
            stacked = np.vstack(curves)
            counts = (~np.isnan(stacked)).sum(axis=0)
            sums = np.where(np.isnan(stacked), 0.0, stacked).sum(axis=0)
            out: FloatArray = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return out


#: ``start(label, total) -> advance(done)``: a progress display for one run.
RunProgress = Callable[[str, int], Progress]


MAX_SEEDS = 100
"""Most seeds one ``kubesched trace`` command replays: every run's curves are kept for the means."""
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_SEED_RANGE = re.compile(r"\s*([+-]?\d{1,20})\s*(?:\.\.|-)\s*([+-]?\d{1,20})\s*|\s*([+-]?\d{1,20})\s*")


def parse_seeds(seeds: Sequence[int], seed_range: str | None) -> list[int]:
    """``--seed`` values followed by a ``--seeds`` range ``A..B`` (or ``A-B``, inclusive): at most
    MAX_SEEDS distinct seeds, each a Go ``int64``. ValueError naming the option otherwise; the range
    is counted before it is built."""
    for s in seeds:
        if not _INT64_MIN <= s <= _INT64_MAX:
            raise ValueError(f"--seed: {s} is not a 64-bit integer")
    out = list(seeds)
    if seed_range is not None:
        m = _SEED_RANGE.fullmatch(seed_range)
        if m is None:
            raise ValueError(f"--seeds: {seed_range!r} is not a range like 42..51")
        first, last = (int(m[1]), int(m[2])) if m[1] is not None else (int(m[3]), int(m[3]))
        for s in (first, last):
            if not _INT64_MIN <= s <= _INT64_MAX:
                raise ValueError(f"--seeds: {s} is not a 64-bit integer")
        if last < first:
            raise ValueError(f"--seeds: empty range {seed_range!r}")
        if last - first + 1 > MAX_SEEDS:
            raise ValueError(f"--seeds: {seed_range!r} is {last - first + 1} seeds, more than the {MAX_SEEDS} "
                             "one command may run")
        out.extend(range(first, last + 1))
    unique = list(dict.fromkeys(out)) or [42]
    if len(unique) > MAX_SEEDS:
        raise ValueError(f"--seed/--seeds: {len(unique)} seeds, more than the {MAX_SEEDS} one command may run")
    return unique


def parse_policies(args: Sequence[str]) -> list[str]:
    """``--policy`` values: names separated by commas, any case, or ``all``; canonical names in
    order, each once. ValueError naming the known policies when none is named or one is unknown."""
    names = [p.strip() for arg in args for p in arg.split(",") if p.strip()]
    known = ", ".join(POLICY_NAMES)
    if not names:
        raise ValueError(f"--policy: no policy named; one or more of {known}, or all")
    if any(n.lower() == "all" for n in names):
        return list(POLICY_NAMES)
    unknown = [n for n in names if n.lower() not in {p.lower() for p in POLICY_NAMES}]
    if unknown:
        listed = ", ".join(repr(n) for n in dict.fromkeys(unknown))
        raise ValueError(f"--policy: unknown policy {listed}; known: {known}, or all")
    return list(dict.fromkeys(canonical_policy(n) for n in names))


def run_replays(
    trace: Trace,
    policies: Sequence[str],
    seeds: Sequence[int],
    tune: float = DEFAULT_TUNE,
    *,
    standalone: bool = False,
    progress: RunProgress | None = None,
) -> list[PolicyRuns]:
    """Replay every policy with every seed, through the framework (or the standalone engine)."""
    typical = typical_pod_args(trace)
    out: list[PolicyRuns] = []
    for policy in policies:
        name = canonical_policy(policy)
        results: list[ReplayResult] = []
        for seed in seeds:
            arr = arrival(trace, seed, tune)
            report = progress(f"{name} seed {seed}", len(arr.sequence)) if progress is not None else None
            if standalone:
                result = replay_arrival(arr, name)
                if report is not None:
                    report(len(arr.sequence), len(arr.sequence))
            else:
                result = replay_framework(arr, name, typical_pods=typical, progress=report)
            results.append(result)
        out.append(PolicyRuns(name, results))
    return out


def summaries(runs: Sequence[PolicyRuns], nodes: int) -> list[dict[str, Any]]:
    """One JSON object per policy: the run's, or the mean of several seeds (:func:`summary_of_runs`)."""
    return [summary_of_runs([summary(r, nodes) for r in pr.results]) for pr in runs]


def table(runs: Sequence[PolicyRuns], nodes: int, points: Sequence[int] = REPORT_POINTS) -> Table:
    """A rich table of the GPU allocation ratio (%): one row per arrived-workload level, one column
    per policy (the seven policies fit 80 columns; thirteen levels as columns did not), then the
    fragmentation at 130 %, failed pods, seconds a run and the seeds."""
    return table_of(summaries(runs, nodes), nodes, points)


def table_of(found: Sequence[dict[str, Any]], nodes: int, points: Sequence[int] = REPORT_POINTS) -> Table:
    """:func:`table` from the policies' summaries (the ``-o json`` documents)."""
    # eight policies (``--policy all``) fit 80 columns with every number only without cell padding
    padding = (0, 0) if len(found) > 7 else (0, 1)
    t = Table(title=f"GPU allocation ratio (%) vs arrived workload — {nodes} nodes", title_justify="left",
              padding=padding)
    t.add_column("arrived", justify="right", no_wrap=True)
    bound = found[0].get("bound") if found else None  # with --bound (kubesched.sim.trace_gap)
    for s in found:
        t.add_column(str(s["policy"]), justify="right")
    if bound is not None:
        t.add_column("bound", justify="right")
    extra = [] if bound is None else [""]
    for k in points:
        t.add_row(f"{k}%", *(_cell(s["allocation"][str(k)]) for s in found),
                  *([] if bound is None else [_cell(bound.get(str(k)))]))
    t.add_section()
    if bound is not None:
        base = found[0]["gap_baseline"]
        for lvl in ("100", "130"):
            t.add_row(f"to bound@{lvl}", *(_cell(s["gap_to_bound"].get(lvl)) for s in found), *extra)
            t.add_row(f"closed@{lvl} %", *(_cell(s["gap_closed"].get(lvl)) for s in found), *extra)
        t.add_row("baseline", *(base for _ in found), *extra)
    t.add_row("frag@130", *(_cell(s["fragmentation"]["130"]) for s in found), *extra)
    t.add_row("failed", *(str(s["failed_pods"]) for s in found), *extra)
    t.add_row("secs/run", *(f"{s['seconds']:.2f}" for s in found), *extra)
    t.add_row("seeds", *(_seeds_label(s["seed"]) for s in found), *extra)
    return t


def _seeds_label(seed: object) -> str:
    seeds = [int(str(x)) for x in (seed if isinstance(seed, list) else [seed])]
    if len(seeds) == 1:
        return str(seeds[0])
    return f"{seeds[0]}..{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ",".join(map(str, seeds))


def _cell(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"
