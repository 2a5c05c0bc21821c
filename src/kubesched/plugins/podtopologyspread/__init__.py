"""PodTopologySpread: topology spread constraints (filtering and scoring), with system defaults."""

from .plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
