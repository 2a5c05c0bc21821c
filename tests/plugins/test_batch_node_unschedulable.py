"""NodeUnschedulable's batch Filter agrees with its per-node Filter (the reference, ported from
pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go in
test_node_unschedulable.py) on random clusters, including after nodes are cordoned or uncordoned."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_cluster import cache_snapshot, candidate_rows, node_updates, nodes, pods

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodeunschedulable import NodeUnschedulable


def _agree(pl: NodeUnschedulable, pod: PodInfo, snap: object, data: st.DataObject) -> None:
    rows = candidate_rows(data, snap)  # type: ignore[arg-type]
    mask = pl.filter_batch(CycleState(), pod, snap, rows)  # type: ignore[arg-type]
    want = [pl.filter(CycleState(), pod, snap.node_infos[i]) is None for i in rows.tolist()]  # type: ignore[attr-defined]
    assert (want if mask is None else mask.tolist()) == want
    if mask is None:
        assert all(want)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_filter_batch_equals_filter(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    cache, snap = cache_snapshot(node_objs)
    pl = NodeUnschedulable()
    pod = PodInfo(data.draw(pods()))
    _agree(pl, pod, snap, data)
    for _, obj in data.draw(node_updates(len(node_objs))):
        cache.update_node(obj)
    cache.update_snapshot(snap)
    _agree(pl, pod, snap, data)


def test_none_when_no_node_is_unschedulable() -> None:
    from plugin_builders import make_node

    _, snap = cache_snapshot([make_node("a"), make_node("b")])
    pod = PodInfo({"metadata": {"name": "p"}})
    assert NodeUnschedulable().filter_batch(CycleState(), pod, snap, snap.table.all) is None
