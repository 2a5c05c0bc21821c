"""The Scheduling Framework, and the one module a plugin author imports from.

``from kubesched.framework import FilterPlugin, Handle, Status, ...``: the extension-point
Protocols and their contracts, the :class:`Handle` a factory receives, the values a plugin reads
and returns (PodInfo, NodeInfo, CycleState, Status, NodeScore, PreFilterResult...), the cluster
events of EnqueueExtensions, the registry, and the errors for a plugin's args. Everything here is
kept stable; the submodules (the runtime, the node tables, preemption's internals) are not.
Nothing here imports the in-tree plugins (``kubesched.plugins``), which build on this package.
Unit tests import their kit from ``kubesched.testing``.
"""

from kubesched.config.errors import ConfigError, FieldError, invalid

from .clock import Clock, VirtualClock
from .cycle_state import CycleState, StateData, StateNotFoundError
from .events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, QueueingHintFn
from .interfaces import (
    MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT,
    MIN_NODE_SCORE,
    BatchFilterPlugin,
    BatchFilterStatusesPlugin,
    BatchScorePlugin,
    BindPlugin,
    ClusterClient,
    EnqueueExtensions,
    EventRecorder,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PluginMetrics,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreBindPreFlightPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from .registry import ENTRY_POINT_GROUP, PluginFactory, PluginSpec, Registry, RegistryError
from .runtime import FrameworkError
from .signature import SignFragment
from .snapshot import Snapshot
from .status import Code, Status, StatusLike
from .types import (
    JSONObj,
    JSONValue,
    NodeInfo,
    NodeScore,
    NominatingInfo,
    NominatingMode,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from .waiting_pods import WaitingPod

__all__ = [
    "ENTRY_POINT_GROUP",
    "MAX_NODE_SCORE",
    "MAX_PERMIT_TIMEOUT",
    "MIN_NODE_SCORE",
    "ActionType",
    "BatchFilterPlugin",
    "BatchFilterStatusesPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "Clock",
    "ClusterClient",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "ConfigError",
    "CycleState",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FieldError",
    "FilterPlugin",
    "FrameworkError",
    "Handle",
    "JSONObj",
    "JSONValue",
    "NodeInfo",
    "NodeScore",
    "NominatingInfo",
    "NominatingMode",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PluginMetrics",
    "PluginSpec",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreBindPreFlightPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "Registry",
    "RegistryError",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SignFragment",
    "SignPlugin",
    "Snapshot",
    "StateData",
    "StateNotFoundError",
    "Status",
    "StatusLike",
    "VirtualClock",
    "WaitingPod",
    "invalid",
]
