"""VolumeZone."""

from .volume_zone import VolumeZone

__all__ = ["VolumeZone"]
