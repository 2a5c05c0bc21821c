"""The public plugin API, ``kubesched.framework``: its surface is pinned here.

As httpx's tests/test_exported_members.py: every name in ``__all__`` exists, and ``__all__`` is
exactly the list below, so a name is added to or removed from the public API only on purpose.
"""

from __future__ import annotations

import subprocess
import sys

import kubesched.framework as framework

EXPECTED = {
    # the extension points and their contracts (pkg/scheduler/framework/interface.go)
    "Plugin", "PreEnqueuePlugin", "QueueSortPlugin", "EnqueueExtensions", "PreFilterExtensions",
    "PreFilterPlugin", "FilterPlugin", "BatchFilterPlugin", "BatchFilterStatusesPlugin",
    "PostFilterPlugin", "PreScorePlugin", "ScoreExtensions", "ScorePlugin", "BatchScorePlugin",
    "ReservePlugin", "PermitPlugin", "PreBindPlugin", "PreBindPreFlightPlugin", "BindPlugin", "PostBindPlugin",
    "SignPlugin", "SignFragment",
    "MIN_NODE_SCORE", "MAX_NODE_SCORE", "MAX_PERMIT_TIMEOUT",
    # what a factory receives
    "Handle", "ClusterClient", "EventRecorder", "PluginMetrics", "Clock", "VirtualClock", "Snapshot",
    "WaitingPod",
    # values plugins read and return
    "Code", "Status", "StatusLike", "CycleState", "StateData", "StateNotFoundError", "PodInfo",
    "NodeInfo", "NodeScore", "PreFilterResult", "PostFilterResult", "NominatingInfo", "NominatingMode",
    "QueuedPodInfo", "JSONValue", "JSONObj",
    # EnqueueExtensions
    "ActionType", "ClusterEvent", "ClusterEventWithHint", "EventResource", "QueueingHint", "QueueingHintFn",
    # the registry, and errors for a plugin's args and a profile
    "Registry", "RegistryError", "PluginFactory", "PluginSpec", "ENTRY_POINT_GROUP",
    "FrameworkError", "ConfigError", "FieldError", "invalid",
}


def test_all_names_exist() -> None:
    missing = [name for name in framework.__all__ if not hasattr(framework, name)]
    assert missing == []


def test_all_is_the_pinned_surface() -> None:
    assert len(framework.__all__) == len(set(framework.__all__)), "a name listed twice"
    assert set(framework.__all__) == EXPECTED


def test_public_module_does_not_import_the_in_tree_plugins() -> None:
    """kubesched.framework sits below kubesched.plugins: importing it loads no plugin module."""
    code = (
        "import sys, kubesched.framework\n"
        "print(sorted(m for m in sys.modules if m.startswith(('kubesched.plugins', 'kubesched.scheduler'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
