"""Generic, strict decoding of plugin args (and of the config's own structures).

kube-scheduler decodes every ``pluginConfig[].args`` strictly into the plugin's
registered ``<Plugin>Args`` type: unknown keys and wrong types are errors, then
``SetDefaults_<Plugin>Args`` runs, then ``Validate<Plugin>Args``
(``staging/src/k8s.io/kube-scheduler/config/v1/types.go`` ``decodeNestedObjects``,
``pkg/scheduler/apis/config/validation/validation_pluginargs.go``). Here an args type is a
plain ``@dataclass``; this module reads its fields to do the same for in-tree and
out-of-tree plugins alike.

Conventions for an args dataclass:

* YAML key = camelCase of the field name, or ``field(metadata={"key": "enableHTTPS"})``.
* Field types: ``int``, ``float``, ``str``, ``bool``, ``X | None``, ``list[X]``,
  ``dict[str, X]``, nested dataclasses, ``Literal[...]`` and ``Any``/``object`` (kept raw).
  ``field(metadata={"duration": True})`` on a ``float`` field reads a Go duration string
  (``"1m30s"``) into seconds.
* ``int`` fields hold Go's ``int64`` range, ``field(metadata={"int32": True})`` ``int32``'s (the
  range of the upstream field: a weight of 10**30 is a decoding error there, not an overflow later);
  ``float`` fields refuse NaN and infinities, which JSON cannot carry.
* Defaults come from the dataclass defaults; a field without one is required.
* ``key: null`` means "not set": the field keeps its default (Go leaves a nil pointer,
  which defaulting then fills).
* Optional hooks on the top-level class: ``set_defaults(self) -> None`` (upstream's
  ``SetDefaults_*`` for defaults that depend on other values, e.g. weight 0 -> 1) and
  ``validate(self) -> list[FieldError] | list[tuple[str, str]]`` returning paths relative
  to the args (``"scoringStrategy.resources[0].weight"``), which get prefixed.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, cast, get_args, get_origin

from .duration import format_duration, parse_duration
from .errors import FieldError, child_path, format_value, index_path
from .releases import Release

__all__ = [
    "decode_args",
    "decode_into",
    "describe_args",
    "describe_type",
    "field_key",
    "to_raw",
    "validate_args",
]

T = TypeVar("T")

_MISSING = object()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def field_key(f: dataclasses.Field[Any]) -> str:
    """The YAML key of a dataclass field."""
    key = f.metadata.get("key")
    return str(key) if key is not None else _camel(f.name)


@functools.cache
def _init_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # get_type_hints evaluates every annotation string each call: most of the decoding time
    return typing.get_type_hints(cls)


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (typing.Union, types.UnionType)


def _strip_optional(tp: Any) -> tuple[Any, bool]:
    if _is_union(tp):
        members = [a for a in get_args(tp) if a is not type(None)]
        optional = len(members) != len(get_args(tp))
        if len(members) == 1:
            return members[0], optional
        return typing.Union[tuple(members)], optional  # noqa: UP007 - building at runtime
    return tp, False


def describe_type(tp: Any, *, nested: bool = True, _seen: frozenset[type] = frozenset()) -> str:
    """A short human rendering of a field type (``list[str]``, ``{name: str, weight: int = 0}``)."""
    inner, optional = _strip_optional(tp)
    suffix = " | None" if optional else ""
    if inner is Any or inner is object:
        return "any" + suffix
    if inner in (int, float, str, bool):
        return str(inner.__name__) + suffix
    origin = get_origin(inner)
    if origin is Literal:
        return " | ".join(format_value(v) for v in get_args(inner)) + suffix
    if origin in (list, typing.List):  # noqa: UP006
        (item,) = get_args(inner) or (Any,)
        return f"list[{describe_type(item, nested=nested, _seen=_seen)}]" + suffix
    if origin in (dict, typing.Dict, Mapping):  # noqa: UP006
        args = get_args(inner) or (str, Any)
        return f"dict[str, {describe_type(args[1], nested=nested, _seen=_seen)}]" + suffix
    if _is_union(inner):
        return " | ".join(describe_type(a, nested=nested, _seen=_seen) for a in get_args(inner)) + suffix
    if isinstance(inner, type) and dataclasses.is_dataclass(inner):
        if nested and inner not in _seen:
            return _describe_dataclass(inner, _seen | {inner}) + suffix
        return inner.__name__ + suffix
    return getattr(inner, "__name__", repr(inner)) + suffix


def _describe_default(f: dataclasses.Field[Any]) -> str | None:
    if f.default is not dataclasses.MISSING:
        value: Any = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "{...}"
    return format_value(to_raw(value), limit=40)


def _describe_dataclass(cls: type, seen: frozenset[type]) -> str:
    hints = _hints(cls)
    parts: list[str] = []
    for f in _init_fields(cls):
        text = f"{field_key(f)}: {describe_type(hints[f.name], _seen=seen)}"
        default = _describe_default(f)
        if f.metadata.get("duration"):
            text = f"{field_key(f)}: duration{' | None' if _strip_optional(hints[f.name])[1] else ''}"
            if isinstance(f.default, int | float) and not isinstance(f.default, bool):
                default = format_duration(float(f.default))
        if default is not None:
            text += f" = {default}"
        parts.append(text)
    return "{" + ", ".join(parts) + "}"


def describe_args(cls: type) -> str:
    """One line describing the YAML shape ``cls`` expects, for error messages.

    e.g. ``{windowStart: str, windowEnd: str, bandwidthThreshold: int = 0}``.
    """
    return _describe_dataclass(cls, frozenset({cls}))


# ---------------------------------------------------------------------------------------------
# decoding


def _type_error(path: str, tp: Any, value: Any) -> FieldError:
    return FieldError(path, f"must be {describe_type(tp, nested=False)}, got {format_value(value)}")


def _zero(tp: Any) -> Any:
    """Go's zero value for a type, used when a required field is missing or malformed."""
    inner, optional = _strip_optional(tp)
    if optional:
        return None
    if inner is bool:
        return False
    if inner is int:
        return 0
    if inner is float:
        return 0.0
    if inner is str:
        return ""
    origin = get_origin(inner)
    if origin in (list, typing.List):  # noqa: UP006
        return []
    if origin in (dict, typing.Dict, Mapping):  # noqa: UP006
        return {}
    if origin is Literal:
        return get_args(inner)[0]
    if isinstance(inner, type) and dataclasses.is_dataclass(inner):
        return _construct(inner, {}, "", [])
    return None


