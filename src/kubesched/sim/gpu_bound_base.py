"""What the GPU allocation bounds share (:mod:`kubesched.sim.gpu_bound`,
:mod:`kubesched.sim.gpu_card_bound`): node types, which shape runs on which, the error, and keeping
HiGHS's chatter off stdout."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.plugins.gpu.types import NodeSpec, PodShape

__all__ = ["BoundError", "NodeType", "dual_bound", "fits", "node_types", "quiet_stdout"]


class BoundError(RuntimeError):
    """The solver is missing or failed."""


@dataclass(frozen=True)
class NodeType:
    """Nodes alike for the bound: same CPU, memory, GPUs, model and pod capacity."""

    cpu: int
    memory: int
    gpus: int
    model: str
    max_pods: int


def node_types(nodes: Sequence[NodeSpec]) -> list[tuple[NodeType, int]]:
    counts = Counter(NodeType(n.cpu, n.memory, n.gpu_count, n.model, n.max_pods) for n in nodes)
    return sorted(counts.items(), key=lambda kv: (kv[0].model, kv[0].gpus, kv[0].cpu, kv[0].memory))


def fits(shape: PodShape, t: NodeType) -> bool:
    if shape.cpu > t.cpu or shape.memory > t.memory:
        return False
    if shape.gpu_milli > 0:
        if shape.gpu_count > t.gpus or t.gpus == 0:
            return False
        if shape.models and t.model not in shape.models:
            return False
    return True


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """HiGHS's MIP solver writes stray lines to file descriptor 1 even with ``disp`` off, which would
    corrupt ``-o json``: point the descriptor at /dev/null while it runs."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 at all
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def dual_bound(a: Any, c: Any, b: Any, most: Any, marginals: Any) -> float:
    """Weak duality, so the bound does not lean on the solver's tolerances: for any y ≥ 0, the LP's
    maximum of −c·x over A x ≤ b, 0 ≤ x ≤ most is at most b·y + Σ_j most_j · max(0, −c_j − (Aᵀy)_j).
    y is HiGHS's dual solution clipped at 0."""
    y = np.maximum(-np.asarray(marginals, dtype=float), 0.0)
    slack = np.maximum(-c - a.T @ y, 0.0)
    return float(b @ y + most @ slack)
