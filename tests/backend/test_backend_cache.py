"""The scheduler cache and the incremental snapshot with its columnar NodeTable.

Pinned against pkg/scheduler/backend/cache/cache.go and its cache_test.go (``TestAssumePodScheduled``,
``TestAddPodWillConfirm``, ``TestForgetPod``, ``TestNodeOperators``, ``TestSchedulerCache_UpdateSnapshot``):
assumed pods count on their node at once, never expire (durationToExpireAssumedPod = 0), are
confirmed by the informer's add and removed by forget; the snapshot copies only nodes that changed.
Expected sums are hand-computed.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.cache import Cache, CacheError
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.testing import make_node, make_pod

GI = 1024**3
MI = 1024**2


def node(name: str, **cap: Any) -> dict[str, Any]:
    return make_node(name).capacity(cpu="4", memory="8Gi", **cap).obj()


def pod(name: str, node_name: str = "", **req: Any) -> PodInfo:
    w = make_pod(name).req(**req) if req else make_pod(name)
    if node_name:
        w = w.node(node_name)
    return PodInfo(w.obj())


def cache_with(*names: str) -> Cache:
    c = Cache()
    for n in names:
        c.add_node(node(n))
    return c


def requested(c: Cache, name: str) -> tuple[int, int, int]:
    ni = c.get_node_info(name)
    assert ni is not None
    return ni.requested.milli_cpu, ni.requested.memory, len(ni.pods)


def test_assume_counts_the_pod_on_its_node_at_once() -> None:
    c = cache_with("n1")
    p = pod("p", cpu="500m", memory="1Gi")
    c.assume_pod(p.with_node_name("n1"), "n1")
    assert c.is_assumed(p.uid)
    assert requested(c, "n1") == (500, GI, 1)
    snap = Snapshot()
    c.update_snapshot(snap)
    ni = snap.get("n1")
    assert ni is not None and ni.requested.milli_cpu == 500


def test_assume_twice_is_an_error() -> None:
    c = cache_with("n1")
    p = pod("p", cpu="1")
    c.assume_pod(p, "n1")
    with pytest.raises(CacheError):
        c.assume_pod(p, "n1")


def test_finish_binding_keeps_the_assumed_pod_forever() -> None:
    c = cache_with("n1")
    p = pod("p", cpu="1")
    c.assume_pod(p, "n1")
    c.finish_binding(p)
    assert c.is_assumed(p.uid)
    assert requested(c, "n1") == (1000, 0, 1)


def test_forget_removes_an_assumed_pod() -> None:
    c = cache_with("n1")
    p = pod("p", cpu="1", memory="1Gi")
    c.assume_pod(p, "n1")
    c.forget_pod(p)
    assert not c.is_assumed(p.uid)
    assert c.assumed_count() == 0
    assert requested(c, "n1") == (0, 0, 0)


def test_forget_ignores_a_bound_pod() -> None:
    c = cache_with("n1")
    p = pod("p", "n1", cpu="1")
    c.add_pod(p)
    c.forget_pod(p)
    assert requested(c, "n1") == (1000, 0, 1)


def test_add_confirms_an_assumed_pod_without_counting_it_twice() -> None:
    c = cache_with("n1")
    p = pod("p", cpu="500m")
    c.assume_pod(p.with_node_name("n1"), "n1")
    c.add_pod(pod("p", "n1", cpu="500m"))
    assert not c.is_assumed(p.uid)
    assert c.pod_count() == 1
    assert requested(c, "n1") == (500, 0, 1)
    c.forget_pod(p)  # too late to forget: it is bound
    assert requested(c, "n1") == (500, 0, 1)


def test_add_of_an_assumed_pod_bound_elsewhere_moves_it() -> None:
    c = cache_with("n1", "n2")
    p = pod("p", cpu="500m")
    c.assume_pod(p, "n1")
    c.add_pod(pod("p", "n2", cpu="500m"))
    assert requested(c, "n1") == (0, 0, 0)
    assert requested(c, "n2") == (500, 0, 1)


def test_remove_pod() -> None:
    c = cache_with("n1")
    c.add_pod(pod("p", "n1", cpu="1"))
    c.remove_pod(pod("p", "n1", cpu="1"))
    assert c.pod_count() == 0
    assert requested(c, "n1") == (0, 0, 0)


def test_removed_node_leaves_the_snapshot_but_its_pods_stay_accounted() -> None:
    c = cache_with("n1", "n2")
    c.add_pod(pod("p", "n1", cpu="1"))
    snap = Snapshot()
    c.update_snapshot(snap)
    c.remove_node("n1")
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.list()] == ["n2"]
    assert c.node_count() == 1
    assert c.pod_count() == 1
    c.remove_pod(pod("p", "n1", cpu="1"))
    assert c.get_node_info("n1") is None


def test_node_added_after_a_pod_bound_to_it() -> None:
    # The informer may deliver a bound pod before its node.
    c = cache_with("n2")
    snap = Snapshot()
    c.update_snapshot(snap)
    c.add_pod(pod("p", "n1", cpu="1"))
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.list()] == ["n2"]
    c.add_node(node("n1"))
    c.update_snapshot(snap)
    assert sorted(ni.name for ni in snap.list()) == ["n1", "n2"]
    ni = snap.get("n1")
    assert ni is not None
    assert (ni.requested.milli_cpu, len(ni.pods)) == (1000, 1)
    assert snap.table.req_cpu[snap.index["n1"]] == 1000


def test_incremental_snapshot_replaces_only_changed_nodes() -> None:
    c = cache_with("n1", "n2", "n3")
    snap = Snapshot()
    c.update_snapshot(snap)
    before = {ni.name: ni for ni in snap.list()}
    gen = snap.generation
    c.assume_pod(pod("p", cpu="1"), "n2")
    c.update_snapshot(snap)
    after = {ni.name: ni for ni in snap.list()}
    assert after["n1"] is before["n1"]
    assert after["n3"] is before["n3"]
    assert after["n2"] is not before["n2"]
    assert (before["n2"].requested.milli_cpu, after["n2"].requested.milli_cpu) == (0, 1000)
    assert snap.generation == gen + 1
    # The snapshot is a copy: later cache changes do not leak into it until the next update.
    c.assume_pod(pod("q", cpu="1"), "n2")
    assert after["n2"].requested.milli_cpu == 1000
    assert int(snap.table.req_cpu[snap.index["n2"]]) == 1000


def test_snapshot_follows_node_tree_order_and_node_updates() -> None:
    c = Cache()
    for name, zone in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        c.add_node(make_node(name).capacity(cpu="4").label("topology.kubernetes.io/zone", zone).obj())
    snap = Snapshot()
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.list()] == ["a1", "b1", "a2"]
    c.update_node(make_node("a1").capacity(cpu="8").label("topology.kubernetes.io/zone", "a").obj())
    c.update_snapshot(snap)
    assert int(snap.table.alloc_cpu[snap.index["a1"]]) == 8000
    # A zone change reorders the list.
    c.update_node(make_node("a2").capacity(cpu="4").label("topology.kubernetes.io/zone", "b").obj())
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.list()] == ["a1", "b1", "a2"]
    assert snap.index == {"a1": 0, "b1": 1, "a2": 2}


def _check_rows(snap: Snapshot) -> None:
    t = snap.table
    for i, ni in enumerate(snap.list()):
        assert t.req_cpu[i] == ni.requested.milli_cpu
        assert t.req_mem[i] == ni.requested.memory
        assert t.req_eph[i] == ni.requested.ephemeral_storage
        assert t.alloc_cpu[i] == ni.allocatable.milli_cpu
        assert t.alloc_mem[i] == ni.allocatable.memory
        assert t.alloc_pods[i] == ni.allocatable.allowed_pod_number
        assert t.pod_count[i] == len(ni.pods)
        assert t.nz_cpu[i] == ni.non_zero_requested.milli_cpu
        assert t.nz_mem[i] == ni.non_zero_requested.memory


def test_node_table_rows_match_node_info_sums() -> None:
    c = Cache()
    c.add_node(make_node("n1").capacity(cpu="4", memory="8Gi", ephemeral_storage="10Gi").obj())
    c.add_node(make_node("n2").capacity(cpu="2", memory="4Gi").res({"example.com/gpu": "4"}).obj())
    c.add_pod(pod("a", "n1", cpu="500m", memory="1Gi", ephemeral_storage="1Gi"))
    c.add_pod(pod("b", "n1", cpu="250m", memory="512Mi"))
    c.add_pod(PodInfo(make_pod("empty").container().node("n1").obj()))  # no requests: 100m / 200Mi for scoring
    c.add_pod(PodInfo(make_pod("g").res({"example.com/gpu": "3", "cpu": "1"}).node("n2").obj()))
    snap = Snapshot()
    c.update_snapshot(snap)
    _check_rows(snap)
    t, i1, i2 = snap.table, snap.index["n1"], snap.index["n2"]
    # Hand-computed sums.
    assert (t.req_cpu[i1], t.req_mem[i1], t.req_eph[i1], t.pod_count[i1]) == (750, GI + 512 * MI, GI, 3)
    assert (t.nz_cpu[i1], t.nz_mem[i1]) == (750 + 100, GI + 512 * MI + 200 * MI)
    assert (t.alloc_cpu[i1], t.alloc_mem[i1], t.alloc_eph[i1], t.alloc_pods[i1]) == (4000, 8 * GI, 10 * GI, 110)
    alloc_gpu, req_gpu = t.scalar("example.com/gpu")
    assert (alloc_gpu[i2], req_gpu[i2], alloc_gpu[i1], req_gpu[i1]) == (4, 3, 0, 0)
    # Incremental update of one row.
    c.remove_pod(pod("b", "n1", cpu="250m", memory="512Mi"))
    c.update_snapshot(snap)
    _check_rows(snap)
    assert (t.req_cpu[i1], t.pod_count[i1]) == (500, 2)


def test_node_info_sums_add_and_remove() -> None:
    ni = NodeInfo(make_node("n").capacity(cpu="4").obj())
    a, b = pod("a", cpu="1", memory="1Gi"), pod("b", cpu="2")
    ni.add_pod(a)
    ni.add_pod(b)
    assert (ni.requested.milli_cpu, ni.requested.memory, len(ni.pods)) == (3000, GI, 2)
    g = ni.generation
    assert ni.remove_pod(a) is True
    assert ni.generation > g
    assert ni.remove_pod(a) is False
    assert (ni.requested.milli_cpu, ni.requested.memory, len(ni.pods)) == (2000, 0, 1)
