"""NodeVolumeLimits."""

from .csi import NodeVolumeLimits

__all__ = ["NodeVolumeLimits"]
