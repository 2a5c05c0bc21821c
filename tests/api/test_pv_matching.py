"""FindMatchingVolume as the scheduler calls it (a node, delayBinding, VolumeAttributesClass GA):
component-helpers storage/volume/pv_helpers_test.go TestFindMatchVolumeWithNode (v0.37.2), the rows
with VolumeAttributesClass enabled; and GetBindVolumeToClaim's rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.pv_matching import bind_volume_to_claim, find_matching_volume
from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim


def _volume(uid: str, name: str, capacity: str, available: bool, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "capacity": {"storage": capacity}, "local": {}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
        "volumeMode": "Filesystem", **spec,
    }
    obj: dict[str, Any] = {"metadata": {"uid": uid, "name": name}, "spec": body}
    if available:
        obj["status"] = {"phase": "Available"}
    return obj


def _affinity(key: str, value: str) -> dict[str, Any]:
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": key, "operator": "In", "values": [value]}]}]}}


VOLUMES = [
    _volume("local-small", "local001", "5G", True),
    _volume("local-pd-very-large", "local002", "200E", True, storageClassName="large"),
    _volume("affinity-pv", "affinity001", "100G", True, storageClassName="wait",
            nodeAffinity=_affinity("key1", "value1")),
    _volume("affinity-pv2", "affinity002", "150G", True, storageClassName="wait",
            nodeAffinity=_affinity("key1", "value1")),
    _volume("affinity-prebound", "affinity003", "100G", True, storageClassName="wait",
            claimRef={"name": "claim02", "namespace": "myns"}, nodeAffinity=_affinity("key1", "value1")),
    _volume("affinity-pv3", "affinity003", "200G", True, storageClassName="wait",
            nodeAffinity=_affinity("key1", "value3")),
    _volume("affinity-pv4", "affinity004", "200G", False, storageClassName="wait",
            nodeAffinity=_affinity("key1", "value4")),
]


def _with_vac(name: str) -> list[dict[str, Any]]:
    return [{**v, "spec": {**v["spec"], "volumeAttributesClassName": name}} for v in VOLUMES]


def _claim(name: str, modes: list[str], vac: str | None = None) -> PersistentVolumeClaim:
    spec: dict[str, Any] = {"accessModes": modes, "resources": {"requests": {"storage": "100G"}},
                            "storageClassName": "wait", "volumeMode": "Filesystem"}
    if vac is not None:
        spec["volumeAttributesClassName"] = vac
    return PersistentVolumeClaim.from_object({"metadata": {"name": name, "namespace": "myns"}, "spec": spec})


RWO = ["ReadWriteOnce"]
SCENARIOS = {
    "success-match": ("affinity-pv", VOLUMES, _claim("claim01", RWO), "value1", ()),
    "success-prebound": ("affinity-prebound", VOLUMES, _claim("claim02", RWO), "value1", ()),
    "success-exclusion": ("affinity-pv2", VOLUMES, _claim("claim01", RWO), "value1", ("affinity001",)),
    "fail-exclusion": ("", VOLUMES, _claim("claim01", RWO), "value1",
                       ("affinity001", "affinity002", "affinity002-vac")),
    "fail-accessmode": ("", VOLUMES, _claim("claim01", ["ReadWriteMany"]), "value1", ()),
    "fail-nodeaffinity": ("", VOLUMES, _claim("claim01", RWO), "value2", ()),
    "fail-prebound-node-affinity": ("", VOLUMES, _claim("claim02", RWO), "value3", ()),
    "fail-nonavaliable": ("", VOLUMES, _claim("claim04", RWO), "value4", ()),
    "success-bad-and-good-node-affinity": ("affinity-pv3", VOLUMES, _claim("claim03", RWO), "value3", ()),
    "success-match-with-vac": ("affinity-pv", _with_vac("gold"), _claim("claim01", RWO, "gold"), "value1", ()),
    "fail-vac": ("", VOLUMES, _claim("claim01", RWO, "silver"), "value1", ()),
    "fail-prebound-vac": ("", _with_vac("gold"), _claim("claim02", RWO, "silver"), "value1", ()),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_find_match_volume_with_node(name: str) -> None:
    want, volumes, claim, value, excluded = SCENARIOS[name]
    got = find_matching_volume(claim, [PersistentVolume.from_object(v) for v in volumes], {"key1": value}, excluded)
    assert (got.uid if got is not None else "") == want


def test_bind_volume_to_claim() -> None:
    """GetBindVolumeToClaim: a claimRef naming the claim (with its UID) and bound-by-controller on a
    volume that was not pre-bound; nothing dirty when both are there already."""
    claim = PersistentVolumeClaim.from_object(
        {"metadata": {"name": "c", "namespace": "ns", "uid": "u1", "resourceVersion": "7"}, "spec": {}})
    free = PersistentVolume.from_object({"metadata": {"name": "pv"}, "spec": {}})
    obj, dirty = bind_volume_to_claim(free, claim)
    assert dirty
    assert obj["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "c", "uid": "u1",
                                       "apiVersion": "v1", "resourceVersion": "7"}
    assert obj["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert free.obj == {"metadata": {"name": "pv"}, "spec": {}}  # a copy: the informer's object is untouched
    # Pre-bound by the user (no UID): the UID is filled in, no bound-by-controller annotation.
    prebound = PersistentVolume.from_object(
        {"metadata": {"name": "pv"}, "spec": {"claimRef": {"name": "c", "namespace": "ns"}}})
    obj, dirty = bind_volume_to_claim(prebound, claim)
    assert dirty and obj["spec"]["claimRef"]["uid"] == "u1" and "annotations" not in obj["metadata"]
    done = PersistentVolume.from_object(obj)
    assert bind_volume_to_claim(done, claim)[1] is False
