#!/usr/bin/env python3
"""Run a matrix of ``kubesched bench`` runs and print the medians as the markdown tables of
docs/performance.md.

Each run is its own process (so ``peak_rss_mb`` is that run's), repeated ``--runs`` times, one
round over the whole matrix after another (A B A B ...: on a shared machine, load changes hit
every case alike); every raw result is appended to ``--raw`` as one JSON line with the 1-minute
load average at its end, so a table can be rebuilt or audited later (``--from-raw FILE`` prints
the table of an earlier matrix without running anything). Runs already in ``--raw`` count.

    scripts/bench-table.py --matrix sim --runs 3 --raw bench-sim.jsonl     # every workload + the kernel
    scripts/bench-table.py --matrix kernel --runs 5 --raw kernel.jsonl     # SchedulingBasic vs its kernel
    scripts/bench-table.py --matrix scale --runs 3 --raw scale.jsonl       # 5000/15000/50000 nodes, 10 pods a node
    scripts/bench-table.py --matrix memory --runs 1 --raw memory.jsonl     # 5000 nodes, 50000 pods bound
    scripts/bench-table.py --matrix apiserver --runs 3 --raw bench-api.jsonl
    scripts/bench-table.py --matrix apiserver5k --runs 3 --raw bench-api5k.jsonl  # SchedulingBasic, 5000 nodes
    scripts/bench-table.py --from-raw bench-sim.jsonl

The kubesched under test is the one this Python imports (``PYTHONPATH=src`` for a checkout).
Where a matrix has both SchedulingBasic and its kernel at one size, the table is followed by
their ratio (kubesched / kernel, per round and of the medians).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

WORKLOADS = (
    "SchedulingBasic",
    "SchedulingPodAntiAffinity",
    "SchedulingPodAffinity",
    "SchedulingPreferredPodAffinity",
    "SchedulingNodeAffinity",
    "TopologySpreading",
    "PreemptionBasic",
    "Unschedulable",
    "GpuTrace",
    "HostPortReplicas",
)
KERNEL = "kernel"
#: Pods bound on every node before the clock starts, in the scale matrix.
SCALE_PODS_PER_NODE = 10
SCALE_NODES = (5000, 15000, 50000)

#: (workload, backend, scheduler, extra bench flags); scheduler "kernel" runs ``--kernel``.
Case = tuple[str, str, str, tuple[str, ...]]
Result = dict[str, object]


def matrix(name: str) -> list[Case]:
    if name == "sim":
        # Every workload at its scheduler_perf size on the simulator, the kernel next to SchedulingBasic.
        cases: list[Case] = []
        for w in WORKLOADS:
            cases.append((w, "sim", "kubesched", ()))
            if w == "SchedulingBasic":
                cases.append((w, "sim", KERNEL, ()))
        return cases
    if name == "kernel":
        return [("SchedulingBasic", "sim", "kubesched", ()), ("SchedulingBasic", "sim", KERNEL, ())]
    if name == "scale":
        # Per-pod cost and memory against cluster size, with the cluster already holding pods.
        return [
            ("SchedulingBasic", "sim", "kubesched",
             ("--nodes", str(n), "--init-pods", str(n * SCALE_PODS_PER_NODE), "--pods", "10000"))
            for n in SCALE_NODES
        ]
    if name == "memory":
        return [("SchedulingBasic", "sim", "kubesched", ("--nodes", "5000", "--init-pods", "0", "--pods", "50000"))]
    if name == "apiserver":
        # Both schedulers on the real control plane at 1000 nodes, one after the other in each round.
        cases = []
        for w in WORKLOADS:
            if w in ("GpuTrace", "HostPortReplicas"):
                continue  # simulator only (profiles the API-server harness does not run)
            for sched in ("kubesched", "kube-scheduler"):
                cases.append((w, "apiserver", sched, ("--nodes", "1000", *_api_size(w))))
        return cases
    if name == "apiserver5k":
        # The 5000-node side by side: fewer measured pods than scheduler_perf's, what fits the machine.
        return [
            ("SchedulingBasic", "apiserver", sched, ("--nodes", "5000", "--init-pods", "1000", "--pods", "5000"))
            for sched in ("kubesched", "kube-scheduler")
        ]
    raise SystemExit(f"unknown matrix {name!r}")


MATRICES = ("sim", "kernel", "scale", "memory", "apiserver", "apiserver5k")


def _api_size(workload: str) -> tuple[str, ...]:
    """(init, measured) pods at 1000 nodes: SchedulingBasic and PreemptionBasic at scheduler_perf's
    counts (issue 7's side-by-side workload; PreemptionBasic's own size is 1000 nodes), the others
    cut so every pod still fits and a run stays short on this machine."""
    sizes = {
        "SchedulingBasic": (1000, 10000),
        "SchedulingPodAntiAffinity": (200, 400),
        "SchedulingPodAffinity": (1000, 1000),
        "SchedulingPreferredPodAffinity": (1000, 1000),
        "SchedulingNodeAffinity": (1000, 2000),
        "TopologySpreading": (1000, 400),
        "PreemptionBasic": (4000, 1000),
        "Unschedulable": (100, 2000),
    }
    init, pods = sizes[workload]
    return ("--init-pods", str(init), "--pods", str(pods))


def bench_argv(case: Case, seed: int, release: str | None) -> list[str]:
    workload, backend, scheduler, extra = case
    argv = ["bench", "--workload", workload]
    if scheduler == KERNEL:
        argv.append("--kernel")
    else:
        argv += ["--backend", backend, "--scheduler", scheduler, "--seed", str(seed)]
    if release:
        argv.append(f"--emulated-version={release}")
    return [*argv, "--no-progress", "-o", "json", *extra]


def run_case(case: Case, seed: int, release: str | None) -> Result:
    args = bench_argv(case, seed, release)
    print("$ kubesched " + " ".join(args), file=sys.stderr, flush=True)
    argv = [sys.executable, "-c", "import sys; from kubesched.cli import main; main(sys.argv[1:])", *args]
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=os.environ).stdout
    result: Result = json.loads(out)
    result["load1"] = os.getloadavg()[0]
    result["round"] = seed
    print(f"  -> {result['pods_per_second']} pods/s, {result['peak_rss_mb']} MB, load {result['load1']:.2f}",
          file=sys.stderr, flush=True)
    return result


def key(r: Result) -> tuple[object, ...]:
    return (r["workload"], r["backend"], r["scheduler"], r["nodes"], r["init_pods"], r["pods"], r.get("release", ""))


def _f(r: Result, field: str) -> float:
    return float(r[field])  # type: ignore[arg-type]


def table(results: Iterable[Result]) -> str:
    groups: dict[tuple[object, ...], list[Result]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    lines = [
        "| workload | backend | scheduler | release | nodes | init pods | pods | runs | pods/s (median) | min..max "
        "| pods per CPU-s | ms per pod | attempt p50 ms | p99 ms | peak RSS MB | load |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for k, rs in groups.items():
        pps = [_f(r, "pods_per_second") for r in rs]
        loads = [_f(r, "load1") for r in rs if "load1" in r]

        def med(field: str, rs: list[Result] = rs) -> float:
            return statistics.median(_f(r, field) for r in rs)

        w, backend, sched, nodes, init, pods, release = k
        median = statistics.median(pps)
        load = f"{min(loads):.1f}..{max(loads):.1f}" if loads else ""
        # The process's own CPU time: what the rate would be on a machine nothing else uses.
        per_cpu = [_f(r, "bound") / _f(r, "cpu_seconds") for r in rs if _f(r, "cpu_seconds") > 0]
        cpu_rate = f"{statistics.median(per_cpu):.0f}" if per_cpu else ""
        lines.append(
            f"| {w} | {backend} | {sched} | {release} | {nodes} | {init} | {pods} | {len(rs)} | {median:.0f} "
            f"| {min(pps):.0f}..{max(pps):.0f} | {cpu_rate} | {1000 / median if median else 0:.3f} "
            f"| {med('attempt_p50_ms'):.3f} | {med('attempt_p99_ms'):.3f} | {med('peak_rss_mb'):.0f} | {load} |"
        )
    return "\n".join(lines)


def kernel_ratios(results: Sequence[Result]) -> list[str]:
    """One line per size with both SchedulingBasic and its kernel: kubesched's rate over the
    kernel's, for each round that has both (runs of one round ran one after the other) and for
    the medians."""
    out = []
    sizes = {(r["nodes"], r["init_pods"], r["pods"], r.get("release", "")) for r in results}
    for size in sorted(sizes, key=str):

        def of(scheduler: str, size: tuple[object, ...] = size) -> list[Result]:
            return [r for r in results if r["workload"] == "SchedulingBasic" and r["scheduler"] == scheduler
                    and (r["nodes"], r["init_pods"], r["pods"], r.get("release", "")) == size]

        ks, kernel = of("kubesched"), of(KERNEL)
        if not ks or not kernel:
            continue
        by_round = {r.get("round"): _f(r, "pods_per_second") for r in kernel}
        paired = [_f(r, "pods_per_second") / by_round[r.get("round")] for r in ks if r.get("round") in by_round]
        a = statistics.median(_f(r, "pods_per_second") for r in ks)
        b = statistics.median(_f(r, "pods_per_second") for r in kernel)
        per_round = f"per round {min(paired):.2f}..{max(paired):.2f}, median {statistics.median(paired):.2f}; " \
            if paired else ""
        out.append(f"SchedulingBasic {size[0]} nodes, {size[1]} init, {size[2]} pods: kubesched / kernel = "
                   f"{per_round}medians {a:.0f} / {b:.0f} = {a / b:.2f}")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matrix", choices=MATRICES)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--raw", type=Path, help="append every result here as a JSON line")
    p.add_argument("--from-raw", type=Path, help="print the table of these JSON lines and exit")
    p.add_argument("--only", help="comma-separated workloads to keep")
    p.add_argument("--emulated-version", dest="release", help="passed to every run (default: kubesched's)")
    args = p.parse_args()
    if args.from_raw:
        results = [json.loads(line) for line in args.from_raw.read_text().splitlines() if line.strip()]
        print(table(results))
        print("\n".join(kernel_ratios(results)))
        return
    if not args.matrix:
        p.error("--matrix or --from-raw is required")
    cases = matrix(args.matrix)
    if args.only:
        only = set(args.only.split(","))
        cases = [c for c in cases if c[0] in only]
    # Resume: runs already in --raw count towards --runs (same workload, backend, scheduler, sizes).
    results = [json.loads(line) for line in args.raw.read_text().splitlines() if line.strip()] \
        if args.raw and args.raw.exists() else []
    for run in range(args.runs):
        for case in cases:
            done = [r for r in results if _matches(r, case, args.release)]
            if len(done) > run:
                continue
            try:
                r = run_case(case, seed=run, release=args.release)
            except subprocess.CalledProcessError as err:
                print(f"  -> failed (exit {err.returncode}): {err.stderr.strip()[-2000:]}", file=sys.stderr, flush=True)
                continue
            results.append(r)
            if args.raw:
                with args.raw.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
    keep = [r for r in results if any(_matches(r, c, args.release) for c in cases)]
    print(table(keep))
    print("\n".join(kernel_ratios(keep)))


def _matches(result: Result, case: Case, release: str | None) -> bool:
    workload, backend, scheduler, extra = case
    if (result["workload"], result["backend"], result["scheduler"]) != (workload, backend, scheduler):
        return False
    if release and str(result.get("release", "")) != release.removeprefix("kube="):
        return False
    flags = dict(zip(extra[::2], extra[1::2], strict=True))
    sizes = {"--nodes": "nodes", "--init-pods": "init_pods", "--pods": "pods"}
    return all(str(result[field]) == flags[flag] for flag, field in sizes.items() if flag in flags)


if __name__ == "__main__":
    main()
