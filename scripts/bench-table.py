#!/usr/bin/env python3
"""Run a matrix of ``kubesched bench`` runs and print the medians as the markdown table of
docs/performance.md.

Each run is its own process (so ``peak_rss_mb`` is that run's), repeated ``--runs`` times; every raw
result is appended to ``--raw`` as one JSON line, so a table can be rebuilt or audited later
(``--from-raw FILE`` prints the table of an earlier matrix without running anything).

    scripts/bench-table.py --matrix sim --runs 3 --raw bench-sim.jsonl
    scripts/bench-table.py --matrix apiserver --runs 3 --raw bench-api.jsonl
    scripts/bench-table.py --from-raw bench-sim.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterable
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
)

#: (workload, backend, scheduler, extra bench flags)
Case = tuple[str, str, str, tuple[str, ...]]


def matrix(name: str) -> list[Case]:
    if name == "sim":
        # Every workload at its scheduler_perf size on the simulator.
        return [(w, "sim", "kubesched", ()) for w in WORKLOADS]
    if name == "scaling":
        # SchedulingBasic's per-pod cost against cluster size (issue 7: 500, 5000, 15000 nodes).
        return [
            ("SchedulingBasic", "sim", "kubesched", ("--nodes", str(n), "--init-pods", str(n // 5), "--pods", "10000"))
            for n in (500, 5000, 15000)
        ]
    if name == "memory":
        return [("SchedulingBasic", "sim", "kubesched", ("--nodes", "5000", "--init-pods", "0", "--pods", "50000"))]
    if name == "apiserver":
        # Both schedulers on the real control plane at 1000 nodes, one after the other in each round.
        cases: list[Case] = []
        for w in WORKLOADS:
            if w == "GpuTrace":
                continue  # a GpuShare profile kube-scheduler does not have
            for sched in ("kubesched", "kube-scheduler"):
                cases.append((w, "apiserver", sched, ("--nodes", "1000", *_api_size(w))))
        return cases
    raise SystemExit(f"unknown matrix {name!r}")


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


def run_case(case: Case, seed: int) -> dict[str, object]:
    workload, backend, scheduler, extra = case
    argv = [
        "kubesched", "bench", "--workload", workload, "--backend", backend, "--scheduler", scheduler,
        "--seed", str(seed), "--no-progress", "-o", "json", *extra,
    ]
    print("$ " + " ".join(argv), file=sys.stderr, flush=True)
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=os.environ).stdout
    result: dict[str, object] = json.loads(out)
    result["load1"] = os.getloadavg()[0]
    print(f"  -> {result['pods_per_second']} pods/s, {result['peak_rss_mb']} MB, load {result['load1']:.2f}",
          file=sys.stderr, flush=True)
    return result


def key(r: dict[str, object]) -> tuple[object, ...]:
    return (r["workload"], r["backend"], r["scheduler"], r["nodes"], r["init_pods"], r["pods"])


def table(results: Iterable[dict[str, object]]) -> str:
    groups: dict[tuple[object, ...], list[dict[str, object]]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    lines = [
        "| workload | backend | scheduler | nodes | init pods | pods | runs | pods/s (median) | min..max "
        "| attempt p50 ms | p99 ms | peak RSS MB |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for k, rs in groups.items():
        pps = [float(r["pods_per_second"]) for r in rs]  # type: ignore[arg-type]

        def med(field: str, rs: list[dict[str, object]] = rs) -> float:
            return statistics.median(float(r[field]) for r in rs)  # type: ignore[arg-type]

        w, backend, sched, nodes, init, pods = k
        lines.append(
            f"| {w} | {backend} | {sched} | {nodes} | {init} | {pods} | {len(rs)} | {statistics.median(pps):.0f} "
            f"| {min(pps):.0f}..{max(pps):.0f} | {med('attempt_p50_ms'):.1f} | {med('attempt_p99_ms'):.1f} "
            f"| {med('peak_rss_mb'):.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matrix", choices=("sim", "scaling", "memory", "apiserver"))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--raw", type=Path, help="append every result here as a JSON line")
    p.add_argument("--from-raw", type=Path, help="print the table of these JSON lines and exit")
    p.add_argument("--only", help="comma-separated workloads to keep")
    args = p.parse_args()
    if args.from_raw:
        print(table(json.loads(line) for line in args.from_raw.read_text().splitlines() if line.strip()))
        return
    if not args.matrix:
        p.error("--matrix or --from-raw is required")
    cases = matrix(args.matrix)
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c[0] in keep]
    # Resume: runs already in --raw count towards --runs (same workload, backend, scheduler, sizes).
    results = [json.loads(line) for line in args.raw.read_text().splitlines() if line.strip()] \
        if args.raw and args.raw.exists() else []
    for run in range(args.runs):
        for case in cases:
            done = [r for r in results if _matches(r, case)]
            if len(done) > run:
                continue
            try:
                r = run_case(case, seed=run)
            except subprocess.CalledProcessError as err:
                print(f"  -> failed (exit {err.returncode}): {err.stderr.strip()[-2000:]}", file=sys.stderr, flush=True)
                continue
            results.append(r)
            if args.raw:
                with args.raw.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
    keep = [r for r in results if any(_matches(r, c) for c in cases)]
    print(table(keep))


def _matches(result: dict[str, object], case: Case) -> bool:
    workload, backend, scheduler, extra = case
    if (result["workload"], result["backend"], result["scheduler"]) != (workload, backend, scheduler):
        return False
    flags = dict(zip(extra[::2], extra[1::2], strict=True))
    sizes = {"--nodes": "nodes", "--init-pods": "init_pods", "--pods": "pods"}
    return all(str(result[field]) == flags[flag] for flag, field in sizes.items() if flag in flags)


if __name__ == "__main__":
    main()
