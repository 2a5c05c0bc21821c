"""``GPUNode``: a GPU server in a few lines of a scenario, expanded into the Node and the
ResourceSlice a DRA GPU driver would publish for it (simulator only).

A real cluster gets its ResourceSlices from the vendor's driver on each node; a scenario has no
driver, and writing eight devices with their attributes by hand for every node is long and easy to
get wrong. So::

    apiVersion: sim.kubesched.io/v1alpha1
    kind: GPUNode
    metadata: {name: h100-0, labels: {zone: a}}
    spec:
      cpu: "112"
      memory: 2Ti
      gpus: {model: H100, count: 8, memory: 80Gi, nvlinkDomains: 2}

becomes a Node ``h100-0`` (capacity and allocatable cpu, memory, pods; the labels plus
``kubernetes.io/hostname``; ``spec.taints`` copied) and a ResourceSlice ``h100-0-gpu.nvidia.com``
of driver ``gpus.driver`` (default ``gpu.nvidia.com``), pool ``h100-0`` at generation 1, with
devices ``gpu-0`` .. ``gpu-7``. Each device has the attributes ``productName`` (the model),
``index``, ``nvlinkDomain`` (GPUs dealt in order into ``nvlinkDomains`` equal groups, default one)
and ``resource.kubernetes.io/pcieRoot`` (``pcieRoots`` equal groups, default as many as NVLink
domains), and the capacity ``memory`` when given. A claim keeps its GPUs in one NVLink domain with
``matchAttribute: gpu.nvidia.com/nvlinkDomain``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.quantity import parse_quantity

__all__ = ["API_VERSION", "DEFAULT_DRIVER", "KIND", "MAX_GPUS", "expand_gpu_node"]

API_VERSION = "sim.kubesched.io/v1alpha1"
KIND = "GPUNode"
DEFAULT_DRIVER = "gpu.nvidia.com"
#: ResourceSlice's limit on devices in one slice (resource.ResourceSliceMaxDevices).
MAX_GPUS = 128
PCIE_ROOT = "resource.kubernetes.io/pcieRoot"

_SPEC_KEYS = frozenset({"cpu", "memory", "pods", "gpus", "taints"})
_GPU_KEYS = frozenset({"driver", "model", "count", "memory", "nvlinkDomains", "pcieRoots"})

Problem = tuple[str, str]
"""(field path, message)."""


def _quantity(value: object, path: str, problems: list[Problem]) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        problems.append((path, f"must be a quantity, got {value!r}"))
        return None
    try:
        if parse_quantity(value) <= 0:
            problems.append((path, f"must be positive, got {value!r}"))
            return None
    except ValueError as err:
        problems.append((path, str(err)))
        return None
    return str(value)


def _count(value: object, path: str, lo: int, hi: int, problems: list[Problem]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        problems.append((path, f"must be an integer in [{lo}, {hi}], got {value!r}"))
        return None
    return value


def _unknown(obj: Mapping[str, Any], known: frozenset[str], path: str, problems: list[Problem]) -> None:
    for key in obj:
        if key not in known:
            problems.append((f"{path}.{key}", f"unknown field (known: {', '.join(sorted(known))})"))


def _groups(count: int, groups: int, path: str, problems: list[Problem]) -> bool:
    if count % groups:
        problems.append((path, f"{groups} does not divide the {count} GPUs into equal groups"))
        return False
    return True


def expand_gpu_node(obj: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The Node and ResourceSlice of a ``GPUNode``, or the problems of its fields (then no object)."""
    problems: list[Problem] = []
    md = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(md, Mapping)
    name = md.get("name")
    if not isinstance(name, str) or not name:
        problems.append(("metadata.name", "Required value"))
        name = ""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return [], [*problems, ("spec", f"must be an object, got {spec!r}")]
    _unknown(spec, _SPEC_KEYS, "spec", problems)
    cpu = _quantity(spec.get("cpu"), "spec.cpu", problems)
    memory = _quantity(spec.get("memory"), "spec.memory", problems)
    pods = _count(spec.get("pods", 110), "spec.pods", 1, 1_000_000, problems)
    taints = spec.get("taints", [])
    if not isinstance(taints, list):
        problems.append(("spec.taints", f"must be a list, got {taints!r}"))
    gpus = spec.get("gpus")
    if not isinstance(gpus, Mapping):
        return [], [*problems, ("spec.gpus", f"must be an object, got {gpus!r}")]
    _unknown(gpus, _GPU_KEYS, "spec.gpus", problems)
    driver = gpus.get("driver", DEFAULT_DRIVER)
    if not isinstance(driver, str) or not driver:
        problems.append(("spec.gpus.driver", f"must be a non-empty string, got {driver!r}"))
    model = gpus.get("model")
    if not isinstance(model, str) or not model:
        problems.append(("spec.gpus.model", f"must be a non-empty string, got {model!r}"))
    count = _count(gpus.get("count"), "spec.gpus.count", 1, MAX_GPUS, problems)
    gpu_memory = _quantity(gpus["memory"], "spec.gpus.memory", problems) if "memory" in gpus else None
    domains = _count(gpus.get("nvlinkDomains", 1), "spec.gpus.nvlinkDomains", 1, MAX_GPUS, problems)
    roots = _count(gpus.get("pcieRoots", domains or 1), "spec.gpus.pcieRoots", 1, MAX_GPUS, problems)
    if count is not None and domains is not None:
        _groups(count, domains, "spec.gpus.nvlinkDomains", problems)
    if count is not None and roots is not None:
        _groups(count, roots, "spec.gpus.pcieRoots", problems)
    if problems:
        return [], problems
    assert count is not None and domains is not None and roots is not None and isinstance(driver, str)
    labels = dict(md.get("labels") or {})
    labels.setdefault("kubernetes.io/hostname", name)
    resources = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": dict(md.get("annotations") or {})},
        "spec": {"taints": list(taints)} if taints else {},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }
    devices = []
    for i in range(count):
        device: dict[str, Any] = {
            "name": f"gpu-{i}",
            "attributes": {
                "productName": {"string": model},
                "index": {"int": i},
                "nvlinkDomain": {"int": i // (count // domains)},
                PCIE_ROOT: {"string": f"pci0000:{i // (count // roots):02x}"},
            },
        }
        if gpu_memory is not None:
            device["capacity"] = {"memory": {"value": gpu_memory}}
        devices.append(device)
    resource_slice = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }
    return [node, resource_slice], []
