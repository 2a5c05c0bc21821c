"""DRAGpuScore: GPU placement policies (FGD, BestFit, ...) for GPUs claimed through DRA."""

from .args import DRAGpuScoreArgs
from .plugin import NAME, DRAGpuScore

__all__ = ["NAME", "DRAGpuScore", "DRAGpuScoreArgs"]
