"""Validation of a defaulted KubeSchedulerConfiguration, with field paths.

Ported from ``pkg/scheduler/apis/config/validation/validation.go``
(``ValidateKubeSchedulerConfiguration``, ``validateKubeSchedulerProfile``,
``validatePluginConfig``, ``validateCommonQueueSort``, ``validateExtenders``) and
component-base ``config/validation/validation.go`` (leader election, client connection).
Args rules live on the args types (``plugin_args.py``) and run through
``args.validate_args``.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

from .args import validate_args
from .duration import format_duration
from .errors import FieldError, child_path, duplicate, index_path, invalid, required
from .names import is_extended_resource_name, is_qualified_name
from .plugin_args import IN_TREE_ARGS
from .types import API_VERSION, KubeSchedulerConfiguration, Plugins, Profile

__all__ = ["REMOVED_PLUGINS", "validate_configuration", "validate_plugin_names"]

#: ``invalidPluginsByVersion``: plugins removed in (or before) v1.
REMOVED_PLUGINS: tuple[str, ...] = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [FieldError(path, f"must be in 0..100, got {value}")]
    return []


def _removed(path: str, name: str) -> FieldError:
    return FieldError(path, f'plugin "{name}" was removed in {API_VERSION} and is no longer supported')


def _validate_profile(
    path: str, profile: Profile, args_types: Mapping[str, type], *, validate_plugin_args: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not profile.scheduler_name:
        errs.append(required(child_path(path, "schedulerName")))
    errs.extend(
        _percentage(child_path(path, "percentageOfNodesToScore"), profile.percentage_of_nodes_to_score)
    )
    plugins_path = child_path(path, "plugins")
    # Upstream skips multiPoint here (the framework rejects unknown plugins there later); we
    # check it too so the message names the removal.
    for attr, plugin_set in profile.plugins.items():
        set_path = child_path(child_path(plugins_path, Plugins.EXTENSION_POINTS[attr]), "enabled")
        for i, plugin in enumerate(plugin_set.enabled):
            if plugin.name in REMOVED_PLUGINS:
                errs.append(_removed(index_path(set_path, i), plugin.name))
    seen: set[str] = set()
    for i, pc in enumerate(profile.plugin_config):
        pc_path = index_path(child_path(path, "pluginConfig"), i)
        if pc.name in seen:
            errs.append(duplicate(pc_path, pc.name, "repeated config for plugin"))
        seen.add(pc.name)
        if pc.name in REMOVED_PLUGINS:
            errs.append(_removed(pc_path, pc.name))
            continue
        cls = args_types.get(pc.name)
        if cls is None:
            continue
        args_path = child_path(pc_path, "args")
        if not isinstance(pc.args, cls):
            errs.append(
                invalid(args_path, type(pc.args).__name__, f"has to match plugin args {cls.__name__}")
            )
        elif validate_plugin_args:
            errs.extend(validate_args(pc.args, args_path))
    return errs


def _validate_common_queue_sort(profiles: list[Profile]) -> list[FieldError]:
    """``validateCommonQueueSort``: every profile must use the same QueueSort plugins and args."""
    errs: list[FieldError] = []
    canon = profiles[0].plugins.queue_sort
    if len(canon.enabled) > 1:
        errs.append(
            invalid(
                "profiles[0].plugins.queueSort.enabled",
                len(canon.enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    queue_sort_name = canon.enabled[0].name if canon.enabled else ""
    queue_sort_args = profiles[0].args_for(queue_sort_name) if queue_sort_name else None
    for i in range(1, len(profiles)):
        curr = profiles[i].plugins.queue_sort
        if curr != canon:
            errs.append(
                FieldError(
                    f"profiles[{i}].plugins.queueSort",
                    f"has to match for all profiles (profiles[0] enables {canon.enabled_names()}, "
                    f"this one {curr.enabled_names()})",
                )
            )
        for pc in profiles[i].plugin_config:
            if queue_sort_name and pc.name == queue_sort_name and pc.args != queue_sort_args:
                errs.append(
                    FieldError(
                        f"profiles[{i}].pluginConfig.args", "queueSort must be the same for all profiles"
                    )
                )
    return errs


def _validate_leader_election(config: KubeSchedulerConfiguration) -> list[FieldError]:
    le = config.leader_election
    p = "leaderElection"
    errs: list[FieldError] = []
    if not le.leader_elect:
        return errs
    for key, value in (
        ("leaseDuration", le.lease_duration),
        ("renewDeadline", le.renew_deadline),
        ("retryPeriod", le.retry_period),
    ):
        if value <= 0:
            errs.append(invalid(child_path(p, key), format_duration(value), "must be greater than zero"))
    if le.lease_duration <= le.renew_deadline:
        errs.append(
            FieldError(
                child_path(p, "leaseDuration"),
                f"must be greater than renewDeadline ({format_duration(le.lease_duration)} <= "
                f"{format_duration(le.renew_deadline)})",
            )
        )
    if not le.resource_lock:
        errs.append(required(child_path(p, "resourceLock")))
    elif le.resource_lock != "leases":
        # kube-scheduler only allows lease locks (validation.go).
        errs.append(
            invalid(child_path(p, "resourceLock"), le.resource_lock, 'resourceLock value must be "leases"')
        )
    if not le.resource_namespace:
        errs.append(required(child_path(p, "resourceNamespace")))
    if not le.resource_name:
        errs.append(required(child_path(p, "resourceName")))
    return errs


def _validate_extenders(extenders: list[dict[str, Any]]) -> list[FieldError]:
    """``validateExtenders`` over the raw extender mappings (their shape is checked at load)."""
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = index_path("extenders", i)
        if not isinstance(ext, Mapping):
            continue  # the loader reported its shape; a hand-built config may hold anything
        weight = ext.get("weight") or 0
        if ext.get("prioritizeVerb") and (not isinstance(weight, int) or weight <= 0):
            errs.append(
                invalid(child_path(path, "weight"), weight, "must have a positive weight applied to it")
            )
        if ext.get("bindVerb"):
            binders += 1
        resources = ext.get("managedResources") or []
        for j, res in enumerate(resources if isinstance(resources, list) else []):
            name_path = child_path(index_path(child_path(path, "managedResources"), j), "name")
            name = res.get("name", "") if isinstance(res, Mapping) else ""
            if not isinstance(name, str):
                continue  # reported by the loader as a type error
            msgs = is_qualified_name(name)
            if msgs:
                errs.extend(invalid(name_path, name, m) for m in msgs)
            elif not is_extended_resource_name(name):
                errs.append(invalid(name_path, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(invalid(name_path, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errs


def validate_configuration(
    config: KubeSchedulerConfiguration,
    *,
    args_types: Mapping[str, type] | None = None,
    validate_plugin_args: bool = True,
) -> list[FieldError]:
    """``ValidateKubeSchedulerConfiguration``: every problem, in upstream's order.

    ``validate_plugin_args=False`` skips the args' own ``validate()`` (the loader already
    ran it while decoding) but still checks each known plugin's args has its type.
    """
    types = dict(IN_TREE_ARGS)
    if args_types:
        types.update(args_types)
    errs: list[FieldError] = []
    if config.client_connection.burst < 0:
        errs.append(invalid("clientConnection.burst", config.client_connection.burst, "must be non-negative"))
    errs.extend(_validate_leader_election(config))
    if config.parallelism <= 0:
        errs.append(
            invalid("parallelism", config.parallelism, "should be an integer value greater than zero")
        )
    if not config.profiles:
        errs.append(required("profiles", "at least one profile is needed"))
    else:
        first_index: dict[str, int] = {}
        for i, profile in enumerate(config.profiles):
            path = index_path("profiles", i)
            errs.extend(_validate_profile(path, profile, types, validate_plugin_args=validate_plugin_args))
            if profile.scheduler_name in first_index:
                errs.append(
                    FieldError(
                        child_path(path, "schedulerName"),
                        f'duplicate value "{profile.scheduler_name}" (also '
                        f"profiles[{first_index[profile.scheduler_name]}].schedulerName)",
                    )
                )
            else:
                first_index[profile.scheduler_name] = i
        errs.extend(_validate_common_queue_sort(config.profiles))
    errs.extend(_percentage("percentageOfNodesToScore", config.percentage_of_nodes_to_score))
    if config.pod_initial_backoff_seconds <= 0:
        errs.append(
            invalid("podInitialBackoffSeconds", config.pod_initial_backoff_seconds, "must be greater than 0")
        )
    if config.pod_max_backoff_seconds < config.pod_initial_backoff_seconds:
        errs.append(
            invalid(
                "podMaxBackoffSeconds",
                config.pod_max_backoff_seconds,
                "must be greater than or equal to podInitialBackoffSeconds",
            )
        )
    errs.extend(_validate_extenders(config.extenders))
    return errs


#: Extension-point YAML key -> the Go interface upstream names in its messages
#: (``pluginType.Name()`` in framework.go's ``updatePluginList``).
_POINT_TYPES: dict[str, str] = {
    key: key[:1].upper() + key[1:] + "Plugin" for key in Plugins.EXTENSION_POINTS.values() if key != "multiPoint"
}


def validate_plugin_names(plugins: Plugins, path: str, registered: Collection[str]) -> list[FieldError]:
    """Every enabled plugin of one profile's *own* ``plugins`` (before the defaults are merged in,
    so indices are the file's) must be registered, and named once per extension point.

    Upstream finds these when it builds the framework, and stops at the first
    (``pkg/scheduler/framework/runtime/framework.go`` ``updatePluginList``: ``FilterPlugin "Foo"
    does not exist``, ``plugin "Foo" already registered as "FilterPlugin"``); we keep its words but
    report every one with its field path, together with the validation errors. ``disabled`` may
    name anything (disabling a plugin that is not there is not an error upstream either); plugins
    in the removed list are reported by :func:`validate_configuration`. Whether a plugin extends
    the points it is enabled at needs the plugin itself, so the Framework checks that."""
    errs: list[FieldError] = []
    known = set(registered)
    hints = _MAX_HINTS  # a close-match search per name is slow: a file of 50,000 names gets 20
    for attr, plugin_set in plugins.items():
        key = Plugins.EXTENSION_POINTS[attr]
        set_path = child_path(child_path(path, key), "enabled")
        kind = _POINT_TYPES.get(key)
        seen: set[str] = set()
        for i, ref in enumerate(plugin_set.enabled):
            name_path = child_path(index_path(set_path, i), "name")
            name = ref.name
            if name in REMOVED_PLUGINS:
                continue
            if name not in known:
                what = f"{kind} {_quote(name)}" if kind else f"plugin {_quote(name)}"
                hint = _unregistered_hint(name, known if hints > 0 else ())
                hints -= 1
                errs.append(FieldError(name_path, f"{what} does not exist ({hint})"))
            elif name in seen:
                errs.append(FieldError(name_path, f"plugin {_quote(name)} already registered as "
                                                  f"{_quote(kind or 'MultiPoint')}"))
            seen.add(name)
    return errs


_MAX_HINTS = 20


def _quote(name: str) -> str:
    """Go's ``%q``."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unregistered_hint(name: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75) if len(name) <= 200 else []
    return f"plugin not registered; did you mean {_quote(close[0])}?" if close else "plugin not registered"
