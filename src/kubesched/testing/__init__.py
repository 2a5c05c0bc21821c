"""The plugin test kit: builders, ``new_framework``, ``FakeHandle`` and pytest fixtures.

See docs/plugin-guide.md for a plugin and its unit test in a few lines. What belongs here: what a
plugin author's tests (and ours) use; the real etcd + kube-apiserver harness is
:mod:`kubesched.kube.controlplane`. A top layer next to ``cli`` and ``bench``: it may import
everything below, and neither ``cli`` nor ``bench`` imports it.
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
