"""Label selectors.

Ports k8s.io/apimachinery/pkg/labels (``Requirement``, ``Selector``, ``SelectorFromSet``) and
``metav1.LabelSelectorAsSelector`` (apimachinery/pkg/apis/meta/v1/helpers.go). Parsing
validates like ``labels.NewRequirement`` so a selector the API server would reject is
reported as an ``InvalidObjectError`` naming the offending field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubesched.api.errors import InvalidObjectError, field_invalid, field_not_supported, raise_if_any
from kubesched.api.validation import is_qualified_name, is_valid_label_value

__all__ = [
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EXISTS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOT_EQUALS",
    "NOT_IN",
    "Requirement",
    "Selector",
    "parse_go_int64",
    "selector_from_label_selector",
    "selector_from_set",
]

# selection.Operator values.
EQUALS: Final = "="
DOUBLE_EQUALS: Final = "=="
NOT_EQUALS: Final = "!="
IN: Final = "in"
NOT_IN: Final = "notin"
EXISTS: Final = "exists"
DOES_NOT_EXIST: Final = "!"
GREATER_THAN: Final = "gt"
LESS_THAN: Final = "lt"

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_GO_INT_RE = re.compile(r"[+-]?[0-9]+")


def parse_go_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None when Go would return an error."""
    if not _GO_INT_RE.fullmatch(text) or len(text.lstrip("+-").lstrip("0")) > 19:
        return None  # beyond int64 (and never int() of thousands of digits: Python refuses them)
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value


