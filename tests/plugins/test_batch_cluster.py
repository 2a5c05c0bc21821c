"""Random clusters for the batch-vs-per-node property tests (tests/plugins/test_batch_*.py), and the
property that the node table's label and taint columns, kept up to date row by row as nodes change,
always equal the ones a fresh table would have.

Nodes get labels from a small alphabet (so selectors match some and miss others, and integer values
exercise Gt/Lt), taints, ``spec.unschedulable`` and images; pods get tolerations, node selectors,
required and preferred node affinity (every operator, ``matchFields`` on ``metadata.name``, and
malformed terms that never match) and container images.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import make_node

from kubesched.backend.cache import Cache
from kubesched.framework.node_columns import TAINT_SETS
from kubesched.framework.snapshot import NodeTable, Snapshot

LABEL_KEYS = ["zone", "tier", "num", "gpu"]
LABEL_VALUES = ["a", "b", "c", "1", "2", "10", "-3", "x1"]
TAINT_KEYS = ["k1", "k2", "node.kubernetes.io/unschedulable"]
TAINT_VALUES = ["", "v1", "v2"]
EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]
IMAGES = ["img/a:1", "img/b", "img/c:latest", "registry.k8s.io/pause:3.10.1"]
MB = 1024 * 1024


@st.composite
def node_labels(draw: st.DrawFn) -> dict[str, str]:
    keys = draw(st.lists(st.sampled_from(LABEL_KEYS), max_size=4, unique=True))
    return {k: draw(st.sampled_from(LABEL_VALUES)) for k in keys}


@st.composite
def taints(draw: st.DrawFn) -> list[dict[str, str]]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        t = {"key": draw(st.sampled_from(TAINT_KEYS)), "effect": draw(st.sampled_from(EFFECTS))}
        value = draw(st.sampled_from(TAINT_VALUES))
        if value:
            t["value"] = value
        out.append(t)
    return out


@st.composite
def images(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(IMAGES), max_size=3, unique=True))
    return [{"names": [n], "sizeBytes": draw(st.sampled_from([0, 10 * MB, 300 * MB, 2000 * MB]))} for n in names]


@st.composite
def nodes(draw: st.DrawFn, min_size: int = 1, max_size: int = 8) -> list[dict[str, Any]]:
    n = draw(st.integers(min_size, max_size))
    return [
        make_node(
            f"n{i}",
            {"cpu": "4", "memory": "8Gi", "pods": "110"},
            labels=draw(node_labels()),
            taints=draw(taints()),
            images=draw(images()),
            unschedulable=draw(st.booleans()),
        )
        for i in range(n)
    ]


@st.composite
def tolerations(draw: st.DrawFn) -> list[dict[str, str]]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        t: dict[str, str] = {}
        key = draw(st.sampled_from([None, *TAINT_KEYS]))
        op = draw(st.sampled_from([None, "Equal", "Exists"]))
        if key is not None:
            t["key"] = key
        if op is not None:
            t["operator"] = op
        if op != "Exists":
            value = draw(st.sampled_from([None, *TAINT_VALUES]))
            if value is not None:
                t["value"] = value
        effect = draw(st.sampled_from([None, *EFFECTS]))
        if effect is not None:
            t["effect"] = effect
        out.append(t)
    return out


@st.composite
def expressions(draw: st.DrawFn) -> dict[str, Any]:
    key = draw(st.sampled_from(LABEL_KEYS))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    if op in ("In", "NotIn"):
        return {"key": key, "operator": op, "values": draw(st.lists(st.sampled_from(LABEL_VALUES), min_size=1))}
    if op in ("Gt", "Lt"):
        # Mostly integers; sometimes not, which makes the term malformed (it then never matches).
        value = draw(st.sampled_from(["0", "1", "2", "5", "-4", "x"]))
        return {"key": key, "operator": op, "values": [value]}
    return {"key": key, "operator": op}


@st.composite
def terms(draw: st.DrawFn, n_nodes: int = 8) -> dict[str, Any]:
    term: dict[str, Any] = {}
    exprs = draw(st.lists(expressions(), max_size=2))
    if exprs:
        term["matchExpressions"] = exprs
    if draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(["metadata.name", "metadata.name", "spec.other"]))
        value = draw(st.sampled_from([f"n{i}" for i in range(n_nodes)] + [""]))
        term["matchFields"] = [{"key": key, "operator": draw(st.sampled_from(["In", "NotIn"])), "values": [value]}]
    return term


@st.composite
def node_affinity(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": draw(st.lists(terms(), max_size=2))
        }
    if draw(st.booleans()):
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(st.integers(0, 100)), "preference": draw(terms())}
            for _ in range(draw(st.integers(0, 3)))
        ]
    return out


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "image": draw(st.sampled_from(IMAGES))} for i in range(draw(st.integers(0, 2)))
        ]
    }
    tol = draw(tolerations())
    if tol:
        spec["tolerations"] = tol
    if draw(st.booleans()):
        spec["nodeSelector"] = draw(node_labels())
    na = draw(node_affinity())
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    return {"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": spec}


@st.composite
def node_updates(draw: st.DrawFn, n: int) -> list[tuple[int, dict[str, Any]]]:
    """(node index, new object) pairs: relabelled, retainted, (un)cordoned copies."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, n - 1))
        out.append(
            (
                i,
                make_node(
                    f"n{i}",
                    {"cpu": "4", "memory": "8Gi", "pods": "110"},
                    labels=draw(node_labels()),
                    taints=draw(taints()),
                    images=draw(images()),
                    unschedulable=draw(st.booleans()),
                ),
            )
        )
    return out