_INT_RANGES = {32: (-(2**31), 2**31 - 1), 64: (-(2**63), 2**63 - 1)}


def _decode_value(
    tp: Any, value: Any, path: str, errors: list[FieldError], *, duration: bool, bits: int = 64
) -> Any:
    """Decode ``value`` as ``tp``; on error, append to ``errors`` and return ``_MISSING``.

    Never raises on any JSON value: every wrong type or range is an error at ``path``."""
    inner, optional = _strip_optional(tp)
    if value is None:
        return None if optional else _MISSING
    if duration:
        if isinstance(value, str):
            try:
                return parse_duration(value)
            except ValueError as exc:
                errors.append(FieldError(path, f'must be a duration such as "15s" ({exc})'))
                return _MISSING
        errors.append(
            FieldError(path, f'must be a duration string such as "1m30s", got {format_value(value)}')
        )
        return _MISSING
    if inner is Any or inner is object:
        return value
    if inner is bool:
        if isinstance(value, bool):
            return value
        errors.append(_type_error(path, inner, value))
        return _MISSING
    if inner is int:
        if isinstance(value, int) and not isinstance(value, bool):
            low, high = _INT_RANGES[bits]
            if low <= value <= high:
                return value
            errors.append(FieldError(path, f"must be int, got {format_value(value)} (out of range for int{bits})"))
            return _MISSING
        errors.append(_type_error(path, inner, value))
        return _MISSING
    if inner is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:
                number = math.inf
            if math.isfinite(number):
                return number
            errors.append(FieldError(path, f"must be a finite number, got {format_value(value)}"))
            return _MISSING
        errors.append(_type_error(path, inner, value))
        return _MISSING
    if inner is str:
        if isinstance(value, str):
            return value
        errors.append(_type_error(path, inner, value))
        return _MISSING
    origin = get_origin(inner)
    if origin is Literal:
        choices = get_args(inner)
        if any(value == c and type(value) is type(c) for c in choices):
            return value
        allowed = ", ".join(format_value(c) for c in choices)
        errors.append(FieldError(path, f"must be one of {allowed}, got {format_value(value)}"))
        return _MISSING
    if origin in (list, typing.List):  # noqa: UP006
        if not isinstance(value, list):
            errors.append(_type_error(path, inner, value))
            return _MISSING
        (item_tp,) = get_args(inner) or (Any,)
        out: list[Any] = []
        for i, item in enumerate(value):
            item_path = index_path(path, i)
            if item is None and not _accepts_null(item_tp):
                errors.append(_null_error(item_path, item_tp))
                continue
            decoded = _decode_value(item_tp, item, item_path, errors, duration=False, bits=bits)
            if decoded is not _MISSING:
                out.append(decoded)
        return out
    if origin in (dict, typing.Dict, Mapping):  # noqa: UP006
        if not isinstance(value, Mapping):
            errors.append(_type_error(path, inner, value))
            return _MISSING
        key_tp, val_tp = get_args(inner) or (str, Any)
        result: dict[Any, Any] = {}
        for k, v in value.items():
            if key_tp is str and not isinstance(k, str):
                errors.append(FieldError(path, f"keys must be strings, got {format_value(k)}"))
                continue
            value_path = child_path(path, str(k))
            if v is None and not _accepts_null(val_tp):
                errors.append(_null_error(value_path, val_tp))
                continue
            decoded = _decode_value(val_tp, v, value_path, errors, duration=False, bits=bits)
            if decoded is not _MISSING:
                result[k] = decoded
        return result
    if _is_union(inner):
        # First member that decodes cleanly wins (e.g. ``int | str``).
        for member in get_args(inner):
            trial: list[FieldError] = []
            decoded = _decode_value(member, value, path, trial, duration=False, bits=bits)
            if not trial:
                return decoded
        errors.append(_type_error(path, inner, value))
        return _MISSING
    if isinstance(inner, type) and dataclasses.is_dataclass(inner):
        if not isinstance(value, Mapping):
            errors.append(
                FieldError(path, f"must be a mapping {describe_type(inner)}, got {format_value(value)}")
            )
            return _MISSING
        return _construct(inner, value, path, errors)
    raise TypeError(f"unsupported field type {inner!r} at {path or '<root>'}")


