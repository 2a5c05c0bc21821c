"""The scores NodeResourcesFit and NodeResourcesBalancedAllocation keep per row across cycles
(framework/row_scores.py) stay the per-node Score's, and NodeResourcesFit's Filter verdicts the
per-node Filter's, cycle after cycle, while pods are assumed,
confirmed and deleted between cycles (a few rows rescored at once, many marked invalid), nodes are
added or replaced (a new table, rows moved) or change allocatable, and pods of a few shapes take turns (one remembered
entry each, more shapes than entries evicting the oldest), over random subsets of rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import make_node, make_pod
from random_cluster import pod_specs

from kubesched import testing
from kubesched.backend.cache import Cache
from kubesched.config.plugin_args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.row_scores import EAGER_ROWS, MAX_KEYS
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import BalancedAllocation, Fit

RESOURCES = [ResourceSpec("cpu", 1), ResourceSpec("memory", 2)]


def _capacity(draw: st.DrawFn) -> dict[str, str]:
    return {"cpu": f"{draw(st.integers(1, 8000))}m", "memory": str(draw(st.integers(1, 2**34))), "pods": "110"}


def _plugins(release: Release) -> list[Any]:
    handle = testing.FakeHandle(None, release=release)
    shape = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])
    return [
        Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", RESOURCES)), handle),
        Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated", RESOURCES)), handle),
        Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
            "RequestedToCapacityRatio", RESOURCES, requested_to_capacity_ratio=shape)), handle),
        BalancedAllocation(NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]),
                           handle),
    ]


def _agree(plugins: list[Any], snap: Snapshot, pod: PodInfo, rows: np.ndarray) -> None:
    for pl in plugins:
        state = CycleState()
        if isinstance(pl, Fit):  # the Filter verdicts it keeps per row too
            pl.pre_filter(state, pod, snap.list())
            fits = [pl.filter(state, pod, snap.node_infos[i]) is None for i in rows.tolist()]
            assert pl.filter_batch(state, pod, snap, rows).tolist() == fits
            assert pl.filter_batch(state, pod, snap, snap.table.all).tolist() == [
                pl.filter(state, pod, ni) is None for ni in snap.node_infos]
        if pl.pre_score(state, pod, snap.list()) is not None:  # Skip: the pod requests nothing
            continue
        want = [pl.score(state, pod, snap.node_infos[i])[0] for i in rows.tolist()]
        assert pl.score_batch(state, pod, snap, rows).tolist() == want, pl.name


@pytest.mark.parametrize("release", [V1_35, V1_37], ids=str)
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_scores_kept_across_cycles_equal_score(release: Release, data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 3 * EAGER_ROWS))
    cache = Cache()
    nodes = [make_node(f"n{i}", data.draw(st.composite(_capacity)())) for i in range(n)]
    for node in nodes:
        cache.add_node(node)
    snap = Snapshot()
    cache.update_snapshot(snap)
    # A few shapes, reused: more than an entry each only sometimes.
    shapes = data.draw(st.lists(pod_specs(), min_size=1, max_size=MAX_KEYS + 2))
    plugins = _plugins(release)
    placed: list[PodInfo] = []
    for cycle in range(data.draw(st.integers(2, 6))):
        pod = PodInfo(make_pod(f"in{cycle}", requests=data.draw(st.sampled_from(shapes))))
        count = data.draw(st.integers(0, len(snap.node_infos)))
        rows = np.array(data.draw(st.permutations(range(len(snap.node_infos))))[:count], dtype=np.intp)
        _agree(plugins, snap, pod, rows)
        # Between cycles: pods come and go (sometimes on many nodes at once), a node is added or
        # changes its allocatable.
        for j in range(data.draw(st.integers(0, 2 * EAGER_ROWS))):
            action = data.draw(st.sampled_from(["assume", "add", "delete", "node"]))
            name = f"n{data.draw(st.integers(0, len(nodes) - 1))}"
            if action in ("assume", "add"):
                pi = PodInfo(make_pod(f"x{cycle}-{j}", node=name, requests=data.draw(st.sampled_from(shapes))))
                if action == "assume":
                    cache.assume_pod(pi, name)
                else:
                    cache.add_pod(pi)
                placed.append(pi)
            elif action == "delete" and placed:
                cache.remove_pod(placed.pop(data.draw(st.integers(0, len(placed) - 1))))
            elif action == "node":
                change = data.draw(st.sampled_from(["add", "replace", "update"]))
                if change != "update":
                    if change == "replace":  # a new table of the same size, rows moved
                        cache.remove_node(name)
                    nodes.append(make_node(f"n{len(nodes)}", data.draw(st.composite(_capacity)())))
                    cache.add_node(nodes[-1])
                else:
                    cache.update_node(make_node(name, data.draw(st.composite(_capacity)())))
        cache.update_snapshot(snap)
