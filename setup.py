"""Only for the wheel's data: the project is configured in pyproject.toml.

The example scenarios live in ``examples/`` at the top of the checkout, where the README's commands
name them; a wheel carries a copy as ``kubesched/examples`` so that ``kubesched examples list`` and
``kubesched examples copy`` work after ``pip install`` (src/kubesched/examples.py finds either)."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPyWithExamples(build_py):
    def run(self) -> None:
        super().run()
        source = ROOT / "examples"
        if source.is_dir():
            target = Path(self.build_lib) / "kubesched" / "examples"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))


setup(cmdclass={"build_py": BuildPyWithExamples})
