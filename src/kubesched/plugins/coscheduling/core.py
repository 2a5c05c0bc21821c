"""The PodGroup manager (scheduler-plugins ``pkg/coscheduling/core/core.go``).

It finds a pod's PodGroup and its members, counts the members already assigned a node (bound or
assumed, from the snapshot), checks a group's ``minResources`` against the cluster, and keeps
two short-lived sets upstream keeps in go-caches: groups whose resource check passed recently
(``permittedPG``) and groups backing off after a failed attempt (``backedOffPG``). Expiry is read
from the handle's clock.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Mapping, Sequence

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource
from kubesched.framework.interfaces import Handle
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo
from kubesched.plugins.jsonview import get_obj

from .args import CoschedulingArgs
from .podgroup import API_VERSION, KIND, POD_GROUP_LABEL, PodGroupInfo, parse_pod_group, pod_group_name

#: go-cache's default expiry of ``permittedPG`` (used when the TTL given is 0).
PERMITTED_DEFAULT_TTL = 3.0
_TERMINAL = ("Succeeded", "Failed")


def _namespace(obj: JSONObj) -> str:
    return str(get_obj(obj, "metadata").get("namespace") or "default")


def is_terminal(pod: JSONObj) -> bool:
    return get_obj(pod, "status").get("phase") in _TERMINAL


class PodGroupManager:
    """PodGroups and their members, as the plugin sees them through the handle."""

    def __init__(self, handle: Handle, args: CoschedulingArgs) -> None:
        self.handle = handle
        self.schedule_timeout = float(args.permit_waiting_time_seconds)
        self._lock = threading.RLock()
        #: full name -> when the group's passed resource check expires (upstream ``permittedPG``).
        self._permitted: dict[str, float] = {}
        #: full name -> when the group's backoff ends (upstream ``backedOffPG``).
        self._backed_off: dict[str, float] = {}
        #: (namespace, name) -> (the object parsed, its parse): parse each object version once.
        self._parsed: dict[tuple[str, str], tuple[JSONObj, PodGroupInfo]] = {}
        #: (namespace, name, uid) -> when the plugin first saw a PodGroup without creationTimestamp.
        self._first_seen: dict[tuple[str, str, str], float] = {}
        #: node name -> (NodeInfo generation, assigned pods per (namespace, group)).
        self._assigned: dict[str, tuple[int, Counter[tuple[str, str]]]] = {}
        #: full name -> the cluster as the group last failed in it (see :meth:`park`).
        self._parked: dict[str, tuple[object, ...]] = {}

    # -- PodGroups --------------------------------------------------------------------------------
    def get_pod_group(self, pod: JSONObj) -> tuple[str, PodGroupInfo | None]:
        """Upstream ``GetPodGroup``: the group's full name (``""`` without the label) and the group
        (None if it does not exist). An ill-formed PodGroup raises InvalidObjectError."""
        name = pod_group_name(pod)
        if not name:
            return "", None
        ns = _namespace(pod)
        return f"{ns}/{name}", self.lookup(ns, name)

    def lookup(self, namespace: str, name: str) -> PodGroupInfo | None:
        for obj in self.handle.client().list_objects(API_VERSION, KIND):
            md = get_obj(obj, "metadata")
            if md.get("name") == name and _namespace(obj) == namespace:
                return self._parse(obj)
        return None

    def _parse(self, obj: JSONObj) -> PodGroupInfo:
        key = (_namespace(obj), str(get_obj(obj, "metadata").get("name")))
        with self._lock:
            cached = self._parsed.get(key)
            if cached is not None and cached[0] is obj:
                return cached[1]
        info = parse_pod_group(obj)
        with self._lock:
            self._parsed[key] = (obj, info)
        return info

    def creation_timestamp(self, pg: PodGroupInfo) -> float:
        """``metadata.creationTimestamp``; a PodGroup without one (a manifest never sent to an API
        server) counts as created when the plugin first saw it."""
        if pg.creation_timestamp is not None:
            return pg.creation_timestamp
        uid = str(get_obj(pg.obj, "metadata").get("uid") or "")
        key = (pg.namespace, pg.name, uid)
        with self._lock:
            return self._first_seen.setdefault(key, self.handle.clock.now())

    # -- members ----------------------------------------------------------------------------------
    def members(self, namespace: str, name: str) -> list[JSONObj]:
        """Every pod of the group (the pod lister with the pod-group label selector), terminated
        ones included."""
        return [
            p
            for p in self.handle.client().list_objects("v1", "Pod")
            if pod_group_name(p) == name and _namespace(p) == namespace
        ]

    def live_members(self, namespace: str, name: str) -> list[JSONObj]:
        """Members that are not Succeeded or Failed: those that can still form the gang."""
        return [p for p in self.members(namespace, name) if not is_terminal(p)]

    def calculate_assigned_pods(self, nodes: Sequence[NodeInfo], namespace: str, name: str) -> int:
        """Upstream ``CalculateAssignedPods``: members with a node in the snapshot (bound or
        assumed). The pod in its scheduling cycle is not in the snapshot yet."""
        total = 0
        key = (namespace, name)
        for ni in nodes:
            with self._lock:
                memo = self._assigned.get(ni.name)
                if memo is None or memo[0] != ni.generation:
                    counts: Counter[tuple[str, str]] = Counter()
                    for p in ni.pods:
                        group = p.labels.get(POD_GROUP_LABEL)
                        if group and p.node_name:
                            counts[(p.namespace, str(group))] += 1
                    memo = (ni.generation, counts)
                    self._assigned[ni.name] = memo
            total += memo[1].get(key, 0)
        return total

    # -- caches -----------------------------------------------------------------------------------
    def is_permitted(self, full_name: str) -> bool:
        with self._lock:
            until = self._permitted.get(full_name)
            return until is not None and self.handle.clock.now() < until

    def add_permitted(self, full_name: str) -> None:
        ttl = self.schedule_timeout or PERMITTED_DEFAULT_TTL
        with self._lock:
            self._permitted[full_name] = self.handle.clock.now() + ttl

    def delete_permitted_pod_group(self, full_name: str) -> None:
        """Upstream ``DeletePermittedPodGroup``: the next member checks ``minResources`` again."""
        with self._lock:
            self._permitted.pop(full_name, None)

    def backoff_pod_group(self, full_name: str, backoff: float) -> None:
        """Upstream ``BackoffPodGroup``: PreFilter turns the group away for ``backoff`` seconds."""
        if backoff <= 0:
            return
        with self._lock:
            self._backed_off[full_name] = self.handle.clock.now() + backoff

    def backed_off_until(self, full_name: str) -> float | None:
        """When the group's backoff ends, or None if it is not backing off."""
        with self._lock:
            until = self._backed_off.get(full_name)
            if until is not None and self.handle.clock.now() >= until:
                del self._backed_off[full_name]
                return None
            return until

    # -- parking (kubesched) ----------------------------------------------------------------------
    def fingerprint(self, pg: PodGroupInfo, nodes: Sequence[NodeInfo]) -> tuple[object, ...]:
        """What could make a failed gang fit: the nodes, the pods on them that are not the gang's,
        the gang's members (and their scheduling gates) and the PodGroup's spec. The gang's own
        pods coming and going (assumed, released, bound) are left out on purpose."""
        full = pg.full_name
        node_part = tuple(
            (ni.name, ni.node, tuple(sorted(p.uid for p in ni.pods if _full_name(p) != full))) for ni in nodes
        )
        member_part = tuple(
            sorted(
                (str(get_obj(p, "metadata").get("uid") or ""), str(get_obj(p, "spec").get("schedulingGates")))
                for p in self.live_members(pg.namespace, pg.name)
            )
        )
        res = pg.min_resources
        spec_part = (pg.min_member, pg.schedule_timeout_seconds, pg.min_resource_names, repr(res))
        return node_part, member_part, spec_part

    def park(self, pg: PodGroupInfo, nodes: Sequence[NodeInfo]) -> bool:
        """The gang failed: hold its members until the cluster differs from now. False if it was
        parked already."""
        with self._lock:
            if pg.full_name in self._parked:
                return False
        fp = self.fingerprint(pg, nodes)
        with self._lock:
            self._parked[pg.full_name] = fp
        return True

    def is_parked(self, full_name: str) -> bool:
        with self._lock:
            return full_name in self._parked

    def still_parked(self, pg: PodGroupInfo, nodes: Sequence[NodeInfo]) -> bool:
        """Whether the group is parked and nothing it could use changed; unparks it otherwise."""
        with self._lock:
            fp = self._parked.get(pg.full_name)
        if fp is None:
            return False
        if self.fingerprint(pg, nodes) == fp:
            return True
        self.unpark(pg.full_name)
        return False

    def unpark(self, full_name: str) -> None:
        with self._lock:
            self._parked.pop(full_name, None)


