"""The simulated cluster: an in-process API server with a virtual clock.

It stores objects, delivers the same events a real informer would (pod and node adds, updates and
deletes) to the scheduler, binds pods, deletes preemption victims, records events, and completes
pods after their ``sim.kubesched.io/duration``. All of it runs on the virtual clock, so a run is
deterministic for a given seed.
"""

from __future__ import annotations

import copy
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.clock import VirtualClock, rfc3339
from kubesched.framework.cluster import BindConflictError, EventHandlers, ObjectConflictError
from kubesched.framework.events import ActionType
from kubesched.sim.manifests import DURATION_ANNOTATION, ClusterObjects, parse_duration

log = logging.getLogger("kubesched.sim")


@dataclass
class RecordedEvent:
    time: float
    namespace: str
    name: str
    type: str
    reason: str
    action: str
    note: str
    reporting_controller: str


def _key(obj: Mapping[str, Any]) -> str:
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return f"{ns}/{md.get('name')}" if ns else str(md.get("name"))


class SimCluster:
    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.handlers: EventHandlers | None = None
        self.pods: dict[str, dict[str, Any]] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.objects: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.events: list[RecordedEvent] = []
        #: Every pod ever created, by key, with the lifecycle facts a report needs.
        self.history: dict[str, dict[str, Any]] = {}
        self.bind_count: dict[str, int] = {}
        #: resourceVersions the simulator hands out on updates (loaded objects keep theirs).
        self._rv = 0
        #: Simulated controllers: called with (kind, old, new) after each object add or update.
        self.object_watchers: list[Callable[[str, dict[str, Any] | None, dict[str, Any]], None]] = []
        #: Simulated controllers that act on a new pod before the scheduler sees it.
        self.pod_created_hooks: list[Callable[[dict[str, Any]], None]] = []
        #: Called with a pod after it left the cluster (deleted or completed), for the simulated
        #: resourceclaim controller (:mod:`kubesched.sim.claim_controller`).
        self.pod_removed_hooks: list[Callable[[Mapping[str, Any]], None]] = []

    def add_event_handlers(self, handlers: EventHandlers) -> None:
        self.handlers = handlers

    @property
    def _s(self) -> EventHandlers:
        assert self.handlers is not None, "no event handlers registered (Scheduler registers its own)"
        return self.handlers

    # ------------------------------------------------------------------------------------------
    # loading
    # ------------------------------------------------------------------------------------------
    def load(self, objs: ClusterObjects, arrival: Callable[[dict[str, Any]], float | None] | None = None) -> None:
        """Create every object: others and nodes now, pods now or at their arrival time."""
        for (api_version, kind), items in objs.others.items():
            for o in items:
                self.create_object(api_version, kind, o)
        for n in objs.nodes:
            self.add_node(n)
        for p in objs.pods:
            when = arrival(p) if arrival else None
            if when is None or when <= self.clock.now():
                self.create_pod(p)
            else:
                self.clock.call_at(when, lambda p=p: self.create_pod(p))  # type: ignore[misc]

    # ------------------------------------------------------------------------------------------
    # objects
    # ------------------------------------------------------------------------------------------
    def create_object(self, api_version: str, kind: str, obj: dict[str, Any]) -> None:
        store = self.objects.setdefault((api_version, kind), {})
        old = store.get(_key(obj))
        store[_key(obj)] = obj
        if self.handlers is not None:
            self._s.on_object_event(kind, ActionType.ADD if old is None else ActionType.UPDATE_OTHER, old, obj)
        for watcher in list(self.object_watchers):
            watcher(kind, old, obj)

    def delete_object(self, api_version: str, kind: str, obj: Mapping[str, Any]) -> None:
        old = self.objects.get((api_version, kind), {}).pop(_key(obj), None)
        if old is not None and self.handlers is not None:
            self._s.on_object_event(kind, ActionType.DELETE, old, None)

    def list_objects(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        if kind == "Pod":
            return list(self.pods.values())
        if kind == "Node":
            return list(self.nodes.values())
        out: list[dict[str, Any]] = []
        for (av, k), store in self.objects.items():
            if k == kind and (not api_version or av == api_version or av.split("/")[0] == api_version.split("/")[0]):
                out.extend(store.values())
        return out

    def get_object(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        key = f"{namespace}/{name}" if namespace else name
        if kind == "Pod":
            return self.pods.get(key)
        if kind == "Node":
            return self.nodes.get(name)
        for (av, k), store in self.objects.items():
            if k == kind and (not api_version or av == api_version or av.split("/")[0] == api_version.split("/")[0]):
                obj = store.get(key)
                if obj is not None:
                    return obj
        return None

    def update_object_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        av, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        store = self.objects.get((av, kind), {})
        cur = store.get(_key(obj))
        if cur is None:
            return
        new = {**cur, "status": dict(status)}
        if av.startswith("resource.k8s.io/"):
            # A claim's allocation is a watched change like any other: a new resourceVersion and
            # an event (as the API server's watch reports it), so waiting pods are requeued.
            self._rv += 1
            new["metadata"] = {**(cur.get("metadata") or {}), "resourceVersion": str(self._rv)}
            store[_key(obj)] = new
            if self.handlers is not None:
                self._s.on_object_event(kind, ActionType.UPDATE_OTHER, cur, new)
            for watcher in list(self.object_watchers):
                watcher(kind, cur, new)
            return
        store[_key(obj)] = new

    def store_object(self, api_version: str, kind: str, obj: dict[str, Any]) -> None:
        """Create or replace an object with a fresh resourceVersion (the simulated controllers' writes)."""
        self._rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        self.create_object(api_version, kind, obj)

    def update_object(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Replace a stored object (not a pod or node), optimistic on its resourceVersion; the
        stored copy gets a new resourceVersion and the update is an event, as from an informer.
        The simulated controllers (:mod:`kubesched.sim.pv_controller`) react before it returns."""
        av, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        store = self.objects.get((av, kind), {})
        key = _key(obj)
        cur = store.get(key)
        if cur is None:
            raise ObjectConflictError(f'{kind} "{key}" not found')
        given = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        stored = str((cur.get("metadata") or {}).get("resourceVersion") or "")
        if given != stored:
            raise ObjectConflictError(
                f'Operation cannot be fulfilled on {kind} "{key}": the object has been modified; '
                "please apply your changes to the latest version and try again"
            )
        self._rv += 1
        new = copy.deepcopy(dict(obj))
        new.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        store[key] = new
        if self.handlers is not None:
            self._s.on_object_event(kind, ActionType.UPDATE_OTHER, cur, new)
        for watcher in list(self.object_watchers):
            watcher(kind, cur, new)
        return new

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A client ``Create`` (not of a pod or node): ``metadata.generateName`` gets a random
        suffix, the object a UID, a resourceVersion and a creationTimestamp; an existing name is
        refused (ObjectConflictError, the API server's AlreadyExists)."""
        av, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        new = copy.deepcopy(dict(obj))
        md = new.setdefault("metadata", {})
        store = self.objects.get((av, kind), {})
        if not md.get("name") and md.get("generateName"):
            while True:
                md["name"] = f"{md['generateName']}{self._suffix()}"
                if _key(new) not in store:
                    break
        if _key(new) in store:
            raise ObjectConflictError(f'{kind} "{_key(new)}" already exists')
        self._rv += 1
        md["uid"] = str(uuid.UUID(int=self._rv, version=4))
        md["resourceVersion"] = str(self._rv)
        md["creationTimestamp"] = rfc3339(self.clock.now())
        self.create_object(av, kind, new)
        return new

    def delete(self, obj: Mapping[str, Any]) -> None:
        """A client ``Delete`` (not of a pod or node); an object already gone is no error."""
        self.delete_object(str(obj.get("apiVersion", "")), str(obj.get("kind", "")), obj)

    def _suffix(self) -> str:
        """``names.SimpleNameGenerator``: five characters, reproducible from the resourceVersion."""
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        n, out = self._rv * 2654435761 + 97, []
        for _ in range(5):
            n, r = divmod(n, len(alphabet))
            out.append(alphabet[r])
        return "".join(out)

    def add_node(self, node: dict[str, Any]) -> None:
        self.nodes[node["metadata"]["name"]] = node
        self._s.on_node_add(node)

    def update_node(self, node: dict[str, Any]) -> None:
        old = self.nodes.get(node["metadata"]["name"])
        self.nodes[node["metadata"]["name"]] = node
        self._s.on_node_update(old, node)

    def delete_node(self, name: str) -> None:
        node = self.nodes.pop(name, None)
        if node is not None:
            self._s.on_node_delete(node)

    def create_pod(self, pod: dict[str, Any]) -> None:
        key = _key(pod)
        if key in self.pods:
            log.warning("pod %s already exists; ignored", key)
            return
        self.pods[key] = pod
        self.history[key] = {
            "namespace": pod["metadata"].get("namespace", "default"),
            "name": pod["metadata"]["name"],
            "uid": str(pod["metadata"].get("uid") or ""),
            "pod": pod,  # the object as created (its requests, for reports); not copied
            "createdAt": self.clock.now(),
            "node": pod.get("spec", {}).get("nodeName") or None,
            "boundAt": None,
            "deletedAt": None,
            "deletedReason": None,
            "message": None,
            "schedulerName": (pod.get("spec") or {}).get("schedulerName", "default-scheduler"),
        }
        for hook in list(self.pod_created_hooks):
            hook(pod)
        self._s.on_pod_add(pod)
        if (pod.get("spec") or {}).get("nodeName"):
            self._schedule_completion(pod)

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.pods.get(f"{namespace}/{name}")

    # ------------------------------------------------------------------------------------------
    # what the scheduler does to the cluster
    # ------------------------------------------------------------------------------------------
    def bind(self, pod: Mapping[str, Any], node_name: str) -> None:
        key = _key(pod)
        cur = self.pods.get(key)
        if cur is None:
            raise BindConflictError(f'pods "{pod["metadata"]["name"]}" not found')
        if (cur.get("spec") or {}).get("nodeName"):
            raise BindConflictError(
                f'pod {pod["metadata"]["name"]} is already assigned to node "{cur["spec"]["nodeName"]}"'
            )
        if (cur.get("metadata") or {}).get("deletionTimestamp"):
            raise BindConflictError(f"pod {pod['metadata']['name']} is being deleted, cannot be assigned to a host")
        new = copy.copy(cur)
        new["spec"] = {**cur.get("spec", {}), "nodeName": node_name}
        status = dict(cur.get("status") or {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": "True"})
        status["conditions"] = conds
        status.pop("nominatedNodeName", None)
        new["status"] = status
        self.pods[key] = new
        self.bind_count[key] = self.bind_count.get(key, 0) + 1
        h = self.history[key]
        h["node"], h["boundAt"] = node_name, self.clock.now()
        # The informer's echo of the binding.
        self._s.on_pod_update(cur, new)
        self._schedule_completion(new)

    def _schedule_completion(self, pod: Mapping[str, Any]) -> None:
        ann = (pod.get("metadata") or {}).get("annotations") or {}
        if DURATION_ANNOTATION not in ann:
            return
        try:
            d = parse_duration(ann[DURATION_ANNOTATION])
        except ValueError as err:
            log.warning("pod %s: %s: %s", _key(pod), DURATION_ANNOTATION, err)
            return
        self.clock.call_later(d, lambda: self._complete(_key(pod)))

    def _complete(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None:
            return
        self._remove_pod(pod, "Completed")

    def _remove_pod(self, pod: Mapping[str, Any], reason: str) -> None:
        key = _key(pod)
        cur = self.pods.pop(key, None)
        if cur is None:
            return
        h = self.history[key]
        h["deletedAt"], h["deletedReason"] = self.clock.now(), reason
        self._s.on_pod_delete(cur)
        for hook in list(self.pod_removed_hooks):
            hook(cur)

    def delete_pod(self, pod: Mapping[str, Any], reason: str = "") -> None:
        if _key(pod) not in self.pods:
            raise BindConflictError(f'pods "{pod["metadata"]["name"]}" not found')
        self._remove_pod(pod, reason or "Deleted")

    def update_pod(self, pod: Mapping[str, Any]) -> None:
        """Replace a pod (an update through the API, such as a toleration added). As the API server
        does for a pod (PodObservedGenerationTracking), a changed spec raises the generation, when
        the pod has one."""
        key = _key(pod)
        cur = self.pods.get(key)
        if cur is None:
            raise BindConflictError(f'pods "{pod["metadata"]["name"]}" not found')
        new = copy.deepcopy(dict(pod))
        generation = (cur.get("metadata") or {}).get("generation")
        if isinstance(generation, int) and new.get("spec") != cur.get("spec"):
            new.setdefault("metadata", {})["generation"] = generation + 1
        self.pods[key] = new
        self._s.on_pod_update(cur, new)

    def patch_pod_metadata(
        self,
        pod: Mapping[str, Any],
        *,
        annotations: Mapping[str, str | None] | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> None:
        key = _key(pod)
        cur = self.pods.get(key)
        if cur is None:
            raise BindConflictError(f'pods "{pod["metadata"]["name"]}" not found')
        md = dict(cur.get("metadata") or {})
        for field_name, patch in (("annotations", annotations), ("labels", labels)):
            if patch:
                merged = dict(md.get(field_name) or {})
                for k, v in patch.items():
                    if v is None:
                        merged.pop(k, None)
                    else:
                        merged[k] = v
                md[field_name] = merged
        new = {**cur, "metadata": md}
        self.pods[key] = new
        self._s.on_pod_update(cur, new)

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        key = _key(pod)
        cur = self.pods.get(key)
        if cur is None:
            return
        status = dict(cur.get("status") or {})
        for cond in patch.get("conditions") or []:
            old = next((c for c in status.get("conditions") or [] if c.get("type") == cond.get("type")), None)
            if old is not None and all(old.get(k) == cond.get(k) for k in ("status", "reason", "message")):
                continue  # podutil.UpdatePodCondition: unchanged (the generation is not compared)
            conds = [c for c in status.get("conditions") or [] if c.get("type") != cond.get("type")]
            conds.append(dict(cond))
            status["conditions"] = conds
        if "nominatedNodeName" in patch:
            if patch["nominatedNodeName"]:
                status["nominatedNodeName"] = patch["nominatedNodeName"]
            else:
                status.pop("nominatedNodeName", None)
        if "extendedResourceClaimStatus" in patch:  # DynamicResources' PreBind (DRAExtendedResource)
            status["extendedResourceClaimStatus"] = copy.deepcopy(patch["extendedResourceClaimStatus"])
        # The status lives on the stored object; the queue's copy is refreshed in place.
        cur["status"] = status

    def record_event(
        self,
        regarding: Mapping[str, Any],
        related: Mapping[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
        reporting_controller: str,
    ) -> None:
        md = regarding.get("metadata") or {}
        ev = RecordedEvent(
            self.clock.now(),
            md.get("namespace", ""),
            md.get("name", ""),
            type_,
            reason,
            action,
            note,
            reporting_controller,
        )
        self.events.append(ev)
        key = f"{ev.namespace}/{ev.name}"
        if reason == "FailedScheduling" and key in self.history:
            self.history[key]["message"] = note
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s event %s %s: %s", rfc3339(ev.time), reason, key, note)

    def submit(self, fn: Callable[[], None]) -> None:
        self.clock.call_later(0.0, fn)
