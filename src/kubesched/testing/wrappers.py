"""Builders for pods and nodes (the Python form of upstream ``pkg/scheduler/testing/wrappers.go``).

pod = make_pod("web").namespace("shop").req(cpu="500m", memory="1Gi").priority(10).obj()
node = make_node("n1").capacity(cpu="4", memory="8Gi").label("zone", "a").obj()
"""

from __future__ import annotations

import uuid
from typing import Any


class PodWrapper:
    def __init__(self, name: str) -> None:
        self._pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched-test/{name}")),
            },
            "spec": {"schedulerName": "default-scheduler", "containers": []},
            "status": {},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._pod["spec"]
        return spec

    def namespace(self, ns: str) -> PodWrapper:
        self._pod["metadata"]["namespace"] = ns
        self._pod["metadata"]["uid"] = str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched-test/{ns}/{self._pod['metadata']['name']}")
        )
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._pod["metadata"]["uid"] = uid
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._pod["metadata"].setdefault("labels", {})[key] = value
        return self

    def annotation(self, key: str, value: str) -> PodWrapper:
        self._pod["metadata"].setdefault("annotations", {})[key] = value
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        self._spec["schedulerName"] = name
        return self

    def priority(self, p: int) -> PodWrapper:
        self._spec["priority"] = p
        return self

    def node(self, name: str) -> PodWrapper:
        """Already bound to ``name`` (``spec.nodeName``)."""
        self._spec["nodeName"] = name
        return self

    def nominated_node(self, name: str) -> PodWrapper:
        self._pod["status"]["nominatedNodeName"] = name
        return self

    def container(
        self,
        requests: dict[str, Any] | None = None,
        *,
        name: str | None = None,
        limits: dict[str, Any] | None = None,
        ports: list[dict[str, Any]] | None = None,
        image: str = "",
    ) -> PodWrapper:
        c: dict[str, Any] = {"name": name or f"c{len(self._spec['containers'])}", "image": image or "pause"}
        res: dict[str, Any] = {}
        if requests:
            res["requests"] = {k: str(v) for k, v in requests.items()}
        if limits:
            res["limits"] = {k: str(v) for k, v in limits.items()}
        if res:
            c["resources"] = res
        if ports:
            c["ports"] = ports
        self._spec["containers"].append(c)
        return self

    def req(self, **requests: Any) -> PodWrapper:
        """One container requesting these resources (``ephemeral_storage`` -> ``ephemeral-storage``)."""
        return self.container({k.replace("_", "-"): v for k, v in requests.items()})

    def res(self, requests: dict[str, Any]) -> PodWrapper:
        """One container with exactly these requests (names as in Kubernetes, e.g. ``example.com/gpu``)."""
        return self.container(requests)

    def init_req(self, requests: dict[str, Any], *, sidecar: bool = False) -> PodWrapper:
        c: dict[str, Any] = {
            "name": f"init{len(self._spec.get('initContainers', []))}",
            "resources": {"requests": {k: str(v) for k, v in requests.items()}},
        }
        if sidecar:
            c["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(c)
        return self

    def overhead(self, **resources: Any) -> PodWrapper:
        self._spec["overhead"] = {k.replace("_", "-"): str(v) for k, v in resources.items()}
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodWrapper:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def node_selector(self, selector: dict[str, str]) -> PodWrapper:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> PodWrapper:
        t: dict[str, Any] = {"operator": operator}
        if key:
            t["key"] = key
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def affinity(self, affinity: dict[str, Any]) -> PodWrapper:
        self._spec["affinity"] = affinity
        return self

    def scheduling_gates(self, *gates: str) -> PodWrapper:
        self._spec["schedulingGates"] = [{"name": g} for g in gates]
        return self

    def preemption_policy(self, policy: str) -> PodWrapper:
        self._spec["preemptionPolicy"] = policy
        return self

    def set(self, path: str, value: Any) -> PodWrapper:
        """Set any field by a dotted path, e.g. ``set("spec.hostNetwork", True)``."""
        cur = self._pod
        parts = path.split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = value
        return self

    def obj(self) -> dict[str, Any]:
        return self._pod


class NodeWrapper:
    def __init__(self, name: str) -> None:
        self._node: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"allocatable": {"pods": "110"}, "capacity": {"pods": "110"}},
        }

    def label(self, key: str, value: str) -> NodeWrapper:
        self._node["metadata"]["labels"][key] = value
        return self

    def annotation(self, key: str, value: str) -> NodeWrapper:
        self._node["metadata"].setdefault("annotations", {})[key] = value
        return self

    def capacity(self, **resources: Any) -> NodeWrapper:
        """Capacity and allocatable (``ephemeral_storage`` -> ``ephemeral-storage``)."""
        for k, v in resources.items():
            self._node["status"]["allocatable"][k.replace("_", "-")] = str(v)
            self._node["status"]["capacity"][k.replace("_", "-")] = str(v)
        return self

    def res(self, resources: dict[str, Any]) -> NodeWrapper:
        """Allocatable with Kubernetes resource names (e.g. ``nvidia.com/gpu``)."""
        for k, v in resources.items():
            self._node["status"]["allocatable"][k] = str(v)
            self._node["status"]["capacity"][k] = str(v)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeWrapper:
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._node["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self, flag: bool = True) -> NodeWrapper:
        self._node["spec"]["unschedulable"] = flag
        return self

    def images(self, images: dict[str, int]) -> NodeWrapper:
        self._node["status"]["images"] = [{"names": [n], "sizeBytes": s} for n, s in images.items()]
        return self

    def obj(self) -> dict[str, Any]:
        return self._node


def make_pod(name: str = "pod") -> PodWrapper:
    return PodWrapper(name)


def make_node(name: str = "node") -> NodeWrapper:
    return NodeWrapper(name)
