"""InterPodAffinity's batch forms (per-row counts kept across cycles, batch.py) agree with the
reference per-node computation (filtering.py/scoring.py, ported from
pkg/scheduler/framework/plugins/interpodaffinity/{filtering,scoring}_test.go in
test_interpodaffinity.py) on random clusters: Skip decisions, every node's Filter verdict, every
node's Score and the normalised scores, for required and preferred (anti-)affinity across namespaces
and namespace selectors; and again after pods are assumed, bound, forgotten and deleted between
cycles, so the incremental row counts are exercised."""

from __future__ import annotations

from typing import Any

import numpy as np
from _builders import ClientHandle
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import make_node

from kubesched.backend.cache import Cache
from kubesched.config.plugin_args import InterPodAffinityArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.types import NodeScore, PodInfo
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.interpodaffinity.filtering import PreFilterState, pod_matches_all_terms
from kubesched.plugins.interpodaffinity.namespaces import NamespaceIndex
from kubesched.plugins.interpodaffinity.plugin import _unroll, _unroll_weighted
from kubesched.plugins.interpodaffinity.scoring import PreScoreState, normalize
from kubesched.plugins.interpodaffinity.terms import pod_affinity_terms

NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "a"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns2", "labels": {"team": "b"}}},
]
KEYS = ["kubernetes.io/hostname", "zone", "rack"]
COLORS = ["red", "blue"]


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    term: dict[str, Any] = {
        "labelSelector": {"matchLabels": {"color": draw(st.sampled_from(COLORS))}},
        "topologyKey": draw(st.sampled_from(KEYS)),
    }
    how = draw(st.sampled_from(["own", "list", "selector", "all"]))
    if how == "list":
        term["namespaces"] = draw(st.lists(st.sampled_from(["ns1", "ns2"]), min_size=1, unique=True))
    elif how == "selector":
        term["namespaceSelector"] = {"matchLabels": {"team": draw(st.sampled_from(["a", "b"]))}}
    elif how == "all":
        term["namespaceSelector"] = {}
    return term


