"""Fluent builders in the shape of upstream's ``st.MakePod()`` / ``st.MakeNode()`` /
``st.MakeLabelSelector()`` (pkg/scheduler/testing/wrappers.go), so ported test tables read like the
Go originals, plus a handle that also serves a client with cluster objects (namespaces, services).

Shared between plugin tests: add builders, do not change what existing ones produce.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from plugin_builders import FakeHandle, make_snapshot

from kubesched.framework.snapshot import Snapshot

__all__ = [
    "ClientHandle",
    "FakeClient",
    "LabelSelectorWrapper",
    "NodeWrapper",
    "PodWrapper",
    "make_label_selector",
    "make_node",
    "make_pod",
    "make_snapshot",
]

_uid = itertools.count(1)

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class LabelSelectorWrapper:
    """``st.MakeLabelSelector()``: ``.label(k, v)`` adds matchLabels, the others matchExpressions."""

    def __init__(self) -> None:
        self._sel: dict[str, Any] = {}

    def label(self, key: str, value: str) -> LabelSelectorWrapper:
        self._sel.setdefault("matchLabels", {})[key] = value
        return self

    def _expr(self, key: str, op: str, values: Sequence[str] = ()) -> LabelSelectorWrapper:
        e: dict[str, Any] = {"key": key, "operator": op}
        if values:
            e["values"] = list(values)
        self._sel.setdefault("matchExpressions", []).append(e)
        return self

    def in_(self, key: str, values: Sequence[str]) -> LabelSelectorWrapper:
        return self._expr(key, "In", values)

    def not_in(self, key: str, values: Sequence[str]) -> LabelSelectorWrapper:
        return self._expr(key, "NotIn", values)

    def exists(self, key: str) -> LabelSelectorWrapper:
        return self._expr(key, "Exists")

    def not_exist(self, key: str) -> LabelSelectorWrapper:
        return self._expr(key, "DoesNotExist")

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._sel)


def make_label_selector() -> LabelSelectorWrapper:
    return LabelSelectorWrapper()


class PodWrapper:
    """``st.MakePod()``: a pod without containers; every pod gets its own UID."""

    def __init__(self) -> None:
        n = next(_uid)
        self._pod: dict[str, Any] = {"metadata": {"uid": f"pod-uid-{n}"}, "spec": {}}

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._pod["spec"]
        return spec

    def name(self, name: str) -> PodWrapper:
        self._pod["metadata"]["name"] = name
        return self

    def namespace(self, ns: str) -> PodWrapper:
        """Upstream's tests often leave the namespace empty; PodInfo reads that as ``default``."""
        if ns:
            self._pod["metadata"]["namespace"] = ns
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._pod["metadata"]["uid"] = uid
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._pod["metadata"].setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> PodWrapper:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def node(self, name: str) -> PodWrapper:
        self._spec["nodeName"] = name
        return self

    def terminating(self) -> PodWrapper:
        self._pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def owner_reference(self, name: str, api_version: str, kind: str) -> PodWrapper:
        """A controller owner reference (``st.PodWrapper.OwnerReference``)."""
        self._pod["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "controller": True, "uid": f"{kind}-{name}"}
        )
        return self

    def node_selector(self, selector: Mapping[str, str]) -> PodWrapper:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def _node_affinity_expr(self, key: str, op: str, values: Sequence[str]) -> PodWrapper:
        na = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        terms = na.setdefault(REQUIRED, {}).setdefault("nodeSelectorTerms", [])
        if not terms:
            terms.append({"matchExpressions": []})
        terms[0]["matchExpressions"].append({"key": key, "operator": op, "values": list(values)})
        return self

    def node_affinity_in(self, key: str, values: Sequence[str]) -> PodWrapper:
        """``NodeAffinityIn(key, vals, st.NodeSelectorTypeMatchExpressions)``."""
        return self._node_affinity_expr(key, "In", values)

    def node_affinity_not_in(self, key: str, values: Sequence[str]) -> PodWrapper:
        return self._node_affinity_expr(key, "NotIn", values)

    def toleration(self, key: str) -> PodWrapper:
        """``st.PodWrapper.Toleration(key)``: tolerate the key with any value and effect."""
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def affinity(self, affinity: Mapping[str, Any]) -> PodWrapper:
        self._spec["affinity"] = copy.deepcopy(dict(affinity))
        return self

    def _pod_affinity(self, kind: str, key: str, topology_key: str, op: str, values: Sequence[str]) -> PodWrapper:
        expr: dict[str, Any] = {"key": key, "operator": op}
        if values:
            expr["values"] = list(values)
        term = {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topology_key}
        section = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        section.setdefault(REQUIRED, []).append(term)
        return self

    # st.PodAffinityIn/NotIn/Exists(..., st.PodAffinityWithRequiredReq) and the anti-affinity ones.
    def pod_affinity_in(self, key: str, topology_key: str, values: Sequence[str]) -> PodWrapper:
        return self._pod_affinity("podAffinity", key, topology_key, "In", values)

    def pod_affinity_not_in(self, key: str, topology_key: str, values: Sequence[str]) -> PodWrapper:
        return self._pod_affinity("podAffinity", key, topology_key, "NotIn", values)

    def pod_affinity_exists(self, key: str, topology_key: str) -> PodWrapper:
        return self._pod_affinity("podAffinity", key, topology_key, "Exists", ())

    def pod_anti_affinity_in(self, key: str, topology_key: str, values: Sequence[str]) -> PodWrapper:
        return self._pod_affinity("podAntiAffinity", key, topology_key, "In", values)

    def pod_anti_affinity_not_in(self, key: str, topology_key: str, values: Sequence[str]) -> PodWrapper:
        return self._pod_affinity("podAntiAffinity", key, topology_key, "NotIn", values)

    def pod_anti_affinity_exists(self, key: str, topology_key: str) -> PodWrapper:
        return self._pod_affinity("podAntiAffinity", key, topology_key, "Exists", ())

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str,
        selector: Mapping[str, Any] | None,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: Sequence[str] | None = None,
    ) -> PodWrapper:
        """``st.PodWrapper.SpreadConstraint`` with the same argument order."""
        c: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when_unsatisfiable,
        }
        if selector is not None:
            c["labelSelector"] = copy.deepcopy(dict(selector))
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._pod)


