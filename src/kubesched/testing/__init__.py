"""The plugin test kit: builders, ``new_framework`` and pytest fixtures.

See docs/plugin-guide.md for a plugin and its unit test in a few lines.
"""

from .framework import PreFilterOutcome, TestFramework, new_framework
from .wrappers import NodeWrapper, PodWrapper, make_node, make_pod

__all__ = ["NodeWrapper", "PodWrapper", "PreFilterOutcome", "TestFramework", "make_node", "make_pod", "new_framework"]