def _accepts_null(tp: Any) -> bool:
    """Whether ``null`` is a value of ``tp`` (an optional or untyped item), not a missing one."""
    inner, optional = _strip_optional(tp)
    return optional or inner is Any or inner is object


def _null_error(path: str, tp: Any) -> FieldError:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return FieldError(path, f"must be a mapping {describe_type(tp)}, got null")
    return _type_error(path, tp, None)


def _construct(cls: type[T], raw: Mapping[str, Any], path: str, errors: list[FieldError]) -> T:
    """Build ``cls`` from ``raw`` strictly, always returning a best-effort instance."""
    klass: type = cls
    hints = _hints(klass)
    fields = _init_fields(klass)
    by_key = {field_key(f): f for f in fields}
    for key in raw:
        if key not in by_key:
            errors.append(FieldError(child_path(path, str(key)), "unknown field"))
    kwargs: dict[str, Any] = {}
    for key, f in by_key.items():
        fpath = child_path(path, key)
        tp = hints[f.name]
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        value = raw.get(key, _MISSING)
        if value is None:
            value = _MISSING  # ``key: null`` leaves the default, like Go's json.Unmarshal + defaulting
        decoded: Any = _MISSING
        if value is not _MISSING:
            decoded = _decode_value(
                tp,
                value,
                fpath,
                errors,
                duration=bool(f.metadata.get("duration")),
                bits=32 if f.metadata.get("int32") else 64,
            )
        elif not has_default:
            errors.append(FieldError(fpath, "required field is missing"))
        if decoded is _MISSING:
            if has_default:
                continue
            decoded = _zero(tp)
        kwargs[f.name] = decoded
    return cls(**kwargs)