def check_cluster_resource(
    nodes: Sequence[NodeInfo], request: Mapping[str, int], pod_group_full_name: str
) -> dict[str, int]:
    """Upstream ``CheckClusterResource``: subtract each node's free resources from ``request``
    (API names; cpu in milli-units), counting the group's own pods as free, until nothing is left.
    Returns what is still missing (empty: the cluster can hold the group)."""
    remaining = {name: amount for name, amount in request.items() if amount > 0}
    for ni in nodes:
        if ni.node is None:
            continue
        free = node_free_resource(ni, pod_group_full_name)
        for name in list(remaining):
            left = remaining[name] - free.get(name)
            if left <= 0:
                del remaining[name]
            else:
                remaining[name] = left
        if not remaining:
            return {}
    return remaining


def node_free_resource(ni: NodeInfo, pod_group_full_name: str) -> Resource:
    """Upstream ``getNodeResource``: allocatable minus requested, pod slots included, with the
    pods of the group itself removed from the node first."""
    requested = ni.requested.clone()
    pods = len(ni.pods)
    for p in ni.pods:
        if _full_name(p) == pod_group_full_name:
            with contextlib.suppress(ValueError):  # counted at zero on the node too (NodeInfo._update)
                requested.sub(p.requests)
            pods -= 1
    a = ni.allocatable
    free = Resource(
        a.milli_cpu - requested.milli_cpu,
        a.memory - requested.memory,
        a.ephemeral_storage - requested.ephemeral_storage,
        a.allowed_pod_number - pods,
    )
    for name, value in a.scalar_resources.items():
        free.scalar_resources[name] = value - requested.scalar_resources.get(name, 0)
    return free


def _full_name(p: PodInfo) -> str:
    group = p.labels.get(POD_GROUP_LABEL)
    return f"{p.namespace}/{group}" if group else ""


def min_resources_request(pg: PodGroupInfo) -> dict[str, int]:
    """``spec.minResources`` by API name, with ``pods: minMember`` as upstream adds it."""
    assert pg.min_resources is not None
    out = {name: pg.min_resources.get(name) for name in pg.min_resource_names if name != PODS}
    out[PODS] = pg.min_member
    return out


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_quantity(name: str, amount: int) -> str:
    """A resource amount as a Kubernetes quantity: cpu from milli-units, bytes in binary units."""
    if name == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith("hugepages-"):
        for suffix, unit in _BINARY:
            if amount and amount % unit == 0:
                return f"{amount // unit}{suffix}"
    return str(amount)


def format_resource_gap(gap: Mapping[str, int]) -> str:
    """``resource gap: map[cpu:2 pods:1]`` (Go prints a map with its keys sorted)."""
    items = " ".join(f"{name}:{format_quantity(name, gap[name])}" for name in sorted(gap))
    return f"resource gap: map[{items}]"
