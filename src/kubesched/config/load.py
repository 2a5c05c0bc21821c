"""Load a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as kube-scheduler does.

kube-scheduler's ``--config`` path (``cmd/kube-scheduler/app/options/configfile.go``) decodes
the file strictly (unknown or duplicate fields are errors), decodes each
``pluginConfig[].args`` into its registered ``<Plugin>Args`` type
(``types.go`` ``DecodeNestedObjects``), applies defaults, then validates. We do the same,
but collect every problem and raise them together as one :class:`ConfigError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import yaml

from .args import decode_into, describe_args, to_raw, validate_args
from .defaults import set_defaults
from .errors import ConfigError, FieldError, child_path, format_value, index_path
from .plugin_args import IN_TREE_ARGS
from .types import API_VERSION, KIND, Extender, KubeSchedulerConfiguration, PluginConfig, Profile
from .validation import validate_configuration

__all__ = ["config_to_dict", "load_config", "loads_config"]

_GROUP = API_VERSION.split("/")[0]
#: versions kube-scheduler no longer serves, with the release that removed them where known.
_REMOVED_VERSIONS = {
    f"{_GROUP}/v1beta3": "v1.29",
    f"{_GROUP}/v1beta2": "v1.28",
    f"{_GROUP}/v1beta1": None,
    f"{_GROUP}/v1alpha2": None,
    f"{_GROUP}/v1alpha1": None,
}


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys (sigs.k8s.io/yaml rejects them)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[FieldError] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            try:
                key = self.construct_object(key_node, deep=True)
            except yaml.YAMLError:
                continue
            try:
                first = seen.get(key)
            except TypeError:  # unhashable key: let the base class report it
                continue
            if first is not None:
                mark = key_node.start_mark
                self.duplicates.append(
                    FieldError(
                        "",
                        f"duplicate key {format_value(key)} at line {mark.line + 1}, "
                        f"column {mark.column + 1} "
                        f"(first at line {first.start_mark.line + 1})",
                    )
                )
            else:
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def _parse_yaml(text: str) -> tuple[Any, list[FieldError]]:
    loader = _StrictLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "parse error"
        return None, [FieldError("", f"invalid YAML{where}: {problem}")]
    except yaml.YAMLError as exc:
        return None, [FieldError("", f"invalid YAML: {exc}")]
    finally:
        loader.dispose()
    return data, loader.duplicates


def _check_type_meta(raw: Mapping[str, Any], *, require: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    version = raw.get("apiVersion")
    if version is None:
        if require:
            errs.append(FieldError("apiVersion", f'required: must be "{API_VERSION}"'))
    elif version in _REMOVED_VERSIONS:
        release = _REMOVED_VERSIONS[version]
        when = f" in Kubernetes {release}" if release else ""
        errs.append(
            FieldError("apiVersion", f'"{version}" was removed{when}; migrate the file to "{API_VERSION}"')
        )
    elif version != API_VERSION:
        errs.append(
            FieldError("apiVersion", f'unsupported version {format_value(version)}: must be "{API_VERSION}"')
        )
    kind = raw.get("kind")
    if kind is None:
        if require:
            errs.append(FieldError("kind", f'required: must be "{KIND}"'))
    elif kind != KIND:
        errs.append(FieldError("kind", f'must be "{KIND}", got {format_value(kind)}'))
    return errs


def _decode_plugin_args(
    name: str, raw: Any, path: str, types: Mapping[str, type], errors: list[FieldError]
) -> object:
    cls = types.get(name)
    if cls is None:
        # Out-of-tree plugin without a registered args type: hand the factory the raw mapping.
        return {} if raw is None else raw
    if raw is not None and not isinstance(raw, Mapping):
        errors.append(FieldError(path, f"must be a mapping {describe_args(cls)}, got {format_value(raw)}"))
        return decode_into(cls, None, path, [])
    if raw is not None:
        kind = raw.get("kind")
        if kind is not None and kind != f"{name}Args":
            errors.append(
                FieldError(
                    child_path(path, "kind"),
                    f'args for plugin {name} must be of kind "{name}Args", got {format_value(kind)}',
                )
            )
        version = raw.get("apiVersion")
        if version is not None and version != API_VERSION:
            errors.append(
                FieldError(
                    child_path(path, "apiVersion"), f'must be "{API_VERSION}", got {format_value(version)}'
                )
            )
        raw = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
    decode_errors: list[FieldError] = []
    args: object = decode_into(cls, raw, path, decode_errors)
    errors.extend(decode_errors)
    if not decode_errors:
        hook = getattr(args, "set_defaults", None)
        if callable(hook):
            hook()
        errors.extend(validate_args(args, path))
    return args


def _decode_profiles(raw: Any, types: Mapping[str, type], errors: list[FieldError]) -> list[Profile]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(FieldError("profiles", f"must be a list of profiles, got {format_value(raw)}"))
        return []
    profiles: list[Profile] = []
    for i, raw_profile in enumerate(raw):
        path = index_path("profiles", i)
        if not isinstance(raw_profile, Mapping):
            errors.append(
                FieldError(
                    path, f"must be a mapping {describe_args(Profile)}, got {format_value(raw_profile)}"
                )
            )
            continue
        profile = decode_into(Profile, raw_profile, path, errors)
        # Only a lone profile without schedulerName gets "default-scheduler" (defaults.go).
        if raw_profile.get("schedulerName") is None and len(raw) > 1:
            profile.scheduler_name = ""
        raw_configs = raw_profile.get("pluginConfig")
        if isinstance(raw_configs, list):
            decoded_configs = iter(profile.plugin_config)
            configs: list[PluginConfig] = []
            for j, raw_pc in enumerate(raw_configs):
                if not isinstance(raw_pc, Mapping):
                    continue  # reported by decode_into; it left the entry out
                pc = next(decoded_configs)
                pc_path = index_path(child_path(path, "pluginConfig"), j)
                pc.args = _decode_plugin_args(
                    pc.name, raw_pc.get("args"), child_path(pc_path, "args"), types, errors
                )
                configs.append(pc)
            profile.plugin_config = configs
        profiles.append(profile)
    return profiles


def _under(path: str, prefixes: list[str]) -> bool:
    return any(
        path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")
        for prefix in prefixes
    )


def _build(
    raw: Any, args_types: Mapping[str, type] | None, *, require_type_meta: bool, source: str | None
) -> KubeSchedulerConfiguration:
    types: dict[str, type] = dict(IN_TREE_ARGS)
    if args_types:
        types.update(args_types)
    errors: list[FieldError] = []
    if raw is None:
        config = KubeSchedulerConfiguration()
    else:
        if not isinstance(raw, Mapping):
            raise ConfigError(
                [FieldError("", f"must be a mapping (a {KIND} object), got {format_value(raw)}")], source
            )
        meta_errors = _check_type_meta(raw, require=require_type_meta)
        if meta_errors:
            raise ConfigError(meta_errors, source)
        body = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind", "profiles")}
        config = decode_into(KubeSchedulerConfiguration, body, "", errors)
        config.profiles = _decode_profiles(raw.get("profiles"), types, errors)
        extenders = raw.get("extenders")
        if isinstance(extenders, list):
            for i, ext in enumerate(extenders):
                if isinstance(ext, Mapping):
                    decode_into(Extender, ext, index_path("extenders", i), errors)
        if raw.get("enableContentionProfiling") is None and not config.enable_profiling:
            config.enable_contention_profiling = False  # only defaulted on when profiling is on
    # Validation errors at or under a field that failed to decode are noise (the field holds
    # its default): report the decoding problem only.
    decode_paths = [e.path for e in errors if e.path]
    errors.extend(set_defaults(config, args_types=args_types))
    for err in validate_configuration(config, args_types=args_types, validate_plugin_args=False):
        if not _under(err.path, decode_paths):
            errors.append(err)
    if errors:
        raise ConfigError(errors, source)
    return config


def loads_config(
    text: str, *, args_types: Mapping[str, type] | None = None, source: str | None = "<string>"
) -> KubeSchedulerConfiguration:
    """Like :func:`load_config` for YAML text."""
    data, errors = _parse_yaml(text)
    if errors:
        raise ConfigError(errors, source)
    if data is None:
        raise ConfigError([FieldError("", f"empty document: expected a {KIND} ({API_VERSION})")], source)
    return _build(data, args_types, require_type_meta=True, source=source)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    args_types: Mapping[str, type] | None = None,
) -> KubeSchedulerConfiguration:
    """Load, default and validate a KubeSchedulerConfiguration.

    ``source`` is a file path, an already-parsed mapping (``apiVersion``/``kind`` optional
    there, checked when present) or None for kube-scheduler's defaults. ``args_types``
    maps plugin names to args dataclasses (merged over the in-tree ones); args of other
    plugins stay raw mappings. Raises :class:`ConfigError` listing every problem.
    """
    if source is None:
        return _build(None, args_types, require_type_meta=False, source=None)
    if isinstance(source, Mapping):
        return _build(source, args_types, require_type_meta=False, source=None)
    path = os.fspath(source)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ConfigError([FieldError("", f"cannot read file: {exc.strerror or exc}")], path) from exc
    return loads_config(text, args_types=args_types, source=path)


def config_to_dict(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The configuration as a v1 YAML mapping (what kube-scheduler logs as "Using component
    config"); :func:`load_config` of the result gives an equal configuration."""
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND}
    raw = to_raw(config)
    assert isinstance(raw, dict)
    out.update(raw)
    return out
