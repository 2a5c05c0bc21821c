"""Every top-level package says what belongs in it and which layers it may import (issue 12): no
placeholder docstrings such as ``\"\"\"sim.\"\"\"``. The layers themselves are pinned by tests/test_layers.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kubesched"
PACKAGES = ["api", "backend", "bench", "config", "kube", "plugins", "scheduler", "sim", "testing"]


def test_every_top_level_package_is_listed() -> None:
    # framework/ documents itself as the public module of plugin authors.
    found = {p.parent.name for p in SRC.glob("*/__init__.py")}
    assert found - {"framework"} == set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_docstring_says_what_belongs_and_what_it_imports(package: str) -> None:
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text()))
    assert doc is not None
    assert doc.strip(" .").lower() != package
    assert "belongs here" in doc
    assert "import" in doc
