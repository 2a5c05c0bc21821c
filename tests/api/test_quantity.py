"""Ported from staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go.

Tables: TestQuantityParse (valid inputs with their exact values, the same inputs with an
explicit ``-`` and ``+`` sign, and the ``invalid`` list), TestParseQuantityString (``.``/``-.``),
TestInterpretExponentInt32Bounds (through ParseQuantity), TestNegativeValueRoundsAwayFromZero
(Value/MilliValue), TestNewSet/TestMilliNewSet/TestScaledValue round trips.
Expected values are upstream's ``decQuantity(i, exponent)`` = i * 10**exponent.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.api.quantity import MAX_ALLOWED, QuantityError, int_value, milli_value, nano_value, parse_quantity


def dec(i: int, exponent: int) -> Fraction:
    return Fraction(i) * Fraction(10) ** exponent


KI, MI, GI, TI, PI, EI = (1024**n for n in range(1, 7))

# TestQuantityParse table: input -> exact value.
PARSE_TABLE: list[tuple[str, Fraction]] = [
    ("0", dec(0, 0)),
    ("0n", dec(0, 0)),
    ("0u", dec(0, 0)),
    ("0m", dec(0, 0)),
    ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)),
    ("0Mi", dec(0, 0)),
    ("0M", dec(0, 0)),
    ("0Gi", dec(0, 0)),
    ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)),
    ("0T", dec(0, 0)),
    # Quantity less numbers are allowed
    ("1", dec(1, 0)),
    # Binary suffixes
    ("1Ki", dec(KI, 0)),
    ("8Ki", dec(8 * KI, 0)),
    ("7Mi", dec(7 * MI, 0)),
    ("6Gi", dec(6 * GI, 0)),
    ("5Ti", dec(5 * TI, 0)),
    ("4Pi", dec(4 * PI, 0)),
    ("3Ei", dec(3 * EI, 0)),
    ("10Ti", dec(10 * TI, 0)),
    ("100Ti", dec(100 * TI, 0)),
    # Decimal suffixes
    ("5n", dec(5, -9)),
    ("4u", dec(4, -6)),
    ("3m", dec(3, -3)),
    ("9", dec(9, 0)),
    ("8k", dec(8, 3)),
    ("50k", dec(5, 4)),
    ("7M", dec(7, 6)),
    ("6G", dec(6, 9)),
    ("5T", dec(5, 12)),
    ("40T", dec(4, 13)),
    ("300T", dec(3, 14)),
    ("2P", dec(2, 15)),
    ("1E", dec(1, 18)),
    # Decimal exponents
    ("1E-3", dec(1, -3)),
    ("1e3", dec(1, 3)),
    ("1E6", dec(1, 6)),
    ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)),
    ("1e15", dec(1, 15)),
    ("1E18", dec(1, 18)),
    # Nonstandard but still parsable
    ("1e14", dec(1, 14)),
    ("1e13", dec(1, 13)),
    ("100.035k", dec(100035, 0)),
    # Things that look like floating point
    ("0.001", dec(1, -3)),
    ("0.0005k", dec(5, -1)),
    ("0.005", dec(5, -3)),
    ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)),
    ("0.00050k", dec(5, -1)),
    ("0.00500", dec(5, -3)),
    ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)),
    ("0.5e0", dec(5, -1)),
    ("0.5e-1", dec(5, -2)),
    ("0.5e-2", dec(5, -3)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)),
    ("1.3E+6", dec(13, 5)),
    ("1.40e9", dec(14, 8)),
    ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)),
    ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)),
    ("8.1k", dec(81, 2)),
    ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)),
    ("5.444T", dec(5444, 9)),
    ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)),
    ("2.5P", dec(25, 14)),
    ("1.01E", dec(101, 16)),
    # Things that saturate/round
    ("3.001n", dec(4, -9)),
    ("1.1E-9", dec(2, -9)),
    ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)),
    ("0.00000000050", dec(1, -9)),
    ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)),
    ("0.00000012345", dec(124, -9)),
    ("0.00000012354", dec(124, -9)),
    ("9Ei", Fraction(MAX_ALLOWED)),
    ("9223372036854775807Ki", Fraction(MAX_ALLOWED)),
    ("12E", dec(12, 18)),  # int64 fast path: not capped
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", dec(10243584, -2)),
    ("0.5Mi", dec(MI // 2, 0)),
    ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    # Things written by trolls
    ("0.000000000001Ki", dec(2, -9)),  # rounds up
    (".001", dec(1, -3)),
    (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)),
    ("1.G", dec(1, 9)),
]

# TestQuantityParse "invalid" list, plus the empty string.
INVALID: list[str] = [
    "",
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    # an exponent outside the int32 scale is rejected rather than truncated
    "1e4294967297",
    # trailing whitespace is forbidden
    " 1",
    "1 ",
    # TestQuantityParseNonNumericPanic
    "Non-Numeric",
]


@pytest.mark.parametrize(("text", "expected"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_parse(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(("text", "expected"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_parse_negative(text: str, expected: Fraction) -> None:
    # Upstream: "Try the negative version of everything" (the cap is symmetric).
    assert parse_quantity("-" + text) == -expected


@pytest.mark.parametrize(("text", "expected"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_parse_explicit_plus(text: str, expected: Fraction) -> None:
    assert parse_quantity("+" + text) == expected


@pytest.mark.parametrize("text", INVALID)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(("text", "expected"), [(".", 0), ("-.", 0), ("+", 0), ("-", 0), ("00", 0)])
def test_degenerate_forms_parse_as_zero(text: str, expected: int) -> None:
    # TestParseQuantityString: "." and "-." have num "0", no denominator, no suffix.
    assert parse_quantity(text) == expected


# TestInterpretExponentInt32Bounds, observed through ParseQuantity.
@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("1e14", True),
        ("0E2147483647", True),
        ("0E-2147483647", True),
        ("1E2147483648", False),
        ("1E-2147483648", False),
        ("1E4294967297", False),
        ("1E8589934592", False),
        ("1E9223372036854775807", False),
        ("1E9223372036854775808", False),
        ("1E6024865272343", False),
    ],
)
def test_exponent_bounds(text: str, ok: bool) -> None:
    if ok:
        parse_quantity(text)
    else:
        with pytest.raises(QuantityError):
            parse_quantity(text)


def test_huge_exponents_round_and_cap() -> None:
    # Arbitrary-precision path: far below one nano rounds up to one nano, far above is capped.
    assert parse_quantity("1.5e-2147483647") == dec(1, -9)
    assert parse_quantity("-1.5e-2147483647") == dec(-1, -9)
    assert parse_quantity("12345678901234567890e30") == MAX_ALLOWED
    assert parse_quantity("-12345678901234567890e30") == -MAX_ALLOWED


def test_fast_path_is_never_capped() -> None:
    # At most 18 digits and scale >= nano: upstream keeps the int64 amount and scale as is.
    assert parse_quantity("1e+20") == 10**20
    assert parse_quantity("100E") == 10**20


def test_astronomical_fast_path_values_are_refused() -> None:
    # Documented deviation: upstream would keep 15 * 10**2147483646.
    with pytest.raises(QuantityError):
        parse_quantity("1.5e2147483647")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0." + "0" * 5000 + "1", dec(1, -9)),
        ("1" + "0" * 5000, Fraction(MAX_ALLOWED)),
        ("1" + "0" * 5000 + "e-5000", Fraction(1)),
        ("1." + "0" * 5000 + "1", Fraction(1) + dec(1, -9)),
        ("2." + "0" * 5000, Fraction(2)),
        ("0." + "0" * 20 + "1Ki", dec(1, -9)),
        ("0." + "0" * 11 + "1" + "0" * 100 + "1Ki", dec(2, -9)),  # like "0.000000000001Ki"
        ("1.000000000" + "0" * 100 + "1Ki", 1024 + dec(1, -9)),
    ],
    ids=["tiny", "huge", "scaled-down", "sticky", "trailing-zeros", "tiny-binary", "binary", "binary-sticky"],
)
def test_long_digit_strings(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


# TestNegativeValueRoundsAwayFromZero: (input, Value(), MilliValue()).
ROUNDING: list[tuple[str, int, int]] = [
    ("-.484785E-7466", -1, -1),
    (".484785E-7466", 1, 1),
    ("-.484785E-1", -1, -49),
    (".484785E-1", 1, 49),
    ("-0.0005", -1, -1),
    ("0.0005", 1, 1),
    ("-1500m", -2, -1500),
    ("1500m", 2, 1500),
    ("-9.5000000001Gi", -10200547329, -10200547328108),
    ("9.5000000001Gi", 10200547329, 10200547328108),
    ("-1", -1, -1000),
    ("1", 1, 1000),
    ("0", 0, 0),
]


@pytest.mark.parametrize(("text", "value", "milli"), ROUNDING, ids=[t for t, _, _ in ROUNDING])
def test_value_and_milli_value_round_away_from_zero(text: str, value: int, milli: int) -> None:
    assert int_value(text) == value
    assert milli_value(text) == milli


# TestNewSet / TestMilliNewSet / TestNewScaledSet: canonical strings round-trip to their values.
@pytest.mark.parametrize(
    ("text", "value"),
    [("1", 1), ("1k", 1000), ("1234k", 1234000), ("1Ki", 1024), ("1e6", 1000000), ("1Mi", 1024 * 1024)],
)
def test_value_round_trip(text: str, value: int) -> None:
    assert int_value(text) == value


@pytest.mark.parametrize(("text", "milli"), [("1m", 1), ("1", 1000), ("1234", 1234000), ("1e3", 1000000)])
def test_milli_value_round_trip(text: str, milli: int) -> None:
    assert milli_value(text) == milli


@pytest.mark.parametrize(
    ("text", "nano"),
    [("1n", 1), ("1u", 1000), ("1m", 1000 * 1000), ("1", 10**9), ("0", 0)],
)
def test_scaled_values(text: str, nano: int) -> None:
    assert parse_quantity(text) * 10**9 == nano


def test_numbers_parse_like_their_json_text() -> None:
    # Quantity.UnmarshalJSON parses a JSON number from its text.
    assert parse_quantity(2) == 2
    assert parse_quantity(-3) == -3
    assert parse_quantity(0.5) == Fraction(1, 2)
    assert parse_quantity(1e20) == 10**20  # "1e+20"
    assert parse_quantity(1.5e-10) == dec(1, -9)
    assert milli_value(0.1) == 100
    assert int_value(2) == 2


@pytest.mark.parametrize("value", [True, False, float("nan"), float("inf"), None, [1]])
def test_rejects_non_quantities(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)  # type: ignore[arg-type]


def test_quantity_error_is_value_error() -> None:
    with pytest.raises(ValueError):
        milli_value("1 cpu")


@pytest.mark.parametrize(("text", "expected"), PARSE_TABLE, ids=[t for t, _ in PARSE_TABLE])
def test_every_quantity_is_a_whole_number_of_nanos(text: str, expected: Fraction) -> None:
    # Upstream keeps scales >= 1e-9 or rounds to 1e-9, so nano_value is exact.
    assert nano_value(text) == expected * 10**9
    assert nano_value("-" + text) == -expected * 10**9


def test_nano_value_of_numbers() -> None:
    assert nano_value(2) == 2 * 10**9
    assert nano_value(0.25) == 250_000_000
