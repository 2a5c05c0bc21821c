"""Every test module has a basename of its own: pytest imports them by basename (no packages under
tests/), so two files of one name stop the whole run at collection, as a fresh clone showed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_basename() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert sorted(n for n, c in names.items() if c > 1) == []
