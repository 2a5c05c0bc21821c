"""Defaulting of KubeSchedulerConfiguration v1.

Ported from ``pkg/scheduler/apis/config/v1/default_plugins.go`` (``getDefaultPlugins``,
``applyFeatureGates``, ``mergePlugins``, ``mergePluginSet``) and
``pkg/scheduler/apis/config/v1/defaults.go`` (``SetDefaults_KubeSchedulerConfiguration``,
``setDefaults_KubeSchedulerProfile``), plus component-base's
``RecommendedDefaultLeaderElectionConfiguration``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from .args import decode_args
from .errors import FieldError
from .plugin_args import IN_TREE_ARGS
from .releases import (
    DEFAULT_RELEASE,
    NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE,
    NODE_NAME_BEFORE_NODE_UNSCHEDULABLE,
    Release,
)
from .types import (
    DEFAULT_SCHEDULER_NAME,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)

__all__ = [
    "DEFAULT_MULTI_POINT",
    "default_plugins",
    "merge_plugin_set",
    "merge_plugins",
    "plugin_names",
    "set_defaults",
    "set_defaults_profile",
]

#: ``getDefaultPlugins``'s MultiPoint list as of v1.35, in order, with score weights (v1.37 swaps
#: NodeUnschedulable and NodeName: :func:`default_plugins`). The
#: DynamicResourceAllocation gate is GA (on), so ``applyDynamicResources`` puts
#: DynamicResources before DefaultPreemption (it deallocates idle claims before any pod is
#: evicted), with score weight 2 since DRA scoring landed (kubernetes#134711, v1.35 cycle).
#: NodeDeclaredFeatures (gate on from v1.36) is appended by :func:`default_plugins`; other gated
#: additions (PodResizePreemption, GangScheduling, ...) are off by default and not listed.
DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)


def default_plugins(*, dynamic_resource_allocation: bool = True, release: Release = DEFAULT_RELEASE) -> Plugins:
    """A fresh copy of ``release``'s default plugins (everything through MultiPoint)."""
    enabled = [
        PluginRef(name, weight)
        for name, weight in DEFAULT_MULTI_POINT
        if dynamic_resource_allocation or name != "DynamicResources"
    ]
    if release.has(NODE_NAME_BEFORE_NODE_UNSCHEDULABLE):
        names = [p.name for p in enabled]
        i, j = names.index("NodeUnschedulable"), names.index("NodeName")
        enabled[i], enabled[j] = enabled[j], enabled[i]
    if release.has(NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE):
        # applyFeatureGates: the NodeDeclaredFeatures gate (on from 1.36) appends it, unweighted.
        enabled.append(PluginRef("NodeDeclaredFeatures"))
    return Plugins(multi_point=PluginSet(enabled=enabled))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """``mergePluginSet``: merge a user's set into the defaults of one extension point.

    Defaults keep their order; a user entry naming a default replaces it in place (so
    its weight changes without reordering); other user entries follow in their order;
    ``disabled`` drops defaults (``"*"`` all of them) and is kept in the result so the
    framework's MultiPoint expansion can honour it. Duplicate user entries are kept and
    left for the framework to reject.
    """
    disabled = [PluginRef(p.name) for p in custom.disabled] + [PluginRef(p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_by_name: dict[str, tuple[int, PluginRef]] = {}
    for index, plugin in enumerate(custom.enabled):
        custom_by_name[plugin.name] = (index, plugin)  # last one wins, as in Go's map
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            if plugin.name in custom_by_name:
                index, override = custom_by_name[plugin.name]
                plugin = override
                replaced.add(index)
            enabled.append(PluginRef(plugin.name, plugin.weight))
    for index, plugin in enumerate(custom.enabled):
        if index not in replaced:
            enabled.append(PluginRef(plugin.name, plugin.weight))
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """``mergePlugins``: :func:`merge_plugin_set` for every extension point."""
    if custom is None:
        return copy.deepcopy(default)
    merged = Plugins()
    for attr in Plugins.EXTENSION_POINTS:
        setattr(merged, attr, merge_plugin_set(getattr(default, attr), getattr(custom, attr)))
    return merged


def plugin_names(plugins: Plugins) -> list[str]:
    """``pluginsNames``: sorted names enabled at any extension point."""
    return sorted({p.name for _, ps in plugins.items() for p in ps.enabled})


def set_defaults_profile(
    profile: Profile,
    *,
    args_types: Mapping[str, type] | None = None,
    path: str = "",
    dynamic_resource_allocation: bool = True,
    release: Release = DEFAULT_RELEASE,
) -> list[FieldError]:
    """``setDefaults_KubeSchedulerProfile``: merge the default plugins in, then append
    default args (sorted by plugin name) for every enabled plugin that has an args type
    and no ``pluginConfig`` entry. ``profile.plugins`` is taken as the user's plugins.

    Returns errors from building default args (an out-of-tree args type with required
    fields gets no default entry and reports nothing: its factory sees ``None``).
    """
    types = dict(IN_TREE_ARGS)
    if args_types:
        types.update(args_types)
    profile.plugins = merge_plugins(
        default_plugins(dynamic_resource_allocation=dynamic_resource_allocation, release=release), profile.plugins
    )
    existing = {pc.name for pc in profile.plugin_config}
    errors: list[FieldError] = []
    for name in plugin_names(profile.plugins):
        if name in existing or name not in types:
            continue
        args, errs = decode_args(types[name], None, path, release=release)
        if args is None:
            if not any(e.message == "required field is missing" for e in errs):
                errors.extend(errs)
            continue
        profile.plugin_config.append(PluginConfig(name=name, args=args))
    return errors


def set_defaults(
    config: KubeSchedulerConfiguration,
    *,
    args_types: Mapping[str, type] | None = None,
    dynamic_resource_allocation: bool = True,
) -> list[FieldError]:
    """``SetDefaults_KubeSchedulerConfiguration`` in place; returns default-args errors.

    Zero values are defaulted as upstream does for non-pointer fields (``qps: 0`` -> 50,
    ``leaseDuration: 0s`` -> 15s, empty ``resourceLock`` -> ``leases``). Fields upstream
    keeps as pointers (parallelism, backoffs, percentages) are left as given.
    """
    if not config.profiles:
        config.profiles.append(Profile(scheduler_name=DEFAULT_SCHEDULER_NAME))
    errors: list[FieldError] = []
    for i, profile in enumerate(config.profiles):
        errors.extend(
            set_defaults_profile(
                profile,
                args_types=args_types,
                path=f"profiles[{i}].pluginConfig",
                dynamic_resource_allocation=dynamic_resource_allocation,
                release=config.release,
            )
        )
    if config.percentage_of_nodes_to_score is None:
        config.percentage_of_nodes_to_score = 0  # config.DefaultPercentageOfNodesToScore (adaptive)
    le = config.leader_election
    le.resource_lock = le.resource_lock or "leases"
    le.resource_namespace = le.resource_namespace or "kube-system"
    le.resource_name = le.resource_name or "kube-scheduler"
    le.lease_duration = le.lease_duration or 15.0
    le.renew_deadline = le.renew_deadline or 10.0
    le.retry_period = le.retry_period or 2.0
    cc = config.client_connection
    cc.content_type = cc.content_type or "application/vnd.kubernetes.protobuf"
    cc.qps = cc.qps or 50.0
    cc.burst = cc.burst or 100
    return errors
