"""The benchmark's one error type (the CLI turns it into exit code 2)."""

from __future__ import annotations


class BenchError(ValueError):
    """A benchmark that cannot run as asked (unknown workload, an impossible combination, no
    control plane built...)."""
