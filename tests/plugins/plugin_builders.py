"""Small builders for plugin tests: the API objects upstream's tests make with ``st.MakePod()`` /
``st.MakeNode()`` (pkg/scheduler/testing/wrappers.go), a Snapshot like ``cache.NewSnapshot(pods,
nodes)``, and a handle that serves it. Objects stay plain dicts, as the API server sends them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched import testing
from kubesched.config.releases import V1_35, Release
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo

_uid = itertools.count(1)


def make_node(
    name: str,
    capacity: Mapping[str, Any] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] | None = None,
    images: Sequence[Mapping[str, Any]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """``st.MakeNode().Name(name).Capacity(capacity)``: capacity is also the allocatable."""
    node: dict[str, Any] = {"metadata": {"name": name}, "spec": {}, "status": {}}
    if labels:
        node["metadata"]["labels"] = dict(labels)
    if taints is not None:
        node["spec"]["taints"] = [dict(t) for t in taints]
    if unschedulable:
        node["spec"]["unschedulable"] = True
    if capacity:
        node["status"]["capacity"] = dict(capacity)
        node["status"]["allocatable"] = dict(capacity)
    if images is not None:
        node["status"]["images"] = [dict(i) for i in images]
    return node


def make_resource_node(
    name: str, milli_cpu: int, memory: int, extended: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """noderesources' test ``makeNode(name, milliCPU, memory, extendedResource)``."""
    cap: dict[str, Any] = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    for k, v in (extended or {}).items():
        cap[k] = str(v)
    return make_node(name, cap)


def make_pod(
    name: str = "",
    *,
    node: str = "",
    requests: Iterable[Mapping[str, Any] | None] = (),
    sidecar_requests: Iterable[Mapping[str, Any]] = (),
    uid: str | None = None,
    **spec_fields: Any,
) -> dict[str, Any]:
    """``st.MakePod().Req(r1).Req(r2)...``: one container per request list (None: no requests)."""
    pod_name = name or f"pod-{next(_uid)}"
    containers = []
    for i, r in enumerate(requests):
        c: dict[str, Any] = {"name": f"c{i}", "image": "pause"}
        if r is not None:
            c["resources"] = {"requests": dict(r)}
        containers.append(c)
    pod: dict[str, Any] = {
        "metadata": {"name": pod_name, "namespace": "default", "uid": uid or f"uid-{pod_name}"},
        "spec": {"containers": containers},
    }
    inits = [
        {"name": f"s{i}", "image": "pause", "restartPolicy": "Always", "resources": {"requests": dict(r)}}
        for i, r in enumerate(sidecar_requests)
    ]
    if inits:
        pod["spec"]["initContainers"] = inits
    if node:
        pod["spec"]["nodeName"] = node
    pod["spec"].update(spec_fields)
    return pod


def node_info(node: Mapping[str, Any], pods: Iterable[Mapping[str, Any]] = ()) -> NodeInfo:
    return NodeInfo(dict(node), [PodInfo(dict(p)) for p in pods])


def make_snapshot(nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]] = ()) -> Snapshot:
    """``cache.NewSnapshot(pods, nodes)``: each pod lands on the node named by its spec.nodeName."""
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    for p in pods:
        by_node.setdefault(str((p.get("spec") or {}).get("nodeName") or ""), []).append(p)
    return Snapshot(node_info(n, by_node.get(n["metadata"]["name"], [])) for n in nodes)


class FakeHandle(testing.FakeHandle):
    """The framework handle over a snapshot; every other member inert (``kubesched.testing.FakeHandle``).

    Release 1.35 unless told otherwise: the plugin tables here were ported from v1.35.4's tests,
    and they keep passing under ``--emulated-version 1.35`` (a table of a later release says so)."""

    def __init__(self, snapshot: Snapshot | None = None, release: Release = V1_35) -> None:
        super().__init__(snapshot, release=release)
