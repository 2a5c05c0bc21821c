"""Taints and tolerations.

Ports ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go), ``Taint.ToString``
(k8s.io/api/core/v1/taint.go) and ``FindMatchingUntoleratedTaint`` /
``TolerationsTolerateTaint`` (k8s.io/component-helpers/scheduling/corev1/helpers.go).

The numeric ``Gt``/``Lt`` toleration operators (KEP-5471, feature gate
TaintTolerationComparisonOperators) are understood as k8s.io/api does; the API server only
admits them when that gate is on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubesched.api.labels import parse_go_int64

__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "find_matching_untolerated_taint",
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


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """ToleratesTaint: does this toleration tolerate this taint?

    An empty effect matches every effect; an empty key (with ``Exists``) matches every key;
    the operator defaults to ``Equal``; ``Exists`` ignores the value; ``Gt``/``Lt`` compare the
    taint's value numerically against the toleration's.
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
        tol_value = parse_go_int64(_str(toleration, "value"))
        taint_value = parse_go_int64(_str(taint, "value"))
        if tol_value is None or taint_value is None:
            return False
        return taint_value > tol_value if op == TOLERATION_OP_GT else taint_value < tol_value
    return False


def tolerations_tolerate_taint(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    """TolerationsTolerateTaint: any toleration tolerates the taint."""
    return any(tolerates(t, taint) for t in tolerations)


def find_matching_untolerated_taint(
    taints: Sequence[Mapping[str, Any]],
    tolerations: Sequence[Mapping[str, Any]],
    inclusion: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Mapping[str, Any] | None:
    """The first taint (passing ``inclusion``, if given) that no toleration tolerates, else None."""
    for taint in taints:
        if inclusion is not None and not inclusion(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def taint_to_string(taint: Mapping[str, Any]) -> str:
    """Taint.ToString: ``key=value:effect``, or ``key:effect`` when the value is empty."""
    key, value, effect = _str(taint, "key"), _str(taint, "value"), _str(taint, "effect")
    if not value:
        return f"{key}:{effect}"
    return f"{key}={value}:{effect}"
