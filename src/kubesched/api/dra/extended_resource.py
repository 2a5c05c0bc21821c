"""Extended resources backed by DRA (DRAExtendedResource): which DeviceClass provides a pod's
extended resource, and the device requests of the pod's special ResourceClaim.

Upstream: the scheduler's extended-resource cache (``pkg/scheduler/framework/plugins/
dynamicresources/extended``, ``DeviceClassResolver``), ``schedutil.IsDRAExtendedResourceName``
and ``createRequestsAndMappings`` in ``extendeddynamicresources.go``. A DeviceClass maps its
``spec.extendedResourceName`` and, always, the implicit ``deviceclass.resource.kubernetes.io/<class>``.

Malformed objects never raise: a class without a usable name maps nothing, a container quantity
that is not an integer requests nothing (as upstream's ``AsInt64`` failing does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.quantity import parse_quantity
from kubesched.api.resources import is_extended_resource_name

__all__ = [
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "RESOURCE_DEVICE_CLASS_PREFIX",
    "ContainerExtendedResourceRequest",
    "DeviceClassResolver",
    "create_requests_and_mappings",
    "is_dra_extended_resource_name",
]

#: resourceapi.ExtendedResourceClaimAnnotation: marks the claim the scheduler created for a pod.
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: resourceapi.ResourceDeviceClassPrefix: the implicit extended resource name of every class.
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def is_dra_extended_resource_name(name: str) -> bool:
    """Upstream ``IsDRAExtendedResourceName``: an extended resource name, or an implicit one
    (``deviceclass.resource.kubernetes.io/`` is a kubernetes.io domain, so not "extended")."""
    return is_extended_resource_name(name) or name.startswith(RESOURCE_DEVICE_CLASS_PREFIX)


class DeviceClassResolver:
    """Extended resource name -> DeviceClass name, over the cluster's DeviceClasses.

    Several classes naming the same ``extendedResourceName``: the newest (``creationTimestamp``)
    wins, then the smallest name, so the answer does not depend on listing order (upstream's
    cache keeps the most recently created class too; its tie-break is an assumption here)."""

    def __init__(self, classes: Iterable[object]) -> None:
        explicit: dict[str, tuple[str, str]] = {}
        self._mapping: dict[str, str] = {}
        for obj in classes:
            md, spec = _map(_map(obj).get("metadata")), _map(_map(obj).get("spec"))
            name = md.get("name")
            if not isinstance(name, str) or not name:
                continue
            self._mapping[RESOURCE_DEVICE_CLASS_PREFIX + name] = name
            ext = spec.get("extendedResourceName")
            if not isinstance(ext, str) or not ext:
                continue
            created = str(md.get("creationTimestamp") or "")
            have = explicit.get(ext)
            # RFC 3339 timestamps in UTC ("Z") order as strings.
            if have is None or created > have[0] or (created == have[0] and name < have[1]):
                explicit[ext] = (created, name)
        for ext, (_, name) in explicit.items():
            self._mapping[ext] = name

    def get_device_class(self, resource_name: str) -> str | None:
        """The class providing ``resource_name``, None when no class does."""
        return self._mapping.get(resource_name)

    def __bool__(self) -> bool:
        return bool(self._mapping)


@dataclass(frozen=True, slots=True)
class ContainerExtendedResourceRequest:
    """v1.ContainerExtendedResourceRequest: which claim request serves a container's resource."""

    container_name: str
    resource_name: str
    request_name: str

    def to_json(self) -> dict[str, str]:
        return {
            "containerName": self.container_name,
            "resourceName": self.resource_name,
            "requestName": self.request_name,
        }


@dataclass(slots=True)
class _Request:
    name: str
    class_name: str
    count: int

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "exactly": {"deviceClassName": self.class_name, "allocationMode": "ExactCount", "count": self.count},
        }


def _int_quantity(value: object) -> int | None:
    """``Quantity.AsInt64``: the value when it is a whole number, else None."""
    try:
        q = parse_quantity(value if isinstance(value, str | int | float) else str(value))
    except (ValueError, TypeError):
        return None
    return int(q) if q.denominator == 1 else None


def _container_request(
    index: int,
    container: Mapping[str, Any],
    resource: str,
    class_name: str,
    reusable: Sequence[_Request | None],
) -> tuple[_Request | None, list[ContainerExtendedResourceRequest]]:
    """Upstream ``createResourceRequestAndMappings``: the container's request for ``resource``
    (``container-<index>-request-<index of the resource among its sorted requests>``), after
    using up requests of later long-lived containers it may reuse (an init container)."""
    requests = _map(_map(container.get("resources")).get("requests"))
    if resource not in requests:
        return None, []
    wanted = _int_quantity(requests[resource])
    if not wanted:
        return None, []
    cname = str(container.get("name") or "")
    mappings: list[ContainerExtendedResourceRequest] = []
    total = 0
    for r in reusable:
        if r is None:
            continue
        total += r.count
        mappings.append(ContainerExtendedResourceRequest(cname, resource, r.name))
        if total >= wanted:
            return None, mappings
    ridx = sorted(str(k) for k in requests).index(resource)
    req = _Request(f"container-{index}-request-{ridx}", class_name, wanted - total)
    mappings.append(ContainerExtendedResourceRequest(cname, resource, req.name))
    return req, mappings


def create_requests_and_mappings(
    pod: Mapping[str, Any], extended: Iterable[str], resolver: DeviceClassResolver
) -> tuple[list[dict[str, Any]], list[ContainerExtendedResourceRequest]]:
    """Upstream ``createRequestsAndMappings``: the special claim's device requests (sorted by
    name) for the pod's ``extended`` resources, and which request serves each container's.

    Containers are the init containers then the regular ones; a non-sidecar init container runs
    before the long-lived ones and may reuse their devices, and the init containers of one
    resource share the largest of their requests."""
    spec = _map(pod.get("spec"))
    inits = (
        [c for c in spec.get("initContainers") or [] if isinstance(c, Mapping)]
        if isinstance(spec.get("initContainers"), list)
        else []
    )
    regular = (
        [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
        if isinstance(spec.get("containers"), list)
        else []
    )
    containers: list[Mapping[str, Any]] = [*inits, *regular]
    long_lived = [i for i, c in enumerate(containers) if i >= len(inits) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(len(inits)) if i not in long_lived]

    out: list[_Request] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(set(extended)):
        class_name = resolver.get_device_class(resource)
        if class_name is None:
            continue
        long_requests: list[_Request | None] = [None] * len(containers)
        long_mappings: list[ContainerExtendedResourceRequest] = []
        for i in long_lived:
            req, m = _container_request(i, containers[i], resource, class_name, ())
            long_requests[i] = req
            long_mappings.extend(m)
        largest: _Request | None = None
        short_names: set[str] = set()
        short_mappings: list[ContainerExtendedResourceRequest] = []
        for i in short_lived:
            req, m = _container_request(i, containers[i], resource, class_name, long_requests[i:])
            if req is not None:
                short_names.add(req.name)
                if largest is None or largest.count < req.count:
                    largest = req
            short_mappings.extend(m)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            short_mappings = [
                ContainerExtendedResourceRequest(m.container_name, m.resource_name, largest.name)
                if m.request_name in short_names
                else m
                for m in short_mappings
            ]
        if largest is not None:
            out.append(largest)
        out.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    out.sort(key=lambda r: r.name)
    return [r.to_json() for r in out], mappings
