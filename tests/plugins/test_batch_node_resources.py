"""The dense batch Score of NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation —
taken when every scored resource is allocatable on every candidate node, the usual case — agrees
with the per-node Score (the reference; upstream tables in test_node_resources_fit_score.py and
test_balanced_allocation.py), including over-committed nodes, extended resources, several
resources with unequal weights, and nodes where some resource is missing (the general form then);
BalancedAllocation in v1.35 and in v1.37 (the score of the change in balance)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import FakeHandle, make_node, make_pod, make_snapshot
from random_cluster import GPU, pod_specs

from kubesched import testing
from kubesched.config.plugin_args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import BalancedAllocation, Fit

_ALL = ["cpu", "memory", "ephemeral-storage", GPU]


@st.composite
def dense_clusters(draw: st.DrawFn) -> dict[str, Any]:
    """Every node has every resource (sometimes one node lacks one, to cross the fallback)."""
    n = draw(st.integers(1, 8))
    nodes = []
    for i in range(n):
        cap = {
            "cpu": f"{draw(st.integers(1, 64_000))}m",
            "memory": str(draw(st.integers(1, 2**36))),
            "ephemeral-storage": str(draw(st.integers(1, 2**37))),
            GPU: str(draw(st.integers(1, 8))),
            "pods": "110",
        }
        if draw(st.integers(0, 9)) == 0:
            del cap[draw(st.sampled_from(_ALL))]
        nodes.append((f"n{i}", cap))
    pods = [(f"n{draw(st.integers(0, n - 1))}", draw(pod_specs())) for _ in range(draw(st.integers(0, 12)))]
    return {"nodes": nodes, "pods": pods, "pod": draw(pod_specs())}


_resources = st.lists(st.sampled_from(_ALL), min_size=1, max_size=4, unique=True)


def _setup(cluster: dict[str, Any]) -> tuple[Any, PodInfo]:
    snap = make_snapshot(
        [make_node(name, cap) for name, cap in cluster["nodes"]],
        [make_pod(node=node, requests=reqs) for node, reqs in cluster["pods"]],
    )
    return snap, PodInfo(make_pod(requests=cluster["pod"]))


@settings(max_examples=150, deadline=None)
@given(dense_clusters(), _resources, st.lists(st.integers(1, 100), min_size=4, max_size=4), st.data())
def test_least_allocated_dense_equals_score(
    cluster: dict[str, Any], names: list[str], weights: list[int], data: st.DataObject
) -> None:
    snap, pod = _setup(cluster)
    specs = [ResourceSpec(n, w) for n, w in zip(names, weights, strict=False)]
    pl = Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", specs)), FakeHandle(snap))
    state = CycleState()
    pl.pre_score(state, pod, snap.list())
    rows = np.array(data.draw(st.permutations(range(snap.num_nodes()))), dtype=np.intp)
    want = [pl.score(state, pod, snap.node_infos[i])[0] for i in rows.tolist()]
    assert pl.score_batch(state, pod, snap, rows).tolist() == want


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
@settings(max_examples=150, deadline=None)
@given(dense_clusters(), _resources, st.data())
def test_balanced_allocation_dense_equals_score(
    release: Release, cluster: dict[str, Any], names: list[str], data: st.DataObject
) -> None:
    """Also v1.37's score of the change in balance (both balances from the dense columns)."""
    snap, pod = _setup(cluster)
    args = NodeResourcesBalancedAllocationArgs([ResourceSpec(n, 1) for n in names])
    pl = BalancedAllocation(args, testing.FakeHandle(snap, release=release))
    state = CycleState()
    if pl.pre_score(state, pod, snap.list()) is not None:  # Skip: the pod requests nothing
        return
    rows = np.array(data.draw(st.permutations(range(snap.num_nodes()))), dtype=np.intp)
    want = [pl.score(state, pod, snap.node_infos[i])[0] for i in rows.tolist()]
    assert pl.score_batch(state, pod, snap, rows).tolist() == want
