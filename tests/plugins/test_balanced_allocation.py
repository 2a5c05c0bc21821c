"""NodeResourcesBalancedAllocation PreScore (Skip for best-effort pods) and Score.

Ported from pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go
(TestNodeResourcesBalancedAllocation at v1.35, without the DRA extended-resource cases); the table
is in data/balanced_allocation.yaml. A property test proves ``score_batch`` equals ``score``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from plugin_builders import FakeHandle, make_node, make_pod, make_resource_node, make_snapshot
from random_cluster import clusters, resource_specs

from kubesched.config.errors import ConfigError
from kubesched.config.plugin_args import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import BalancedAllocation
from kubesched.plugins.noderesources.balanced_allocation import (
    balanced_resource_batch_scorer,
    balanced_resource_scorer,
)

DATA = yaml.safe_load((Path(__file__).parent / "data" / "balanced_allocation.yaml").read_text())


def _pod(spec: Any, *, placed: bool) -> dict[str, Any]:
    s = DATA["specs"][spec] if isinstance(spec, str) else spec
    return make_pod(node=s.get("node", "") if placed else "", requests=s["reqs"])


def _plugin(resources: list[dict[str, Any]], handle: Any = None) -> BalancedAllocation:
    args = NodeResourcesBalancedAllocationArgs([ResourceSpec(r["name"], r["weight"]) for r in resources])
    return BalancedAllocation(args, handle)


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_balanced_allocation(case: dict[str, Any]) -> None:
    nodes = [make_resource_node(*n) for n in case["nodes"]]
    snap = make_snapshot(nodes, [_pod(p, placed=True) for p in case.get("existing", [])])
    pl = _plugin(DATA["resources"][case["resources"]], FakeHandle(snap))
    pod = PodInfo(_pod(case["pod"], placed=False))
    state = CycleState()
    if case.get("run_pre_score", True):
        status = pl.pre_score(state, pod, snap.list())
        if "want_pre_score" in case:
            assert status is not None and status.code.upstream_name == case["want_pre_score"]
            return
        assert status is None
    got = {}
    for ni in snap.list():
        score, status = pl.score(state, pod, ni)
        assert status is None
        got[ni.name] = score
    assert got == case["expected"]
    batch = pl.score_batch(state, pod, snap, np.arange(snap.num_nodes()))
    assert batch.tolist() == list(case["expected"].values())


def test_weights_other_than_one_are_rejected() -> None:
    with pytest.raises(ConfigError):
        _plugin([{"name": "cpu", "weight": 2}])


def test_no_resources_is_an_error_status() -> None:
    pl = _plugin([])
    _, status = pl.score(
        CycleState(), PodInfo(make_pod(requests=[{"cpu": "1"}])), make_snapshot([make_node("n")]).list()[0]
    )
    assert status is not None and status.code == Code.ERROR


def test_three_resources_use_population_std() -> None:
    # Hand-computed: fractions 0.5, 0.25, 1.0 -> mean 7/12, std = sqrt(((1/12)^2+(1/3)^2+(5/12)^2)/3) ≈ 0.3118
    assert balanced_resource_scorer([2, 1, 8], [4, 4, 8]) == 68
    batch = balanced_resource_batch_scorer(np.array([[2], [1], [8]]), np.array([[4], [4], [8]]))
    assert batch.tolist() == [68]


@settings(max_examples=150, deadline=None)
@given(clusters(), resource_specs())
def test_score_batch_equals_score(cluster: dict[str, Any], resources: list[dict[str, Any]]) -> None:
    nodes = [make_node(name, cap) for name, cap in cluster["nodes"]]
    pods = [make_pod(node=node, requests=reqs) for node, reqs in cluster["pods"]]
    snap = make_snapshot(nodes, pods)
    pl = _plugin([{**r, "weight": 1} for r in resources], FakeHandle(snap))
    pod = PodInfo(make_pod(requests=cluster["pod"]))
    state = CycleState()
    pl.pre_score(state, pod, snap.list())
    per_node = [pl.score(state, pod, ni)[0] for ni in snap.list()]
    assert pl.score_batch(state, pod, snap, np.arange(snap.num_nodes())).tolist() == per_node
    assert all(0 <= s <= 100 for s in per_node)
