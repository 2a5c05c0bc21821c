"""pytest fixtures for plugin authors (loaded automatically through the ``pytest11`` entry point)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.framework.clock import VirtualClock

from .framework import TestFramework, new_framework


@pytest.fixture
def virtual_clock() -> VirtualClock:
    """A virtual clock at 2026-01-01T00:00:00Z; move it with ``step(seconds)`` or ``advance_to``."""
    return VirtualClock(1767225600.0)


@pytest.fixture
def make_framework(virtual_clock: VirtualClock) -> Callable[..., TestFramework]:
    """``make_framework([MyPlugin], nodes=[...], pods=[...], args={...})`` sharing ``virtual_clock``."""

    def make(*a: Any, **kw: Any) -> TestFramework:
        kw.setdefault("clock", virtual_clock)
        return new_framework(*a, **kw)

    return make
