"""Times and durations the simulator reads from users: RFC 3339 times and Go durations.

One grammar each, shared with the rest of the project (RFC 3339: :mod:`kubesched.api.rfc3339`; Go
durations: :mod:`kubesched.config.duration`), with the simulator's range checked on top: a virtual
clock is a float of epoch seconds, and a value that is NaN, infinite or past year 9999 would hang
the event loop (a NaN deadline is never reached) or crash the first time a time is printed. So
every time must lie in the range RFC 3339 and Python's datetime share, years 0001 to 9999 in UTC,
and every duration must be finite, non-negative and fit in that range.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from kubesched.api.rfc3339 import is_rfc3339, parse_rfc3339_ns
from kubesched.config.duration import parse_duration as parse_go_duration

__all__ = [
    "MAX_TIME",
    "MIN_TIME",
    "parse_rfc3339",
    "parse_sim_duration",
    "parse_time_or_offset",
]

#: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z as epoch seconds: the simulator's time range.
MIN_TIME = datetime(1, 1, 1, tzinfo=UTC).timestamp()
MAX_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
_RANGE_TEXT = "0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z"

#: Fractional digits the simulator reads: a virtual clock keeps no more than nanoseconds.
_MAX_FRACTION_DIGITS = 9
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def parse_rfc3339(text: object) -> float:
    """An RFC 3339 time (``2026-01-01T21:00:00Z``, ``2026-01-01T23:00:00+02:00``) in epoch seconds."""
    t = str(text).strip()
    if not is_rfc3339(t, max_fraction_digits=_MAX_FRACTION_DIGITS):
        raise ValueError(f"invalid time {_show(text)} (use RFC 3339, e.g. 2026-01-01T21:00:00Z)")
    try:
        ns = parse_rfc3339_ns(t, max_fraction_digits=_MAX_FRACTION_DIGITS)
    except OverflowError:
        raise ValueError(f"time {_show(text)} is outside the supported range {_RANGE_TEXT}") from None
    except ValueError as err:
        if str(err).startswith("year "):
            raise ValueError(f"time {_show(text)} is outside the supported range {_RANGE_TEXT}") from None
        raise ValueError(f"invalid time {_show(text)}: {err}") from None
    # Whole seconds plus microseconds, as datetime.timestamp() rounds them (the float of old runs).
    seconds, nanos = divmod(ns, 1_000_000_000)
    ts = (seconds * 1_000_000 + nanos // 1000) / 1_000_000
    if not MIN_TIME <= ts <= MAX_TIME:
        raise ValueError(f"time {_show(text)} is outside the supported range {_RANGE_TEXT}")
    return ts


def parse_sim_duration(text: object) -> float:
    """A Go duration (``90s``, ``2h``, ``1h30m``, ``500ms``) or a plain number of seconds, in seconds.

    Refused: negative, NaN, infinite, and longer than the simulator's whole time range."""
    t = str(text).strip()
    if _PLAIN_NUMBER.fullmatch(t):
        seconds = float(t)
    else:
        try:
            seconds = parse_go_duration(t)
        except ValueError:
            raise ValueError(f"invalid duration {_show(text)} (use e.g. 90s, 2h, 1h30m, or seconds)") from None
    if math.isnan(seconds) or seconds < 0:
        raise ValueError(f"invalid duration {_show(text)}: must not be negative")
    if seconds > MAX_TIME - MIN_TIME:
        raise ValueError(f"duration {_show(text)} is longer than the supported time range {_RANGE_TEXT}")
    return seconds


def parse_time_or_offset(text: object, start: float) -> float:
    """An RFC 3339 time, or a duration after ``start`` (``90s``, ``2h``); within the time range."""
    try:
        offset = parse_sim_duration(text)
    except ValueError as duration_error:
        if is_rfc3339(str(text), max_fraction_digits=_MAX_FRACTION_DIGITS):
            return parse_rfc3339(text)
        if "longer than" in str(duration_error) or "negative" in str(duration_error):
            raise
        raise ValueError(
            f"invalid time {_show(text)} (use RFC 3339, e.g. 2026-01-01T21:00:00Z, or a duration such as 2h)"
        ) from None
    if start + offset > MAX_TIME:
        raise ValueError(f"{_show(text)} after the start is past the supported time range {_RANGE_TEXT}")
    return start + offset


def _show(text: object, limit: int = 60) -> str:
    s = str(text)
    return repr(s if len(s) <= limit else s[: limit - 3] + "...")
