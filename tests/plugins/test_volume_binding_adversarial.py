"""VolumeBinding against objects the API server would refuse (the simulator refuses them too,
api/storage_validation.py; these reach the plugin only through a client that skips validation).
Nothing may raise out of the plugin: each case ends in a status with one-line messages, or in the
lenient reading noted beside it. No upstream table: upstream's typed objects cannot hold these.
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_builders import make_snapshot
from storage_builders import handle, storage_class
from volume_binding_builders import BASE_OBJECTS, make_capacity, make_node, make_pv, make_pvc, row_args, row_pod

from kubesched.config.releases import V1_37
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.volumebinding import VolumeBinding

U = "UnschedulableAndUnresolvable"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
NO_SPACE = "node(s) did not have enough free storage"
GARBAGE = ["NaN", "abc", 12.5, None, [], {"x": 1}, True, "-5Gi"]


def as_list(status: Status | None) -> list[str] | None:
    return None if status is None else [status.code.upstream_name, *status.reasons]


def run(objs: list[dict[str, Any]]) -> tuple[list[str] | None, list[str] | None]:
    """PreFilter, then Filter/PreScore/Score/Reserve on the one node; (PreFilter, Filter) statuses."""
    objects = [*BASE_OBJECTS, make_node("node-a", {"nodeKey": "node-a"}), *objs]
    snapshot = make_snapshot([o for o in objects if o["kind"] == "Node"])
    pl = VolumeBinding(row_args({}, V1_37), handle(objects, snapshot, release=V1_37))
    pod = PodInfo(row_pod({"claims": ["pvc-a"]}))
    state = CycleState()
    _, pre = pl.pre_filter(state, pod, snapshot.node_infos)
    if pre is not None:
        assert all("\n" not in r for r in pre.reasons)
        return as_list(pre), None
    node = snapshot.node_infos[0]
    status = pl.filter(state, pod, node)
    assert status is None or all("\n" not in r for r in status.reasons)
    assert pl.pre_score(state, pod, snapshot.node_infos) is None
    score, score_status = pl.score(state, pod, node)
    assert score_status is None and 0 <= score <= 100
    assert pl.reserve(state, pod, "node-a") is None
    return None, as_list(status)


def wait_pvc(**spec: Any) -> dict[str, Any]:
    pvc = make_pvc("pvc-a", "wait-sc", request="1Gi")
    pvc["spec"].update(spec)
    return pvc


def local_pv(**spec: Any) -> dict[str, Any]:
    pv = make_pv("pv-1", "wait-sc", capacity="10Gi", affinity={"kubernetes.io/hostname": ["node-a"]})
    pv["spec"].update(spec)
    return pv


@pytest.mark.parametrize("selector", [
    {"matchExpressions": [{"key": "a", "operator": "Bogus", "values": ["x"]}]},
    "abc",
    {"matchLabels": ["a"]},
])
def test_malformed_selector_is_an_error(selector: Any) -> None:
    _, got = run([wait_pvc(selector=selector), local_pv()])
    assert got is not None and got[0] == "Error"
    assert got[1].startswith("error creating internal label selector for claim: default/pvc-a: ")


@pytest.mark.parametrize("q", [*GARBAGE, "1e400", "99999999999999999999999999Ei"])
def test_bad_pv_capacity(q: Any) -> None:
    """An unreadable or negative capacity fits no claim; a huge one fits every claim."""
    _, got = run([wait_pvc(), local_pv(capacity={"storage": q})])
    assert got == (None if q in ("1e400", "99999999999999999999999999Ei") else [U, BIND_CONFLICT])


@pytest.mark.parametrize("q", [*GARBAGE, "1e400", "99999999999999999999999999Ei"])
def test_bad_pvc_request(q: Any) -> None:
    """A huge request fits no volume; an unreadable one reads as no request (lenient: the API
    server and the simulator's loader refuse such a claim before the plugin sees it)."""
    _, got = run([wait_pvc(resources={"requests": {"storage": q}}), local_pv()])
    assert got == ([U, BIND_CONFLICT] if q in ("1e400", "99999999999999999999999999Ei") else None)


@pytest.mark.parametrize("q", GARBAGE)
def test_bad_csi_capacity(q: Any) -> None:
    """An unreadable or negative published capacity has room for nothing."""
    cap = make_capacity("c", "wait-sc-with-storage-capacity", "node-a") | {"capacity": q}
    _, got = run([make_pvc("pvc-a", "wait-sc-with-storage-capacity", request="1Gi"), cap])
    assert got == [U, NO_SPACE]


def test_storage_class_without_binding_mode() -> None:
    """IsDelayBindingMode's error, at PreFilter, as upstream."""
    pre, _ = run([storage_class("nomode"), make_pvc("pvc-a", "nomode")])
    assert pre == ["Error", 'VolumeBindingMode not set for StorageClass "nomode"']


def test_storage_class_with_unknown_binding_mode_is_immediate() -> None:
    """Upstream compares with WaitForFirstConsumer; anything else binds immediately."""
    pre, _ = run([storage_class("odd", "Sometimes"), make_pvc("pvc-a", "odd")])
    assert pre == [U, "pod has unbound immediate PersistentVolumeClaims"]


@pytest.mark.parametrize("affinity", [
    "garbage",
    {"required": "x"},
    {"required": {"nodeSelectorTerms": "x"}},
    {"required": {"nodeSelectorTerms": [None, 5]}},
    {"required": {"nodeSelectorTerms": []}},
    {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Nope"}]}]}},
    {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["a"]}]}]}},
])
def test_garbage_pv_node_affinity_matches_no_node(affinity: Any) -> None:
    """A PV whose node affinity cannot be read is reachable from no node, bound or not."""
    _, unbound = run([wait_pvc(), local_pv(nodeAffinity=affinity)])
    assert unbound == [U, BIND_CONFLICT]
    pv = make_pv("pv-a", "wait-sc", capacity="10Gi")
    pv["spec"]["nodeAffinity"] = affinity
    _, bound = run([make_pvc("pvc-a", "wait-sc", bound="pv-a"), pv])
    assert bound == [U, NODE_CONFLICT]


@pytest.mark.parametrize("field", ["accessModes", "claimRef"])
def test_garbage_pv_fields_do_not_raise(field: str) -> None:
    _, got = run([wait_pvc(), local_pv(**{field: 5})])
    assert got is None or got[0] in (U, "Error")


@pytest.mark.parametrize("topologies", ["x", [{"matchLabelExpressions": [{"key": 1, "values": "x"}]}]])
def test_garbage_allowed_topologies_do_not_raise(topologies: Any) -> None:
    sc = storage_class("prov", "WaitForFirstConsumer", "p") | {"allowedTopologies": topologies}
    _, got = run([sc, make_pvc("pvc-a", "prov")])
    assert got is None or got[0] in (U, "Error")
