#!/usr/bin/env python3
"""Profile one simulator benchmark run with py-spy and charge its measured phase to the parts of
a scheduling cycle, as µs a pod (the table "Where the time goes" in docs/performance.md).

    PYTHONPATH=src scripts/profile-parts.py --workload SchedulingBasic --nodes 5000 \
        --init-pods 1000 --pods 10000 [--rate 500] [--raw out.txt] [-o json]

The run is a child process under ``py-spy record -f raw`` (py-spy must be on PATH or beside this
Python). Only samples of the measured phase count: stacks through ``run_sim`` at or after the line
that starts its clock (found in the source the child imports), so building the cluster and binding
the init pods are left out. Each sample is charged to the OUTER part on its stack if any
(PostFilter: preemption's dry run with its own Filter calls), else to the innermost frame that
belongs to one of PARTS (leaf first), so a histogram observed inside Filter counts as metrics.
µs a pod = the part's share of the samples × the child's CPU seconds of the measured phase / pods
bound: CPU time, so the figures move little with the machine's load (the wall-clock rate does).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

#: Parts that take everything under them (their own Filter calls, their metrics), matched first.
OUTER: tuple[tuple[str, str], ...] = (
    ("PostFilter (preemption's dry run, victims)", r"run_post_filter_plugins"),
)
#: (part, regex on a py-spy frame "function (path:line)"), matched leaf first.
PARTS: tuple[tuple[str, str], ...] = (
    ("metrics", r"metrics\.py|prometheus_client"),
    ("validation and spec parses", r"validate_pod|share_spec_parses|\(.*api/validation"),
    ("queue (activeQ, backoff, gating)", r"backend/queue\.py"),
    ("PreEnqueue", r"run_pre_enqueue_plugins"),
    ("SignPod and the batch (OpportunisticBatching)",
     r"sign_pod|OpportunisticBatch|get_node_hint|store_schedule_results"),
    ("PreFilter", r"run_pre_filter_plugins"),
    ("Filter", r"find_nodes_that_pass_filters|run_filter_plugins|find_nodes_that_fit_pod"),
    ("PreScore", r"run_pre_score_plugins"),
    ("Score and NormalizeScore", r"run_score_plugins|prioritize_nodes|_normalize_scores"),
    ("select host", r"select_host"),
    ("Reserve and assume", r"run_reserve_plugins_reserve|assume_pod|\bassume\b"),
    ("Permit", r"run_permit_plugins"),
    ("binding cycle (PreBind, Bind, PostBind)", r"binding_cycle|run_pre_bind|run_bind_plugins|run_post_bind"),
    ("informer echo (event handlers)", r"scheduler/eventhandlers\.py"),
    ("cache and snapshot", r"backend/cache\.py|framework/snapshot\.py|node_rows\.py|node_columns\.py"),
)
#: Charged only when no frame of the stack matches PARTS (the loop is an ancestor of every part).
REST: tuple[tuple[str, str], ...] = (
    ("scheduling cycle, rest", r"schedule_one\.py|runtime\.py"),
    ("simulator (clock, store, pod creation)", r"kubesched/sim/|bench/sim\.py"),
)

_CHILD = r"""
import inspect, json, sys
from kubesched.bench import sim as bench_sim
from kubesched.bench.harness import run_bench
lines = inspect.getsource(bench_sim.run_sim).splitlines()
first = inspect.getsourcelines(bench_sim.run_sim)[1]
start = next(first + i for i, l in enumerate(lines) if "cpu0 = time.process_time()" in l)
args = json.loads(sys.argv[1])
r = run_bench(args.pop("workload"), **args)
with open(sys.argv[2], "w") as f:
    json.dump({"start_line": start, "cpu_seconds": r.cpu_seconds, "bound": r.bound,
               "pods_per_second": r.pods_per_second}, f)
"""

_RUN_SIM = re.compile(r"run_sim \((?:[^:)]*):(\d+)\)")


def _py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        sys.exit("profile-parts: py-spy not found (pip install py-spy)")
    return found


def _measured(stack: str, start_line: int) -> bool:
    lines = [int(m) for m in _RUN_SIM.findall(stack)]
    return bool(lines) and lines[0] >= start_line


def charge(raw: str, start_line: int) -> Counter[str]:
    """Samples of the measured phase per part, from py-spy's raw (collapsed) output."""
    outer = [(name, re.compile(rx)) for name, rx in OUTER]
    tiers = [[(name, re.compile(rx)) for name, rx in tier] for tier in (PARTS, REST)]
    parts: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit() or not _measured(stack, start_line):
            continue
        frames = stack.split(";")[::-1]
        part = next((name for name, rx in outer if any(rx.search(f) for f in frames)), "") or next(
            (name for tier in tiers for frame in frames for name, rx in tier if rx.search(frame)),
            "other",
        )
        parts[part] += int(count)
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="SchedulingBasic")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--feature-gates", action="append", default=[], help="as kubesched bench's")
    ap.add_argument("--rate", type=int, default=500, help="py-spy samples a second")
    ap.add_argument("--raw", type=Path, help="keep py-spy's raw output here")
    ap.add_argument("-o", "--output", choices=("table", "json"), default="table")
    a = ap.parse_args()
    bench_args: dict[str, object] = {"workload": a.workload, "nodes": a.nodes, "init_pods": a.init_pods, "pods": a.pods}
    if a.feature_gates:
        bench_args["feature_gates"] = a.feature_gates
    with tempfile.TemporaryDirectory() as tmp:
        raw_path = a.raw or Path(tmp) / "raw.txt"
        result_path = Path(tmp) / "result.json"
        subprocess.run(
            [_py_spy(), "record", "-r", str(a.rate), "-f", "raw", "-o", str(raw_path), "--",
             sys.executable, "-c", _CHILD, json.dumps(bench_args), str(result_path)],
            check=True, capture_output=True, text=True, env=os.environ,
        )
        result = json.loads(result_path.read_text())
        parts = charge(raw_path.read_text(), result["start_line"])
    total = sum(parts.values()) or 1
    per_pod_us = result["cpu_seconds"] / max(result["bound"], 1) * 1e6
    rows = [(name, n / total * per_pod_us, n / total) for name, n in parts.most_common()]
    if a.output == "json":
        print(json.dumps({**result, "us_per_pod": per_pod_us, "samples": total,
                          "parts": {name: round(us, 1) for name, us, _ in rows}}, indent=2))
        return
    print(f"{a.workload}, {a.nodes} nodes, {a.init_pods} init pods, {a.pods} pods: "
          f"{per_pod_us:.0f} µs CPU a pod, {total} samples\n")
    print("| part | µs a pod | share |\n|---|---:|---:|")
    for name, us, share in rows:
        print(f"| {name} | {us:.0f} | {share:.0%} |")


if __name__ == "__main__":
    main()
