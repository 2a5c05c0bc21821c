"""The Kubernetes CEL library functions device selectors use, as cel-python functions:
``quantity()`` (k8s.io/apiserver pkg/cel/library/quantity.go), ``semver()`` (library/semverlib.go),
the lists library (library/lists.go), ``find``/``findAll`` (library/regex.go), cel-go's strings
extension at version 2 and its sets extension (the base environment's, environment/base.go).

Device capacities are quantities and ``version`` attributes are semantic versions in upstream's
environment, so ``device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`` and
``device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))`` work here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import total_ordering
from typing import Any

from celpy import celtypes

from kubesched.api.quantity import parse_quantity

__all__ = ["FUNCTIONS", "Quantity", "Semver"]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class Quantity:
    """A resource quantity (exact, as a fraction)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str) -> None:
        self.text = text
        self.value: Fraction = parse_quantity(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"quantity({self.text!r})"


@total_ordering
class Semver:
    """A semantic version 2.0.0 (build metadata ignored in comparisons, as blang/semver)."""

    __slots__ = ("core", "pre", "text")

    def __init__(self, text: str) -> None:
        m = _SEMVER.match(text)
        if m is None:
            raise ValueError(f"invalid semver: {text}")
        self.text = text
        self.core = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        self.pre: tuple[tuple[int, int | str], ...] = tuple(
            (0, int(p)) if p.isdigit() else (1, p) for p in (m.group(4).split(".") if m.group(4) else ())
        )

    def _key(self) -> tuple[Any, ...]:
        # A version without pre-release parts sorts after any with them.
        return (self.core, 1 if not self.pre else 0, self.pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"semver({self.text!r})"


def _cmp(a: Any, b: Any) -> celtypes.IntType:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return celtypes.IntType((a.value > b.value) - (a.value < b.value))
    if isinstance(a, Semver) and isinstance(b, Semver):
        return celtypes.IntType((a > b) - (a < b))
    raise TypeError(f"no such overload: compareTo({type(a).__name__}, {type(b).__name__})")


def _quantity(text: Any) -> Quantity:
    return Quantity(str(text))


def _is_quantity(text: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(text))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _normalized(text: str) -> str:
    """semverlib's normalizeAndParse before parsing (``semver(s, true)``): a leading ``v``
    dropped, leading zeros of each of the (at most three) dot-separated parts dropped, missing
    minor and patch filled with 0; a short version with pre-release or build data is invalid."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver(text: Any, normalize: Any = False) -> Semver:
    raw = str(text)
    return Semver(_normalized(raw) if bool(normalize) else raw)


def _is_semver(text: Any, normalize: Any = False) -> celtypes.BoolType:
    try:
        _semver(text, normalize)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _as_integer(q: Quantity) -> celtypes.IntType:
    if q.value.denominator != 1 or not -(1 << 63) <= q.value < (1 << 63):
        raise ValueError(f"cannot convert value to integer: {q.text}")
    return celtypes.IntType(int(q.value))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": _cmp,
    "isGreaterThan": lambda a, b: celtypes.BoolType(int(_cmp(a, b)) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(int(_cmp(a, b)) < 0),
    "sign": lambda q: celtypes.IntType((q.value > 0) - (q.value < 0)),
    "isInteger": lambda q: celtypes.BoolType(q.value.denominator == 1 and -(1 << 63) <= q.value < (1 << 63)),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: celtypes.DoubleType(float(q.value)),
    "add": lambda a, b: Quantity(str(a.value + (b.value if isinstance(b, Quantity) else int(b)))),
    "sub": lambda a, b: Quantity(str(a.value - (b.value if isinstance(b, Quantity) else int(b)))),
    "major": lambda v: celtypes.IntType(v.core[0]),
    "minor": lambda v: celtypes.IntType(v.core[1]),
    "patch": lambda v: celtypes.IntType(v.core[2]),
}
