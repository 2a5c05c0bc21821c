"""NodeResourcesFit scoring: LeastAllocated, MostAllocated, RequestedToCapacityRatio.

Ported from pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go
(TestLeastAllocatedScoringStrategy), most_allocated_test.go (TestMostAllocatedScoringStrategy),
requested_to_capacity_ratio_test.go (TestRequestedToCapacityRatioScoringStrategy,
TestBrokenLinearFunction, TestResourceBinPackingSingleExtended,
TestResourceBinPackingMultipleExtended) and fit_test.go (TestFitScore, without the DRA cases);
tables in data/node_resources_fit_score.yaml. A property test proves ``score_batch`` equals the
per-node ``score`` on random clusters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import FakeHandle, make_node, make_pod, make_resource_node, make_snapshot
from random_cluster import clusters, resource_specs, shapes

from kubesched.config.errors import ConfigError
from kubesched.config.plugin_args import (
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    FunctionShapePoint,
    build_broken_linear_function,
    build_broken_linear_function_batch,
)

DATA = yaml.safe_load((Path(__file__).parent / "data" / "node_resources_fit_score.yaml").read_text())


def _resources(spec: Any) -> list[ResourceSpec]:
    items = DATA["resources"][spec] if isinstance(spec, str) else spec
    return [ResourceSpec(r["name"], r["weight"]) for r in items]


def _args(strategy: str, resources: list[ResourceSpec], shape: list[list[int]] | None = None) -> NodeResourcesFitArgs:
    rtcr = None
    if shape is not None:
        rtcr = RequestedToCapacityRatioParam([UtilizationShapePoint(u, s) for u, s in shape])
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy, resources, rtcr))


def _node(spec: list[Any]) -> dict[str, Any]:
    if len(spec) == 2:
        return make_node(spec[0], spec[1])
    return make_resource_node(spec[0], spec[1], spec[2], spec[3])


def _pod(spec: dict[str, Any], node: str = "") -> dict[str, Any]:
    return make_pod(node=node, requests=spec.get("reqs", []), sidecar_requests=spec.get("sidecars", []))


def _snapshot(case: dict[str, Any]) -> Snapshot:
    pods = [_pod(p, p["node"]) for p in case.get("existing", [])]
    return make_snapshot([_node(n) for n in case["nodes"]], pods)


def _run(case: dict[str, Any], strategy: str) -> None:
    resources = _resources(case["resources"])
    if "want_errs" in case:
        with pytest.raises(ConfigError) as exc:
            Fit(_args(strategy, resources, case.get("shape")), None)
        assert [e.path for e in exc.value.errors] == case["want_errs"]
        return
    snap = _snapshot(case)
    pl = Fit(_args(strategy, resources, case.get("shape")), FakeHandle(snap))
    pod = PodInfo(_pod(case["pod"]))
    state = CycleState()
    if case.get("run_pre_score", True):
        assert pl.pre_score(state, pod, snap.list()) is None
    got = {}
    for ni in snap.list():
        score, status = pl.score(state, pod, ni)
        if "want_code" in case:
            assert status is not None and status.code.upstream_name == case["want_code"]
        else:
            assert status is None
        got[ni.name] = score
    assert got == case["expected"]
    if "want_code" not in case:
        batch = pl.score_batch(state, pod, snap, np.arange(snap.num_nodes()))
        assert batch.tolist() == list(case["expected"].values())


@pytest.mark.parametrize("case", DATA["least_allocated"], ids=lambda c: c["name"])
def test_least_allocated(case: dict[str, Any]) -> None:
    _run(case, "LeastAllocated")


@pytest.mark.parametrize("case", DATA["most_allocated"], ids=lambda c: c["name"])
def test_most_allocated(case: dict[str, Any]) -> None:
    _run(case, "MostAllocated")


@pytest.mark.parametrize("case", DATA["requested_to_capacity_ratio"], ids=lambda c: c["name"])
def test_requested_to_capacity_ratio(case: dict[str, Any]) -> None:
    _run(case, "RequestedToCapacityRatio")


@pytest.mark.parametrize("case", DATA["fit_score"], ids=lambda c: c["name"])
def test_fit_score(case: dict[str, Any]) -> None:
    full = {**DATA["fit_score_defaults"], "resources": "default", **case}
    _run(full, case["type"])


@pytest.mark.parametrize("case", DATA["broken_linear"], ids=lambda c: str(c["points"]))
def test_broken_linear_function(case: dict[str, Any]) -> None:
    points = [FunctionShapePoint(u, s) for u, s in case["points"]]
    f = build_broken_linear_function(points)
    fb = build_broken_linear_function_batch(points)
    ps = np.array([p for p, _ in case["assertions"]], dtype=np.int64)
    assert [f(int(p)) for p in ps] == [e for _, e in case["assertions"]]
    assert fb(ps).tolist() == [e for _, e in case["assertions"]]


def test_default_args_are_least_allocated_on_cpu_and_memory() -> None:
    snap = make_snapshot([make_node("n", {"cpu": "4", "memory": "8Gi"})])
    pl = Fit(None, FakeHandle(snap))
    pod = PodInfo(make_pod(requests=[{"cpu": "1", "memory": "2Gi"}]))
    # (3/4 cpu free -> 75, 6/8 memory free -> 75)
    assert pl.score(CycleState(), pod, snap.list()[0]) == (75, None)


@settings(max_examples=150, deadline=None)
@given(
    clusters(),
    resource_specs(),
    st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
    shapes(),
)
def test_score_batch_equals_score(
    cluster: dict[str, Any], resources: list[dict[str, Any]], strategy: str, shape: list[tuple[int, int]]
) -> None:
    nodes = [make_node(name, cap) for name, cap in cluster["nodes"]]
    pods = [make_pod(node=node, requests=reqs) for node, reqs in cluster["pods"]]
    snap = make_snapshot(nodes, pods)
    args = _args(
        strategy, _resources(resources), [list(p) for p in shape] if strategy == "RequestedToCapacityRatio" else None
    )
    pl = Fit(args, FakeHandle(snap))
    pod = PodInfo(make_pod(requests=cluster["pod"]))
    state = CycleState()
    pl.pre_score(state, pod, snap.list())
    per_node = [pl.score(state, pod, ni)[0] for ni in snap.list()]
    assert pl.score_batch(state, pod, snap, np.arange(snap.num_nodes())).tolist() == per_node
    assert all(0 <= s <= 100 for s in per_node)
