"""The benchmark's one error type (the CLI turns it into exit code 2)."""

from __future__ import annotations


class BenchError(ValueError):
    """A benchmark that cannot run as asked (unknown workload, an impossible combination, a size
    out of bounds, no control plane built...): one problem per line in ``errors``."""

    def __init__(self, message: str, *more: str) -> None:
        self.errors = [message, *more]
        super().__init__("\n".join(self.errors))
