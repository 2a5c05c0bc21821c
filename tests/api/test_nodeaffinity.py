"""Ported from staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go
(TestNodeSelectorMatch, TestPreferredSchedulingTermsScore, TestNodeSelectorRequirementsAsSelector,
TestPodMatchesNodeSelectorAndAffinityTerms) and
staging/src/k8s.io/component-helpers/scheduling/corev1/helpers_test.go (TestMatchNodeSelectorTerms,
TestMatchNodeSelectorTermsStateless).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.errors import AggregateInvalidObjectError, InvalidObjectError
from kubesched.api.nodeaffinity import (
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    node_labels,
)

Obj = dict[str, Any]

QUALIFIED_NAME_DETAIL = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def req(key: str, op: str, *values: str) -> Obj:
    out: Obj = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(exprs: list[Obj] | None = None, fields: list[Obj] | None = None) -> Obj:
    out: Obj = {}
    if exprs is not None:
        out["matchExpressions"] = exprs
    if fields is not None:
        out["matchFields"] = fields
    return out


def selector(*terms: Obj) -> Obj:
    return {"nodeSelectorTerms": list(terms)}


def node(name: str = "", labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {}
    if name:
        meta["name"] = name
    if labels is not None:
        meta["labels"] = labels
    return {"metadata": meta}


def affinity_pod(required: Obj | None = None, node_selector: dict[str, str] | None = None) -> Obj:
    spec: Obj = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if required is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    return {"spec": spec}


LABEL_1_IN = req("label_1", "In", "label_1_val")
NAME_IN_HOST_1 = req("metadata.name", "In", "host_1")


# --- TestNodeSelectorMatch ------------------------------------------------------------------


def test_node_selector_reports_every_invalid_term() -> None:
    sel = selector(
        term(fields=[req("metadata.name", "In", "host_1", "host_2")]),
        term(exprs=[LABEL_1_IN], fields=[NAME_IN_HOST_1]),
        term(exprs=[req("invalid key", "In", "label_value")]),
    )
    with pytest.raises(AggregateInvalidObjectError) as info:
        NodeSelector(sel)
    got = [(e.field, e.message) for e in info.value.errors]
    assert [f for f, _ in got] == [
        "nodeSelectorTerms[0].matchFields[0].values",
        "nodeSelectorTerms[2].matchExpressions[0].key",
    ]
    assert got[0][1].startswith("Invalid value: ") and got[0][1].endswith(": must have one element")
    assert got[1][1] == f'Invalid value: "invalid key": {QUALIFIED_NAME_DETAIL}'


@pytest.mark.parametrize(
    ("sel", "the_node", "want"),
    [
        (selector(), node(), False),  # "nil node": nothing to match
        (selector(term(exprs=[LABEL_1_IN], fields=[NAME_IN_HOST_1])), node("host_1"), False),
        (
            selector(term(exprs=[LABEL_1_IN], fields=[NAME_IN_HOST_1])),
            node("host_1", {"label_1": "label_1_val"}),
            True,
        ),
        (selector(term(exprs=[LABEL_1_IN]), term(fields=[NAME_IN_HOST_1])), node("host_1"), True),
    ],
    ids=["nil node", "field matches, labels do not", "field and labels match", "second term matches"],
)
def test_node_selector_match(sel: Obj, the_node: Obj, want: bool) -> None:
    assert NodeSelector(sel).match(the_node) is want


# --- TestPreferredSchedulingTermsScore ------------------------------------------------------


def test_preferred_terms_report_every_invalid_term() -> None:
    terms = [
        {"weight": 1, "preference": term(fields=[req("metadata.name", "In", "host_1", "host_2")])},
        {"weight": 1, "preference": term(exprs=[LABEL_1_IN], fields=[NAME_IN_HOST_1])},
        {"weight": 1, "preference": term(exprs=[req("invalid key", "In", "label_value")])},
    ]
    with pytest.raises(AggregateInvalidObjectError) as info:
        PreferredSchedulingTerms(terms)
    assert [e.field for e in info.value.errors] == [
        "[0].matchFields[0].values",
        "[2].matchExpressions[0].key",
    ]
    assert info.value.errors[1].message.endswith(QUALIFIED_NAME_DETAIL)


def test_preferred_terms_with_zero_weight_are_not_parsed() -> None:
    terms = [{"weight": 0, "preference": term(fields=[req("metadata.name", "In", "host_1", "host_2")])}]
    assert PreferredSchedulingTerms(terms).score(node("host_1")) == 0


def test_preferred_terms_score_sums_matching_weights() -> None:
    terms = [
        {"weight": 5, "preference": term(fields=[NAME_IN_HOST_1])},
        {"weight": 7, "preference": term(exprs=[req("unknown_label", "In", "unknown_label_val")])},
        {"weight": 11, "preference": term(exprs=[LABEL_1_IN])},
    ]
    assert PreferredSchedulingTerms(terms).score(node("host_1", {"label_1": "label_1_val"})) == 16


def test_preferred_term_with_empty_preference_never_scores() -> None:
    terms = [{"weight": 3, "preference": {}}, {"weight": 4, "preference": term(exprs=[])}]
    assert PreferredSchedulingTerms(terms).score(node("host_1", {"a": "b"})) == 0


def test_preferred_terms_path_prefix() -> None:
    terms = [{"weight": 2, "preference": term(exprs=[req("k", "Bogus")])}]
    with pytest.raises(InvalidObjectError) as info:
        PreferredSchedulingTerms(terms, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")
    assert info.value.field == (
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].operator"
    )
    assert info.value.message == 'Unsupported value: "Bogus"'


# --- TestNodeSelectorRequirementsAsSelector --------------------------------------------------


@pytest.mark.parametrize(
    ("exprs", "want"),
    [
        ([req("foo", "In", "bar", "baz")], "foo in (bar,baz)"),
        ([req("foo", "Gt", "1")], "foo>1"),
        ([req("bar", "Lt", "7")], "bar<7"),
    ],
)
def test_requirements_as_selector(exprs: list[Obj], want: str) -> None:
    (parsed,) = NodeSelector(selector(term(exprs=exprs))).terms
    assert str(parsed.label_selector) == want


def test_exists_with_values_is_invalid() -> None:
    with pytest.raises(InvalidObjectError) as info:
        NodeSelector(selector(term(exprs=[req("foo", "Exists", "bar", "baz")])), "root")
    assert info.value.field == "root.nodeSelectorTerms[0].matchExpressions[0].values"
    assert info.value.message.endswith(": values set must be empty for exists and does not exist")


@pytest.mark.parametrize(
    ("expr", "field", "detail"),
    [
        (req("foo", "In"), "values", "for 'in', 'notin' operators, values set can't be empty"),
        (req("foo", "NotIn"), "values", "for 'in', 'notin' operators, values set can't be empty"),
        (req("foo", "Gt", "1", "2"), "values", "for 'Gt', 'Lt' operators, exactly one value is required"),
        (req("foo", "Lt", "x"), "values[0]", "for 'Gt', 'Lt' operators, the value must be an integer"),
        (req("foo", "Gt"), "values", "for 'Gt', 'Lt' operators, exactly one value is required"),
        (req("foo", "DoesNotExist", "a"), "values", "values set must be empty for exists and does not exist"),
    ],
)
def test_requirement_validation(expr: Obj, field: str, detail: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        NodeSelector(selector(term(exprs=[expr])))
    assert info.value.field == f"nodeSelectorTerms[0].matchExpressions[0].{field}"
    assert info.value.message.endswith(detail)


def test_field_selector_operator_must_be_in_or_not_in() -> None:
    with pytest.raises(InvalidObjectError) as info:
        NodeSelector(selector(term(fields=[req("metadata.name", "Exists")])))
    assert info.value.field == "nodeSelectorTerms[0].matchFields[0].operator"
    assert info.value.message == 'Unsupported value: "Exists": supported values: "In", "NotIn"'


# --- TestPodMatchesNodeSelectorAndAffinityTerms ---------------------------------------------


def _required(*terms: Obj) -> Obj:
    return selector(*terms)


POD_MATCHES: list[tuple[str, Obj, dict[str, str] | None, str, bool]] = [
    ("no selector", affinity_pod(), None, "", True),
    ("missing labels", affinity_pod(node_selector={"foo": "bar"}), None, "", False),
    ("same labels", affinity_pod(node_selector={"foo": "bar"}), {"foo": "bar"}, "", True),
    (
        "node labels are superset",
        affinity_pod(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        "",
        True,
    ),
    (
        "node labels are subset",
        affinity_pod(node_selector={"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "In matches",
        affinity_pod(_required(term([req("foo", "In", "bar", "value2")]))),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Gt matches",
        affinity_pod(_required(term([req("kernel-version", "Gt", "0204")]))),
        {"kernel-version": "0206"},
        "",
        True,
    ),
    (
        "NotIn matches",
        affinity_pod(_required(term([req("mem-type", "NotIn", "DDR", "DDR2")]))),
        {"mem-type": "DDR3"},
        "",
        True,
    ),
    (
        "Exists matches",
        affinity_pod(_required(term([req("GPU", "Exists")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "affinity does not match labels",
        affinity_pod(_required(term([req("foo", "In", "value1", "value2")]))),
        {"foo": "bar"},
        "",
        False,
    ),
    ("nil terms", affinity_pod({"nodeSelectorTerms": None}), {"foo": "bar"}, "", False),
    ("empty terms", affinity_pod({"nodeSelectorTerms": []}), {"foo": "bar"}, "", False),
    ("empty matchExpressions", affinity_pod(_required(term([]))), {"foo": "bar"}, "", False),
    ("no affinity", affinity_pod(), {"foo": "bar"}, "", True),
    (
        "affinity without required selector",
        {"spec": {"affinity": {"nodeAffinity": {}}}},
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "multiple expressions ANDed, match",
        affinity_pod(_required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "multiple expressions ANDed, no match",
        affinity_pod(_required(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        False,
    ),
    (
        "terms ORed",
        affinity_pod(
            _required(term([req("foo", "In", "bar", "value2")]), term([req("diffkey", "In", "wrong", "value2")]))
        ),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "affinity and nodeSelector both satisfied",
        affinity_pod(_required(term([req("foo", "Exists")])), {"foo": "bar"}),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "affinity satisfied, nodeSelector not",
        affinity_pod(_required(term([req("foo", "Exists")])), {"foo": "bar"}),
        {"foo": "barrrrrr"},
        "",
        False,
    ),
    (
        "invalid value in affinity term",
        affinity_pod(_required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "matchFields In matches",
        affinity_pod(_required(term(fields=[req("metadata.name", "In", "node_1")]))),
        None,
        "node_1",
        True,
    ),
    (
        "matchFields In does not match",
        affinity_pod(_required(term(fields=[req("metadata.name", "In", "node_1")]))),
        None,
        "node_2",
        False,
    ),
    (
        "two terms: fields miss, expressions match",
        affinity_pod(_required(term(fields=[req("metadata.name", "In", "node_1")]), term([req("foo", "In", "bar")]))),
        {"foo": "bar"},
        "node_2",
        True,
    ),
    (
        "one term: fields miss, expressions match",
        affinity_pod(_required(term([req("foo", "In", "bar")], [req("metadata.name", "In", "node_1")]))),
        {"foo": "bar"},
        "node_2",
        False,
    ),
    (
        "one term: both match",
        affinity_pod(_required(term([req("foo", "In", "bar")], [req("metadata.name", "In", "node_1")]))),
        {"foo": "bar"},
        "node_1",
        True,
    ),
    (
        "two terms: neither matches",
        affinity_pod(
            _required(
                term(fields=[req("metadata.name", "In", "node_1")]),
                term([req("foo", "In", "not-match-to-bar")]),
            )
        ),
        {"foo": "bar"},
        "node_2",
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "labels", "name", "want"), [c[1:] for c in POD_MATCHES], ids=[c[0] for c in POD_MATCHES]
)
def test_required_node_affinity(pod: Obj, labels: dict[str, str] | None, name: str, want: bool) -> None:
    assert RequiredNodeAffinity(pod).match(node(name, labels)) is want


def test_required_node_affinity_keeps_parse_errors_lazily() -> None:
    pod = affinity_pod(_required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]), term([req("a", "Exists")])))
    rna = RequiredNodeAffinity(pod)
    assert rna.required is not None
    assert [e.field for e in rna.required.errors] == [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].values[0][foo]"
    ]
    # The valid term still matches.
    assert rna.match(node("n", {"a": "1"})) is True
    assert rna.node_selector_labels == {}


# --- helpers_test.go TestMatchNodeSelectorTerms ----------------------------------------------

MATCH_TERMS: list[tuple[str, Obj, Obj, bool]] = [
    (
        "labels match matchExpressions",
        selector(term([LABEL_1_IN])),
        node(labels={"label_1": "label_1_val"}),
        True,
    ),
    ("field matches matchFields", selector(term(fields=[NAME_IN_HOST_1])), node("host_1"), True),
    (
        "invalid field requirement",
        selector(term(fields=[req("metadata.name", "In", "host_1", "host_2")])),
        node("host_1"),
        False,
    ),
    (
        "field selector does not look at labels",
        selector(term(fields=[NAME_IN_HOST_1])),
        node("not_host_1", {"metadata.name": "host_1"}),
        False,
    ),
    (
        "label selector does not look at fields",
        selector(term([req("metadata.name", "In", "host_1")])),
        node("host_1"),
        False,
    ),
    ("both set, only fields present", selector(term([LABEL_1_IN], [NAME_IN_HOST_1])), node("host_1"), False),
    (
        "both set, both match",
        selector(term([LABEL_1_IN], [NAME_IN_HOST_1])),
        node("host_1", {"label_1": "label_1_val"}),
        True,
    ),
    (
        "both set, labels mismatch",
        selector(term([LABEL_1_IN], [NAME_IN_HOST_1])),
        node("host_1", {"label_1": "label_1_val-failed"}),
        False,
    ),
    (
        "two terms, fields term matches",
        selector(term([LABEL_1_IN]), term(fields=[NAME_IN_HOST_1])),
        node("host_1", {"label_1": "label_1_val-failed"}),
        True,
    ),
]


@pytest.mark.parametrize(("sel", "the_node", "want"), [c[1:] for c in MATCH_TERMS], ids=[c[0] for c in MATCH_TERMS])
def test_match_node_selector_terms(sel: Obj, the_node: Obj, want: bool) -> None:
    assert NodeSelector(sel, lazy=True).match(the_node) is want


@pytest.mark.parametrize(
    "sel",
    [
        selector(term([req("label_1", "In", "label_2_val", "label_1_val")])),
        selector(term(fields=[req("metadata.name", "In", "host_2", "host_1")])),
        selector(
            term(
                [req("label_1", "In", "label_2_val", "label_1_val")],
                [req("metadata.name", "In", "host_2", "host_1")],
            )
        ),
    ],
)
def test_matching_does_not_modify_the_selector(sel: Obj) -> None:
    before = copy.deepcopy(sel)
    NodeSelector(sel, lazy=True).match(node("host_1", {"label_1": "label_1_val"}))
    assert sel == before


# --- extras ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "value", "label", "want"),
    [
        ("Gt", "5", "6", True),
        ("Gt", "5", "5", False),
        ("Lt", "5", "4", True),
        ("Lt", "10", "-2", True),  # the node's label is only parsed as an int64, not validated
        ("Lt", "10", "+2", True),  # strconv.ParseInt accepts a plus sign
        ("Gt", "10", "9223372036854775808", False),  # int64 overflow never matches
        ("Gt", "5", "six", False),  # non-integer label never matches
        ("Gt", "5", None, False),  # missing label never matches
    ],
)
def test_gt_lt(op: str, value: str, label: str | None, want: bool) -> None:
    labels = {} if label is None else {"k": label}
    assert NodeSelector(selector(term([req("k", op, value)]))).match(node("n", labels)) is want


def test_negative_gt_value_is_not_a_label_value() -> None:
    # NewRequirement also validates values as label values, so "-1" cannot be used.
    with pytest.raises(InvalidObjectError) as info:
        NodeSelector(selector(term([req("k", "Lt", "-1")])))
    assert info.value.field == "nodeSelectorTerms[0].matchExpressions[0].values[0][k]"


def test_not_in_field_selector_matches_other_names() -> None:
    sel = NodeSelector(selector(term(fields=[req("metadata.name", "NotIn", "node_1")])))
    assert sel.match(node("node_2")) is True
    assert sel.match(node("node_1")) is False


def test_node_labels_defaults_to_empty() -> None:
    assert node_labels({}) == {}
    assert node_labels({"metadata": {"labels": {"a": "b"}}}) == {"a": "b"}
