"""InterPodAffinity: required and preferred inter-pod (anti-)affinity."""

from .plugin import InterPodAffinity
from .terms import apply_match_label_keys

__all__ = ["InterPodAffinity", "apply_match_label_keys"]
