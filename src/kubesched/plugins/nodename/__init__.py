"""NodeName."""

from .node_name import NodeName

__all__ = ["NodeName"]
