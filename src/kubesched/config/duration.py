"""Go ``time.ParseDuration`` for config durations (``metav1.Duration`` fields).

kube-scheduler's YAML spells durations as Go duration strings (``15s``, ``1m30s``,
``300ms``); we store them as float seconds.
"""

from __future__ import annotations

import math
import re

__all__ = ["format_duration", "parse_duration"]

_UNITS: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,  # U+00B5 micro sign
    "μs": 1e-6,  # U+03BC greek mu
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_MAX_NANOS = float(2**63 - 1)
_COMPONENT = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def _quote(text: str, limit: int = 60) -> str:
    """Go's ``quote`` of the input, shortened: an error line names a huge input, not repeats it."""
    return '"' + (text if len(text) <= limit else text[: limit - 3] + "...") + '"'


def parse_duration(text: str) -> float:
    """Parse a Go duration string into seconds.

    Accepts exactly what Go accepts: an optional sign, then one or more
    ``<number><unit>`` components (``"1h2m3.5s"``); the bare string ``"0"`` is zero.
    Raises ``ValueError`` with Go's wording otherwise.
    """
    if not isinstance(text, str):
        raise ValueError(f"time: invalid duration {text!r}")
    s = text
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f"time: invalid duration {_quote(text)}")
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _COMPONENT.match(s, pos)
        if m is None:
            if re.match(r"(\d+(?:\.\d*)?|\.\d+)", s[pos:]):
                rest = s[pos:].lstrip("0123456789.")
                if not rest:
                    raise ValueError(f"time: missing unit in duration {_quote(text)}")
                raise ValueError(f"time: unknown unit {_quote(rest)} in duration {_quote(text)}")
            raise ValueError(f"time: invalid duration {_quote(text)}")
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not total * 1e9 <= _MAX_NANOS:
        # Go's Duration is int64 nanoseconds (about 292 years); ParseDuration refuses more.
        raise ValueError(f"time: invalid duration {_quote(text)}")
    return sign * total


def _frac(whole: int, frac: int, digits: int) -> str:
    text = f"{frac:0{digits}d}".rstrip("0")
    return f"{whole}.{text}" if text else str(whole)


def format_duration(seconds: float) -> str:
    """Render seconds like Go's ``Duration.String`` (``1m30s``, ``1.5ms``, ``1h0m0s``), exact to
    the nanosecond, so :func:`parse_duration` reads it back."""
    if not math.isfinite(seconds):
        return str(seconds)  # only a hand-built value can be infinite: parse_duration refuses it
    nanos = round(abs(seconds) * 1e9)
    sign = "-" if seconds < 0 and nanos else ""
    if nanos == 0:
        return "0s"
    if nanos < 1_000:
        return f"{sign}{nanos}ns"
    if nanos < 1_000_000:
        return f"{sign}{_frac(nanos // 1_000, nanos % 1_000, 3)}µs"
    if nanos < 1_000_000_000:
        return f"{sign}{_frac(nanos // 1_000_000, nanos % 1_000_000, 6)}ms"
    hours, rem = divmod(nanos, 3_600_000_000_000)
    minutes, rem = divmod(rem, 60_000_000_000)
    out = sign
    if hours:
        out += f"{hours}h"
    if hours or minutes:
        out += f"{minutes}m"
    return out + _frac(rem // 1_000_000_000, rem % 1_000_000_000, 9) + "s"
