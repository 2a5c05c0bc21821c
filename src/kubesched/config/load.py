"""Load a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as kube-scheduler does.

kube-scheduler's ``--config`` path (``cmd/kube-scheduler/app/options/configfile.go``) decodes
the file strictly (unknown or duplicate fields are errors), decodes each
``pluginConfig[].args`` into its registered ``<Plugin>Args`` type
(``types.go`` ``DecodeNestedObjects``), applies defaults, then validates. We do the same,
but collect every problem and raise them together as one :class:`ConfigError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from typing import Any

from kubesched.api.yamlsafe import InputProblem, YAMLInputError, load_yaml_documents, read_text_file

from .args import _takes_release, decode_into, describe_args, to_raw, validate_args
from .defaults import set_defaults
from .errors import ConfigError, FieldError, child_path, format_value, index_path
from .plugin_args import IN_TREE_ARGS
from .releases import DEFAULT_RELEASE, Release
from .types import API_VERSION, KIND, Extender, KubeSchedulerConfiguration, PluginConfig, Profile
from .validation import validate_configuration, validate_plugin_names

__all__ = ["MAX_CONFIG_BYTES", "MAX_PROFILES", "config_to_dict", "load_config", "loads_config"]

_GROUP = API_VERSION.split("/")[0]
#: versions kube-scheduler no longer serves, with the release that removed them where known.
_REMOVED_VERSIONS = {
    f"{_GROUP}/v1beta3": "v1.29",
    f"{_GROUP}/v1beta2": "v1.28",
    f"{_GROUP}/v1beta1": None,
    f"{_GROUP}/v1alpha2": None,
    f"{_GROUP}/v1alpha1": None,
}


#: Most profiles in one configuration. Each is a framework with its own plugins (about 1 ms and
#: 10 kB to decode and default, far more to run); real schedulers have a handful. Without a bound
#: a 1 MiB file of ``- {}`` lines is 200,000 profiles: minutes and gigabytes before any answer.
MAX_PROFILES = 1000
#: Largest configuration file read. kube-scheduler's configuration is a few kB; anything this
#: big is not one, and refusing it up front keeps parsing within the CLI's time and memory bounds.
MAX_CONFIG_BYTES = 1024 * 1024


def _problem_error(problem: InputProblem) -> FieldError:
    """A reading or parsing problem in the loader's message style, with its line and column."""
    message = problem.message
    if not problem.line:
        return FieldError("", message if message.startswith("invalid YAML") else f"cannot read file: {message}")
    where = f"at line {problem.line}, column {problem.column}" if problem.column else f"at line {problem.line}"
    dup = _DUPLICATE.match(message)
    if dup is not None:
        return FieldError("", f"duplicate key {format_value(dup.group(1))} {where} (first at line {dup.group(2)})")
    detail = message.removeprefix("invalid YAML: ")
    return FieldError("", f"invalid YAML {where}: {_PARSER_WORDS.get(detail, detail)}")


#: libyaml's wording where PyYAML's, which this loader's messages have always used (and tests
#: pin), differs.
_PARSER_WORDS = {"mapping values are not allowed in this context": "mapping values are not allowed here"}
_DUPLICATE = re.compile(r"^duplicate key '(.*)' \(first at line (\d+)\)$", re.DOTALL)


def _parse_yaml(text: str) -> tuple[Any, list[FieldError]]:
    """The one document of ``text`` (None if empty), or the problems found reading it.

    api/yamlsafe bounds nesting and alias expansion and reports every duplicate key, a
    character YAML forbids (a control character, even in a comment) and non-JSON tags."""
    try:
        docs = [d for d in load_yaml_documents(text) if d is not None]
    except YAMLInputError as err:
        return None, [_problem_error(p) for p in err.problems]
    if len(docs) > 1:
        return None, [FieldError("", f"found {len(docs)} YAML documents: expected one {KIND}")]
    return (docs[0] if docs else None), []