def decode_into(cls: type[T], raw: Mapping[str, Any] | None, path: str, errors: list[FieldError]) -> T:
    """Strictly decode ``raw`` into ``cls`` without hooks; never fails, appends to ``errors``.

    Malformed values fall back to the field's default so callers can keep collecting
    problems (kube-scheduler reports every strict-decoding error at once).
    """
    if raw is None:
        return _construct(cls, {}, path, errors)
    if not isinstance(raw, Mapping):
        errors.append(FieldError(path, f"must be a mapping {describe_args(cls)}, got {format_value(raw)}"))
        return _construct(cls, {}, path, [])
    return _construct(cls, raw, path, errors)


_REL_PATH = re.compile(r"^[\[\w]")


def _takes_release(hook: Callable[..., object]) -> bool:
    """Whether an args type's ``validate`` checks by release (``validate(release=...)``)."""
    try:
        return "release" in inspect.signature(hook).parameters
    except (TypeError, ValueError):
        return False


def validate_args(instance: object, path: str, release: Release | None = None) -> list[FieldError]:
    """Run ``instance.validate()`` if it exists, prefixing the relative paths it returns with ``path``.

    An args type whose checks changed between releases takes ``validate(release=...)``; it is
    given the release the configuration is loaded for (out-of-tree types keep ``validate()``)."""
    hook = getattr(instance, "validate", None)
    if not callable(hook):
        return []
    found = hook(release=release) if release is not None and _takes_release(hook) else hook()
    out: list[FieldError] = []
    for item in cast("list[FieldError | tuple[str, str]]", found):
        if isinstance(item, FieldError):
            rel, msg = item.path, item.message
        else:
            rel, msg = item
        out.append(FieldError(child_path(path, rel) if rel else path, msg))
    return out


def decode_args(
    cls: type[T], raw: Mapping[str, Any] | None, path: str, *, release: Release | None = None
) -> tuple[T | None, list[FieldError]]:
    """Decode, default and validate one plugin's args (as ``release`` validates them).

    Returns ``(instance, [])`` on success, ``(None, errors)`` otherwise. ``raw`` may carry
    the optional ``apiVersion``/``kind`` keys upstream allows inside args.
    """
    errors: list[FieldError] = []
    if raw is not None and isinstance(raw, Mapping) and ("apiVersion" in raw or "kind" in raw):
        raw = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
    instance = decode_into(cls, raw, path, errors)
    if errors:
        return None, errors
    hook = getattr(instance, "set_defaults", None)
    if callable(hook):
        hook(release=release) if release is not None and _takes_release(hook) else hook()
    errors.extend(validate_args(instance, path, release))
    return (None, errors) if errors else (instance, [])


def to_raw(value: Any) -> Any:
    """Encode a decoded value back to its YAML/JSON shape (camelCase keys, Go duration
    strings, None and empty collections left out), so that decoding and defaulting the
    result gives an equal value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in _init_fields(type(value)):
            item = getattr(value, f.name)
            if item is None or (isinstance(item, list | dict) and not item):
                continue  # like Go's omitempty: unset and empty values are left out
            if f.metadata.get("duration") and isinstance(item, int | float) and not isinstance(item, bool):
                out[field_key(f)] = format_duration(float(item))
            else:
                out[field_key(f)] = to_raw(item)
        return out
    if isinstance(value, list | tuple):
        return [to_raw(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_raw(v) for k, v in value.items()}
    return value
