"""Go duration strings, as ``metav1.Duration`` reads them.

Cases ported from Go's src/time/time_test.go (parseDurationTests / parseDurationErrorTests).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.config import parse_duration
from kubesched.config.duration import format_duration

NS, US, MS = 1e-9, 1e-6, 1e-3

VALID: list[tuple[str, float]] = [
    ("0", 0.0),
    ("5s", 5.0),
    ("30s", 30.0),
    ("1478s", 1478.0),
    ("-5s", -5.0),
    ("+5s", 5.0),
    ("-0", 0.0),
    ("+0", 0.0),
    ("5.0s", 5.0),
    ("5.6s", 5.6),
    ("5.s", 5.0),
    (".5s", 0.5),
    ("1.0s", 1.0),
    ("1.00s", 1.0),
    ("1.004s", 1.004),
    ("1.0040s", 1.004),
    ("100.00100s", 100.001),
    ("10ns", 10 * NS),
    ("11us", 11 * US),
    ("12µs", 12 * US),
    ("12μs", 12 * US),
    ("13ms", 13 * MS),
    ("14s", 14.0),
    ("15m", 900.0),
    ("16h", 57600.0),
    ("3h30m", 12600.0),
    ("10.5s4m", 250.5),
    ("-2m3.4s", -123.4),
    ("1h2m3s4ms5us6ns", 3723 + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * 3600 + 9 * 60 + 14.425),
    ("52763797000ns", 52.763797),
    ("0.3333333333333333333h", 1200.0),
    ("9007199254740993ns", 9007199.254740993),
    ("1m30s", 90.0),
]

INVALID = ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "1.5d", "15 s", "\x85\x85", "hello world"]


@pytest.mark.parametrize(("text", "seconds"), VALID)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("text", INVALID)
def test_parse_duration_errors(text: str) -> None:
    with pytest.raises(ValueError, match="time: "):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (15, "15s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (0.5, "500ms"),
        (-2, "-2s"),
        (0.001801692, "1.801692ms"),
        (1.5e-6, "1.5µs"),
        (3723.5, "1h2m3.5s"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    """Go's Duration.String spelling, used in messages."""
    assert format_duration(seconds) == text


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_format_then_parse_is_identity_on_whole_nanoseconds(nanos: int) -> None:
    seconds = nanos / 1e9
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, rel=1e-9, abs=1e-9)
