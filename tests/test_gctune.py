"""Every kubesched command runs with the scheduler's collector thresholds (kubesched.gctune)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.gctune import THRESHOLDS


@pytest.fixture
def default_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_command_raises_the_gen0_threshold(default_thresholds: None) -> None:
    result = CliRunner().invoke(cli, ["simulate", "examples/quickstart", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert gc.get_threshold() == THRESHOLDS
    assert THRESHOLDS[0] > 700
