"""Builders for the volume plugins' tests: storage objects as the API server sends them (plain
dicts with apiVersion and kind, so the test kit's client lists them by kind), and pods with volumes
(upstream ``st.MakePod().PVC(name)`` / ``.Volume(v)``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched import testing
from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.framework.snapshot import Snapshot

_uid = itertools.count(1)


def pv(name: str, *, labels: Mapping[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec}


def pvc(name: str, namespace: str = "default", *, volume_name: str = "", storage_class: str | None = None,
        access_modes: Iterable[str] = (), annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        md["annotations"] = dict(annotations)
    spec: dict[str, Any] = {}
    if volume_name:
        spec["volumeName"] = volume_name
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if access_modes:
        spec["accessModes"] = list(access_modes)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}


def storage_class(name: str, binding_mode: str | None = None, provisioner: str = "") -> dict[str, Any]:
    sc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    if binding_mode is not None:
        sc["volumeBindingMode"] = binding_mode
    if provisioner:
        sc["provisioner"] = provisioner
    return sc


def pod(name: str = "", namespace: str = "default", *, claims: Iterable[str] = (),
        volumes: Iterable[Mapping[str, Any]] = (), node: str = "") -> dict[str, Any]:
    """``st.MakePod().Name(name).Namespace(ns).PVC(c1).PVC(c2).Volume(v)...``: each claim becomes a
    volume named after it."""
    vols: list[dict[str, Any]] = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    vols.extend(dict(v) for v in volumes)
    md: dict[str, Any] = {"name": name or f"pod-{next(_uid)}", "uid": f"pod-uid-{next(_uid)}"}
    if namespace:
        md["namespace"] = namespace
    spec: dict[str, Any] = {"containers": []}
    if vols:
        spec["volumes"] = vols
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def handle(objects: Iterable[Mapping[str, Any]] = (), snapshot: Snapshot | None = None,
           release: Release = DEFAULT_RELEASE) -> testing.FakeHandle:
    return testing.FakeHandle(snapshot, objects, release=release)
