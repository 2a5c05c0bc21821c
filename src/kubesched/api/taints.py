"""Taints and tolerations.

Ports ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go), ``Taint.ToString`` /
``MatchTaint`` / ``MatchTaintByKey`` (k8s.io/api/core/v1/taint.go) and ``FindMatchingUntoleratedTaint`` /
``TolerationsTolerateTaint`` (k8s.io/component-helpers/scheduling/corev1/helpers.go).

The numeric ``Gt``/``Lt`` toleration operators (KEP-5471, feature gate
TaintTolerationComparisonOperators, alpha and off by default in v1.35) only match when the
caller passes ``enable_comparison_operators=True``; both values must then be canonical decimal
integers (``content.IsDecimalInteger``: no leading zeros or ``+``) that fit an int64.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubesched.api.labels import parse_go_int64

__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "find_matching_untolerated_taint",
    "match_taint",
    "match_taint_by_key",
    "taint_to_string",
    "tolerates",
    "tolerations_tolerate_taint",
]

NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"

TOLERATION_OP_EQUAL: Final = "Equal"
TOLERATION_OP_EXISTS: Final = "Exists"
TOLERATION_OP_GT: Final = "Gt"
TOLERATION_OP_LT: Final = "Lt"


# content.IsDecimalInteger: "0", or an optional "-" then a non-zero digit and more digits.
_DECIMAL_INTEGER_RE = re.compile(r"0|-?[1-9][0-9]*")


def _decimal_int64(value: str) -> int | None:
    if not _DECIMAL_INTEGER_RE.fullmatch(value):
        return None
    return parse_go_int64(value)


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def tolerates(
    toleration: Mapping[str, Any],
    taint: Mapping[str, Any],
    *,
    enable_comparison_operators: bool = False,
) -> bool:
    """ToleratesTaint: does this toleration tolerate this taint?

    An empty effect matches every effect; an empty key (with ``Exists``) matches every key;
    the operator defaults to ``Equal``; ``Exists`` ignores the value; ``Gt``/``Lt`` (only with
    ``enable_comparison_operators``) compare the taint's value numerically with the
    toleration's: ``Gt`` tolerates taint values above it, ``Lt`` below it.
    """
    effect = _str(toleration, "effect")
    if effect and effect != _str(taint, "effect"):
        return False
    key = _str(toleration, "key")
    if key and key != _str(taint, "key"):
        return False
    op = _str(toleration, "operator")
    if op == "" or op == TOLERATION_OP_EQUAL:
        return _str(toleration, "value") == _str(taint, "value")
    if op == TOLERATION_OP_EXISTS:
        return True
    if op in (TOLERATION_OP_GT, TOLERATION_OP_LT):
        if not enable_comparison_operators:
            return False
        tol_value = _decimal_int64(_str(toleration, "value"))
        taint_value = _decimal_int64(_str(taint, "value"))
        if tol_value is None or taint_value is None:
            return False
        return taint_value > tol_value if op == TOLERATION_OP_GT else taint_value < tol_value
    return False


def tolerations_tolerate_taint(
    tolerations: Sequence[Mapping[str, Any]],
    taint: Mapping[str, Any],
    *,
    enable_comparison_operators: bool = False,
) -> bool:
    """TolerationsTolerateTaint: any toleration tolerates the taint."""
    return any(tolerates(t, taint, enable_comparison_operators=enable_comparison_operators) for t in tolerations)


def find_matching_untolerated_taint(
    taints: Sequence[Mapping[str, Any]],
    tolerations: Sequence[Mapping[str, Any]],
    inclusion: Callable[[Mapping[str, Any]], bool] | None = None,
    *,
    enable_comparison_operators: bool = False,
) -> Mapping[str, Any] | None:
    """The first taint (passing ``inclusion``, if given) that no toleration tolerates, else None."""
    for taint in taints:
        if inclusion is not None and not inclusion(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint, enable_comparison_operators=enable_comparison_operators):
            return taint
    return None


def taint_to_string(taint: Mapping[str, Any]) -> str:
    """Taint.ToString: ``key=value:effect``; ``key:effect`` without a value; ``key`` or
    ``key=value:`` without an effect."""
    key, value, effect = _str(taint, "key"), _str(taint, "value"), _str(taint, "effect")
    if not effect:
        return f"{key}={value}:" if value else key
    if not value:
        return f"{key}:{effect}"
    return f"{key}={value}:{effect}"


def match_taint(taint: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Taint.MatchTaint: taints are unique by key and effect; the value is ignored."""
    return _str(taint, "key") == _str(other, "key") and _str(taint, "effect") == _str(other, "effect")


def match_taint_by_key(taint: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Taint.MatchTaintByKey."""
    return _str(taint, "key") == _str(other, "key")
