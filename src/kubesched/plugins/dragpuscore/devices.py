"""What DRAGpuScore reads of resource.k8s.io/v1 objects: the GPUs each node publishes, which of them
claims hold, and how many GPUs a pod's unallocated claims ask for.

Pure functions over the objects as the API server serves them. Malformed fields count as absent
(the API server's validation makes them impossible; the scorer must never raise on them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from kubesched.api.dra.resourceclaim import ClaimNameError, claim_name
from kubesched.framework.types import JSONObj

__all__ = [
    "DeviceKey",
    "GpuInventory",
    "GpuRequest",
    "claim_gpu_request",
    "gpus_by_node",
    "node_gpus",
    "pod_claim_names",
]

DeviceKey = tuple[str, str, str]
"""(driver, pool, device): a device's identity, as upstream's ``structured.DeviceID``."""


def _obj(value: object) -> JSONObj:
    return cast("JSONObj", value) if isinstance(value, Mapping) else {}


def _objs(value: object) -> list[JSONObj]:
    return [cast("JSONObj", v) for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class GpuInventory:
    """One node's GPUs: their keys in the slices' order, and the model of each."""

    devices: tuple[DeviceKey, ...] = ()
    models: tuple[str, ...] = ()


def _attribute(device: JSONObj, driver: str, name: str) -> str:
    """A device attribute's value as text; ``name`` may be qualified (``domain/id``) or not, an
    unqualified id being in the driver's domain as upstream reads it."""
    attrs = _obj(device.get("attributes"))
    domain, _, ident = name.rpartition("/")
    keys = [name] if not domain else [name] + ([ident] if domain == driver else [])
    if not domain:
        keys.append(f"{driver}/{name}")
    for key in keys:
        value = _obj(attrs.get(key))
        for kind in ("string", "version", "int", "bool"):
            if kind in value:
                return str(value[kind])
    return ""


def gpus_by_node(slices: Iterable[JSONObj], drivers: Sequence[str], model_attribute: str) -> dict[str, GpuInventory]:
    """Each node's GPUs: the devices of ``drivers`` that slices publish for it (``spec.nodeName``),
    each pool at its newest generation only (older slices are being replaced, as the allocator
    reads them). Built once per cycle, so Score looks a node up instead of reading every slice."""
    newest: dict[tuple[str, str], int] = {}
    mine: list[tuple[str, str, str, int, JSONObj]] = []
    for s in slices:
        spec = _obj(_obj(s).get("spec"))
        driver = _str(spec.get("driver"))
        node = _str(spec.get("nodeName"))
        if driver not in drivers or not node:
            continue
        pool = _obj(spec.get("pool"))
        pool_name = _str(pool.get("name"))
        gen = pool.get("generation")
        generation = gen if isinstance(gen, int) and not isinstance(gen, bool) else 0
        newest[(driver, pool_name)] = max(newest.get((driver, pool_name), generation), generation)
        mine.append((node, driver, pool_name, generation, spec))
    keys: dict[str, list[DeviceKey]] = {}
    models: dict[str, list[str]] = {}
    for node, driver, pool_name, generation, spec in mine:
        if generation != newest[(driver, pool_name)]:
            continue
        for device in _objs(spec.get("devices")):
            device_name = _str(device.get("name"))
            if device_name:
                keys.setdefault(node, []).append((driver, pool_name, device_name))
                models.setdefault(node, []).append(_attribute(device, driver, model_attribute))
    return {node: GpuInventory(tuple(keys[node]), tuple(models[node])) for node in keys}


def node_gpus(slices: Iterable[JSONObj], node: str, drivers: Sequence[str], model_attribute: str) -> GpuInventory:
    """One node's GPUs (see :func:`gpus_by_node`)."""
    return gpus_by_node(slices, drivers, model_attribute).get(node, GpuInventory())


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """Whole GPUs a pod's unallocated claims ask for; ``exact`` is False when some request's size
    depends on the node (allocationMode All), which this scorer does not rank."""

    count: int = 0
    exact: bool = True
    claims: tuple[str, ...] = field(default=())


def pod_claim_names(pod: JSONObj) -> list[str]:
    """The names of the pod's ResourceClaims (upstream ``resourceclaim.Name``); a template claim
    not generated yet, or a claim the pod does not name usably, is left out."""
    names: list[str] = []
    for pc in _objs(_obj(pod.get("spec")).get("resourceClaims")):
        try:
            name, _ = claim_name(pod, pc)
        except ClaimNameError:
            continue
        if name:
            names.append(name)
    return names


def claim_gpu_request(claim: JSONObj, classes: Sequence[str]) -> GpuRequest:
    """GPUs an unallocated claim asks for from ``classes``: each ``exactly`` request's count
    (ExactCount, default 1); for ``firstAvailable`` the first subrequest of a GPU class, which is
    what the allocator tries first. An allocated claim asks for nothing more."""
    status = _obj(_obj(claim).get("status"))
    if status.get("allocation"):
        return GpuRequest()
    count, exact = 0, True
    for request in _objs(_obj(_obj(_obj(claim).get("spec")).get("devices")).get("requests")):
        options = [_obj(request.get("exactly"))] if request.get("exactly") else _objs(request.get("firstAvailable"))
        for option in options:
            if _str(option.get("deviceClassName")) not in classes:
                continue
            if option.get("allocationMode") == "All":
                exact = False
            else:
                n = option.get("count", 1)
                count += n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1
            break
    return GpuRequest(count, exact)
