"""TaintToleration's batch Filter and Score agree with the per-node forms (the reference, ported
from pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go in
test_taint_toleration.py) on random clusters: every distinct taint list is evaluated once per pod
and looked up by id, also after nodes are re-tainted."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_cluster import cache_snapshot, candidate_rows, node_updates, nodes, pods

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeScore, PodInfo
from kubesched.plugins.tainttoleration import TaintToleration


def _agree(pl: TaintToleration, pod: PodInfo, snap: Snapshot, data: st.DataObject) -> None:
    rows = candidate_rows(data, snap)
    infos = [snap.node_infos[i] for i in rows.tolist()]
    state = CycleState()
    mask = pl.filter_batch(state, pod, snap, rows)
    want = [pl.filter(state, pod, ni) is None for ni in infos]
    assert (want if mask is None else mask.tolist()) == want
    if mask is None:
        assert all(want)
    assert pl.pre_score(state, pod, infos) is None
    per_node = [pl.score(state, pod, ni)[0] for ni in infos]
    batch = pl.score_batch(state, pod, snap, rows)
    assert batch.tolist() == per_node
    scores = [NodeScore(ni.name, s) for ni, s in zip(infos, per_node, strict=True)]
    pl.normalize_score(state, pod, scores)
    assert pl.normalize_score_batch(state, pod, np.asarray(batch)).tolist() == [s.score for s in scores]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_batch_equals_per_node(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    cache, snap = cache_snapshot(node_objs)
    pl = TaintToleration()
    pod = PodInfo(data.draw(pods()))
    _agree(pl, pod, snap, data)
    for _, obj in data.draw(node_updates(len(node_objs))):
        cache.update_node(obj)
    cache.update_snapshot(snap)
    _agree(pl, pod, snap, data)  # the same pod: its per-taint-set cache grows with new lists
