"""The one RFC 3339 parser (api/rfc3339.py): Go's grammar, nanoseconds kept, callers' limits on top."""

from __future__ import annotations

import pytest

from kubesched.api.rfc3339 import is_rfc3339, parse_rfc3339_ns

S = 1_000_000_000


@pytest.mark.parametrize(("text", "want"), [
    ("1970-01-01T00:00:00Z", 0),
    ("1970-01-01t00:00:00z", 0),
    ("1970-01-01 00:00:01+00:00", S),
    ("1970-01-01T01:00:00+01:00", 0),
    ("1970-01-01T00:00:00.000000005Z", 5),
    ("1970-01-01T00:00:00.1234567899Z", 123_456_789),  # Go truncates a longer fraction
    (" 2026-01-01T00:00:01.5Z\n", 1767225601 * S + S // 2),
    ("1969-12-31T23:59:59.75Z", -S // 4),
])
def test_parses_to_nanoseconds(text: str, want: int) -> None:
    assert parse_rfc3339_ns(text) == want


@pytest.mark.parametrize("text", ["yesterday", "2026-01-01T00:00:00", "2026-01-01", "2026-01-01T00:00:00.Z",
                                  "2026-01-0\u0661T00:00:00Z"])
def test_wrong_form(text: str) -> None:
    assert not is_rfc3339(text)
    with pytest.raises(ValueError, match="not an RFC 3339 date-time"):
        parse_rfc3339_ns(text)


def test_fields_out_of_range_keep_datetime_s_message() -> None:
    assert is_rfc3339("2026-02-30T00:00:00Z")
    with pytest.raises(ValueError, match="day is out of range for month"):
        parse_rfc3339_ns("2026-02-30T00:00:00Z")
    with pytest.raises(ValueError, match=r"^year 0 is out of range"):
        parse_rfc3339_ns("0000-01-01T00:00:00Z")


def test_max_fraction_digits() -> None:
    text = "1970-01-01T00:00:00.1234567891Z"
    assert is_rfc3339(text) and not is_rfc3339(text, max_fraction_digits=9)
    with pytest.raises(ValueError, match="not an RFC 3339"):
        parse_rfc3339_ns(text, max_fraction_digits=9)
    assert parse_rfc3339_ns("1970-01-01T00:00:00.123456789Z", max_fraction_digits=9) == 123_456_789
