"""Errors raised while reading Kubernetes objects.

Upstream reports malformed objects as ``field.Error`` values carrying a field path
(``spec.containers[0].resources.requests.cpu``); we keep the path so callers can
report exactly which part of the object is wrong.
"""

from __future__ import annotations

__all__ = ["InvalidObjectError"]


class InvalidObjectError(ValueError):
    """A Kubernetes object (or a part of it) that cannot be interpreted."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"

    def __reduce__(self) -> tuple[type[InvalidObjectError], tuple[str, str]]:
        # ValueError pickles its args; ours are (field, message), so rebuild from those.
        return (type(self), (self.field, self.message))
