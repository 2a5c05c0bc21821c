"""Kubernetes resource quantities as exact fractions.

Mirrors ``ParseQuantity`` in k8s.io/apimachinery/pkg/api/resource/quantity.go, including its
corner cases, so that a request the API server accepts means the same amount here:

* grammar ``<sign><digits>[.<digits>]<suffix>``; suffix is a decimal SI suffix
  (``n u m "" k M G T P E``), a binary SI suffix (``Ki Mi Gi Ti Pi Ei``) or a decimal
  exponent (``e3``, ``E-3``); whitespace anywhere is rejected;
* upstream quirks kept on purpose: a bare sign (``"+"``, ``"-"``) and a bare ``"."`` parse
  as zero, ``"1."`` is one;
* values that upstream stores as arbitrary-precision decimals are rounded *away from zero*
  to a multiple of 1e-9 (``inf.RoundUp`` at nano scale) and capped at 2^63-1 in magnitude;
  values that fit upstream's int64 fast path are kept exactly (never rounded, never capped).

``milli_value``/``int_value`` round away from zero, like ``Quantity.MilliValue``/``Value``
(for the non-negative quantities used as requests that is ``ceil``). Results are Python ints,
so values beyond int64 are not wrapped.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "MAX_ALLOWED",
    "QuantityError",
    "int_value",
    "milli_value",
    "parse_quantity",
]

# The largest magnitude upstream keeps for quantities on its arbitrary-precision path
# (maxAllowed = int64 max).
MAX_ALLOWED = (1 << 63) - 1

_NANO = 10**9
_INT64_MAX = (1 << 63) - 1

# Same wording as upstream's ErrFormatWrong / ErrNumeric / ErrSuffix.
_ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_ERR_NUMERIC = "unable to parse numeric part of quantity"
_ERR_SUFFIX = "unable to parse quantity's suffix"

# Decimal SI suffixes: power of ten.
_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
# Binary SI suffixes: power of two.
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# Upstream's hand-written scanner, expressed as one regex:
#   sign? digits* ( "." digits* )? then a suffix made of letters from "eEinumkKMGTP",
#   an optional sign and digits, which must run to the end of the string.
_QUANTITY_RE = re.compile(
    r"(?P<sign>[+-]?)(?P<num>[0-9]*+)(?:\.(?P<denom>[0-9]*+))?(?P<suffix>[eEinumkKMGTP]*+[+-]?[0-9]*+)"
)
# Go's strconv.ParseInt(s, 10, 64): optional sign, at least one decimal digit.
_GO_INT_RE = re.compile(r"[+-]?[0-9]+")


class QuantityError(ValueError):
    """A string that Kubernetes would not accept as a resource quantity."""


def _wrap_int32(value: int) -> int:
    # Upstream narrows the parsed exponent with int32(parsed).
    return ((value + (1 << 31)) % (1 << 32)) - (1 << 31)


def _interpret_suffix(suffix: str) -> tuple[int, int] | None:
    """Return (base, exponent) for a suffix, or None if upstream cannot interpret it."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT_RE.fullmatch(suffix[1:]):
        parsed = int(suffix[1:])
        if -(1 << 63) <= parsed <= _INT64_MAX:
            return 10, _wrap_int32(parsed)
    return None


def _round_nano_and_cap(value: Fraction) -> Fraction:
    """Upstream's arbitrary-precision path: round away from zero to nano, cap at MAX_ALLOWED."""
    negative = value < 0
    mag = -value if negative else value
    if (_NANO % mag.denominator) != 0:
        mag = Fraction(math.ceil(mag * _NANO), _NANO)
    if mag > MAX_ALLOWED:
        mag = Fraction(MAX_ALLOWED)
    return -mag if negative else mag


def _decimal_value(digits: int, exponent: int) -> Fraction:
    """digits * 10**exponent, short-circuiting magnitudes that round or cap anyway."""
    if digits == 0:
        return Fraction(0)
    ndigits = len(str(digits))
    if exponent > 0 and ndigits + exponent > 20:
        # Far above the cap; avoid building 10**(2**31).
        return Fraction(MAX_ALLOWED + 1)
    if exponent < 0 and ndigits + exponent < -10:
        # Far below one nano; rounds up to exactly one nano.
        return Fraction(1, 10 * _NANO)
    if exponent >= 0:
        return Fraction(digits * 10**exponent)
    return Fraction(digits, 10**-exponent)


@lru_cache(maxsize=65536)
def _parse_str(text: str) -> Fraction:
    if not text:
        raise QuantityError(f"{_ERR_FORMAT}: {text!r}")
    if text == "0":
        return Fraction(0)
    m = _QUANTITY_RE.fullmatch(text)
    if m is None:
        raise QuantityError(f"{_ERR_FORMAT}: {text!r}")
    negative = m.group("sign") == "-"
    num_raw = m.group("num")
    denom = m.group("denom") or ""
    suffix = m.group("suffix")

    # Upstream returns zero early when only zeros (or nothing) follow the sign.
    if not denom and m.group("denom") is None and not suffix and not num_raw.strip("0"):
        return Fraction(0)

    num = num_raw.lstrip("0") or "0"
    interpreted = _interpret_suffix(suffix)
    if interpreted is None:
        raise QuantityError(f"{_ERR_SUFFIX}: {text!r}")
    base, exponent = interpreted
    shifted = int(num + denom)

    # Upstream's int64 fast path keeps the value exactly.
    if base == 10:
        if 18 - (len(num) + len(denom)) >= 0 and exponent - len(denom) >= -9:
            value = _decimal_value(shifted, exponent - len(denom)) if shifted else Fraction(0)
            return -value if negative else value
    elif not denom:
        precision = 15 - len(num) - (exponent * 3) // 10 - 1
        if precision >= 0:
            product = shifted << exponent
            if product <= _INT64_MAX:
                return Fraction(-product if negative else product)

    # Arbitrary-precision path: the numeric part must contain at least one digit.
    if not num_raw and not denom:
        raise QuantityError(f"{_ERR_NUMERIC}: {text!r}")
    if base == 10:
        value = _decimal_value(shifted, exponent - len(denom))
    else:
        value = Fraction(shifted << exponent, 10 ** len(denom))
    return _round_nano_and_cap(-value if negative else value)


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity as the API server would (JSON numbers are parsed from their text)."""
    if isinstance(value, bool):
        raise QuantityError(f"{_ERR_FORMAT}: {value!r}")
    if isinstance(value, str):
        return _parse_str(value)
    if isinstance(value, int):
        return _parse_str(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{_ERR_FORMAT}: {value!r}")
        return _parse_str(repr(value))
    raise QuantityError(f"{_ERR_FORMAT}: {value!r}")


def _round_away(value: Fraction) -> int:
    if value >= 0:
        return math.ceil(value)
    return -math.ceil(-value)


@lru_cache(maxsize=65536)
def _milli_str(text: str) -> int:
    return _round_away(_parse_str(text) * 1000)


@lru_cache(maxsize=65536)
def _int_str(text: str) -> int:
    return _round_away(_parse_str(text))


def milli_value(value: str | int | float) -> int:
    """Quantity.MilliValue: the value in thousandths, rounded away from zero."""
    if isinstance(value, str):
        return _milli_str(value)
    return _round_away(parse_quantity(value) * 1000)


def int_value(value: str | int | float) -> int:
    """Quantity.Value: the value rounded away from zero to an integer."""
    if isinstance(value, str):
        return _int_str(value)
    return _round_away(parse_quantity(value))
