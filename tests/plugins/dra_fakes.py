"""Test doubles and objects for the DynamicResources tests.

``FakeAllocator`` is a deliberately small allocator with the contract of
``kubesched.api.dra.structured.Allocator`` (devices of the node's ResourceSlices, ``exactly``
counts, ``firstAvailable`` in order, ``matchAttribute`` constraints, devices already allocated
excluded), so the plugin's own logic is tested independently of the real one.
``StoringClient`` is the test kit's FakeClient whose status writes land in its objects.
The objects follow upstream's dynamicresources_test.go fixtures (names, UIDs, results).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.dra.structured import AllocatedState, CELCache, DeviceClassLister, Features
from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.plugins.dynamicresources.plugin import AllocatorFactory
from kubesched.testing import FakeClient, FakeHandle

AV = "resource.k8s.io/v1"
NODE_NAME = "worker"
NODE2_NAME = "worker-2"
DRIVER = "some-driver"
POD_NAME = "my-pod"
POD_UID = "1234"
RESOURCE_NAME = "my-resource"
CLAIM_NAME = f"{POD_NAME}-{RESOURCE_NAME}"
CLASS_NAME = "my-resource-class"
NAMESPACE = "default"


class StoringClient(FakeClient):
    """FakeClient whose ``update_object_status`` replaces the stored object's status."""

    def update_object_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        super().update_object_status(obj, status)
        md = obj.get("metadata") or {}
        for i, o in enumerate(self.objects):
            om = o.get("metadata") or {}
            if (
                o.get("kind") == obj.get("kind")
                and om.get("name") == md.get("name")
                and (om.get("namespace") or "") == (md.get("namespace") or "")
            ):
                self.objects[i] = {**o, "status": copy.deepcopy(dict(status))}
                return


def node(name: str = NODE_NAME, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
    }


def pod(
    claims: Sequence[Mapping[str, Any]] = (), statuses: Sequence[Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    p: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID},
        "spec": {"containers": [{"name": "c"}], "resourceClaims": [dict(c) for c in claims]},
        "status": {},
    }
    if statuses is not None:
        p["status"]["resourceClaimStatuses"] = [dict(s) for s in statuses]
    return p


POD_WITH_CLAIM_NAME = pod([{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}])
POD_WITH_CLAIM_TEMPLATE = pod([{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}])
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = pod(
    [{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}],
    [{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}],
)


def device_class(name: str = CLASS_NAME) -> dict[str, Any]:
    return {"apiVersion": AV, "kind": "DeviceClass", "metadata": {"name": name}, "spec": {}}


def claim(
    name: str = CLAIM_NAME,
    *,
    requests: Sequence[Mapping[str, Any]] | None = None,
    constraints: Sequence[Mapping[str, Any]] = (),
    owner: bool = True,
    allocation: Mapping[str, Any] | None = None,
    reserved_for: Sequence[Mapping[str, Any]] | None = None,
    uid: str | None = None,
) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "uid": uid or f"uid-{name}", "resourceVersion": "1"}
    if owner:
        md["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID, "controller": True}
        ]
    if requests is None:
        requests = [{"name": "req-1", "exactly": {"deviceClassName": CLASS_NAME}}]
    c: dict[str, Any] = {
        "apiVersion": AV,
        "kind": "ResourceClaim",
        "metadata": md,
        "spec": {"devices": {"requests": [dict(r) for r in requests], "constraints": [dict(x) for x in constraints]}},
        "status": {},
    }
    if allocation is not None:
        c["status"]["allocation"] = copy.deepcopy(dict(allocation))
    if reserved_for is not None:
        c["status"]["reservedFor"] = [dict(r) for r in reserved_for]
    return c


