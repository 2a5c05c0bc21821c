"""Text from objects, made safe to print: names and messages reach terminals and logs literally.

Object names, annotations and plugin messages come from users (or from an API server anyone with
create rights writes to). A name holding an escape sequence could move the cursor, recolour or
hide a terminal's output, and a newline could forge a log line, so every control character is
shown escaped (``\\x1b``, ``\\n``), as Go's ``%q`` and klog do. Bidirectional-override characters
are escaped too: they reorder what a terminal shows ("Trojan Source", CVE-2021-42574).
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_NEWLINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character escaped (newlines kept when asked)."""
    s = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE_KEEP_NEWLINES if keep_newlines else _UNSAFE
    return pattern.sub(_escape, s) if pattern.search(s) else s
