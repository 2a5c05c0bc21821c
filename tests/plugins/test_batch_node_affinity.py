"""NodeAffinity's batch Filter and Score, evaluated over the node table's label columns, agree with
the per-node forms (the reference, ported from
pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go in test_node_affinity.py) on
random clusters and pods: node selectors, required and preferred terms with every operator,
``matchFields``, malformed terms, the plugin's ``addedAffinity``, and nodes relabelled between
cycles."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_cluster import cache_snapshot, candidate_rows, node_affinity, node_updates, nodes, pods

from kubesched.config.plugin_args import NodeAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.types import NodeScore, PodInfo
from kubesched.plugins.nodeaffinity import NodeAffinity


def _plugin(added: dict[str, Any]) -> NodeAffinity:
    try:
        return NodeAffinity(NodeAffinityArgs(added_affinity=added or None))
    except ValueError:  # a malformed addedAffinity is a configuration error
        return NodeAffinity()


def _agree(pl: NodeAffinity, pod: PodInfo, snap: Snapshot, data: st.DataObject) -> None:
    rows = candidate_rows(data, snap)
    infos = [snap.node_infos[i] for i in rows.tolist()]
    state = CycleState()
    _, st_ = pl.pre_filter(state, pod, snap.node_infos)
    if st_ is None:  # Filter runs (not skipped, no conflict)
        mask = pl.filter_batch(state, pod, snap, rows)
        assert mask.tolist() == [pl.filter(state, pod, ni) is None for ni in infos]
    ps = pl.pre_score(state, pod, infos)
    if ps is not None:
        assert ps.code in (Code.SKIP, Code.ERROR)
        return
    per_node = [pl.score(state, pod, ni) for ni in infos]
    assert all(s is None for _, s in per_node)
    batch = pl.score_batch(state, pod, snap, rows)
    assert batch.tolist() == [v for v, _ in per_node]
    scores = [NodeScore(ni.name, v) for ni, (v, _) in zip(infos, per_node, strict=True)]
    pl.normalize_score(state, pod, scores)
    assert pl.normalize_score_batch(state, pod, np.asarray(batch)).tolist() == [s.score for s in scores]


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_batch_equals_per_node(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    cache, snap = cache_snapshot(node_objs)
    pl = _plugin(data.draw(node_affinity()))
    pod = PodInfo(data.draw(pods()))
    _agree(pl, pod, snap, data)
    for _, obj in data.draw(node_updates(len(node_objs))):
        cache.update_node(obj)
    cache.update_snapshot(snap)
    _agree(pl, PodInfo(data.draw(pods())), snap, data)