def on_node(name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def allocation_result(device: str = "instance-1", request: str = "req-1", node_name: str = NODE_NAME) -> dict[str, Any]:
    """Upstream's ``allocationResult``."""
    return {
        "devices": {"results": [{"driver": DRIVER, "pool": node_name, "device": device, "request": request}]},
        "nodeSelector": on_node(node_name),
    }


def slice_(node_name: str = NODE_NAME, devices: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Upstream ``MakeResourceSlice(node, driver)``: pool named after the node."""
    if devices is None:
        devices = [{"name": "instance-1"}]
    return {
        "apiVersion": AV,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [dict(d) for d in devices],
        },
    }


def _attr(device: Mapping[str, Any], name: str) -> object:
    value = (device.get("attributes") or {}).get(name.split("/")[-1])
    if isinstance(value, Mapping):
        return next(iter(value.values()), None)
    return None


class FakeAllocator:
    def __init__(
        self,
        features: Features,
        allocated_state: AllocatedState,
        classes: DeviceClassLister,
        slices: Sequence[Mapping[str, Any]],
        cel_cache: CELCache,
    ) -> None:
        self.allocated = set(allocated_state.allocated_devices)
        self.classes = classes
        self.slices = slices
        self.calls: list[str] = []

    def allocate(
        self, node: Mapping[str, Any] | None, claims: Sequence[Mapping[str, Any]], *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        name = str(((node or {}).get("metadata") or {}).get("name") or "")
        self.calls.append(name)
        free = [
            (s["spec"]["driver"], s["spec"]["pool"]["name"], d)
            for s in self.slices
            if s["spec"].get("nodeName") == name
            for d in s["spec"].get("devices") or []
            if (s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]) not in self.allocated
        ]
        taken: set[tuple[str, str, str]] = set()
        out: list[dict[str, Any]] = []
        for c in claims:
            result = self._claim(c, free, taken, name)
            if result is None:
                return []
            out.append(result)
        return out

    def _claim(self, c: Mapping[str, Any], free: list[Any], taken: set[Any], node_name: str) -> dict[str, Any] | None:
        devices = c["spec"]["devices"]
        match = [x["matchAttribute"] for x in devices.get("constraints") or [] if x.get("matchAttribute")]
        groups: dict[object, list[Any]] = {}
        for f in free:
            key = tuple(_attr(f[2], a) for a in match)
            if None not in key:
                groups.setdefault(key, []).append(f)
        for group in groups.values():
            results: list[dict[str, Any]] = []
            used: set[Any] = set()
            for r in devices.get("requests") or []:
                options = (
                    [(r["name"], r["exactly"])]
                    if "exactly" in r
                    else [(f"{r['name']}/{s['name']}", s) for s in r.get("firstAvailable") or []]
                )
                for ref, req in options:
                    count = int(req.get("count") or 1)
                    pick = [f for f in group if (f[0], f[1], f[2]["name"]) not in taken | used][:count]
                    if len(pick) == count:
                        used.update((f[0], f[1], f[2]["name"]) for f in pick)
                        results += [
                            {"driver": f[0], "pool": f[1], "device": f[2]["name"], "request": ref} for f in pick
                        ]
                        break
                else:
                    break
            else:
                taken.update(used)
                return {"devices": {"results": results}, "nodeSelector": on_node(node_name)}
        return None


def status_of(s: Status | None) -> tuple[Code, str]:
    return (Code.SUCCESS, "") if s is None else (s.code, s.message())


@dataclass
class Run:
    plugin: DynamicResources
    client: StoringClient
    got: dict[str, tuple[Code, str]]
    in_flight_after_reserve: list[str] | None = None
    in_flight_after_pre_bind: list[str] | None = None
    state: CycleState | None = None
    selected: str = ""
    scores: list[NodeScore] | None = None
    #: Score per node before NormalizeScore (upstream's scoreResult).
    raw_scores: dict[str, int] | None = None


def run_points(
    case_pod: dict[str, Any],
    objects: Sequence[Mapping[str, Any]],
    nodes: Sequence[dict[str, Any]] = (),
    in_flight: Sequence[Mapping[str, Any]] = (),
    *,
    unreserve_after_bind: bool = False,
    unreserve_before_pre_bind: bool = False,
    before_pre_bind: Callable[[StoringClient], None] | None = None,
    allocator: AllocatorFactory = FakeAllocator,
    client_type: type[StoringClient] = StoringClient,
    release: Release = DEFAULT_RELEASE,
) -> Run:
    """upstream testPlugin's sequence of points, recording each status."""
    handle = FakeHandle(release=release)
    client = client_type(copy.deepcopy(list(objects)))
    handle._client = client
    plugin = DynamicResources(handle=handle, allocator_factory=allocator)
    assert plugin.tracker is not None
    for c in in_flight:
        plugin.tracker.signal_claim_pending_allocation(c["metadata"]["uid"], c)
    got: dict[str, tuple[Code, str]] = {}
    run = Run(plugin, client, got)
    pi = PodInfo(copy.deepcopy(case_pod))
    got["preenqueue"] = status_of(plugin.pre_enqueue(pi))
    if got["preenqueue"][0] != Code.SUCCESS:
        return run
    state = CycleState()
    infos = [NodeInfo(n) for n in (nodes or [node()])]
    _, st = plugin.pre_filter(state, pi, infos)
    got["prefilter"] = status_of(st)
    fits: list[NodeInfo] = []
    if st is None or not st.is_rejected():
        for ni in infos:
            got[f"filter/{ni.name}"] = status_of(plugin.filter(state, pi, ni))
            if got[f"filter/{ni.name}"][0] == Code.SUCCESS:
                fits.append(ni)
            if got[f"filter/{ni.name}"][0] == Code.ERROR:  # an error aborts scheduling
                return run
    if not fits:
        got["postfilter"] = status_of(plugin.post_filter(state, pi, {})[1])
        return run
    selected = fits[0].name
    if len(fits) > 1:
        scores = [NodeScore(ni.name, plugin.score(state, pi, ni)[0]) for ni in fits]
        run.raw_scores = {s.name: s.score for s in scores}
        plugin.normalize_score(state, pi, scores)
        run.scores = scores
        selected = max(scores, key=lambda s: s.score).name
    got["reserve"] = status_of(plugin.reserve(state, pi, selected))
    run.state = state
    run.selected = selected
    run.in_flight_after_reserve = sorted(c["metadata"]["name"] for c in plugin.tracker.in_flight_claims())
    if unreserve_before_pre_bind:
        plugin.unreserve(state, pi, selected)
        return run
    if before_pre_bind is not None:
        before_pre_bind(client)
    got["prebindpreflight"] = status_of(plugin.pre_bind_pre_flight(state, pi, selected))
    got["prebind"] = status_of(plugin.pre_bind(state, pi, selected))
    run.in_flight_after_pre_bind = sorted(c["metadata"]["name"] for c in plugin.tracker.in_flight_claims())
    if unreserve_after_bind:
        plugin.unreserve(state, pi, selected)
    return run
