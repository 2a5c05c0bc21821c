"""RFC 3339 date-times, the one parser of the project (``metav1.Time`` as Go's ``time.Parse`` reads it).

The grammar is RFC 3339 section 5.6 with the space separator its note allows, ASCII digits only
(Go's), and a fractional second of any length, kept to the nanosecond (Go truncates longer
fractions). Callers choose their policy on top: preemption treats an unreadable pod start time as
"not started" (:func:`kubesched.framework.preemption.parse_time_ns`); the simulator refuses more
than nine fractional digits and times outside years 0001-9999 with its own messages
(:mod:`kubesched.sim.timeparse`). Formatting is :func:`kubesched.framework.clock.rfc3339`.
"""

from __future__ import annotations

import re
from datetime import datetime

__all__ = ["is_rfc3339", "parse_rfc3339_ns", "parse_time"]

_DATE_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _match(text: str, max_fraction_digits: int | None) -> re.Match[str] | None:
    m = _DATE_TIME.fullmatch(text.strip())
    if m is None or (max_fraction_digits is not None and len(m.group(3) or "") > max_fraction_digits):
        return None
    return m


def is_rfc3339(text: str, *, max_fraction_digits: int | None = None) -> bool:
    """Whether ``text`` has the date-time's form (its fields may still be out of range)."""
    return _match(text, max_fraction_digits) is not None


def parse_rfc3339_ns(text: str, *, max_fraction_digits: int | None = None) -> int:
    """``text`` in Unix nanoseconds (surrounding whitespace ignored).

    Raises ``ValueError``: "not an RFC 3339 date-time" when the form is wrong, else datetime's own
    message for a field out of range ("day is out of range for month", "year 0 is out of range").
    """
    m = _match(text, max_fraction_digits)
    if m is None:
        raise ValueError(f"not an RFC 3339 date-time: {text!r}")
    date, clock, fraction, tz = m.groups()
    whole = datetime.fromisoformat(f"{date}T{clock}{'+00:00' if tz in 'Zz' else tz}")
    return int(whole.timestamp()) * 1_000_000_000 + int((fraction or "0")[:9].ljust(9, "0"))


def parse_time(value: object) -> float | None:
    """A stored ``metav1.Time`` (RFC 3339) in epoch seconds; None when absent or unreadable, so a
    malformed timestamp on one object never raises out of the plugin reading it."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