def cache_snapshot(node_objs: list[dict[str, Any]]) -> tuple[Cache, Snapshot]:
    """A snapshot the way the scheduler gets it: nodes added to the cache, then refreshed."""
    cache = Cache()
    for n in node_objs:
        cache.add_node(n)
    snap = Snapshot()
    cache.update_snapshot(snap)
    return cache, snap


def candidate_rows(data: st.DataObject, snap: Snapshot) -> np.ndarray:
    """Candidate rows as the scheduler passes them: the table's ``all`` (every row, no gather), or
    a subset in any order (after a PreFilter narrowed the nodes, or the feasible nodes at Score)."""
    if data.draw(st.booleans()):
        return snap.table.all
    rows = data.draw(st.lists(st.integers(0, snap.num_nodes() - 1), unique=True))
    return np.array(rows, dtype=np.intp)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_columns_follow_node_updates(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    cache, snap = cache_snapshot(node_objs)
    keys = data.draw(st.lists(st.sampled_from(LABEL_KEYS), unique=True))
    for k in keys:  # columns built before the updates must be kept current by set_row
        snap.table.label_column(k)
    for _, obj in data.draw(node_updates(len(node_objs))):
        cache.update_node(obj)
        if data.draw(st.booleans()):
            cache.update_snapshot(snap)
    cache.update_snapshot(snap)
    fresh = NodeTable.build(snap.node_infos)
    t = snap.table
    assert t.unschedulable.tolist() == fresh.unschedulable.tolist()
    assert t.unschedulable_count == int(fresh.unschedulable.sum())
    assert t.tainted_count == int((fresh.taint_id != 0).sum())
    assert t.taint_id.tolist() == fresh.taint_id.tolist()
    for i, ni in enumerate(snap.node_infos):
        assert [dict(tt) for tt in TAINT_SETS.lists[int(t.taint_id[i])]] == [dict(tt) for tt in ni.taints]
    for k in LABEL_KEYS:
        col = t.label_column(k)
        got = [col.strings[v - 1] if v else None for v in col.values.tolist()]
        assert got == [ni.labels.get(k) for ni in snap.node_infos]
