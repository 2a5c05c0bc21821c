"""VolumeBinding's assume caches (assume_cache.py).

Ported from pkg/scheduler/framework/plugins/volumebinding/passive_assume_cache_test.go (v1.37.2):
TestBasicCache, TestPVCacheWithIndex (the index is the storage class, as upstream's PV cache's),
TestAssume (every row), TestRestore, TestConcurrentAssume, TestAssumeUpdateCache and
TestDelayedInformerEvent. kubesched's caches read the informer's store directly (no event
handler), so "an informer event" is a change of the store; upstream's object identity checks
become identity of the stored dict (or of the assumed view).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.plugins.volumebinding.assume_cache import NotFoundError, PVAssumeCache, PVCAssumeCache

Store = dict[str, dict[str, Any]]


def make_obj(name: str, version: str, namespace: str = "ns1", **annotations: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": version,
                         "annotations": dict(annotations)}, "spec": {}}


def make_pv(name: str, version: str, class_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "resourceVersion": version}, "spec": {"storageClassName": class_name}}


def key_of(o: dict[str, Any]) -> str:
    return f"{o['metadata']['namespace']}/{o['metadata']['name']}"


def pvc_cache(store: Store) -> PVCAssumeCache:
    return PVCAssumeCache(store.get)


def pv_cache(store: Store) -> PVAssumeCache:
    return PVAssumeCache(store.get, lambda: list(store.values()))


def view(o: dict[str, Any]) -> PersistentVolumeClaim:
    return PersistentVolumeClaim.from_object(o)


def test_basic_cache() -> None:
    store: Store = {}
    cache = pvc_cache(store)
    with pytest.raises(NotFoundError):
        cache.get("ns1/nothere")
    for i in range(10):
        o = make_obj(f"test-{i}", "1")
        store[key_of(o)] = o
    assert all(cache.get(k).obj is o for k, o in store.items())
    updated = make_obj("test-3", "1")
    store[key_of(updated)] = updated
    assert cache.get("ns1/test-3").obj is updated
    del store["ns1/test-7"]
    with pytest.raises(NotFoundError):
        cache.get("ns1/test-7")


def test_pv_cache_with_index() -> None:
    store: Store = {}
    cache = pv_cache(store)
    for prefix, cls in (("test", "test1"), ("test2", "test2")):
        for i in range(10):
            store[f"{prefix}-{i}"] = make_pv(f"{prefix}-{i}", "1", cls)

    def listed(cls: str) -> list[Any]:
        return sorted(v.name for v in cache.list_pvs(cls))

    assert listed("test1") == sorted(f"test-{i}" for i in range(10))
    assert listed("test2") == sorted(f"test2-{i}" for i in range(10))
    store["test-3"] = make_pv("test-3", "2", "test1")
    assert [v.obj for v in cache.list_pvs("test1") if v.name == "test-3"] == [store["test-3"]]
    del store["test-7"]
    assert listed("test1") == sorted(f"test-{i}" for i in range(10) if i != 7)
    assert listed("test2") == sorted(f"test2-{i}" for i in range(10))


ASSUME = [
    ("success-same-version", make_obj("pvc1", "5"), make_obj("pvc1", "5"), True),
    ("fail-new-higher-version", make_obj("pvc1", "5"), make_obj("pvc1", "6"), False),
    ("fail-old-not-found", make_obj("pvc2", "5"), make_obj("pvc1", "5"), False),
    ("fail-new-lower-version", make_obj("pvc1", "5"), make_obj("pvc1", "4"), False),
    ("fail-new-bad-version", make_obj("pvc1", "5"), make_obj("pvc1", "a"), False),
    ("fail-old-bad-version", make_obj("pvc1", "a"), make_obj("pvc1", "5"), False),
]


@pytest.mark.parametrize(("name", "old", "new", "ok"), ASSUME, ids=[a[0] for a in ASSUME])
def test_assume(name: str, old: dict[str, Any], new: dict[str, Any], ok: bool) -> None:
    store: Store = {key_of(old): old}
    cache = pvc_cache(store)
    assert cache.get(key_of(old)).obj is old
    new_view = view(new)
    if ok:
        cache.assume(new_view)
        assert cache.get(key_of(old)) is new_view
    else:
        with pytest.raises((NotFoundError, RuntimeError)):
            cache.assume(new_view)
        assert cache.get(key_of(old)).obj is old


def test_restore() -> None:
    store: Store = {}
    cache = pvc_cache(store)
    cache.restore(view(make_obj("", "")))  # nothing to restore: no error
    old = make_obj("pvc1", "5")
    store[key_of(old)] = old
    cache.restore(view(old))
    assert cache.get("ns1/pvc1").obj is old
    new = view(make_obj("pvc1", "5"))
    cache.assume(new)
    assert cache.get("ns1/pvc1") is new
    cache.restore(new)
    assert cache.get("ns1/pvc1").obj is old


def test_concurrent_assume() -> None:
    store: Store = {"ns1/pvc1": make_obj("pvc1", "5")}
    cache = pvc_cache(store)
    obj1_update = view(make_obj("pvc1", "5"))
    cache.assume(obj1_update)
    assert cache.get("ns1/pvc1") is obj1_update
    store["ns1/pvc1"] = make_obj("pvc1", "7")  # updated elsewhere
    obj2_update = view(make_obj("pvc1", "7"))
    cache.assume(obj2_update)
    cache.restore(obj1_update)  # obj1's write failed with a conflict
    assert cache.get("ns1/pvc1") is obj2_update


def test_assume_update_cache() -> None:
    obj = make_obj("test-pvc0", "1", "test-ns")
    store: Store = {key_of(obj): obj}
    cache = pvc_cache(store)
    assert cache.get(key_of(obj)).obj is obj
    new = copy.deepcopy(obj)
    new["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = "test-node"
    new_view = view(new)
    cache.assume(new_view)
    assert cache.get(key_of(obj)) is new_view
    store[key_of(obj)] = copy.deepcopy(obj)  # the informer re-delivers the old object
    assert cache.get(key_of(obj)) is new_view


def test_delayed_informer_event() -> None:
    """The store already holds version 2 when the assumption is made; older events change nothing."""
    obj2 = make_obj("test-pvc0", "2", "test-ns")
    store: Store = {key_of(obj2): obj2}
    cache = pvc_cache(store)
    new = copy.deepcopy(obj2)
    new["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = "test-node"
    new_view = view(new)
    cache.assume(new_view)
    assert cache.get(key_of(new)) is new_view


def test_pv_assume_is_seen_by_list() -> None:
    """ListPVs substitutes the assumed version (what FindPodVolumes of the next pod sees)."""
    store: Store = {"pv1": make_pv("pv1", "3", "wait")}
    cache = pv_cache(store)
    assumed = PersistentVolume.from_object({**make_pv("pv1", "3", "wait"), "spec": {
        "storageClassName": "wait", "claimRef": {"namespace": "ns", "name": "c"}}})
    cache.assume(assumed)
    assert cache.list_pvs("wait") == [assumed]
    assert cache.assumed_count() == 1
    store["pv1"] = make_pv("pv1", "4", "wait")  # the informer moved past the assumption
    assert [v.obj for v in cache.list_pvs("wait")] == [store["pv1"]]
