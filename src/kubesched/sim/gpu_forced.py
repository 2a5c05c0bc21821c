"""Pods every replay must place: the replay refuses a pod only when it fits on no node.

Before pod j arrives, any policy's cluster holds some feasible placement of a subset of pods 0..j-1
(CPU-only pods included: they take CPU, memory and pod slots). A node on which pod j could run
when empty is *blocked* for it only if at least one of these holds on the node:

- its used CPU exceeds C − cpu_j (so ≥ C − cpu_j + 1 milli of the pods before j sit there), or its
  used memory exceeds M − mem_j, or it holds max_pods pods;
- (a shared pod of m milli) every card has more than 1000 − m used, so each of its G cards holds at
  least one GPU pod; (a pod of g whole GPUs) fewer than g cards are untouched, so at least G − g + 1
  cards hold a GPU pod. A pod of n GPUs sits on n cards, so the pods before j touch at most
  Σ gpu_count cards in all.

Each resource is a budget the pods before j share (their total CPU, memory, count and GPU count).
The most eligible nodes a budget can block is found greedily, cheapest nodes first. If the four
maxima sum to fewer than the eligible nodes, some node is free for pod j in every reachable state:
pod j is placed by every policy, and stays (no departures). So at any later event, the placement
holds every forced pod, and a bound may require them (:mod:`kubesched.sim.gpu_card_bound`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.plugins.gpu.types import MILLI, NodeSpec, PodShape
from kubesched.sim.gpu_bound_base import fits, node_types

__all__ = ["forced_pods"]


def _blockable(costs: list[tuple[int, int]], budget: int) -> int:
    """The most nodes (cost, count pairs) a budget can pay for, cheapest first."""
    blocked = 0
    for cost, count in sorted(costs):
        if cost <= 0:
            blocked += count
            continue
        n = min(count, budget // cost)
        blocked += n
        budget -= n * cost
        if n < count:
            break
    return blocked


def forced_pods(pods: Sequence[PodShape], nodes: Sequence[NodeSpec]) -> list[bool]:
    """For each pod of the sequence (arrival order): whether every replay must place it."""
    types = node_types(nodes)
    out: list[bool] = []
    cpu = mem = cards = 0
    for count, pod in enumerate(pods):
        forced = False
        if pod.total_gpu_milli > 0:
            eligible = [(t, n) for t, n in types if fits(pod, t)]
            total = sum(n for _, n in eligible)
            if total:
                if pod.gpu_milli == MILLI:
                    card_cost = [(t.gpus - pod.gpu_count + 1, n) for t, n in eligible]
                else:
                    card_cost = [(t.gpus, n) for t, n in eligible]
                blocked = (
                    _blockable([(t.cpu - pod.cpu + 1, n) for t, n in eligible], cpu)
                    + _blockable([(t.memory - pod.memory + 1, n) for t, n in eligible], mem)
                    + _blockable([(t.max_pods, n) for t, n in eligible], count)
                    + _blockable(card_cost, cards)
                )
                forced = blocked < total
        out.append(forced)
        cpu += pod.cpu
        mem += pod.memory
        cards += pod.gpu_count if pod.gpu_milli > 0 else 0
    return out
