"""Feasibility of a pod on one node: resource fit and GPU fit.

Resource fit mirrors kube-scheduler's NodeResourcesFit (pkg/scheduler/framework/plugins/noderesources/fit.go)
for CPU, memory and pod count; GPU fit mirrors the FGD simulator's Open-Gpu-Share Filter
(pkg/simulator/plugin/open_gpu_share.go and gpunodeinfo.go AllocateGpuId). A framework plugin uses only
:func:`gpu_fit` (NodeResourcesFit already checks the rest); the standalone replay uses both.
"""

from __future__ import annotations

from .types import NodeGpuState, PodShape, accessible

__all__ = [
    "REASON_GPU_MODEL",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_GPU",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_NO_GPU",
    "REASON_TOO_MANY_PODS",
    "gpu_fit",
    "resources_fit",
]

REASON_INSUFFICIENT_CPU = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY = "Insufficient memory"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_NO_GPU = "Node has no GPU"
REASON_GPU_MODEL = "GPU model mismatch"
REASON_INSUFFICIENT_GPU = "Insufficient GPU"


def resources_fit(node: NodeGpuState, pod: PodShape) -> str | None:
    """None when CPU, memory and the pod count fit, else the first failing reason (upstream's order)."""
    if node.pods + 1 > node.max_pods:
        return REASON_TOO_MANY_PODS
    if pod.cpu > node.cpu_left:
        return REASON_INSUFFICIENT_CPU
    if pod.memory > node.memory_left:
        return REASON_INSUFFICIENT_MEMORY
    return None


def gpu_fit(node: NodeGpuState, pod: PodShape) -> str | None:
    """None when the pod's GPU request fits on some GPUs of the node, else the reason.

    A shared pod needs one GPU with at least ``gpu_milli`` left; a whole-GPU pod needs ``gpu_count``
    GPUs with ``gpu_milli`` (= 1000) left, i.e. fully free GPUs.
    """
    if not pod.wants_gpu:
        return None
    if node.gpu_count == 0:
        return REASON_NO_GPU
    if not accessible(node.model, pod.models):
        return REASON_GPU_MODEL
    if sum(1 for left in node.gpu_left if left >= pod.gpu_milli) < pod.gpu_count:
        return REASON_INSUFFICIENT_GPU
    return None
