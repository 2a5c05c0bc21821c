"""Ported from staging/src/k8s.io/apimachinery/pkg/labels/selector_test.go (TestEverything,
TestRequirementConstructor, TestToString, TestRequirementSelectorMatching)
and staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers_test.go (TestLabelSelectorAsSelector).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.errors import InvalidObjectError
from kubesched.api.labels import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    Requirement,
    Selector,
    selector_from_label_selector,
    selector_from_set,
)


def test_everything() -> None:
    everything = selector_from_label_selector({})
    assert everything.matches({"x": "y"})
    assert everything.empty
    assert not everything.nothing


def test_nothing() -> None:
    nothing = selector_from_label_selector(None)
    assert not nothing.matches({})
    assert not nothing.matches({"x": "y"})
    assert nothing.nothing
    assert not nothing.empty


# TestRequirementConstructor: (key, operator, values, field of the expected error or None).
CONSTRUCTOR: list[tuple[str, str, list[str], str | None]] = [
    ("x1", IN, [], "values"),
    ("x2", NOT_IN, [], "values"),
    ("x3", IN, ["foo"], None),
    ("x4", NOT_IN, ["foo"], None),
    ("x5", EQUALS, ["bar", "foo"], "values"),
    ("x6", EXISTS, [], None),
    ("x7", DOES_NOT_EXIST, [], None),
    ("x8", EXISTS, ["foo"], "values"),
    ("x9", IN, ["bar"], None),
    ("x10", IN, ["bar"], None),
    ("x11", GREATER_THAN, ["1"], None),
    ("x12", LESS_THAN, ["6"], None),
    ("x13", GREATER_THAN, [], "values"),
    ("x14", GREATER_THAN, ["bar"], "values[0]"),
    ("x15", LESS_THAN, ["bar"], "values[0]"),
    ("a" * 254, EXISTS, [], "key"),
    ("x16", EQUALS, ["a" * 254], "values[0][x16]"),
    ("x17", EQUALS, ["a b"], "values[0][x17]"),
    ("x18", "unsupportedOp", [], "operator"),
]


@pytest.mark.parametrize(("key", "op", "values", "field"), CONSTRUCTOR, ids=[c[0][:8] for c in CONSTRUCTOR])
def test_requirement_constructor(key: str, op: str, values: list[str], field: str | None) -> None:
    if field is None:
        Requirement(key, op, values)
        return
    with pytest.raises(InvalidObjectError) as info:
        Requirement(key, op, values)
    assert [e.field for e in info.value.errors] == [field]


def test_requirement_errors_carry_the_path() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Requirement("bad key", IN, [], "spec.selector.matchExpressions[0]")
    assert [e.field for e in info.value.errors] == [
        "spec.selector.matchExpressions[0].key",
        "spec.selector.matchExpressions[0].values",
    ]


# TestToString (single-key requirements; upstream sorts requirements by key and values).
TO_STRING: list[tuple[list[Requirement], str]] = [
    (
        [Requirement("x", IN, ["abc", "def"]), Requirement("y", NOT_IN, ["jkl"]), Requirement("z", EXISTS)],
        "x in (abc,def),y notin (jkl),z",
    ),
    (
        [
            Requirement("x", NOT_IN, ["abc", "def"]),
            Requirement("y", NOT_EQUALS, ["jkl"]),
            Requirement("z", DOES_NOT_EXIST),
        ],
        "x notin (abc,def),y!=jkl,!z",
    ),
    (
        [
            Requirement("x", NOT_IN, ["abc"]),
            Requirement("y", IN, ["jkl", "mno"]),
            Requirement("z", NOT_IN, [""]),
        ],
        "x notin (abc),y in (jkl,mno),z notin ()",
    ),
    (
        [
            Requirement("x", EQUALS, ["abc"]),
            Requirement("y", DOUBLE_EQUALS, ["jkl"]),
            Requirement("z", NOT_EQUALS, ["a"]),
            Requirement("z", EXISTS),
        ],
        "x=abc,y==jkl,z!=a,z",
    ),
    (
        [Requirement("x", GREATER_THAN, ["2"]), Requirement("y", LESS_THAN, ["8"]), Requirement("z", EXISTS)],
        "x>2,y<8,z",
    ),
]


@pytest.mark.parametrize(("reqs", "want"), TO_STRING)
def test_to_string(reqs: list[Requirement], want: str) -> None:
    assert str(Selector(reqs)) == want
    assert str(Selector(list(reversed(reqs)))).split(",")[0] == want.split(",")[0]


# TestRequirementSelectorMatching (single-key requirements).
MATCHING: list[tuple[dict[str, str], list[Requirement], bool]] = [
    ({"x": "foo", "y": "baz"}, [Requirement("x", IN, ["foo"]), Requirement("y", NOT_IN, ["alpha"])], True),
    ({"x": "foo", "y": "baz"}, [Requirement("x", IN, ["foo"]), Requirement("y", IN, ["alpha"])], False),
    ({"y": ""}, [Requirement("x", NOT_IN, [""]), Requirement("y", EXISTS)], True),
    ({"y": ""}, [Requirement("x", DOES_NOT_EXIST), Requirement("y", EXISTS)], True),
    ({"y": ""}, [Requirement("x", NOT_IN, [""]), Requirement("y", DOES_NOT_EXIST)], False),
    ({"y": "baz"}, [Requirement("x", IN, [""])], False),
    ({"z": "2"}, [Requirement("z", GREATER_THAN, ["1"])], True),
    ({"z": "v2"}, [Requirement("z", GREATER_THAN, ["1"])], False),
    ({"x": "a"}, [Requirement("x", DOUBLE_EQUALS, ["a"])], True),
    ({"x": "a"}, [Requirement("x", NOT_EQUALS, ["b"])], True),
    ({}, [Requirement("x", NOT_EQUALS, ["b"])], True),
    ({"z": "1"}, [Requirement("z", LESS_THAN, ["1"])], False),
]


@pytest.mark.parametrize(("labels", "reqs", "want"), MATCHING)
def test_requirement_selector_matching(labels: dict[str, str], reqs: list[Requirement], want: bool) -> None:
    assert Selector(reqs).matches(labels) is want


# TestLabelSelectorAsSelector: (selector, expected string or None for an error).
MATCH_LABELS = {"foo": "bar"}
MATCH_EXPRESSIONS = [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]
AS_SELECTOR: list[tuple[dict[str, Any], str | None]] = [
    ({"matchLabels": MATCH_LABELS}, "foo=bar"),
    ({"matchExpressions": MATCH_EXPRESSIONS}, "baz in (norf,qux)"),
    ({"matchLabels": MATCH_LABELS, "matchExpressions": MATCH_EXPRESSIONS}, "baz in (norf,qux),foo=bar"),
    ({"matchExpressions": [{"key": "baz", "operator": "Exists", "values": ["qux", "norf"]}]}, None),
]


@pytest.mark.parametrize(("sel", "want"), AS_SELECTOR)
def test_label_selector_as_selector(sel: dict[str, Any], want: str | None) -> None:
    before = copy.deepcopy(sel)
    if want is None:
        with pytest.raises(InvalidObjectError):
            selector_from_label_selector(sel)
    else:
        assert str(selector_from_label_selector(sel)) == want
    assert sel == before  # the input is not modified


def test_label_selector_operator_must_be_known() -> None:
    sel = {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}
    with pytest.raises(InvalidObjectError) as info:
        selector_from_label_selector(sel, "spec.topologySpreadConstraints[0].labelSelector")
    assert info.value.field == "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator"
    assert info.value.message == '"Gt" is not a valid label selector operator'


def test_label_selector_requires_values_for_in() -> None:
    with pytest.raises(InvalidObjectError) as info:
        selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "NotIn"}]}, "sel")
    assert info.value.field == "sel.matchExpressions[0].values"
    assert info.value.message.endswith("for 'in', 'notin' operators, values set can't be empty")


def test_match_labels_are_validated() -> None:
    with pytest.raises(InvalidObjectError) as info:
        selector_from_label_selector({"matchLabels": {"app": "not valid"}}, "sel")
    assert info.value.field == "sel.matchLabels[app].values[0][app]"


def test_label_selector_matching() -> None:
    sel = selector_from_label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "NotIn", "values": ["db"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches({"app": "web"})
    assert sel.matches({"app": "web", "tier": "frontend"})
    assert not sel.matches({"app": "web", "tier": "db"})
    assert not sel.matches({"app": "web", "canary": "true"})
    assert not sel.matches({"app": "api"})


def test_selector_from_set() -> None:
    assert selector_from_set({}).empty
    assert selector_from_set({}).matches({"a": "b"})
    sel = selector_from_set({"foo": "bar", "baz": "qux"})
    assert str(sel) == "baz=qux,foo=bar"
    assert sel.matches({"foo": "bar", "baz": "qux", "x": "y"})
    assert not sel.matches({"foo": "bar"})
    # Not validated, like SelectorFromValidatedSet.
    assert selector_from_set({"bad key": "bad value!"}).matches({"bad key": "bad value!"})


def test_selectors_compare_by_value() -> None:
    a = selector_from_label_selector({"matchLabels": {"foo": "bar"}})
    assert a == selector_from_set({"foo": "bar"})
    assert hash(a) == hash(selector_from_set({"foo": "bar"}))
    assert a != selector_from_label_selector(None)
    assert repr(selector_from_label_selector(None)) == "Selector(<nothing>)"
    assert repr(a) == "Selector('foo=bar')"
