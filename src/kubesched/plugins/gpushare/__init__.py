"""GpuShare: GPU sharing and topology for the Scheduling Framework, on the FGD paper's GPU engine."""

from .args import GpuShareArgs, TypicalPodArgs
from .plugin import NAME, GpuShare
from .requests import (
    ANNOTATION_GPU_GROUPS,
    ANNOTATION_GPU_IDS,
    ANNOTATION_GPU_MODELS,
    LABEL_GPU_PRODUCT,
    RESOURCE_GPU,
    RESOURCE_GPU_MILLI,
)

__all__ = [
    "ANNOTATION_GPU_GROUPS",
    "ANNOTATION_GPU_IDS",
    "ANNOTATION_GPU_MODELS",
    "LABEL_GPU_PRODUCT",
    "NAME",
    "RESOURCE_GPU",
    "RESOURCE_GPU_MILLI",
    "GpuShare",
    "GpuShareArgs",
    "TypicalPodArgs",
]
