"""PodTopologySpread's batch Filter (per-row match counts kept across cycles, batch.py) agrees with
the reference per-node PreFilter/Filter (filtering.py, ported from
pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go in test_podtopologyspread.py) on
random clusters: several constraints, missing topology labels, minDomains, node inclusion policies
(nodeAffinity and nodeTaints, Honor and Ignore), matchLabelKeys, pods of other namespaces and
terminating pods; and again after pods come and go between cycles."""

from __future__ import annotations

from typing import Any

import numpy as np
from _builders import ClientHandle
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import make_node

from kubesched.backend.cache import Cache
from kubesched.config.plugin_args import PodTopologySpreadArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import DO_NOT_SCHEDULE, WorkloadIndex
from kubesched.plugins.podtopologyspread.filtering import PreFilterState

KEYS = ["zone", "kubernetes.io/hostname", "rack"]
COLORS = ["red", "blue"]


@st.composite
def constraints(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 2))):
        c: dict[str, Any] = {
            "maxSkew": draw(st.integers(1, 3)),
            "topologyKey": draw(st.sampled_from(KEYS)),
            "whenUnsatisfiable": DO_NOT_SCHEDULE,
            "labelSelector": {"matchLabels": {"color": draw(st.sampled_from(COLORS))}},
        }
        if draw(st.booleans()):
            c["minDomains"] = draw(st.integers(1, 4))
        c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore", None]))
        c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Honor", "Ignore", None]))
        c = {k: v for k, v in c.items() if v is not None}
        if draw(st.integers(0, 3)) == 0:
            c["matchLabelKeys"] = ["tier"]
        out.append(c)
    return out


@st.composite
def pods(draw: st.DrawFn, name: str, node: str = "", incoming: bool = False) -> dict[str, Any]:
    labels = {"color": draw(st.sampled_from(COLORS))}
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(["a", "b"]))
    ns = draw(st.sampled_from(["ns1", "ns1", "ns2"]))
    md: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"{ns}.{name}", "labels": labels}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
        if draw(st.integers(0, 6)) == 0:
            md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if incoming:
        spec["topologySpreadConstraints"] = draw(constraints())
        if draw(st.booleans()):
            spec["nodeSelector"] = {"pool": draw(st.sampled_from(["p1", "p2"]))}
        if draw(st.booleans()):
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    return {"metadata": md, "spec": spec}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    n = draw(st.integers(1, 8))
    nodes = []
    for i in range(n):
        labels = {}
        if draw(st.integers(0, 5)):
            labels["kubernetes.io/hostname"] = f"n{i}"
        if draw(st.integers(0, 4)):
            labels["zone"] = draw(st.sampled_from(["z1", "z2", "z3"]))
        if draw(st.booleans()):
            labels["rack"] = draw(st.sampled_from(["r1", "r2"]))
        if draw(st.booleans()):
            labels["pool"] = draw(st.sampled_from(["p1", "p2"]))
        taints = [{"key": "dedicated", "effect": "NoSchedule"}] if draw(st.integers(0, 2)) == 0 else None
        nodes.append(make_node(f"n{i}", {"cpu": "4", "pods": "110"}, labels=labels, taints=taints))
    existing = [draw(pods(f"e{j}", f"n{draw(st.integers(0, n - 1))}")) for j in range(draw(st.integers(0, 20)))]
    return nodes, existing


def _agree(pl: PodTopologySpread, handle: ClientHandle, pod: PodInfo, rows: np.ndarray) -> None:
    snap = handle.snapshot
    state = CycleState()
    _, st_ = pl.pre_filter(state, pod, snap.list())
    cs = pl.constraints(pod, DO_NOT_SCHEDULE, WorkloadIndex(handle))
    if not cs:
        assert st_ is not None and st_.code == Code.SKIP
        return
    assert st_ is None
    ref = PreFilterState(pod, cs)
    ref.count(snap.list(), pl.memo)
    infos = [snap.node_infos[i] for i in rows.tolist()]
    want = [ref.violation(ni) is None for ni in infos]
    assert pl.filter_batch(state, pod, snap, rows).tolist() == want
    assert [pl.filter(state, pod, ni) is None for ni in infos] == want


def _rows(data: st.DataObject, snap: Snapshot) -> np.ndarray:
    if data.draw(st.booleans()):
        return snap.table.all
    return np.array(data.draw(st.permutations(range(snap.num_nodes()))), dtype=np.intp)


@settings(max_examples=150, deadline=None)
@given(clusters(), st.data())
def test_filter_batch_equals_reference(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]]], data: st.DataObject
) -> None:
    nodes, existing = cluster
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    placed = [PodInfo(p) for p in existing]
    for pi in placed:
        cache.add_pod(pi)
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = ClientHandle(snap)
    pl = PodTopologySpread(PodTopologySpreadArgs(), handle)
    _agree(pl, handle, PodInfo(data.draw(pods("in0", incoming=True))), _rows(data, snap))
    for cycle in range(2):
        for j in range(data.draw(st.integers(1, 5))):
            if data.draw(st.booleans()) or not placed:
                node = f"n{data.draw(st.integers(0, len(nodes) - 1))}"
                pi = PodInfo(data.draw(pods(f"x{cycle}-{j}", node)))
                cache.add_pod(pi)
                placed.append(pi)
            else:
                cache.remove_pod(placed.pop(data.draw(st.integers(0, len(placed) - 1))))
            if data.draw(st.booleans()):
                cache.update_snapshot(snap)
        cache.update_snapshot(snap)
        _agree(pl, handle, PodInfo(data.draw(pods(f"in{cycle + 1}", incoming=True))), _rows(data, snap))


def test_untolerated_tainted_node_is_no_domain_under_honor() -> None:
    """Hand-computed: z1 holds two red pods on an untainted node, z2 only a tainted node. With
    nodeTaintsPolicy Honor z2 is no domain, the minimum is 2 and z1 keeps skew 2 + 1 - 2 = 1 <= 1;
    with Ignore z2 counts 0, the minimum is 0 and z1's skew 3 rejects it (z2 passes either way,
    0 + 1 - min <= 1)."""
    nodes = [
        make_node("a", {"cpu": "4", "pods": "110"}, labels={"zone": "z1"}),
        make_node("b", {"cpu": "4", "pods": "110"}, labels={"zone": "z2"},
                  taints=[{"key": "dedicated", "effect": "NoSchedule"}]),
    ]
    red = {"metadata": {"namespace": "ns1", "labels": {"color": "red"}}, "spec": {"nodeName": "a"}}
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for i in range(2):
        cache.add_pod(PodInfo({**red, "metadata": {**red["metadata"], "name": f"r{i}", "uid": f"r{i}"}}))
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = ClientHandle(snap)
    for policy, want in (("Honor", [True, True]), ("Ignore", [False, True])):
        pl = PodTopologySpread(PodTopologySpreadArgs(), handle)
        c = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": DO_NOT_SCHEDULE,
             "labelSelector": {"matchLabels": {"color": "red"}}, "nodeTaintsPolicy": policy}
        pod = PodInfo({"metadata": {"name": "p", "namespace": "ns1", "uid": "p", "labels": {"color": "red"}},
                       "spec": {"topologySpreadConstraints": [c]}})
        state = CycleState()
        assert pl.pre_filter(state, pod, snap.list())[1] is None
        assert pl.filter_batch(state, pod, snap, snap.table.all).tolist() == want
        assert [pl.filter(state, pod, ni) is None for ni in snap.list()] == want
