"""Go ``time.ParseDuration`` for config durations (``metav1.Duration`` fields).

kube-scheduler's YAML spells durations as Go duration strings (``15s``, ``1m30s``,
``300ms``); we store them as float seconds.
"""

from __future__ import annotations

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
_COMPONENT = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


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
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _COMPONENT.match(s, pos)
        if m is None:
            if re.match(r"(\d+(?:\.\d*)?|\.\d+)", s[pos:]):
                rest = s[pos:].lstrip("0123456789.")
                if not rest:
                    raise ValueError(f'time: missing unit in duration "{text}"')
                raise ValueError(f'time: unknown unit "{rest}" in duration "{text}"')
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def format_duration(seconds: float) -> str:
    """Render seconds in Go's ``Duration.String`` style for messages (``1m30s``, ``500ms``)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    rem = abs(seconds)
    if rem < 1:
        ms = rem * 1e3
        if ms >= 1:
            return f"{sign}{ms:g}ms"
        us = rem * 1e6
        return f"{sign}{us:g}µs" if us >= 1 else f"{sign}{rem * 1e9:g}ns"
    hours = int(rem // 3600)
    rem -= hours * 3600
    minutes = int(rem // 60)
    rem -= minutes * 60
    out = sign
    if hours:
        out += f"{hours}h"
    if hours or minutes:
        out += f"{minutes}m"
    out += f"{round(rem, 9):g}s"
    return out
