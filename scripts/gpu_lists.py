"""The issue 17 acceptance rule on every shared pod list: a variant's mean curve (seeds A..B) against
FGD's, the worst per-level difference over 1..130 % arrived (research harness).

    W=1 PYTHONPATH=src /work/venv/bin/python scripts/gpu_lists.py RatioMatch --seeds 42..51
"""

from __future__ import annotations

import sys

import numpy as np
from gpu_screen import DATA, alloc130

from kubesched.sim.alibaba import load_trace

LISTS = [
    "default",
    "cpu0",
    "cpu037",
    "cpu050",
    "cpu072",
    "cpu100",
    "cpu200",
    "cpu235",
    "cpu250",
    "cpu300",
    "gpuspec05",
    "gpuspec10",
    "gpuspec20",
    "gpuspec25",
    "gpuspec33",
]


def main(variant: str, seeds: str) -> None:
    lo, hi = (int(x) for x in seeds.split(".."))
    for name in LISTS:
        trace = load_trace(DATA + "openb_node_list_gpu_node.csv", DATA + f"openb_pod_list_{name}.csv")
        curves = {}
        for pol in ("FGD", variant):
            curves[pol] = np.nanmean([alloc130(trace, pol, s)[1] for s in range(lo, hi + 1)], axis=0)
        diff = np.round(curves[variant], 2) - np.round(curves["FGD"], 2)
        diff[:1] = np.nan
        worst = int(np.nanargmin(diff))
        print(
            f"| {name} | {curves['FGD'][130]:.2f} | {curves[variant][130]:.2f} | {diff[130]:+.2f} | "
            f"{diff[worst]:+.2f} at {worst} % |",
            flush=True,
        )


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0], args[2] if len(args) > 2 and args[1] == "--seeds" else "42..51")