def make_pod() -> PodWrapper:
    return PodWrapper()


class NodeWrapper:
    """``st.MakeNode()``."""

    def __init__(self) -> None:
        self._node: dict[str, Any] = {"metadata": {}, "spec": {}, "status": {}}

    def name(self, name: str) -> NodeWrapper:
        self._node["metadata"]["name"] = name
        return self

    def label(self, key: str, value: str) -> NodeWrapper:
        self._node["metadata"].setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> NodeWrapper:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def taints(self, taints: Iterable[Mapping[str, Any]]) -> NodeWrapper:
        self._node["spec"]["taints"] = [dict(t) for t in taints]
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._node)


def make_node() -> NodeWrapper:
    return NodeWrapper()


class FakeClient:
    """``list_objects`` over a fixed set of objects (what informers would hold)."""

    def __init__(self, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self.objects = [dict(o) for o in objects]
        self.list_calls = 0

    def list_objects(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        self.list_calls += 1
        return [
            o for o in self.objects
            if o.get("kind") == kind and (not api_version or o.get("apiVersion", "v1") == api_version)
        ]


class ClientHandle(FakeHandle):
    """The snapshot plus a client over ``objects`` (Namespaces, Services, ReplicaSets...)."""

    def __init__(self, snapshot: Snapshot | None = None, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        super().__init__(snapshot)
        self._client = FakeClient(objects)

    def client(self) -> FakeClient:
        return self._client