@st.composite
def affinity(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section: dict[str, Any] = {}
        req = draw(st.lists(terms(), max_size=2))
        if req:
            section["requiredDuringSchedulingIgnoredDuringExecution"] = req
        pref = [
            {"weight": draw(st.integers(1, 100)), "podAffinityTerm": draw(terms())}
            for _ in range(draw(st.integers(0, 2)))
        ]
        if pref:
            section["preferredDuringSchedulingIgnoredDuringExecution"] = pref
        if section:
            out[kind] = section
    return out


@st.composite
def pods(draw: st.DrawFn, name: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if draw(st.booleans()):
        spec["affinity"] = draw(affinity())
    labels = {"color": draw(st.sampled_from(COLORS))}
    ns = draw(st.sampled_from(["ns1", "ns2"]))
    return {"metadata": {"name": name, "namespace": ns, "uid": f"{ns}.{name}", "labels": labels}, "spec": spec}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    n = draw(st.integers(1, 7))
    nodes = []
    for i in range(n):
        labels = {}
        if draw(st.integers(0, 5)):
            labels["kubernetes.io/hostname"] = f"n{i}"
        if draw(st.integers(0, 3)):
            labels["zone"] = draw(st.sampled_from(["z1", "z2"]))
        if draw(st.booleans()):
            labels["rack"] = draw(st.sampled_from(["r1", "r2", "r3"]))
        nodes.append(make_node(f"n{i}", {"cpu": "4", "pods": "110"}, labels=labels))
    existing = [draw(pods(f"e{j}", f"n{draw(st.integers(0, n - 1))}")) for j in range(draw(st.integers(0, 10)))]
    return nodes, existing


def _reference_filter(pl: InterPodAffinity, handle: ClientHandle, pod: PodInfo) -> PreFilterState | None:
    """plugin.go PreFilter as it was before the batch form: None for Skip."""
    snap = handle.snapshot
    t = pod_affinity_terms(pod)
    ns = NamespaceIndex(handle)
    aff = tuple(_unroll(x, ns) for x in t.required_affinity)
    anti = tuple(_unroll(x, ns) for x in t.required_anti_affinity)
    s = PreFilterState(pod, aff, anti, ns.labels_of(pod.namespace))
    s.count_existing_anti_affinity(snap.have_pods_with_required_anti_affinity_list())
    if not s.existing_anti_affinity_counts and not aff and not anti:
        return None
    s.count_incoming(snap.list())
    s.matches_own_affinity = pod_matches_all_terms(aff, pod)
    return s


def _reference_score(pl: InterPodAffinity, handle: ClientHandle, pod: PodInfo) -> PreScoreState | None:
    snap = handle.snapshot
    a = pod.affinity
    has = any((a.get(k) or {}).get("preferredDuringSchedulingIgnoredDuringExecution") for k in
              ("podAffinity", "podAntiAffinity"))
    t = pod_affinity_terms(pod)
    ns = NamespaceIndex(handle)
    s = PreScoreState(pod, _unroll_weighted(t.preferred_affinity, ns), _unroll_weighted(t.preferred_anti_affinity, ns),
                      ns.labels_of(pod.namespace), pl.args.hard_pod_affinity_weight)
    s.process_nodes(snap.list() if has else snap.have_pods_with_affinity_list(), has)
    return s if s.matched else None


def _agree(pl: InterPodAffinity, handle: ClientHandle, pod: PodInfo, rows: np.ndarray) -> None:
    snap = handle.snapshot
    infos = [snap.node_infos[i] for i in rows.tolist()]
    state = CycleState()
    ref = _reference_filter(pl, handle, pod)
    _, st_ = pl.pre_filter(state, pod, snap.list())
    if ref is None:
        assert st_ is not None and st_.code == Code.SKIP
    else:
        assert st_ is None
        want = [
            ref.satisfies_pod_affinity(ni.labels)
            and ref.satisfies_pod_anti_affinity(ni.labels)
            and ref.satisfies_existing_pods_anti_affinity(ni.labels)
            for ni in infos
        ]
        assert pl.filter_batch(state, pod, snap, rows).tolist() == want
        # The per-node Filter (counts filled lazily by the reference code) says the same.
        assert [pl.filter(state, pod, ni) is None for ni in infos] == want
    sref = _reference_score(pl, handle, pod)
    ps = pl.pre_score(state, pod, infos)
    if sref is None:
        assert ps is not None and ps.code == Code.SKIP
        return
    assert ps is None
    want_scores = [sref.score(ni.labels) for ni in infos]
    batch = pl.score_batch(state, pod, snap, rows)
    assert batch.tolist() == want_scores
    assert [pl.score(state, pod, ni)[0] for ni in infos] == want_scores
    node_scores = [NodeScore(ni.name, v) for ni, v in zip(infos, want_scores, strict=True)]
    normalize(node_scores)
    assert pl.normalize_score_batch(state, pod, batch).tolist() == [s.score for s in node_scores]


def _rows(data: st.DataObject, snap: Snapshot) -> np.ndarray:
    if data.draw(st.booleans()):
        return snap.table.all
    return np.array(data.draw(st.permutations(range(snap.num_nodes()))), dtype=np.intp)


@settings(max_examples=150, deadline=None)
@given(clusters(), st.data())
def test_batch_equals_reference(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]]], data: st.DataObject
) -> None:
    nodes, existing = cluster
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in existing:
        cache.add_pod(PodInfo(p))
    snap = Snapshot()
    cache.update_snapshot(snap)
    handle = ClientHandle(snap, NAMESPACES)
    pl = InterPodAffinity(InterPodAffinityArgs(), handle)
    incoming = PodInfo(data.draw(pods("incoming")))
    _agree(pl, handle, incoming, _rows(data, snap))
    placed = [PodInfo(p) for p in existing]
    for cycle in range(2):
        # Between cycles: pods assumed, confirmed or deleted on random nodes (a node changing in
        # both rounds must lose its old contribution).
        for j in range(data.draw(st.integers(1, 5))):
            node = f"n{data.draw(st.integers(0, len(nodes) - 1))}"
            action = data.draw(st.sampled_from(["assume", "add", "delete", "delete"]))
            if action in ("assume", "add"):
                pi = PodInfo(data.draw(pods(f"x{cycle}-{j}", node)))
                if action == "assume":
                    cache.assume_pod(pi, node)
                else:
                    cache.add_pod(pi)
                placed.append(pi)
            elif placed:
                cache.remove_pod(placed.pop(data.draw(st.integers(0, len(placed) - 1))))
            if data.draw(st.booleans()):
                cache.update_snapshot(snap)
        cache.update_snapshot(snap)
        # The same plugin instance (its row counts carried over) and a fresh incoming pod.
        _agree(pl, handle, PodInfo(data.draw(pods(f"incoming{cycle}"))), _rows(data, snap))
