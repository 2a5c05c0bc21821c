"""The general-purpose CEL libraries of the Kubernetes base environment
(k8s.io/apiserver/pkg/cel/environment/base.go) that cel-python lacks, for device selectors:
cel-go's strings extension at version 2 (ext/strings.go), the Kubernetes lists library
(library/lists.go), ``find``/``findAll`` (library/regex.go) and cel-go's sets extension (ext/sets.go).

Strings index by code point, as cel-go does. Errors are raised as ValueError/TypeError with cel-go's
wording; the evaluator turns them into the expression's runtime error. Not here: ``format``, the
URL, IP, CIDR, image and authz libraries (no device selector has a use for them).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

from celpy import celtypes

__all__ = ["FUNCTIONS", "SETS"]


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("no such overload")
    return int(v)


def _char_at(s: Any, i: Any) -> celtypes.StringType:
    text, idx = str(s), _int(i)
    if idx < 0 or idx > len(text):
        raise ValueError(f"index out of range: {idx}")
    return celtypes.StringType(text[idx : idx + 1])


def _index_of(s: Any, sub: Any, offset: Any = 0) -> celtypes.IntType:
    text, needle, start = str(s), str(sub), _int(offset)
    if start < 0 or start > len(text):
        raise ValueError(f"index out of range: {start}")
    return celtypes.IntType(text.find(needle, start))


def _last_index_of(s: Any, sub: Any, offset: Any = None) -> celtypes.IntType:
    text, needle = str(s), str(sub)
    end = len(text) if offset is None else _int(offset)
    if end < 0 or end > len(text):
        raise ValueError(f"index out of range: {end}")
    # cel-go: the match may start at ``offset`` at the latest.
    return celtypes.IntType(text.rfind(needle, 0, end + len(needle)))


def _ascii(s: Any, upper: bool) -> celtypes.StringType:
    table = str.maketrans(
        "abcdefghijklmnopqrstuvwxyz" if upper else "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if upper else "abcdefghijklmnopqrstuvwxyz",
    )
    return celtypes.StringType(str(s).translate(table))


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> celtypes.StringType:
    count = _int(n)
    return celtypes.StringType(str(s).replace(str(old), str(new), count if count >= 0 else -1))


def _split(s: Any, sep: Any, n: Any = -1) -> celtypes.ListType:
    """Go's strings.SplitN: n == 0 gives no parts, n < 0 all, an empty separator splits into code
    points."""
    text, separator, limit = str(s), str(sep), _int(n)
    if limit == 0:
        return celtypes.ListType([])
    if separator == "":
        parts = list(text)
        if 0 < limit < len(parts):
            parts = [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    else:
        parts = text.split(separator, limit - 1 if limit > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
    text = str(s)
    lo = _int(start)
    hi = len(text) if end is None else _int(end)
    if lo < 0 or lo > len(text):
        raise ValueError(f"index out of range: {lo}")
    if hi < 0 or hi > len(text):
        raise ValueError(f"index out of range: {hi}")
    if lo > hi:
        raise ValueError(f"invalid substring range. start: {lo}, end: {hi}")
    return celtypes.StringType(text[lo:hi])


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise TypeError("no such overload: join")
    return celtypes.StringType(str(sep).join(items))


def _compiled(pattern: Any) -> re.Pattern[str]:
    try:
        return re.compile(str(pattern))
    except re.error as err:
        raise ValueError(f"invalid regular expression: {err}") from None


def _find(s: Any, pattern: Any) -> celtypes.StringType:
    m = _compiled(pattern).search(str(s))
    return celtypes.StringType(m.group(0) if m else "")


def _find_all(s: Any, pattern: Any, n: Any = -1) -> celtypes.ListType:
    limit = _int(n)
    if limit == 0:
        return celtypes.ListType([])
    found = [m.group(0) for m in _compiled(pattern).finditer(str(s))]
    if limit > 0:
        found = found[:limit]
    return celtypes.ListType([celtypes.StringType(f) for f in found])


def _list(v: Any, name: str) -> Sequence[Any]:
    if not isinstance(v, list):
        raise TypeError(f"no such overload: {name}")
    return v


def _is_sorted(items: Any) -> celtypes.BoolType:
    seq = _list(items, "isSorted")
    return celtypes.BoolType(all(not (b < a) for a, b in itertools.pairwise(seq)))


def _sum(items: Any) -> Any:
    seq = _list(items, "sum")
    if not seq:
        return celtypes.IntType(0)
    total = seq[0]
    for v in seq[1:]:
        total = total + v
    return total


def _list_index_of(items: Any, value: Any) -> celtypes.IntType:
    seq = _list(items, "indexOf")
    return celtypes.IntType(next((i for i, v in enumerate(seq) if v == value), -1))


def _list_last_index_of(items: Any, value: Any) -> celtypes.IntType:
    seq = _list(items, "lastIndexOf")
    return celtypes.IntType(next((i for i in range(len(seq) - 1, -1, -1) if seq[i] == value), -1))


def _index(receiver: Any, value: Any, *rest: Any) -> celtypes.IntType:
    """``indexOf`` is the strings extension's on a string and the lists library's on a list."""
    return _list_index_of(receiver, value) if isinstance(receiver, list) else _index_of(receiver, value, *rest)


def _last_index(receiver: Any, value: Any, *rest: Any) -> celtypes.IntType:
    if isinstance(receiver, list):
        return _list_last_index_of(receiver, value)
    return _last_index_of(receiver, value, *rest)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": _char_at,
    "indexOf": _index,
    "lastIndexOf": _last_index,
    "lowerAscii": lambda s: _ascii(s, upper=False),
    "upperAscii": lambda s: _ascii(s, upper=True),
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": lambda s: celtypes.StringType(str(s).strip()),
    "join": _join,
    "find": _find,
    "findAll": _find_all,
    "isSorted": _is_sorted,
    "sum": _sum,
}

SETS: dict[str, Callable[..., Any]] = {
    "contains": lambda a, b: celtypes.BoolType(all(x in _list(a, "sets.contains") for x in _list(b, "sets.contains"))),
    "intersects": lambda a, b: celtypes.BoolType(
        any(x in _list(a, "sets.intersects") for x in _list(b, "sets.intersects"))
    ),
    "equivalent": lambda a, b: celtypes.BoolType(
        all(x in _list(a, "sets.equivalent") for x in _list(b, "sets.equivalent")) and all(x in b for x in a)
    ),
}
