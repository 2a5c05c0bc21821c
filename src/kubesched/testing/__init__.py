"""The plugin test kit: builders, ``new_framework``, ``FakeHandle`` and pytest fixtures.

See docs/plugin-guide.md for a plugin and its unit test in a few lines. What belongs here: what a
plugin author's tests (and ours) use, and the real etcd + kube-apiserver harness
(:mod:`.controlplane`, behind the ``kubesched[controlplane]`` extra). A top layer next to ``cli`` and
``bench``: it may import everything below; of the package, only ``bench --backend apiserver``
imports it (the harness, when such a run starts).
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
