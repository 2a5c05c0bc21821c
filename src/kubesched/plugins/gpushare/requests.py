"""What a pod asks of the GPUs, and where its GPUs are, in the API's terms.

A pod asks for whole GPUs with the extended resource ``nvidia.com/gpu: N``, or for a share of one
GPU with ``kubesched.io/gpu-milli: M`` (1..999 milli-GPU). It may restrict the GPU model with the
annotation ``kubesched.io/gpu-models: "A|B"`` (the trace's form) or with ``spec.nodeSelector`` /
required node affinity (``In``) on the node label ``nvidia.com/gpu.product``. The GPU indexes a pod
got are recorded on it as ``kubesched.io/gpu-ids: "0,1"``. Everything is parsed once per pod object
into a :class:`~kubesched.plugins.gpu.PodShape`, the engine's view of a request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubesched.framework.types import PodInfo
from kubesched.plugins.gpu import MILLI, PodShape

__all__ = [
    "ANNOTATION_GPU_GROUPS",
    "ANNOTATION_GPU_IDS",
    "ANNOTATION_GPU_MODELS",
    "LABEL_GPU_PRODUCT",
    "RESOURCE_GPU",
    "RESOURCE_GPU_MILLI",
    "GpuRequestError",
    "format_gpu_ids",
    "gpu_ids",
    "pod_shape",
]

RESOURCE_GPU = "nvidia.com/gpu"
"""Whole GPUs: a node's count in ``status.allocatable``, a pod's request."""
RESOURCE_GPU_MILLI = "kubesched.io/gpu-milli"
"""A share of one GPU in milli-GPU (1..999); nodes advertise 1000 per GPU for kubelet admission."""
LABEL_GPU_PRODUCT = "nvidia.com/gpu.product"
"""The node's GPU model (as NVIDIA's GPU feature discovery labels it)."""
ANNOTATION_GPU_MODELS = "kubesched.io/gpu-models"
"""Pod: acceptable GPU models, ``|``- or comma-separated, as the Alibaba trace's ``gpu_spec``."""
ANNOTATION_GPU_IDS = "kubesched.io/gpu-ids"
"""Pod: the GPU indexes it was given, comma-separated (written at PreBind)."""
ANNOTATION_GPU_GROUPS = "kubesched.io/gpu-groups"
"""Node: NVLink/PCIe groups of GPU indexes, ``;`` between groups, ``,`` or ranges inside one."""

_CACHE_KEY = "GpuShare"


class GpuRequestError(ValueError):
    """A GPU request the plugin cannot honour (both resources, a share out of 1..999, ...)."""


def _models_from_selector(pod: PodInfo) -> set[str] | None:
    """Models allowed by ``nodeSelector`` and required node affinity on the product label.

    Affinity terms are ORed: the pod is restricted only if every term restricts the label with
    ``In``, and then to the union of their values. Other operators are left to NodeAffinity.
    """
    allowed: set[str] | None = None
    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, Mapping) and LABEL_GPU_PRODUCT in selector:
        allowed = {str(selector[LABEL_GPU_PRODUCT])}
    node_affinity = pod.affinity.get("nodeAffinity")
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(
        node_affinity, Mapping) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    if isinstance(terms, list) and terms:
        union: set[str] = set()
        for term in terms:
            values = _term_models(term)
            if values is None:
                return allowed
            union |= values
        allowed = union if allowed is None else allowed & union
    return allowed


def _term_models(term: object) -> set[str] | None:
    found: set[str] | None = None
    for expr in (term.get("matchExpressions") or []) if isinstance(term, Mapping) else []:
        if isinstance(expr, Mapping) and expr.get("key") == LABEL_GPU_PRODUCT and expr.get("operator") == "In":
            values = {str(v) for v in expr.get("values") or []}
            found = values if found is None else found & values
    return found


def _split_models(text: str) -> tuple[str, ...]:
    parts = (p.strip() for p in text.replace(",", "|").split("|"))
    return tuple(dict.fromkeys(p for p in parts if p))


def _models(pod: PodInfo) -> tuple[str, ...]:
    text = pod.annotations.get(ANNOTATION_GPU_MODELS)
    listed = _split_models(str(text)) if text else ()
    spec = pod.spec
    if not spec.get("nodeSelector") and not spec.get("affinity"):
        return listed
    allowed = _models_from_selector(pod)
    if allowed is None:
        return listed
    models = tuple(m for m in listed if m in allowed) if listed else tuple(sorted(allowed))
    if not models:
        raise GpuRequestError(
            f"no GPU model satisfies both annotation {ANNOTATION_GPU_MODELS} and the node selector on "
            f"{LABEL_GPU_PRODUCT}"
        )
    return models


def _parse_shape(pod: PodInfo) -> PodShape:
    req = pod.requests
    whole = req.scalar_resources.get(RESOURCE_GPU, 0)
    share = req.scalar_resources.get(RESOURCE_GPU_MILLI, 0)
    if whole and share:
        raise GpuRequestError(f"a pod asks for either {RESOURCE_GPU} or {RESOURCE_GPU_MILLI}, not both")
    if share and not 0 < share < MILLI:
        raise GpuRequestError(
            f"{RESOURCE_GPU_MILLI} must be 1..{MILLI - 1} (a share of one GPU), got {share}; "
            f"ask for whole GPUs with {RESOURCE_GPU}"
        )
    if whole < 0:
        raise GpuRequestError(f"{RESOURCE_GPU} must not be negative, got {whole}")
    milli, count = (MILLI, whole) if whole else (share, 1 if share else 0)
    models = _models(pod) if count else ()
    return PodShape(cpu=req.milli_cpu, memory=req.memory, gpu_milli=milli, gpu_count=count, models=models)


def pod_shape(pod: PodInfo) -> PodShape:
    """The pod's request as the GPU engine sees it, parsed once per pod object.

    Raises :class:`GpuRequestError` for a request the plugin cannot honour.
    """
    cached = pod.cache.get(_CACHE_KEY)
    if cached is None:
        try:
            cached = _parse_shape(pod)
        except GpuRequestError as err:
            cached = err
        pod.cache[_CACHE_KEY] = cached
    if isinstance(cached, GpuRequestError):
        raise cached
    assert isinstance(cached, PodShape)
    return cached


def gpu_ids(pod: PodInfo) -> tuple[int, ...] | None:
    """The pod's ``kubesched.io/gpu-ids`` annotation, None when absent or not a list of indexes."""
    text = pod.annotations.get(ANNOTATION_GPU_IDS)
    if not text:
        return None
    try:
        return tuple(int(part) for part in str(text).split(","))
    except ValueError:
        return None


def format_gpu_ids(gpus: Sequence[int]) -> str:
    return ",".join(str(g) for g in gpus)
