"""Node selectors and node affinity.

Ports k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go:
``NodeSelector``/``LazyErrorNodeSelector``, ``PreferredSchedulingTerms`` and
``GetRequiredNodeAffinity``/``RequiredNodeAffinity``.

Semantics kept from upstream: terms are ORed; a term with neither ``matchExpressions`` nor
``matchFields`` is dropped (it matches nothing); inside a term label expressions and field
expressions are ANDed; field expressions allow only ``In``/``NotIn`` with exactly one value
and are evaluated against the node's fields, of which only ``metadata.name`` exists (any
other field key reads as the empty string, as upstream's ``fields.Set`` does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.errors import InvalidObjectError, field_invalid, field_not_supported, raise_if_any
from kubesched.api.labels import (
    DOES_NOT_EXIST,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_IN,
    Requirement,
    Selector,
    selector_from_set,
)

__all__ = [
    "NodeSelector",
    "NodeSelectorTerm",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "node_labels",
    "node_name",
]

_NODE_SELECTOR_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
    "Gt": GREATER_THAN,
    "Lt": LESS_THAN,
}
_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")

_EMPTY_LABELS: Mapping[str, str] = {}


def node_labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels`` of a node (or any object), ``{}`` when absent."""
    meta = node.get("metadata")
    if not meta:
        return _EMPTY_LABELS
    labels = meta.get("labels")
    return labels if labels else _EMPTY_LABELS


def node_name(node: Mapping[str, Any]) -> str:
    meta = node.get("metadata")
    if not meta:
        return ""
    name = meta.get("name")
    return name if isinstance(name, str) else ""


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


class _FieldRequirement:
    """One term of a field selector: ``key == value`` or ``key != value``."""

    __slots__ = ("equal", "key", "value")

    def __init__(self, key: str, value: str, equal: bool) -> None:
        self.key = key
        self.value = value
        self.equal = equal

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.key, "") == self.value) == self.equal


class NodeSelectorTerm:
    """A parsed ``v1.NodeSelectorTerm``; ``errors`` lists its parse problems (then it never matches)."""

    __slots__ = ("errors", "field_requirements", "label_selector")

    def __init__(self, term: Mapping[str, Any], path: str) -> None:
        self.label_selector: Selector | None = None
        self.field_requirements: tuple[_FieldRequirement, ...] = ()
        errors: list[InvalidObjectError] = []
        exprs = term.get("matchExpressions") or []
        if exprs:
            self.label_selector = _requirements_as_selector(exprs, _join(path, "matchExpressions"), errors)
        fields = term.get("matchFields") or []
        if fields:
            self.field_requirements = _requirements_as_field_selector(fields, _join(path, "matchFields"), errors)
        self.errors: tuple[InvalidObjectError, ...] = tuple(errors)

    def match(self, labels: Mapping[str, str], fields: Mapping[str, str]) -> bool:
        if self.errors:
            return False
        if self.label_selector is not None and not self.label_selector.matches(labels):
            return False
        return all(r.matches(fields) for r in self.field_requirements)


def _requirements_as_selector(exprs: Any, path: str, errors: list[InvalidObjectError]) -> Selector | None:
    """nodeSelectorRequirementsAsSelector; problems are appended to ``errors``."""
    if not isinstance(exprs, list | tuple):
        errors.append(InvalidObjectError(path, "expected a list"))
        return None
    reqs: list[Requirement] = []
    n_errors = len(errors)
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        if not isinstance(expr, Mapping):
            errors.append(InvalidObjectError(p, "expected an object"))
            continue
        operator = expr.get("operator", "")
        op = _NODE_SELECTOR_OPERATORS.get(operator) if isinstance(operator, str) else None
        if op is None:
            errors.append(field_not_supported(f"{p}.operator", operator))
            continue
        values = expr.get("values") or []
        key = expr.get("key", "")
        if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
            errors.append(InvalidObjectError(f"{p}.values", "expected a list of strings"))
            continue
        if not isinstance(key, str):
            errors.append(InvalidObjectError(f"{p}.key", "expected a string"))
            continue
        try:
            reqs.append(Requirement(key, op, values, p))
        except InvalidObjectError as exc:
            errors.extend(exc.errors)
    if len(errors) != n_errors:
        return None
    return Selector(reqs)


def _requirements_as_field_selector(
    exprs: Any, path: str, errors: list[InvalidObjectError]
) -> tuple[_FieldRequirement, ...]:
    """nodeSelectorRequirementsAsFieldSelector; problems are appended to ``errors``."""
    if not isinstance(exprs, list | tuple):
        errors.append(InvalidObjectError(path, "expected a list"))
        return ()
    reqs: list[_FieldRequirement] = []
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        if not isinstance(expr, Mapping):
            errors.append(InvalidObjectError(p, "expected an object"))
            continue
        operator = expr.get("operator", "")
        values = expr.get("values") or []
        if operator not in _FIELD_SELECTOR_OPERATORS:
            errors.append(field_not_supported(f"{p}.operator", operator, _FIELD_SELECTOR_OPERATORS))
            continue
        if not isinstance(values, list | tuple) or len(values) != 1 or not isinstance(values[0], str):
            errors.append(field_invalid(f"{p}.values", values, "must have one element"))
            continue
        reqs.append(_FieldRequirement(str(expr.get("key", "")), values[0], operator == "In"))
    return tuple(reqs)


