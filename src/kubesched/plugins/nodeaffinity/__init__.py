"""NodeAffinity."""

from .node_affinity import NodeAffinity

__all__ = ["NodeAffinity"]
