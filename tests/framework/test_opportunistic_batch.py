"""OpportunisticBatching's batch state, release by release.

Ported from pkg/scheduler/framework/runtime/batch_test.go: ``TestBatchBasic`` (v1.35.4, v1.36.3,
v1.37.2), ``TestBatchRescore`` and ``TestBatchRescoreChain`` (v1.37.2); the tables are in
data/opportunistic_batch.yaml. The flush reasons and attempt results counted on the way are
checked against the reasons upstream's code takes for each row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kubesched.config.releases import RELEASES, V1_35, V1_37, Release
from kubesched.framework.batch import OpportunisticBatch, SortedScoredNodes
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.testing import new_framework

DATA = yaml.safe_load((Path(__file__).parent / "data" / "opportunistic_batch.yaml").read_text())
SCORE = "ConfigurableScore"
_SEEN = "ConfigurableScore/preScoreSeenNodes"


class BatchTest:
    """Each node holds at most one pod whose uid starts with "b" (upstream's BatchTestPlugin)."""

    name = "BatchTest"

    def __init__(self, args: object = None, handle: object = None) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if pod.uid.startswith("b") and any(p.uid.startswith("b") for p in node_info.pods):
            return Status(Code.UNSCHEDULABLE, "unsched")
        return None


class ConfigurableFilter:
    name = "ConfigurableFilter"
    filter_error = False

    def __init__(self, args: object = None, handle: object = None) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return Status(Code.ERROR, "injected filter error") if self.filter_error else None


class _Seen(set[str]):
    def clone(self) -> _Seen:
        return _Seen(self)


class ConfigurableScore:
    """Scores every node ``score``; its normaliser checks it is only asked about nodes PreScore saw."""

    name = SCORE
    #: The raw score of every node (upstream's ``score`` field).
    value = 0
    pre_score_error = score_error = normalize_error = False

    def __init__(self, args: object = None, handle: object = None) -> None:
        pass

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if self.pre_score_error:
            return Status(Code.ERROR, "injected prescore error")
        state.write(_SEEN, _Seen(n.name for n in nodes))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self.score_error:
            return 0, Status(Code.ERROR, "injected score error")
        return self.value, None

    def score_extensions(self) -> ConfigurableScore:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        if self.normalize_error:
            return Status(Code.ERROR, "injected normalize error")
        seen = state.read(_SEEN)
        assert isinstance(seen, _Seen)
        for s in scores:
            if s.name not in seen:
                return Status(Code.ERROR, f"NormalizeScore called for node {s.name!r} which was not passed to PreScore")
        return None


def _pod(uid: str, nominated: str = "") -> PodInfo:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": uid, "namespace": "default", "uid": uid},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    if nominated:
        pod["status"] = {"nominatedNodeName": nominated}
    return PodInfo(pod)


def _node(name: str, *pods: PodInfo) -> NodeInfo:
    return NodeInfo({"metadata": {"name": name, "uid": name}}, pods)


def _sorted(names: Sequence[str], raw: dict[str, list[int]] | None = None) -> SortedScoredNodes:
    """Candidates in the given order (upstream's testSortedScoredNodes pops them in list order)."""
    n = len(names)
    total = np.arange(n, 0, -1, dtype=np.int64)
    return SortedScoredNodes(names, total, np.zeros(n, dtype=np.int64),
                             {k: np.array(v, dtype=np.int64) for k, v in (raw or {}).items()})


def _framework(release: Release, *, score: bool = False, filter_: bool = False) -> Any:
    plugins: list[Any] = [BatchTest]
    if filter_:
        plugins.append(ConfigurableFilter)
    if score:
        plugins.append(ConfigurableScore)
    return new_framework(plugins, release=release)


def _counts(tf: Any, family: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for metric in tf.scheduler.metrics.registry.collect():
        if metric.name == family:
            for s in metric.samples:
                if s.name.endswith("_total"):
                    out[s.labels.get("result") or s.labels.get("reason")] = s.value
    return out


def _basic_rows() -> list[Any]:
    rows = []
    for release in RELEASES:
        for row in DATA["basic"]:
            if str(release) in row.get("releases", [str(r) for r in RELEASES]):
                rows.append(pytest.param(release, row, id=f"{release}-{row['name']}"))
    return rows


@pytest.mark.parametrize(("release", "row"), _basic_rows())
def test_batch_basic(release: Release, row: dict[str, Any]) -> None:
    tf = _framework(release)
    batch = OpportunisticBatch(tf.framework, lambda: 0.0)
    first, second = row["first"], row["second"]
    pod = _pod(first["id"])
    nodes: dict[str, NodeInfo] = {}
    state = CycleState()
    assert batch.get_node_hint(state, pod, first["sig"], 1, nodes.get) == ""
    if first["scheduled"]:
        others = first["other_nodes"]
        batch.store_schedule_results(first["sig"], "", first["chosen"], None if others is None else _sorted(others), 1)
    cycle = 3 if row.get("skip_pod") else 2
    pod2 = _pod(second["id"], second.get("nominated_node_name", ""))
    # The node the first pod went to holds it now.
    nodes[first["chosen"]] = _node(first["chosen"], pod)
    hint = batch.get_node_hint(state, pod2, second["sig"], cycle, nodes.get)
    assert hint == row["expected_hint"]
    batch.store_schedule_results(second["sig"], hint, second["chosen"], None, cycle)
    want = row.get("expected_state")
    got = batch._state
    if want is None:
        assert got is None or len(got.sorted_nodes) == 0
    else:
        assert got is not None and got.signature == want["sig"]
        assert [got.sorted_nodes.pop() for _ in range(len(got.sorted_nodes))] == want["nodes"]


def test_flush_reasons_and_attempts_follow_upstreams_paths() -> None:
    """Hand-traced through batch.go (v1.35.4): which counters each step moves."""
    tf = _framework(V1_35)
    batch = OpportunisticBatch(tf.framework, lambda: 0.0)
    a1, a2 = _pod("a-1"), _pod("a-2")
    nodes = {"n3": _node("n3", a1)}
    state = CycleState()
    batch.get_node_hint(state, a1, "sig", 1, nodes.get)  # no state yet: no_hint, no flush
    batch.store_schedule_results("sig", "", "n3", _sorted(["n1"]), 1)
    batch.get_node_hint(state, a2, "sig", 2, nodes.get)  # n3 still fits a-2: node_not_full
    batch.store_schedule_results(None, "", "n1", None, 2, n_others=4)  # unsignable: pod_not_batchable
    assert _counts(tf, "scheduler_batch_attempts") == {"no_hint": 2}
    assert _counts(tf, "scheduler_batch_cache_flushed") == {"node_not_full": 1, "pod_not_batchable": 1}


def test_batch_expires_after_half_a_second_of_the_schedulers_clock() -> None:
    tf = _framework(V1_35)
    now = [100.0]
    batch = OpportunisticBatch(tf.framework, lambda: now[0])
    b1, b2, b3 = _pod("b-1"), _pod("b-2"), _pod("b-3")
    nodes = {"n3": _node("n3", b1), "n1": _node("n1", b2)}
    batch.store_schedule_results("sig", "", "n3", _sorted(["n1", "n2"]), 1)
    now[0] = 100.5  # upstream: expired only once strictly after creation + maxBatchAge
    assert batch.get_node_hint(CycleState(), b2, "sig", 2, nodes.get) == "n1"
    batch.store_schedule_results("sig", "n1", "n1", None, 2)
    now[0] = 100.51
    assert batch.get_node_hint(CycleState(), b3, "sig", 3, nodes.get) == ""
    assert _counts(tf, "scheduler_batch_cache_flushed") == {"expired": 1}
    assert _counts(tf, "scheduler_batch_attempts") == {"hint_used": 1, "no_hint": 1}


@pytest.mark.parametrize("row", DATA["rescore"], ids=[r["name"] for r in DATA["rescore"]])
def test_batch_rescore(row: dict[str, Any]) -> None:
    tf = _framework(V1_37, score=True, filter_=True)
    score = tf.plugin(SCORE)
    score.value = row.get("score", 0)
    score.pre_score_error = row.get("pre_score_error", False)
    score.score_error = row.get("score_error", False)
    score.normalize_error = row.get("normalize_error", False)
    tf.plugin("ConfigurableFilter").filter_error = row.get("filter_error", False)
    batch = OpportunisticBatch(tf.framework, lambda: 0.0)
    pod1, pod2 = _pod("a-1"), _pod("a-2")
    batch.get_node_hint(CycleState(), pod1, "sig", 1, {}.get)
    batch.store_schedule_results("sig", "", "n2", _sorted(["n1"], {SCORE: [50]}), 1)
    nodes: dict[str, NodeInfo] = {}
    if not row.get("chosen_node_missing"):
        nodes["n2"] = _node("n2", pod1)
        if not row.get("cached_node_missing"):
            nodes["n1"] = _node("n1")
    hint = batch.get_node_hint(CycleState(), pod2, "sig", 2, nodes.get)
    assert hint == row["expected_hint"]
    assert batch._state is not None
    left = batch._state.sorted_nodes
    assert [left.pop() for _ in range(len(left))] == row["expected_remaining"]


def test_batch_rescore_chain() -> None:
    """Three pods: the previous node is re-scored in each cycle and keeps winning; n1 stays."""
    tf = _framework(V1_37, score=True)
    tf.plugin(SCORE).value = 100
    batch = OpportunisticBatch(tf.framework, lambda: 0.0)
    pod1, pod2, pod3 = _pod("a-1"), _pod("a-2"), _pod("a-3")
    batch.get_node_hint(CycleState(), pod1, "sig", 1, {}.get)
    batch.store_schedule_results("sig", "", "n2", _sorted(["n1"], {SCORE: [50]}), 1)
    nodes = {"n1": _node("n1"), "n2": _node("n2", pod1)}
    assert batch.get_node_hint(CycleState(), pod2, "sig", 2, nodes.get) == "n2"
    batch.store_schedule_results("sig", "n2", "n2", None, 2)
    assert batch.get_node_hint(CycleState(), pod3, "sig", 3, nodes.get) == "n2"
    assert batch._state is not None and len(batch._state.sorted_nodes) == 1
    assert batch._state.sorted_nodes.pop() == "n1"
    assert _total(tf, "scheduler_batch_rescore_attempts") == 2
    assert _counts(tf, "scheduler_batch_attempts") == {"no_hint": 1, "hint_used": 1}


def _total(tf: Any, family: str) -> float:
    return sum(
        s.value
        for m in tf.scheduler.metrics.registry.collect()
        if m.name == family
        for s in m.samples
        if s.name.endswith("_total")
    )