def _is_empty_term(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _node_fields(node: Mapping[str, Any]) -> Mapping[str, str]:
    name = node_name(node)
    return {"metadata.name": name} if name else {}


class NodeSelector:
    """A parsed ``v1.NodeSelector`` (``nodeSelectorTerms`` ORed).

    Raises ``InvalidObjectError`` (an ``AggregateInvalidObjectError`` when there are several
    problems) if any term is malformed, like upstream ``NewNodeSelector``. With ``lazy=True``
    (upstream ``LazyErrorNodeSelector``, used for a pod's required affinity) malformed terms
    are kept, never match, and are listed in ``errors``.
    """

    __slots__ = ("errors", "terms")

    def __init__(self, selector: Mapping[str, Any], path: str = "", *, lazy: bool = False) -> None:
        raw_terms = selector.get("nodeSelectorTerms") or []
        if not isinstance(raw_terms, list | tuple):
            raise InvalidObjectError(_join(path, "nodeSelectorTerms"), "expected a list")
        terms: list[NodeSelectorTerm] = []
        errors: list[InvalidObjectError] = []
        for i, term in enumerate(raw_terms):
            if not isinstance(term, Mapping) or _is_empty_term(term):
                # A nil or empty term selects no objects.
                continue
            parsed = NodeSelectorTerm(term, _join(path, f"nodeSelectorTerms[{i}]"))
            errors.extend(parsed.errors)
            terms.append(parsed)
        if not lazy:
            raise_if_any(errors)
        self.terms: tuple[NodeSelectorTerm, ...] = tuple(terms)
        self.errors: tuple[InvalidObjectError, ...] = tuple(errors)

    def match(self, node: Mapping[str, Any]) -> bool:
        labels = node_labels(node)
        fields = _node_fields(node)
        return any(t.match(labels, fields) for t in self.terms)


class PreferredSchedulingTerms:
    """Parsed ``preferredDuringSchedulingIgnoredDuringExecution`` terms.

    Terms with weight 0 or an empty preference are dropped (they never score), like upstream
    ``NewPreferredSchedulingTerms``; malformed terms raise ``InvalidObjectError``.
    """

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[Mapping[str, Any]], path: str = "") -> None:
        parsed: list[tuple[NodeSelectorTerm, int]] = []
        errors: list[InvalidObjectError] = []
        for i, term in enumerate(terms):
            if not isinstance(term, Mapping):
                raise InvalidObjectError(f"{path}[{i}]", "expected an object")
            weight = term.get("weight") or 0
            if isinstance(weight, bool) or not isinstance(weight, int):
                raise InvalidObjectError(f"{path}[{i}].weight", f"expected an integer, got {weight!r}")
            preference = term.get("preference") or {}
            if weight == 0 or not isinstance(preference, Mapping) or _is_empty_term(preference):
                continue
            # Upstream parses the preference at the term's own index path.
            t = NodeSelectorTerm(preference, f"{path}[{i}]")
            if t.errors:
                errors.extend(t.errors)
            else:
                parsed.append((t, weight))
        raise_if_any(errors)
        self.terms: tuple[tuple[NodeSelectorTerm, int], ...] = tuple(parsed)

    def score(self, node: Mapping[str, Any]) -> int:
        """Sum of the weights of the terms the node matches."""
        if not self.terms:
            return 0
        labels = node_labels(node)
        fields = _node_fields(node)
        return sum(w for t, w in self.terms if t.match(labels, fields))


class RequiredNodeAffinity:
    """``spec.nodeSelector`` AND required node affinity of a pod (GetRequiredNodeAffinity).

    Malformed required terms never match (upstream uses the lazy-error selector here);
    they are listed in ``required.errors``.
    """

    __slots__ = ("node_selector_labels", "required", "selector")

    def __init__(self, pod: Mapping[str, Any]) -> None:
        spec = pod.get("spec") or {}
        node_selector = spec.get("nodeSelector") or {}
        self.node_selector_labels: Mapping[str, str] = node_selector
        self.selector: Selector | None = selector_from_set(node_selector) if node_selector else None
        self.required: NodeSelector | None = None
        affinity = spec.get("affinity") or {}
        node_affinity = affinity.get("nodeAffinity") or {}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is not None:
            self.required = NodeSelector(
                required,
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                lazy=True,
            )

    def match(self, node: Mapping[str, Any]) -> bool:
        if self.selector is not None and not self.selector.matches(node_labels(node)):
            return False
        if self.required is not None:
            return self.required.match(node)
        return True