def _check_type_meta(raw: Mapping[str, Any], *, require: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    version = raw.get("apiVersion")
    if version is None:
        if require:
            errs.append(FieldError("apiVersion", f'required: must be "{API_VERSION}"'))
    elif not isinstance(version, str):
        errs.append(FieldError("apiVersion", f'must be "{API_VERSION}", got {format_value(version)}'))
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
    name: str, raw: Any, path: str, types: Mapping[str, type], errors: list[FieldError], release: Release
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
            hook(release=release) if release is not None and _takes_release(hook) else hook()
        errors.extend(validate_args(args, path, release))
    return args


def _decode_profiles(
    raw: Any, types: Mapping[str, type], errors: list[FieldError], release: Release
) -> list[Profile]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(FieldError("profiles", f"must be a list of profiles, got {format_value(raw)}"))
        return []
    if len(raw) > MAX_PROFILES:
        errors.append(FieldError("profiles", f"at most {MAX_PROFILES} profiles are supported, got {len(raw)}"))
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
                    pc.name, raw_pc.get("args"), child_path(pc_path, "args"), types, errors, release
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
    raw: Any,
    args_types: Mapping[str, type] | None,
    *,
    require_type_meta: bool,
    source: str | None,
    registered: Collection[str] | None = None,
    release: Release = DEFAULT_RELEASE,
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
        config.profiles = _decode_profiles(raw.get("profiles"), types, errors, release)
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
    checks: list[FieldError] = []
    if registered is not None:
        # Before the defaults are merged in: the paths must be the file's indices.
        for i, profile in enumerate(config.profiles):
            checks.extend(validate_plugin_names(profile.plugins, child_path(index_path("profiles", i), "plugins"),
                                                registered))
    for i, profile in enumerate(config.profiles):
        place = index_path("profiles", i)
        profile.origin = f"{source}: {place}" if source else place
    config.release = release
    errors.extend(set_defaults(config, args_types=args_types))
    checks.extend(validate_configuration(config, args_types=args_types, validate_plugin_args=False))
    errors.extend(err for err in checks if not _under(err.path, decode_paths))
    if errors:
        raise ConfigError(errors, source)
    return config


def loads_config(
    text: str,
    *,
    args_types: Mapping[str, type] | None = None,
    source: str | None = "<string>",
    registered: Collection[str] | None = None,
    release: Release = DEFAULT_RELEASE,
) -> KubeSchedulerConfiguration:
    """Like :func:`load_config` for YAML text."""
    data, errors = _parse_yaml(text)
    if errors:
        raise ConfigError(errors, source)
    if data is None:
        raise ConfigError([FieldError("", f"empty document: expected a {KIND} ({API_VERSION})")], source)
    return _build(data, args_types, require_type_meta=True, source=source, registered=registered, release=release)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    args_types: Mapping[str, type] | None = None,
    registered: Collection[str] | None = None,
    release: Release = DEFAULT_RELEASE,
) -> KubeSchedulerConfiguration:
    """Load, default and validate a KubeSchedulerConfiguration, as kube-scheduler ``release``
    defaults and validates it (its default plugins, its args checks).

    ``source`` is a file path, an already-parsed mapping (``apiVersion``/``kind`` optional
    there, checked when present) or None for kube-scheduler's defaults. ``args_types``
    maps plugin names to args dataclasses (merged over the in-tree ones); args of other
    plugins stay raw mappings. ``registered``, the names in the plugin registry, adds a check
    that every enabled plugin is registered and named once per extension point
    (:func:`~kubesched.config.validation.validate_plugin_names`). Raises :class:`ConfigError`
    listing every problem.

    A file is read through :mod:`kubesched.api.yamlsafe`: a FIFO, a device or a directory is
    refused without being opened, the size is capped at :data:`MAX_CONFIG_BYTES`, and the
    bytes must be UTF-8.
    """
    if source is None:
        return _build(None, args_types, require_type_meta=False, source=None, registered=registered, release=release)
    if isinstance(source, Mapping):
        return _build(source, args_types, require_type_meta=False, source=None, registered=registered, release=release)
    path = os.fspath(source)
    try:
        text = read_text_file(path, max_bytes=MAX_CONFIG_BYTES)
    except YAMLInputError as err:
        raise ConfigError([_problem_error(p) for p in err.problems], path) from None
    return loads_config(text, args_types=args_types, source=path, registered=registered, release=release)


def config_to_dict(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The configuration as a v1 YAML mapping (what kube-scheduler logs as "Using component
    config"); :func:`load_config` of the result gives an equal configuration."""
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND}
    raw = to_raw(config)
    assert isinstance(raw, dict)
    out.update(raw)
    return out
