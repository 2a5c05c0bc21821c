"""NodePorts' batch Filter agrees with the per-node form (the reference, ported from
pkg/scheduler/framework/plugins/nodeports/node_ports_test.go in test_node_ports.py) on random
clusters whose pods hold host ports (0.0.0.0 and specific IPs, TCP and UDP), also after pods
come and go: each distinct set of ports in use is checked once per pod and looked up by id."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_cluster import cache_snapshot, candidate_rows, nodes

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodeports import NodePorts

PORTS = st.fixed_dictionaries(
    {"containerPort": st.just(80), "hostPort": st.sampled_from([8080, 8081, 9000])},
    optional={"hostIP": st.sampled_from(["", "0.0.0.0", "10.0.0.1", "10.0.0.2"]),
              "protocol": st.sampled_from(["TCP", "UDP"])},
)


def _pod(name: str, ports: list[dict[str, Any]], node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "ports": ports}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default", "uid": name}, "spec": spec}


def _agree(pl: NodePorts, pod: PodInfo, snap: Snapshot, data: st.DataObject) -> None:
    state = CycleState()
    _, st_ = pl.pre_filter(state, pod, snap.node_infos)
    if st_ is not None and st_.code == Code.SKIP:
        return
    rows = candidate_rows(data, snap)
    mask = pl.filter_batch(state, pod, snap, rows)
    want = [pl.filter(state, pod, snap.node_infos[i]) is None for i in rows.tolist()]
    assert (want if mask is None else mask.tolist()) == want


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_batch_equals_per_node(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    cache, snap = cache_snapshot(node_objs)
    names = [n["metadata"]["name"] for n in node_objs]
    placed: list[PodInfo] = []
    for k in range(data.draw(st.integers(0, 6))):
        pi = PodInfo(_pod(f"e{k}", data.draw(st.lists(PORTS, max_size=2)), data.draw(st.sampled_from(names))))
        cache.add_pod(pi)
        placed.append(pi)
    cache.update_snapshot(snap)
    pl = NodePorts()
    pod = PodInfo(_pod("p", data.draw(st.lists(PORTS, min_size=1, max_size=3))))
    _agree(pl, pod, snap, data)
    # Pods leave: their ports are free again, and the same pod's per-set cache still answers.
    for pi in data.draw(st.lists(st.sampled_from(placed), unique_by=lambda p: p.key)) if placed else []:
        cache.remove_pod(pi)
    cache.update_snapshot(snap)
    _agree(pl, pod, snap, data)


def test_hand_computed_conflicts() -> None:
    """Three nodes: n0 holds 0.0.0.0:8080/TCP, n1 holds 10.0.0.1:8080/TCP, n2 nothing. A pod asking
    10.0.0.2:8080/TCP conflicts with n0 only (0.0.0.0 takes every IP); one asking 0.0.0.0:8080/TCP
    with n0 and n1; one asking 8080/UDP with none."""
    node_objs = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
                 for i in range(3)]
    cache, snap = cache_snapshot(node_objs)
    cache.add_pod(PodInfo(_pod("a", [{"containerPort": 80, "hostPort": 8080}], "n0")))
    cache.add_pod(PodInfo(_pod("b", [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}], "n1")))
    cache.update_snapshot(snap)
    assert snap.table.ports_count == 2
    pl = NodePorts()
    cases = [
        ({"hostIP": "10.0.0.2"}, [False, True, True]),
        ({}, [False, False, True]),
        ({"protocol": "UDP"}, None),
    ]
    for extra, want in cases:
        pod = PodInfo(_pod("p", [{"containerPort": 80, "hostPort": 8080, **extra}]))
        state = CycleState()
        pl.pre_filter(state, pod, snap.node_infos)
        mask = pl.filter_batch(state, pod, snap, snap.table.all)
        got = None if mask is None else mask.tolist()
        if want is None:
            assert got is None or got == [True, True, True]
        else:
            assert got == want