_VALID_REQUIREMENT_OPERATORS = (
    EQUALS,
    DOUBLE_EQUALS,
    IN,
    NOT_EQUALS,
    NOT_IN,
    EXISTS,
    DOES_NOT_EXIST,
    GREATER_THAN,
    LESS_THAN,
)


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class Requirement:
    """One ``key op values`` condition (upstream ``labels.Requirement``).

    Built like ``labels.NewRequirement``: the key must be a qualified name, values must be
    label values, ``in``/``notin`` need values, exists/does-not-exist take none, ``=``/``!=``
    and ``gt``/``lt`` take exactly one (an integer for ``gt``/``lt``). All problems are
    reported together, at ``path.key`` / ``path.values[i]``.
    """

    __slots__ = ("_int_value", "key", "operator", "values")

    def __init__(self, key: str, operator: str, values: Iterable[str] = (), path: str = "") -> None:
        vals = list(values)
        values_path = _child(path, "values")
        errs: list[InvalidObjectError] = []
        key_errs = is_qualified_name(key)
        if key_errs:
            errs.append(field_invalid(_child(path, "key"), key, "; ".join(key_errs)))
        int_value: int | None = None
        if operator in (IN, NOT_IN):
            if not vals:
                errs.append(field_invalid(values_path, vals, "for 'in', 'notin' operators, values set can't be empty"))
        elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
            if len(vals) != 1:
                errs.append(field_invalid(values_path, vals, "exact-match compatibility requires one single value"))
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if vals:
                errs.append(field_invalid(values_path, vals, "values set must be empty for exists and does not exist"))
        elif operator in (GREATER_THAN, LESS_THAN):
            if len(vals) != 1:
                errs.append(field_invalid(values_path, vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for i, v in enumerate(vals):
                parsed = parse_go_int64(v)
                if parsed is None:
                    errs.append(
                        field_invalid(
                            f"{values_path}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"
                        )
                    )
                else:
                    int_value = parsed
        else:
            errs.append(field_not_supported(_child(path, "operator"), operator, _VALID_REQUIREMENT_OPERATORS))
        for i, v in enumerate(vals):
            value_errs = is_valid_label_value(v)
            if value_errs:
                # Upstream: valuePath.Index(i).Key(key).
                errs.append(field_invalid(f"{values_path}[{i}][{key}]", v, "; ".join(value_errs)))
        raise_if_any(errs)
        self.key = key
        self.operator = operator
        self.values: frozenset[str] = frozenset(vals)
        self._int_value = int_value

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op in (NOT_IN, NOT_EQUALS):
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        # Gt / Lt: the label must hold an integer.
        value = labels.get(self.key)
        if value is None:
            return False
        label_int = parse_go_int64(value)
        if label_int is None or self._int_value is None:
            return False
        if op == GREATER_THAN:
            return label_int > self._int_value
        return label_int < self._int_value

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        vals = sorted(self.values)
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({','.join(vals)})"
        if op == GREATER_THAN:
            return f"{self.key}>{vals[0]}"
        if op == LESS_THAN:
            return f"{self.key}<{vals[0]}"
        return f"{self.key}{op}{vals[0]}"

    def __repr__(self) -> str:
        return f"Requirement({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return (self.key, self.operator, self.values) == (other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))


class Selector:
    """A conjunction of requirements; or the selector that matches nothing.

    ``Selector(())`` matches everything (``labels.Everything()``);
    ``Selector.nothing_selector()`` matches nothing (``labels.Nothing()``).
    """

    __slots__ = ("_nothing", "requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        # Upstream keeps requirements sorted by key; the string form depends on it.
        self.requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = nothing

    @classmethod
    def everything(cls) -> Selector:
        return cls()

    @classmethod
    def nothing_selector(cls) -> Selector:
        return cls(nothing=True)

    @property
    def empty(self) -> bool:
        """True when the selector matches every label set."""
        return not self._nothing and not self.requirements

    @property
    def nothing(self) -> bool:
        """True when the selector matches no label set."""
        return self._nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self._nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        if self._nothing:
            return "Selector(<nothing>)"
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self._nothing == other._nothing and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((self._nothing, self.requirements))


_EVERYTHING = Selector()
_NOTHING = Selector(nothing=True)

# metav1.LabelSelectorOperator -> selection.Operator
_LABEL_SELECTOR_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


def selector_from_label_selector(sel: Mapping[str, Any] | None, path: str = "") -> Selector:
    """metav1.LabelSelectorAsSelector: None matches nothing, ``{}`` matches everything."""
    if sel is None:
        return _NOTHING
    if not isinstance(sel, Mapping):
        raise InvalidObjectError(path or "selector", f"expected an object, got {type(sel).__name__}")
    match_labels = sel.get("matchLabels") or {}
    match_expressions = sel.get("matchExpressions") or []
    if not match_labels and not match_expressions:
        return _EVERYTHING
    if not isinstance(match_labels, Mapping):
        raise InvalidObjectError(_join(path, "matchLabels"), "expected a map of strings")
    if not isinstance(match_expressions, list | tuple):
        raise InvalidObjectError(_join(path, "matchExpressions"), "expected a list")
    reqs: list[Requirement] = []
    for key, value in match_labels.items():
        if not isinstance(value, str):
            raise InvalidObjectError(_join(path, f"matchLabels[{key}]"), f"expected a string, got {value!r}")
        reqs.append(Requirement(str(key), EQUALS, (value,), _join(path, f"matchLabels[{key}]")))
    for i, expr in enumerate(match_expressions):
        epath = _join(path, f"matchExpressions[{i}]")
        if not isinstance(expr, Mapping):
            raise InvalidObjectError(epath, "expected an object")
        operator = expr.get("operator", "")
        op = _LABEL_SELECTOR_OPERATORS.get(operator) if isinstance(operator, str) else None
        if op is None:
            # Upstream: fmt.Errorf("%q is not a valid label selector operator").
            raise InvalidObjectError(
                f"{epath}.operator", f"{json.dumps(operator)} is not a valid label selector operator"
            )
        values = expr.get("values") or []
        if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
            raise InvalidObjectError(f"{epath}.values", "expected a list of strings")
        key = expr.get("key", "")
        if not isinstance(key, str):
            raise InvalidObjectError(f"{epath}.key", "expected a string")
        reqs.append(Requirement(key, op, values, epath))
    return Selector(reqs)


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """labels.SelectorFromSet: exact match of every pair; empty matches everything.

    Like upstream (``SelectorFromValidatedSet``) the pairs are not validated.
    """
    if not labels:
        return _EVERYTHING
    reqs = []
    for key, value in labels.items():
        r = Requirement.__new__(Requirement)
        r.key = key
        r.operator = EQUALS
        r.values = frozenset((value,))
        r._int_value = None
        reqs.append(r)
    return Selector(reqs)
