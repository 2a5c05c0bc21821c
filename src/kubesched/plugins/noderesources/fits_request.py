"""Upstream ``fitsRequest`` and ``InsufficientResource`` (``noderesources/fit.go``), below the plugin.

Both the Filter of :mod:`.fit` and the queueing hints of :mod:`.fit_hints` ask whether a request fits
a node; living here, neither of those modules has to import the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.resources import Resource, is_extended_resource_name
from kubesched.framework.types import NodeInfo

__all__ = ["InsufficientResource", "fits_request"]


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def fits_request(
    req: Resource,
    node_info: NodeInfo,
    ignored_extended: set[str] | frozenset[str] = frozenset(),
    ignored_groups: set[str] | frozenset[str] = frozenset(),
    dra_backed: set[str] | frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """Upstream ``fitsRequest``: every resource the node is short of, with upstream's reasons.

    ``dra_backed``: the requested resources a DeviceClass provides (DRAExtendedResource): a node
    without them in its allocatable leaves them to DynamicResources (``shouldDelegateResourceToDRA``)."""
    out: list[InsufficientResource] = []
    alloc, used = node_info.allocatable, node_info.requested
    n_pods = len(node_info.pods)
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource("pods", "Too many pods", 1, n_pods, alloc.allowed_pod_number))
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar_resources:
        return out
    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource("cpu", "Insufficient cpu", req.milli_cpu, used.milli_cpu, alloc.milli_cpu,
                                        req.milli_cpu > alloc.milli_cpu))
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        out.append(InsufficientResource("memory", "Insufficient memory", req.memory, used.memory, alloc.memory,
                                        req.memory > alloc.memory))
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource(
            "ephemeral-storage", "Insufficient ephemeral-storage", req.ephemeral_storage,
            used.ephemeral_storage, alloc.ephemeral_storage, req.ephemeral_storage > alloc.ephemeral_storage,
        ))
    for name, q in req.scalar_resources.items():
        if q == 0:
            continue
        if is_extended_resource_name(name):
            prefix = name.split("/")[0] if ignored_groups else ""
            if name in ignored_extended or prefix in ignored_groups:
                continue
        a = alloc.scalar_resources.get(name, 0)
        if a <= 0 and name in dra_backed:
            continue
        u = used.scalar_resources.get(name, 0)
        if q > a - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, u, a, q > a))
    return out
