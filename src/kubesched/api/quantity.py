"""Kubernetes resource quantities as exact fractions.

Mirrors ``ParseQuantity`` in k8s.io/apimachinery/pkg/api/resource/quantity.go, including its
corner cases, so that a request the API server accepts means the same amount here:

* grammar ``<sign><digits>[.<digits>]<suffix>``; suffix is a decimal SI suffix
  (``n u m "" k M G T P E``), a binary SI suffix (``Ki Mi Gi Ti Pi Ei``) or a decimal
  exponent (``e3``, ``E-3``); whitespace anywhere is rejected;
* upstream quirks kept on purpose: a bare sign (``"+"``, ``"-"``) and a bare ``"."`` parse
  as zero, ``"1."`` is one; exponents beyond +-(2^31-1) are rejected (older releases wrapped
  them to an unrelated int32);
* values that upstream stores as arbitrary-precision decimals are rounded *away from zero*
  to a multiple of 1e-9 (``inf.RoundUp`` at nano scale) and capped at 2^63-1 in magnitude;
  values that fit upstream's int64 fast path are kept exactly (never rounded, never capped);
  the one deviation: such a value beyond 10**1000 (e.g. ``"1e5000"``) raises ``QuantityError``
  instead of being kept as an astronomically large number.

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
    "nano_value",
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


_MAX_INT32 = (1 << 31) - 1


def _interpret_suffix(suffix: str) -> tuple[int, int] | None:
    """Return (base, exponent) for a suffix, or None if upstream cannot interpret it."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT_RE.fullmatch(suffix[1:]):
        digits = suffix[1:].lstrip("+-").lstrip("0")
        if len(digits) > 10:
            # Beyond int32 however it is read; never hand int() thousands of digits (Python's
            # int-from-text limit raises ValueError beyond 4300, and the conversion is quadratic).
            return None
        parsed = int(suffix[1:])
        # Exponents must fit the int32 scale; upstream rejects the rest rather than wrap them.
        if -_MAX_INT32 <= parsed <= _MAX_INT32:
            return 10, parsed
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


# Fast-path values (at most 18 significant digits) are kept exactly up to this power of ten;
# beyond it nothing could use them, and building 10**(2**31) would hang.
_MAX_FAST_PATH_EXPONENT = 1000
# Digits below 10**-_KEEP_DECIMALS cannot change a value rounded up to nano, even after a
# binary suffix multiplies it by up to 2**60, as long as a nonzero remainder is remembered.
_KEEP_DECIMALS = 9 + 60 + 1


def _arbitrary_precision(digits: str, exponent10: int, exponent2: int, negative: bool) -> Fraction:
    """digits * 10**exponent10 * 2**exponent2 rounded up to nano and capped, without huge ints.

    ``digits`` has no leading zeros and may be thousands of characters long.
    """
    if not digits:
        return Fraction(0)
    order = len(digits) + exponent10  # magnitude < 10**order before the binary factor
    if order > 21:
        mag = Fraction(MAX_ALLOWED)  # at least 10**20 > cap, binary factors only grow it
    elif order < -(_KEEP_DECIMALS - 9):
        mag = Fraction(1, _NANO)  # below 10**-61 * 2**60 < 1e-9: rounds up to one nano
    else:
        drop = -exponent10 - _KEEP_DECIMALS
        if drop > 0:
            kept, dropped = digits[:-drop], digits[-drop:]
            # A nonzero remainder becomes one unit just below the kept digits (sticky digit).
            digits = kept + ("1" if dropped.strip("0") else "0")
            exponent10 = -_KEEP_DECIMALS - 1
        value = Fraction(int(digits)) * Fraction(10) ** exponent10 * (1 << exponent2)
        mag = _round_nano_and_cap(value)
    return -mag if negative else mag


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
    if m.group("denom") is None and not suffix and not num_raw.strip("0"):
        return Fraction(0)

    num = num_raw.lstrip("0") or "0"
    interpreted = _interpret_suffix(suffix)
    if interpreted is None:
        raise QuantityError(f"{_ERR_SUFFIX}: {text!r}")
    base, exponent = interpreted

    # Upstream's int64 fast path keeps the value exactly (no rounding, no cap).
    if base == 10:
        scale = exponent - len(denom)
        if len(num) + len(denom) <= 18 and scale >= -9:
            shifted = int(num + denom)
            if shifted == 0:
                return Fraction(0)
            if scale > _MAX_FAST_PATH_EXPONENT:
                raise QuantityError(f"quantity is too large to represent: {text!r}")
            value = Fraction(shifted * 10**scale) if scale >= 0 else Fraction(shifted, 10**-scale)
            return -value if negative else value
    elif not denom:
        precision = 15 - len(num) - (exponent * 3) // 10 - 1
        if precision >= 0:
            product = int(num) << exponent
            if product <= _INT64_MAX:
                return Fraction(-product if negative else product)

    # Arbitrary-precision path: the numeric part must contain at least one digit.
    if not num_raw and not denom:
        raise QuantityError(f"{_ERR_NUMERIC}: {text!r}")
    digits = (num + denom).lstrip("0")
    if base == 10:
        return _arbitrary_precision(digits, exponent - len(denom), 0, negative)
    return _arbitrary_precision(digits, -len(denom), exponent, negative)


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity as the API server would (JSON numbers are parsed from their text)."""
    if isinstance(value, bool):
        raise QuantityError(f"{_ERR_FORMAT}: {value!r}")
    if isinstance(value, str):
        return _parse_str(value)
    if isinstance(value, int):
        if value.bit_length() > 256:
            # Far beyond the cap, on upstream's arbitrary-precision path (more than 18 digits):
            # capped there; str() of a huge int is slow, and refused past 4300 digits.
            return Fraction(-MAX_ALLOWED if value < 0 else MAX_ALLOWED)
        return _parse_str(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{_ERR_FORMAT}: {value!r}")
        return _parse_str(repr(value))
    raise QuantityError(f"{_ERR_FORMAT}: {value!r}")


@lru_cache(maxsize=65536)
def _nano_str(text: str) -> int:
    value = _parse_str(text) * _NANO
    # Every parsed quantity is a whole number of nano-units: upstream's fast path only keeps
    # scales >= 1e-9 and its arbitrary-precision path rounds to 1e-9.
    assert value.denominator == 1, text
    return value.numerator


def nano_value(value: str | int | float) -> int:
    """The exact value in nano-units (1e-9), e.g. ``"250m"`` -> 250_000_000.

    Exact for every quantity Kubernetes accepts, so integer sums of nano values are exact
    sums of quantities (what upstream's ``Quantity.Add`` computes).
    """
    if isinstance(value, str):
        return _nano_str(value)
    return int(parse_quantity(value) * _NANO)


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
