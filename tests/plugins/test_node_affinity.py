"""NodeAffinity: PreFilter (node-name narrowing), Filter, PreScore/Score/NormalizeScore, hints.

Ported from pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (TestNodeAffinity,
TestNodeAffinityPriority, Test_isSchedulableAfterNodeChange); tables in data/node_affinity.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_builders import FakeHandle, make_node, make_pod, make_snapshot, node_info

from kubesched.config.plugin_args import NodeAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.framework.types import NodeScore, PodInfo
from kubesched.plugins.nodeaffinity import NodeAffinity

DATA = yaml.safe_load((Path(__file__).parent / "data" / "node_affinity.yaml").read_text())
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def _filter_pod(case: dict[str, Any]) -> PodInfo:
    spec = dict(case.get("pod") or {})
    if "req" in case:
        spec["affinity"] = {"nodeAffinity": {REQ: case["req"]}}
    return PodInfo(make_pod("p", **spec))


@pytest.mark.parametrize("case", DATA["filter"], ids=lambda c: c["name"])
def test_filter(case: dict[str, Any]) -> None:
    pl = NodeAffinity(NodeAffinityArgs(case.get("added_affinity")), None)
    pod = _filter_pod(case)
    ni = node_info(make_node(case.get("node_name", ""), labels=case.get("labels")))
    state = CycleState()
    if case.get("run_pre_filter", True):
        result, status = pl.pre_filter(state, pod, [ni])
        want_pf = case.get("want_pre_filter")
        if want_pf is None:
            assert status is None
        else:
            assert status is not None
            assert (status.code.upstream_name, status.message()) == tuple(want_pf)
        want_names = case.get("want_pre_filter_result")
        if want_names is None:
            assert result is None
        else:
            assert result is not None and result.node_names == set(want_names)
    status = pl.filter(state, pod, ni)
    if "want" not in case:
        assert status is None
    else:
        assert status is not None
        assert (status.code.upstream_name, status.message()) == tuple(case["want"])


def _score_pod(case: dict[str, Any]) -> PodInfo:
    if "affinity" not in case:
        return PodInfo(make_pod("p"))
    return PodInfo(make_pod("p", affinity={"nodeAffinity": {PREF: DATA["affinities"][case["affinity"]]}}))


@pytest.mark.parametrize("case", DATA["score"], ids=lambda c: c["name"])
def test_score(case: dict[str, Any]) -> None:
    nodes = [make_node(n, labels=DATA["labels"][lbl]) for n, lbl in case["nodes"]]
    snap = make_snapshot(nodes)
    added = case.get("added_preferred_terms")
    if "added_preferred" in case:
        added = DATA["affinities"][case["added_preferred"]]
    pl = NodeAffinity(NodeAffinityArgs({PREF: added} if added else None), FakeHandle(snap))
    pod = _score_pod(case)
    state = CycleState()
    if case.get("run_pre_score"):
        status = pl.pre_score(state, pod, snap.list())
        want = case.get("want_pre_score")
        if want is None:
            assert status is None
        else:
            assert status is not None
            assert (status.code.upstream_name, status.message()) == tuple(want)
            return
    scores = []
    for ni in snap.list():
        value, status = pl.score(state, pod, ni)
        assert status is None
        scores.append(NodeScore(ni.name, value))
    assert pl.normalize_score(state, pod, scores) is None
    assert {s.name: s.score for s in scores} == case["expected"]


ENFORCED = {REQ: {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}}


@pytest.mark.parametrize("case", DATA["hints"], ids=lambda c: c["name"])
def test_node_change_hint(case: dict[str, Any]) -> None:
    pl = NodeAffinity(NodeAffinityArgs(ENFORCED if case.get("enforced") else None), None)
    pod = make_pod("p", affinity={"nodeAffinity": ENFORCED})
    old = make_node("n", labels=case["old"]) if "old" in case else None
    assert pl.is_schedulable_after_node_change(pod, old, make_node("n", labels=case["new"])) == QueueingHint[
        case["want"]
    ]


@pytest.mark.parametrize(("old", "new"), [(None, "not-a-node"), ("not-a-node", make_node("n"))])
def test_node_change_hint_wrong_objects_raise(old: Any, new: Any) -> None:
    with pytest.raises(TypeError):
        NodeAffinity().is_schedulable_after_node_change(make_pod("p"), old, new)


def test_events_to_register() -> None:
    (ev,) = NodeAffinity().events_to_register()
    assert ev.event.resource == EventResource.NODE
    assert ev.event.action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL


def test_invalid_added_affinity_fails_construction() -> None:
    bad = {REQ: {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "Bogus"}]}]}}
    with pytest.raises(ValueError):
        NodeAffinity(NodeAffinityArgs(bad), None)


def test_pre_filter_empty_node_selector_map_does_not_skip() -> None:
    # Upstream skips only when spec.nodeSelector is nil; an empty map still runs Filter (and matches).
    pl = NodeAffinity()
    _, status = pl.pre_filter(CycleState(), PodInfo(make_pod("p", nodeSelector={})), [])
    assert status is None


def test_score_error_without_pre_score_for_broken_affinity() -> None:
    pod = PodInfo(make_pod("p", affinity={"nodeAffinity": {PREF: DATA["affinities"]["broken"]}}))
    _, status = NodeAffinity().score(CycleState(), pod, node_info(make_node("n")))
    assert status is not None and status.code == Code.ERROR
