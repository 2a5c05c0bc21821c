"""TaintToleration: Filter, PreScore/Score/NormalizeScore and queueing hints.

Ported from pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
(TestTaintTolerationScore, TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange,
Test_isSchedulableAfterPodChange); the tables are in data/taint_toleration.yaml. The Filter
reason is v1.35's ``node(s) had untolerated taint(s)`` (kubernetes/kubernetes#134740).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from plugin_builders import FakeHandle, make_node, make_pod, make_snapshot, node_info

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code
from kubesched.framework.types import NodeScore, PodInfo
from kubesched.plugins.helper.normalize_score import (
    default_normalize_score,
    default_normalize_score_batch,
)
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.plugins.tainttoleration.taint_toleration import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)

DATA = yaml.safe_load((Path(__file__).parent / "data" / "taint_toleration.yaml").read_text())


def _pod(tolerations: list[dict[str, Any]]) -> PodInfo:
    return PodInfo(make_pod("pod1", tolerations=tolerations))


@pytest.mark.parametrize("case", DATA["score"], ids=lambda c: c["name"])
def test_score(case: dict[str, Any]) -> None:
    nodes = [make_node(name, taints=taints) for name, taints in case["nodes"].items()]
    snap = make_snapshot(nodes)
    pl = TaintToleration(None, FakeHandle(snap))
    pod = _pod(case["tolerations"])
    state = CycleState()
    assert pl.pre_score(state, pod, snap.list()) is None
    scores = []
    for ni in snap.list():
        value, status = pl.score(state, pod, ni)
        assert status is None
        scores.append(NodeScore(ni.name, value))
    assert pl.normalize_score(state, pod, scores) is None
    assert {s.name: s.score for s in scores} == case["expected"]


@pytest.mark.parametrize("case", DATA["filter"], ids=lambda c: c["name"])
def test_filter(case: dict[str, Any]) -> None:
    pl = TaintToleration()
    status = pl.filter(CycleState(), _pod(case["tolerations"]), node_info(make_node("nodeA", taints=case["taints"])))
    if "want" not in case:
        assert status is None
    else:
        assert status is not None
        assert (status.code.upstream_name, status.message()) == tuple(case["want"])


def test_filter_checks_no_execute_taints() -> None:
    status = TaintToleration().filter(
        CycleState(), _pod([]), node_info(make_node("n", taints=[{"key": "k", "effect": "NoExecute"}]))
    )
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_score_without_pre_score_is_an_error() -> None:
    _, status = TaintToleration().score(CycleState(), _pod([]), node_info(make_node("n")))
    assert status is not None and status.code == Code.ERROR


@pytest.mark.parametrize("case", DATA["node_change_hints"], ids=lambda c: c["name"])
def test_node_change_hint(case: dict[str, Any]) -> None:
    pod = make_pod("pod1", tolerations=case["tolerations"])
    old = make_node("nodeA", taints=case["old"]) if "old" in case else None
    new = make_node("nodeA", taints=case["new"])
    assert is_schedulable_after_node_change(pod, old, new) == QueueingHint[case["want"]]


@pytest.mark.parametrize(("old", "new"), [(None, "not-a-node"), ("not-a-node", make_node("nodeA"))])
def test_node_change_hint_wrong_objects_raise(old: Any, new: Any) -> None:
    # Upstream returns (Queue, err); our queue treats an exception from a hint as Queue.
    with pytest.raises(TypeError):
        is_schedulable_after_node_change(make_pod("p"), old, new)


@pytest.mark.parametrize("case", DATA["pod_change_hints"], ids=lambda c: c["name"])
def test_pod_change_hint(case: dict[str, Any]) -> None:
    assert is_schedulable_after_pod_toleration_change(case["pod"], case["old"], case["new"]) == QueueingHint[
        case["want"]
    ]


@pytest.mark.parametrize(("old", "new"), [(None, "not-a-pod"), ("not-a-pod", {"metadata": {}})])
def test_pod_change_hint_wrong_objects_raise(old: Any, new: Any) -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_pod_toleration_change({"metadata": {}}, old, new)


# Ported from pkg/scheduler/framework/plugins/helper/normalize_score_test.go (TestDefaultNormalizeScore).
NORMALIZE_CASES = [
    (False, [1, 2, 3, 4], [25, 50, 75, 100]),
    (True, [1, 2, 3, 4], [75, 50, 25, 0]),
    (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
    (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),
    (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
    (True, [0, 1, 1, 1], [100, 0, 0, 0]),
    (False, [0, 0, 0, 0], [0, 0, 0, 0]),
    (True, [0, 0, 0, 0], [100, 100, 100, 100]),
]


@pytest.mark.parametrize(("reverse", "scores", "expected"), NORMALIZE_CASES)
def test_default_normalize_score(reverse: bool, scores: list[int], expected: list[int]) -> None:
    lst = [NodeScore(str(i), s) for i, s in enumerate(scores)]
    default_normalize_score(100, reverse, lst)
    assert [s.score for s in lst] == expected
    batch = default_normalize_score_batch(np.array(scores, dtype=np.int64), reverse)
    assert batch.tolist() == expected


@given(st.lists(st.integers(0, 10**6), max_size=30), st.booleans())
def test_normalize_batch_equals_per_node(scores: list[int], reverse: bool) -> None:
    lst = [NodeScore(str(i), s) for i, s in enumerate(scores)]
    default_normalize_score(100, reverse, lst)
    batch = default_normalize_score_batch(np.array(scores, dtype=np.int64), reverse)
    assert batch.tolist() == [s.score for s in lst]
