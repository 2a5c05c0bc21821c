"""Typed reads of the API server's JSON for plugin code that has no ``Any``.

Each helper is the idiom the plugins used on untyped dicts, typed as :data:`JSONObj` /
:data:`JSONValue`: ``get_obj(obj, "spec")`` is ``obj.get("spec") or {}`` and ``get_list(obj, "zones")``
is ``obj.get("zones") or ()``. They check nothing at run time (``typing.cast``), so they cost what
the idiom cost and keep its behaviour on a malformed object (an ``AttributeError`` on the next
read, where that is what the caller relied on); narrow with ``isinstance`` where a caller must
tolerate malformed input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, cast

from kubesched.framework.types import JSONObj, JSONValue, PodInfo

_EMPTY: Final[JSONObj] = {}


def get_obj(obj: JSONObj, key: str) -> JSONObj:
    """``obj[key]`` as an object, an empty one when unset or empty (``obj.get(key) or {}``)."""
    return cast("JSONObj", obj.get(key) or _EMPTY)


def get_list(obj: JSONObj, key: str) -> Sequence[JSONValue]:
    """``obj[key]`` as a list, an empty one when unset or empty (``obj.get(key) or []``)."""
    return cast("Sequence[JSONValue]", obj.get(key) or ())


def get_objs(obj: JSONObj, key: str) -> Sequence[JSONObj]:
    """``obj[key]`` as a list of objects (``obj.get(key) or []``), for fields whose items the
    API server's validation guarantees to be objects (a validated pod's ``spec.containers``)."""
    return cast("Sequence[JSONObj]", obj.get(key) or ())


def as_object(obj: object, kind: str) -> JSONObj | None:
    """Upstream ``util.As`` (pkg/scheduler/util/utils.go), the one copy for every plugin's queueing
    hints: None stays None; anything but an object is an error (a queueing hint's error means Queue)."""
    if obj is None:
        return None
    return require_object(obj, kind)


def require_object(obj: object, kind: str) -> JSONObj:
    """:func:`as_object` for an object the event always carries (a deleted pod, an added node):
    None is an error too, where upstream would dereference nil."""
    if not isinstance(obj, Mapping):
        raise TypeError(f"unexpected object type {type(obj).__name__}, want a {kind}")
    return obj


def as_pod_info(obj: object) -> PodInfo | None:
    """:func:`as_object` for a Pod, viewed as a :class:`PodInfo` (which only reads it)."""
    pod = as_object(obj, "Pod")
    return None if pod is None else PodInfo(cast("dict[str, JSONValue]", pod))
