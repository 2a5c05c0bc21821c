"""The real cluster: kube-apiserver through informers, the binding subresource and events.k8s.io.

``KubeCluster`` implements the same contract as the simulator (``framework/cluster.py``):

* **Informers** for pods (without Succeeded/Failed ones, as kube-scheduler's field selector),
  nodes, namespaces, PriorityClasses, PodDisruptionBudgets, the storage kinds the volume plugins
  read (PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers,
  CSIStorageCapacities, VolumeAttachments; their changes are cluster events, as upstream's
  storage handlers), the DRA kinds DynamicResources reads (ResourceClaims, ResourceSlices,
  DeviceClasses; with DRADeviceTaintRules also DeviceTaintRules, in the newest version served,
  whose changes are ResourceSlice updates), and the workload kinds default
  topology spreading reads (Services, ReplicationControllers, ReplicaSets, StatefulSets); and,
  only when their CRD is served, ElasticQuotas and PodGroups (scheduling.x-k8s.io/v1alpha1)
  and NodeResourceTopologies (topology.node.k8s.io/v1alpha2). Their events call the scheduler's
  ``on_pod_*``/``on_node_*``/``on_object_event``, exactly as the simulator does.
* **Binding**: ``POST pods/{name}/binding`` with the pod's UID, from a thread pool (``submit``)
  so the scheduling cycle never waits for it. 409 (already bound, UID changed) and 404 (pod
  gone) raise :class:`BindConflictError`: the scheduler forgets the assumed pod, and the API
  server guarantees the pod is never bound twice.
* **Status and metadata**: strategic-merge patches of ``pods/{name}/status`` (skipped when they
  would change nothing, as upstream's ``updatePod``), merge patches of labels and annotations,
  deletes with a UID precondition, CRD status through the status subresource.
* **Events** through :class:`~kubesched.kube.events.EventRecorder`, and one structured log line
  per scheduling decision (``Successfully bound pod to node`` / ``Unable to schedule pod``).
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from kubesched.api.dra.taintrules import DEVICE_TAINT_RULE_API_VERSIONS
from kubesched.framework.clock import Clock, rfc3339
from kubesched.framework.cluster import BindConflictError, EventHandlers, ObjectConflictError, RetriableAPIError
from kubesched.framework.events import ActionType
from kubesched.kube.client import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, ApiError, KubeClient, ResourceType
from kubesched.kube.events import EventRecorder
from kubesched.kube.informer import DEFAULT_INACTIVITY_TIMEOUT, Informer, wait_for_sync
from kubesched.kube.klog import info_s, kobj, v
from kubesched.kube.objects import trim_node, trim_object, trim_pod

log = logging.getLogger("kubesched.kube")

#: kube-scheduler's pod informer skips finished pods (``NewPodInformer``).
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
#: How often to look again for CRDs that were not installed.
CRD_POLL_INTERVAL = 60.0
#: Retries of a status patch on transient errors (client-go ``retry.DefaultBackoff``: 10 ms × 5^n).
_PATCH_BACKOFF = (0.01, 0.05, 0.25)

PODS = ResourceType("", "v1", "pods", "Pod", True)
NODES = ResourceType("", "v1", "nodes", "Node", False)
NAMESPACES = ResourceType("", "v1", "namespaces", "Namespace", False)
PRIORITY_CLASSES = ResourceType("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)
PDBS = ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True)
SERVICES = ResourceType("", "v1", "services", "Service", True)
REPLICATION_CONTROLLERS = ResourceType("", "v1", "replicationcontrollers", "ReplicationController", True)
REPLICA_SETS = ResourceType("apps", "v1", "replicasets", "ReplicaSet", True)
STATEFUL_SETS = ResourceType("apps", "v1", "statefulsets", "StatefulSet", True)
ELASTIC_QUOTAS = ResourceType("scheduling.x-k8s.io", "v1alpha1", "elasticquotas", "ElasticQuota", True)
POD_GROUPS = ResourceType("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True)
PERSISTENT_VOLUMES = ResourceType("", "v1", "persistentvolumes", "PersistentVolume", False)
PERSISTENT_VOLUME_CLAIMS = ResourceType("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True)
STORAGE_CLASSES = ResourceType("storage.k8s.io", "v1", "storageclasses", "StorageClass", False)
CSI_NODES = ResourceType("storage.k8s.io", "v1", "csinodes", "CSINode", False)
CSI_DRIVERS = ResourceType("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False)
CSI_STORAGE_CAPACITIES = ResourceType("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True)
VOLUME_ATTACHMENTS = ResourceType("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False)
RESOURCE_CLAIMS = ResourceType("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True)
RESOURCE_SLICES = ResourceType("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False)
DEVICE_CLASSES = ResourceType("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False)
NODE_RESOURCE_TOPOLOGIES = ResourceType(
    "topology.node.k8s.io", "v1alpha2", "noderesourcetopologies", "NodeResourceTopology", False
)

#: What the volume plugins read (upstream's informers for them; RBAC: system:kube-scheduler and
#: system:volume-scheduler grant list and watch on each, deploy/rbac.yaml).
STORAGE_KINDS = (
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    STORAGE_CLASSES,
    CSI_NODES,
    CSI_DRIVERS,
    CSI_STORAGE_CAPACITIES,
    VOLUME_ATTACHMENTS,
)
#: What DynamicResources reads (upstream's DRA informers; RBAC as system:kube-scheduler's, deploy/rbac.yaml).
DRA_KINDS = (RESOURCE_CLAIMS, RESOURCE_SLICES, DEVICE_CLASSES)
#: Kinds whose status writes must not overwrite a newer copy: conditional on resourceVersion and
#: fenced by leadership, as a claim's allocation must never be written twice.
_CONDITIONAL_STATUS = frozenset({RESOURCE_CLAIMS.kind})
#: Kinds whose changes are cluster events for the queue (``on_object_event``).
EVENT_KINDS = (NAMESPACES, PRIORITY_CLASSES, PDBS, *STORAGE_KINDS, *DRA_KINDS)
#: Kinds only read through ``list_objects`` (upstream's listers for default spreading).
LISTER_KINDS = (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)
#: Custom resources our plugins read, watched only when their CRD is served.
CUSTOM_KINDS = (ELASTIC_QUOTAS, POD_GROUPS, NODE_RESOURCE_TOPOLOGIES)


def _pod_ref(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    md = pod.get("metadata") or {}
    return str(md.get("namespace") or "default"), str(md.get("name", "")), str(md.get("uid") or "")


def _conflict(err: ApiError) -> bool:
    return err.conflict or err.not_found


@dataclass
class KubeOptions:
    """Knobs of the real backend (defaults suit production; tests shorten some)."""

    bind_workers: int = 16
    inactivity_timeout: float = DEFAULT_INACTIVITY_TIMEOUT
    crd_poll_interval: float = CRD_POLL_INTERVAL
    watch_custom_resources: bool = True
    #: DRADeviceTaintRules: watch DeviceTaintRules (in the newest version the API serves), whose
    #: changes are ResourceSlice updates for the queue, as upstream's resource slice tracker makes them.
    device_taint_rules: bool = False


class KubeCluster:
    """The ClusterBackend of a real API server (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        options: KubeOptions | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.options = options or KubeOptions()
        self.recorder = recorder or EventRecorder(client, clock)
        self.handlers: EventHandlers | None = None
        #: One lock for every informer's handlers: the scheduler sees one event at a time.
        self.handler_lock = threading.RLock()
        self.informers: dict[str, Informer] = {}
        self._executor = ThreadPoolExecutor(self.options.bind_workers, thread_name_prefix="binding")
        self._inflight = 0
        self._inflight_cond = threading.Condition()
        self._accepting = True
        self._stop = threading.Event()
        self._crd_thread: threading.Thread | None = None
        self._direct_list_logged: set[str] = set()
        #: Asked just before every ``POST pods/binding`` (``kubesched run`` wires the leader
        #: elector's ``is_leading``): past the renew deadline a binding is refused, even one
        #: whose cycle started while we led.
        self.may_bind: Callable[[], bool] | None = None
        #: Counters for logs and tests.
        self.bindings = 0
        self.bind_conflicts = 0

    def add_event_handlers(self, handlers: EventHandlers) -> None:
        self.handlers = handlers

    @property
    def _s(self) -> EventHandlers:
        assert self.handlers is not None, "no event handlers registered (Scheduler registers its own)"
        return self.handlers

    # ------------------------------------------------------------------------------------------
    # informers
    # ------------------------------------------------------------------------------------------
    def _informer(self, rt: ResourceType, **kwargs: Any) -> Informer:
        inf = Informer(
            self.client,
            rt,
            handler_lock=self.handler_lock,
            inactivity_timeout=self.options.inactivity_timeout,
            **kwargs,
        )
        self.informers[rt.kind] = inf
        return inf

    def _object_handlers(self, kind: str) -> dict[str, Callable[..., None]]:
        def on_add(obj: dict[str, Any]) -> None:
            self._s.on_object_event(kind, ActionType.ADD, None, obj)

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            self._s.on_object_event(kind, ActionType.UPDATE_OTHER, old, new)

        def on_delete(obj: dict[str, Any]) -> None:
            self._s.on_object_event(kind, ActionType.DELETE, obj, None)

        return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}

    def start(self) -> None:
        """Start every informer (nodes first, so pods find their nodes) and the event writer."""
        s = self._s
        self.recorder.start()
        self._informer(
            NODES, transform=trim_node, on_add=s.on_node_add, on_update=s.on_node_update, on_delete=s.on_node_delete
        )
        for rt in EVENT_KINDS:
            self._informer(rt, transform=trim_object, **self._object_handlers(rt.kind))
        for rt in LISTER_KINDS:
            self._informer(rt, transform=trim_object)
        self._informer(
            PODS,
            transform=trim_pod,
            field_selector=POD_FIELD_SELECTOR,
            on_add=s.on_pod_add,
            on_update=s.on_pod_update,
            on_delete=s.on_pod_delete,
        )
        for inf in list(self.informers.values()):
            inf.start()
        if self.options.device_taint_rules:
            self._start_device_taint_rule_informer()
        if self.options.watch_custom_resources:
            missing = self._start_custom_informers(list(CUSTOM_KINDS))
            if missing:
                self._crd_thread = threading.Thread(
                    target=self._poll_custom_resources, args=(missing,), name="crd-discovery", daemon=True
                )
                self._crd_thread.start()

    def _start_device_taint_rule_informer(self) -> None:
        """Watch DeviceTaintRules in the newest version served (v1 from v1.37, v1beta2 in v1.36,
        v1alpha3 before); none when the API serves none. A change to a rule changes the devices'
        taints, so it reaches the queue as a ResourceSlice update."""
        served: ResourceType | None = None
        for api_version in DEVICE_TAINT_RULE_API_VERSIONS:
            try:
                served = self.client.resource_for(api_version, "DeviceTaintRule")
            except (ApiError, httpx.TransportError) as err:
                log.warning("discovery of %s failed: %s", api_version, err)
                served = None
            if served is not None:
                info_s(log, v(0), "Watching DeviceTaintRules", apiVersion=api_version)
                break
        if served is None:
            info_s(log, v(2), "DeviceTaintRules not served; not watching them")
            return
        slice_kind = RESOURCE_SLICES.kind

        def on_add(obj: dict[str, Any]) -> None:
            self._s.on_object_event(slice_kind, ActionType.UPDATE_OTHER, None, obj)

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            self._s.on_object_event(slice_kind, ActionType.UPDATE_OTHER, old, new)

        def on_delete(obj: dict[str, Any]) -> None:
            self._s.on_object_event(slice_kind, ActionType.UPDATE_OTHER, obj, None)

        self._informer(served, transform=trim_object, on_add=on_add, on_update=on_update, on_delete=on_delete).start()

    def _start_custom_informers(self, kinds: list[ResourceType]) -> list[ResourceType]:
        """Start informers for the custom kinds the API server serves; return the others."""
        missing = []
        for rt in kinds:
            try:
                served = self.client.resource_for(rt.api_version, rt.kind)
            except (ApiError, httpx.TransportError) as err:
                log.warning("discovery of %s failed: %s", rt.api_version, err)
                served = None
            if served is None:
                info_s(
                    log, v(2), "Custom resource not served; not watching it", kind=rt.kind, apiVersion=rt.api_version
                )
                missing.append(rt)
                continue
            info_s(log, v(0), "Watching custom resource", kind=rt.kind, apiVersion=rt.api_version)
            self._informer(served, transform=trim_object, **self._object_handlers(rt.kind)).start()
        return missing

    def _poll_custom_resources(self, missing: list[ResourceType]) -> None:
        while missing and not self._stop.wait(self.options.crd_poll_interval):
            for rt in missing:
                self.client.forget_discovery(rt.api_version)
            missing = self._start_custom_informers(missing)

    def wait_for_sync(self, timeout: float | None = None, stop: threading.Event | None = None) -> bool:
        return wait_for_sync(list(self.informers.values()), timeout, stop)

    def synced(self) -> bool:
        """Every informer has delivered its first list (False before ``start``)."""
        informers = list(self.informers.values())
        return bool(informers) and all(inf.synced.is_set() for inf in informers)

    def stop(self, timeout: float = 30.0) -> None:
        """Finish in-flight bindings (up to ``timeout``), flush events, stop the informers."""
        self._stop.set()
        self.drain(timeout)
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.recorder.stop(timeout=5.0)
        for inf in list(self.informers.values()):
            inf.stop(timeout=2.0)

    def refuse_binding_cycles(self) -> None:
        """From now on ``submit`` starts nothing (leadership lost: the new leader decides)."""
        with self._inflight_cond:
            self._accepting = False

    def drain(self, timeout: float) -> bool:
        """Stop accepting binding cycles and wait for those running; True if all finished."""
        self.refuse_binding_cycles()
        deadline = time.monotonic() + timeout
        with self._inflight_cond:
            while self._inflight > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("%d binding cycles still running at shutdown", self._inflight)
                    return False
                self._inflight_cond.wait(left)
        return True

    # ------------------------------------------------------------------------------------------
    # ClusterBackend
    # ------------------------------------------------------------------------------------------
    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        inf = self.informers.get("Pod")
        return inf.get(f"{namespace}/{name}") if inf is not None else None

    def bind(self, pod: Mapping[str, Any], node_name: str) -> None:
        ns, name, uid = _pod_ref(pod)
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns, **({"uid": uid} if uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        if self.may_bind is not None and not self.may_bind():
            self.bind_conflicts += 1
            raise BindConflictError(f"not binding {ns}/{name}: no longer leading (renew deadline passed)")
        try:
            self.client.post(PODS.path(ns, name, "binding"), body)
        except ApiError as err:
            if _conflict(err) or "is being deleted" in err.message:
                self.bind_conflicts += 1
                raise BindConflictError(err.message or str(err)) from err
            if retriable(err):
                raise RetriableAPIError(str(err)) from err
            raise
        except httpx.TransportError as err:
            if retriable(err):
                raise RetriableAPIError(str(err) or type(err).__name__) from err
            raise
        self.bindings += 1

    def delete_pod(self, pod: Mapping[str, Any], reason: str = "") -> None:
        ns, name, uid = _pod_ref(pod)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}} if uid else None
        try:
            self.client.delete(PODS.path(ns, name), body)
        except ApiError as err:
            if _conflict(err):
                raise BindConflictError(err.message or str(err)) from err
            raise
        info_s(log, v(2), "Deleted pod", pod=f"{ns}/{name}", reason=reason)

    def patch_pod_metadata(
        self,
        pod: Mapping[str, Any],
        *,
        annotations: Mapping[str, str | None] | None = None,
        labels: Mapping[str, str | None] | None = None,
    ) -> None:
        ns, name, _ = _pod_ref(pod)
        md: dict[str, Any] = {}
        if annotations:
            md["annotations"] = dict(annotations)
        if labels:
            md["labels"] = dict(labels)
        if not md:
            return
        try:
            self.client.patch(PODS.path(ns, name), {"metadata": md}, MERGE_PATCH)
        except ApiError as err:
            if err.not_found:
                raise BindConflictError(err.message or str(err)) from err
            raise

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        """Strategic-merge patch of ``status`` (conditions merge by type); nothing is sent when
        the informer's copy already says the same (upstream ``updatePod``)."""
        ns, name, _ = _pod_ref(pod)
        current = self.get_pod(ns, name) or pod
        body = status_patch(current.get("status") or {}, patch, rfc3339(self.clock.now()))
        if body is None:
            return
        for attempt, pause in enumerate((*_PATCH_BACKOFF, None)):
            try:
                self.client.patch(PODS.path(ns, name, "status"), {"status": body}, STRATEGIC_MERGE_PATCH)
                return
            except ApiError as err:
                if err.not_found:
                    raise BindConflictError(err.message or str(err)) from err
                if pause is None or not (err.code == 429 or err.code >= 500):
                    raise
            except httpx.TransportError:
                if pause is None:
                    raise
            log.debug("retrying status patch of %s/%s (attempt %d)", ns, name, attempt + 2)
            time.sleep(pause)

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
        if reason == "Scheduled":
            node = note.rsplit(" to ", 1)[-1]
            info_s(
                log,
                v(2),
                "Successfully bound pod to node",
                pod=kobj(regarding),
                node=node,
                profile=reporting_controller,
            )
        elif reason == "FailedScheduling":
            info_s(log, v(2), "Unable to schedule pod", pod=kobj(regarding), err=note, profile=reporting_controller)
        elif reason == "Preempted" and related is not None:
            info_s(log, v(2), "Preempted pod", pod=kobj(regarding), preemptor=kobj(related))
        self.recorder.eventf(regarding, related, type_, reason, action, note, reporting_controller)

    def _informer_for(self, api_version: str, kind: str) -> Informer | None:
        inf = self.informers.get(kind)
        if inf is None:
            return None
        have = inf.resource.api_version
        if not api_version or api_version == have or api_version.split("/")[0] == have.split("/")[0]:
            return inf
        return None

    def list_objects(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        """From the informer's store; kinds without an informer are listed from the API server
        (rate-limited: plugins should only ask for kinds listed in the module docstring)."""
        inf = self._informer_for(api_version, kind)
        if inf is not None:
            return inf.list()
        if any(rt.kind == kind for rt in CUSTOM_KINDS):
            return []  # a custom resource whose CRD is not installed: there are none
        rt = self.client.resource_for(api_version, kind)
        if rt is None:
            return []
        if kind not in self._direct_list_logged:
            self._direct_list_logged.add(kind)
            info_s(
                log, v(1), "Listing a kind without an informer from the API server", kind=kind, apiVersion=api_version
            )
        items, _ = self.client.list_all(rt.path())
        return [{**trim_object(o), "apiVersion": rt.api_version, "kind": rt.kind} for o in items]

    def get_object(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """From the informer's store; kinds without an informer are looked up in :meth:`list_objects`."""
        key = f"{namespace}/{name}" if namespace else name
        inf = self._informer_for(api_version, kind)
        if inf is not None:
            return inf.get(key)
        for obj in self.list_objects(api_version, kind):
            md = obj.get("metadata") or {}
            if md.get("name") == name and (md.get("namespace") or "") == namespace:
                return obj
        return None

    def _resource_of(self, obj: Mapping[str, Any]) -> ResourceType:
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        inf = self._informer_for(api_version, kind)
        if inf is not None:
            return inf.resource
        rt = self.client.resource_for(api_version, kind)
        if rt is None:
            raise ApiError(404, "NotFound", f"the server does not serve {kind} in {api_version}")
        return rt

    def update_object_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        """Replace ``status`` through the status subresource (the object itself when the CRD
        has no status subresource). A ResourceClaim's status (its allocation) is written as a merge
        patch conditional on the object's ``resourceVersion`` and fenced by leadership, like the
        Update upstream sends: a stale copy gets :class:`ObjectConflictError` (409)."""
        rt = self._resource_of(obj)
        md = obj.get("metadata") or {}
        path = rt.path(md.get("namespace"), md.get("name"))
        if rt.kind in _CONDITIONAL_STATUS:
            self._update_status_conditionally(rt, obj, status, f"{path}/status")
            return
        ops = [{"op": "add", "path": "/status", "value": dict(status)}]
        try:
            self.client.patch(f"{path}/status", ops, JSON_PATCH)
        except ApiError as err:
            if not err.not_found:
                raise
            self.client.patch(path, ops, JSON_PATCH)

    def _update_status_conditionally(
        self, rt: ResourceType, obj: Mapping[str, Any], status: Mapping[str, Any], path: str
    ) -> None:
        md = obj.get("metadata") or {}
        if self.may_bind is not None and not self.may_bind():
            raise ObjectConflictError(f"not writing {rt.kind} {md.get('name')} status: no longer leading")
        old = obj.get("status") or {}
        # A merge patch keeps what it does not name: fields the new status drops are set to null.
        body_status: dict[str, Any] = {k: None for k in old if k not in status}
        body_status.update(status)
        body = {"metadata": {"resourceVersion": md.get("resourceVersion")}, "status": body_status}
        try:
            self.client.patch(path, body, MERGE_PATCH)
        except ApiError as err:
            if err.conflict or err.not_found:
                raise ObjectConflictError(err.message or str(err)) from err
            raise

    def update_object(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A JSON merge patch of ``metadata.annotations`` (and ``finalizers`` when given) and
        ``spec`` carrying the object's ``resourceVersion`` (which makes it conditional, like the
        Update upstream sends: 409 when the object changed). Not a PUT: the informer's copy lacks
        the fields it trims (the last-applied annotation, managedFields), which a PUT would delete."""
        rt = self._resource_of(obj)
        md = obj.get("metadata") or {}
        if self.may_bind is not None and not self.may_bind():  # fenced as bindings are
            raise ObjectConflictError(f"not writing {rt.kind} {md.get('name')}: no longer leading")
        meta: dict[str, Any] = {
            "resourceVersion": md.get("resourceVersion"),
            "annotations": md.get("annotations") or {},
        }
        if "finalizers" in md:  # DynamicResources' PreBind adds its finalizer to a claim
            meta["finalizers"] = md.get("finalizers") or []
        body: dict[str, Any] = {"metadata": meta, "spec": obj.get("spec") or {}}
        try:
            stored = self.client.patch(rt.path(md.get("namespace"), md.get("name")), body, MERGE_PATCH)
        except ApiError as err:
            if err.conflict or err.not_found:
                raise ObjectConflictError(err.message or str(err)) from err
            raise
        return {**trim_object(stored), "apiVersion": rt.api_version, "kind": rt.kind}

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A client ``Create`` (``metadata.generateName`` named by the API server), fenced by
        leadership as other writes are. Returns the object as created."""
        rt = self._resource_of(obj)
        md = obj.get("metadata") or {}
        if self.may_bind is not None and not self.may_bind():
            what = md.get("generateName") or md.get("name")
            raise ObjectConflictError(f"not creating {rt.kind} {what}: no longer leading")
        body = {k: v for k, v in obj.items() if k != "status"}
        created = self.client.post(rt.path(md.get("namespace")), body)
        return {**trim_object(created), "apiVersion": rt.api_version, "kind": rt.kind}

    def delete(self, obj: Mapping[str, Any]) -> None:
        """A client ``Delete``; an object already gone is no error (upstream ignores NotFound)."""
        rt = self._resource_of(obj)
        md = obj.get("metadata") or {}
        try:
            self.client.delete(rt.path(md.get("namespace"), md.get("name")))
        except ApiError as err:
            if not err.not_found:
                raise

    def submit(self, fn: Callable[[], None]) -> None:
        """Run a binding cycle on the thread pool; refused (logged) once shutting down."""
        with self._inflight_cond:
            if not self._accepting:
                log.info("shutting down: binding cycle not started")
                return
            self._inflight += 1
        try:
            self._executor.submit(self._run_submitted, fn)
        except RuntimeError:
            self._finished()
            log.info("shutting down: binding cycle not started")

    def _run_submitted(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("binding cycle failed")
        finally:
            self._finished()

    def _finished(self) -> None:
        with self._inflight_cond:
            self._inflight -= 1
            self._inflight_cond.notify_all()


#: apimachinery's ``knownReasons`` (pkg/api/errors/errors.go): a 500 or 503 with another reason
#: is an internal error or unavailability by its code alone.
_KNOWN_REASONS = frozenset({
    "Unauthorized", "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Gone", "Invalid", "ServerTimeout",
    "StoreReadError", "Timeout", "TooManyRequests", "BadRequest", "MethodNotAllowed", "NotAcceptable",
    "RequestEntityTooLarge", "UnsupportedMediaType", "InternalError", "Expired", "ServiceUnavailable",
})


def retriable(err: BaseException) -> bool:
    """Upstream's ``util.Retriable``: ``apierrors.IsInternalError``, ``IsServiceUnavailable`` (by
    reason, or by code when the reason is not a known one) or ``net.IsConnectionRefused``."""
    if isinstance(err, ApiError):
        if err.reason in ("InternalError", "ServiceUnavailable"):
            return True
        return err.reason not in _KNOWN_REASONS and err.code in (500, 503)
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def status_patch(current: Mapping[str, Any], patch: Mapping[str, Any], now: str) -> dict[str, Any] | None:
    """The ``status`` part of a strategic-merge patch applying ``patch`` (``conditions`` by type,
    ``nominatedNodeName`` with None to clear) to ``current``; None when nothing would change.

    A condition's ``lastTransitionTime`` moves only when its status changes
    (``podutil.UpdatePodCondition``)."""
    out: dict[str, Any] = {}
    existing = {c.get("type"): c for c in current.get("conditions") or [] if isinstance(c, Mapping)}
    conds = []
    for cond in patch.get("conditions") or []:
        old = existing.get(cond.get("type"))
        if old is not None and all(old.get(k) == cond.get(k) for k in ("status", "reason", "message")):
            continue
        c = dict(cond)
        if "lastTransitionTime" not in c:
            same_status = old is not None and old.get("status") == c.get("status")
            c["lastTransitionTime"] = old.get("lastTransitionTime") if same_status and old is not None else now
        conds.append(c)
    if conds:
        out["conditions"] = conds
    if "nominatedNodeName" in patch:
        want = patch["nominatedNodeName"] or None
        if want != (current.get("nominatedNodeName") or None):
            out["nominatedNodeName"] = want
    extended = patch.get("extendedResourceClaimStatus")  # DynamicResources' PreBind (DRAExtendedResource)
    if extended is not None and extended != current.get("extendedResourceClaimStatus"):
        out["extendedResourceClaimStatus"] = patch["extendedResourceClaimStatus"]
    return out or None
