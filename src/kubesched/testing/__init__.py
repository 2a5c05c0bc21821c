"""The plugin test kit: builders, ``new_framework``, ``FakeHandle`` and pytest fixtures.

See docs/plugin-guide.md for a plugin and its unit test in a few lines.
"""

from .framework import PreFilterOutcome, TestFramework, new_framework
from .handle import FakeClient, FakeHandle, RecordedEvent
from .wrappers import NodeWrapper, PodWrapper, make_node, make_pod

__all__ = [
    "FakeClient",
    "FakeHandle",
    "NodeWrapper",
    "PodWrapper",
    "PreFilterOutcome",
    "RecordedEvent",
    "TestFramework",
    "make_node",
    "make_pod",
    "new_framework",
]
