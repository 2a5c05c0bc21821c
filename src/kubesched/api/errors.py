"""Errors raised while reading Kubernetes objects.

Upstream reports malformed objects as ``field.Error`` values carrying a field path
(``spec.containers[0].resources.requests.cpu``); we keep the path so callers can
report exactly which part of the object is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = [
    "AggregateInvalidObjectError",
    "InvalidObjectError",
    "field_invalid",
    "field_not_supported",
    "field_required",
    "raise_if_any",
]


class InvalidObjectError(ValueError):
    """A Kubernetes object (or a part of it) that cannot be interpreted."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    @property
    def errors(self) -> tuple[InvalidObjectError, ...]:
        """Every problem found; a single error lists itself."""
        return (self,)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class AggregateInvalidObjectError(InvalidObjectError):
    """Several problems found at once (upstream ``utilerrors.Aggregate`` of ``field.Error``).

    ``field``/``message`` are those of the first problem so callers that expect a single
    error still get a useful one; ``errors`` lists them all. ``str()`` follows upstream's
    aggregate format: the lone message, or ``[msg1, msg2]``.
    """

    def __init__(self, errors: Sequence[InvalidObjectError]) -> None:
        flat: list[InvalidObjectError] = []
        for err in errors:
            flat.extend(err.errors)
        if not flat:
            raise ValueError("AggregateInvalidObjectError needs at least one error")
        super().__init__(flat[0].field, flat[0].message)
        self._errors = tuple(flat)

    @property
    def errors(self) -> tuple[InvalidObjectError, ...]:
        return self._errors

    def __str__(self) -> str:
        if len(self._errors) == 1:
            return str(self._errors[0])
        return "[" + ", ".join(str(e) for e in self._errors) + "]"

    def __reduce__(self) -> tuple[type[AggregateInvalidObjectError], tuple[tuple[InvalidObjectError, ...]]]:
        return (type(self), (self._errors,))


def raise_if_any(errors: Sequence[InvalidObjectError]) -> None:
    """Raise the lone error, or an aggregate of several; do nothing for none."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise AggregateInvalidObjectError(errors)


def _go_value(value: object) -> str:
    """Render a bad value roughly as field.Error does (%q for strings, %#v for string slices)."""
    if value is None:
        return '"null"'
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def field_invalid(field: str, value: object, detail: str) -> InvalidObjectError:
    """field.Invalid: ``Invalid value: <value>: <detail>``."""
    return InvalidObjectError(field, f"Invalid value: {_go_value(value)}: {detail}")


def field_not_supported(field: str, value: object, supported: Sequence[str] = ()) -> InvalidObjectError:
    """field.NotSupported: ``Unsupported value: <value>[: supported values: ...]``."""
    msg = f"Unsupported value: {_go_value(value)}"
    if supported:
        msg += ": supported values: " + ", ".join(json.dumps(s) for s in supported)
    return InvalidObjectError(field, msg)


def field_required(field: str, detail: str) -> InvalidObjectError:
    """field.Required: ``Required value[: <detail>]``."""
    return InvalidObjectError(field, f"Required value: {detail}" if detail else "Required value")
