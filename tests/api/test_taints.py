"""Ported from staging/src/k8s.io/api/core/v1/toleration_test.go (TestTolerationToleratesTaint),
staging/src/k8s.io/component-helpers/scheduling/corev1/helpers_test.go
(TestFindMatchingUntoleratedTaint) and staging/src/k8s.io/api/core/v1/taint_test.go
(TestTaintToString, TestMatchTaint, TestMatchTaintByKey).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kubesched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    find_matching_untolerated_taint,
    match_taint,
    match_taint_by_key,
    taint_to_string,
    tolerates,
    tolerations_tolerate_taint,
)

Obj = dict[str, Any]


def tol(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Obj:
    out: Obj = {}
    for name, v in (("key", key), ("operator", operator), ("value", value), ("effect", effect)):
        if v:
            out[name] = v
    return out


def taint(key: str, value: str = "", effect: str = NO_SCHEDULE) -> Obj:
    out: Obj = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


SLA = "node.kubernetes.io/sla"

# TestTolerationToleratesTaint: (description, toleration, taint, tolerated); comparison
# operators enabled as in that test.
TOLERATES: list[tuple[str, Obj, Obj, bool]] = [
    (
        "same key+effect, Exists, taint without value",
        tol("foo", "Exists", effect=NO_SCHEDULE),
        taint("foo"),
        True,
    ),
    (
        "same key+effect, Exists, taint with value",
        tol("foo", "Exists", effect=NO_SCHEDULE),
        taint("foo", "bar"),
        True,
    ),
    ("empty key + Exists matches all keys", tol("", "Exists", effect=NO_SCHEDULE), taint("foo", "bar"), True),
    ("same key, effect and value, Equal", tol("foo", "Equal", "bar", NO_SCHEDULE), taint("foo", "bar"), True),
    ("different values, Equal", tol("foo", "Equal", "value1", NO_SCHEDULE), taint("foo", "value2"), False),
    (
        "different effects, Equal",
        tol("foo", "Equal", "bar", NO_SCHEDULE),
        taint("foo", "bar", NO_EXECUTE),
        False,
    ),
    ("Gt, taint value below", tol(SLA, "Gt", "950", NO_SCHEDULE), taint(SLA, "800"), False),
    ("Gt, taint value above", tol(SLA, "Gt", "750", NO_SCHEDULE), taint(SLA, "950"), True),
    ("Lt, taint value above", tol(SLA, "Lt", "800", NO_SCHEDULE), taint(SLA, "950"), False),
    ("Lt, taint value below", tol(SLA, "Lt", "950", NO_SCHEDULE), taint(SLA, "800"), True),
    ("Gt, equal values", tol(SLA, "Gt", "950", NO_SCHEDULE), taint(SLA, "950"), False),
    ("Gt, non-numeric taint value", tol(SLA, "Gt", "950", NO_SCHEDULE), taint(SLA, "high"), False),
    ("Gt, negative values", tol("test-key", "Gt", "-100", NO_SCHEDULE), taint("test-key", "-200"), False),
    (
        "Gt, large int64 threshold",
        tol("test-key", "Gt", "9223372036854775806", NO_SCHEDULE),
        taint("test-key", "100"),
        False,
    ),
    # Rules from the ToleratesTaint doc comment.
    ("empty operator means Equal", tol("foo", value="bar"), taint("foo", "bar"), True),
    (
        "empty effect matches every effect",
        tol("foo", "Exists"),
        taint("foo", effect=PREFER_NO_SCHEDULE),
        True,
    ),
    ("different key", tol("foo", "Exists", effect=NO_SCHEDULE), taint("bar"), False),
    ("unknown operator never matches", tol("foo", "Matches", "bar"), taint("foo", "bar"), False),
    ("empty toleration matches an empty-key, empty-value taint", tol(), {"effect": NO_SCHEDULE}, True),
    # content.IsDecimalInteger: canonical integers only.
    ("Gt, leading zero in taint value", tol(SLA, "Gt", "5"), taint(SLA, "0700"), False),
    ("Gt, plus sign in toleration value", tol(SLA, "Lt", "+900"), taint(SLA, "800"), False),
    ("Lt, zero", tol(SLA, "Lt", "1"), taint(SLA, "0"), True),
    ("Gt, int64 overflow", tol(SLA, "Lt", "99999999999999999999"), taint(SLA, "1"), False),
]


@pytest.mark.parametrize(("toleration", "the_taint", "want"), [c[1:] for c in TOLERATES], ids=[c[0] for c in TOLERATES])
def test_tolerates(toleration: Obj, the_taint: Obj, want: bool) -> None:
    assert tolerates(toleration, the_taint, enable_comparison_operators=True) is want


@pytest.mark.parametrize(
    ("toleration", "the_taint"),
    [(tol(SLA, "Gt", "750", NO_SCHEDULE), taint(SLA, "950")), (tol(SLA, "Lt", "950"), taint(SLA, "800"))],
)
def test_comparison_operators_need_the_feature_gate(toleration: Obj, the_taint: Obj) -> None:
    # TaintTolerationComparisonOperators is off by default: Gt/Lt tolerations match nothing.
    assert tolerates(toleration, the_taint) is False
    assert tolerations_tolerate_taint([toleration], the_taint) is False


def _all(_: Mapping[str, Any]) -> bool:
    return True


def _none(_: Mapping[str, Any]) -> bool:
    return False


def _no_execute(t: Mapping[str, Any]) -> bool:
    return t.get("effect") == NO_EXECUTE


# TestFindMatchingUntoleratedTaint: (description, tolerations, taints, filter, comparison gate,
# expected untolerated taint or None).
FIND: list[tuple[str, list[Obj], list[Obj], Callable[[Mapping[str, Any]], bool] | None, bool, Obj | None]] = [
    ("empty tolerations tolerate empty taints", [], [], _all, False, None),
    (
        "non-empty tolerations tolerate empty taints",
        [tol("foo", "Exists", effect=NO_SCHEDULE)],
        [],
        _all,
        False,
        None,
    ),
    (
        "tolerations match all taints",
        [tol("foo", "Exists", effect=NO_SCHEDULE)],
        [taint("foo")],
        _all,
        False,
        None,
    ),
    (
        "no taint passes the filter",
        [tol("foo", "Exists", effect=NO_SCHEDULE)],
        [taint("bar")],
        _none,
        False,
        None,
    ),
    (
        "no filter: all taints apply, untolerated",
        [tol("foo", "Exists", effect=NO_SCHEDULE)],
        [taint("bar")],
        None,
        False,
        taint("bar"),
    ),
    (
        "filter keeps only the tolerated NoExecute taint",
        [tol("foo", "Exists", effect=NO_EXECUTE)],
        [taint("foo", effect=NO_EXECUTE), taint("bar")],
        _no_execute,
        False,
        None,
    ),
    (
        "Gt, value below threshold",
        [tol(SLA, "Gt", "950", NO_SCHEDULE)],
        [taint(SLA, "800")],
        _all,
        True,
        taint(SLA, "800"),
    ),
    (
        "Gt, value above threshold",
        [tol(SLA, "Gt", "750", NO_SCHEDULE)],
        [taint(SLA, "950")],
        _all,
        True,
        None,
    ),
    (
        "Lt, value above threshold",
        [tol(SLA, "Lt", "800", NO_SCHEDULE)],
        [taint(SLA, "950")],
        _all,
        True,
        taint(SLA, "950"),
    ),
    (
        "Gt, non-numeric taint value",
        [tol(SLA, "Gt", "950", NO_SCHEDULE)],
        [taint(SLA, "high")],
        _all,
        True,
        taint(SLA, "high"),
    ),
    (
        "Gt parse error ignored when a later toleration matches",
        [tol(SLA, "Gt", "950", NO_SCHEDULE), tol(SLA, "Exists", effect=NO_SCHEDULE)],
        [taint(SLA, "high")],
        _all,
        True,
        None,
    ),
    (
        "first untolerated taint is returned",
        [tol("a", "Exists")],
        [taint("a"), taint("b", "1"), taint("c")],
        None,
        False,
        taint("b", "1"),
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "inclusion", "gate", "want"), [c[1:] for c in FIND], ids=[c[0] for c in FIND]
)
def test_find_matching_untolerated_taint(
    tolerations: list[Obj],
    taints: list[Obj],
    inclusion: Callable[[Mapping[str, Any]], bool] | None,
    gate: bool,
    want: Obj | None,
) -> None:
    got = find_matching_untolerated_taint(taints, tolerations, inclusion, enable_comparison_operators=gate)
    assert got == want


def test_find_returns_the_taint_object_itself() -> None:
    taints = [taint("a"), taint("b")]
    assert find_matching_untolerated_taint(taints, [tol("a", "Exists")]) is taints[1]


@pytest.mark.parametrize(
    ("the_taint", "want"),
    [
        ({"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, "foo=bar:NoSchedule"),
        ({"key": "foo", "effect": NO_SCHEDULE}, "foo:NoSchedule"),
        ({"key": "foo"}, "foo"),
        ({"key": "foo", "value": "bar"}, "foo=bar:"),
    ],
)
def test_taint_to_string(the_taint: Obj, want: str) -> None:
    assert taint_to_string(the_taint) == want


# TestMatchTaint / TestMatchTaintByKey: (taint, other, match, match_by_key).
MATCH: list[tuple[str, Obj, Obj, bool, bool]] = [
    ("same key, value, effect", taint("foo", "bar"), taint("foo", "bar"), True, True),
    (
        "same key and effect, different value",
        taint("foo", "bar"),
        taint("foo", "different-value"),
        True,
        True,
    ),
    ("different key", taint("foo", "bar"), taint("different-key", "bar"), False, False),
    ("different effect", taint("foo", "bar"), taint("foo", "bar", PREFER_NO_SCHEDULE), False, True),
    ("keys only", {"key": "foo"}, {"key": "foo"}, True, True),
]


@pytest.mark.parametrize(("a", "b", "match", "by_key"), [c[1:] for c in MATCH], ids=[c[0] for c in MATCH])
def test_match_taint(a: Obj, b: Obj, match: bool, by_key: bool) -> None:
    assert match_taint(a, b) is match
    assert match_taint_by_key(a, b) is by_key
