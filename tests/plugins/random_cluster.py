"""Hypothesis strategies for random clusters: nodes with random allocatable, pods with random
requests (some without any, so the non-zero defaults matter), for batch-vs-per-node properties."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

GPU = "example.com/gpu"
RESOURCE_NAMES = ["cpu", "memory", "ephemeral-storage", GPU]


def _quantities(draw: st.DrawFn, *, allow_zero: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    if draw(st.booleans()) or not allow_zero:
        out["cpu"] = f"{draw(st.integers(0 if allow_zero else 1, 64_000))}m"
    if draw(st.booleans()) or not allow_zero:
        out["memory"] = str(draw(st.integers(0 if allow_zero else 1, 2**36)))
    if draw(st.booleans()):
        out["ephemeral-storage"] = str(draw(st.integers(0, 2**37)))
    if draw(st.booleans()):
        out[GPU] = str(draw(st.integers(0, 8)))
    return out


@st.composite
def pod_specs(draw: st.DrawFn) -> list[dict[str, str] | None]:
    """Containers' requests: None is a container without any request."""
    n = draw(st.integers(0, 3))
    return [draw(st.one_of(st.none(), _req())) for _ in range(n)]


def _req() -> st.SearchStrategy[dict[str, str]]:
    return st.composite(lambda draw: _quantities(draw, allow_zero=True))()


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 8))
    nodes = []
    pods = []
    for i in range(n):
        cap = _quantities(draw, allow_zero=True) if draw(st.integers(0, 9)) else {}
        cap["pods"] = "110"
        nodes.append((f"n{i}", cap))
        for _ in range(draw(st.integers(0, 3))):
            pods.append((f"n{i}", draw(pod_specs())))
    return {"nodes": nodes, "pods": pods, "pod": draw(pod_specs())}


@st.composite
def resource_specs(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(RESOURCE_NAMES), min_size=1, max_size=4, unique=True))
    return [{"name": n, "weight": draw(st.integers(1, 100))} for n in names]


@st.composite
def shapes(draw: st.DrawFn) -> list[tuple[int, int]]:
    utils = sorted(draw(st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True)))
    return [(u, draw(st.integers(0, 10))) for u in utils]
