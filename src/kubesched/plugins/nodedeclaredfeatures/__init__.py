"""NodeDeclaredFeatures: nodes must declare the features a pod needs (in the default profile from
v1.36)."""

from .plugin import NodeDeclaredFeatures

__all__ = ["NodeDeclaredFeatures"]
