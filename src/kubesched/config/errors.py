"""Field-path errors for KubeSchedulerConfiguration loading and validation.

kube-scheduler reports configuration problems as an aggregate of
``k8s.io/apimachinery/pkg/util/validation/field`` errors, each naming the offending
field path (``profiles[0].pluginConfig[1].args.hardPodAffinityWeight``). We keep
that shape: a flat list of :class:`FieldError` raised together as one
:class:`ConfigError`, so a user sees every problem in one run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConfigError",
    "FieldError",
    "child_path",
    "duplicate",
    "forbidden",
    "format_value",
    "index_path",
    "invalid",
    "not_supported",
    "required",
]


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path (``""`` means the document itself)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(Exception):
    """Every problem found in one configuration, raised together."""

    def __init__(self, errors: Iterable[FieldError], source: str | None = None) -> None:
        self.errors: list[FieldError] = list(errors)
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        lines = [str(e) for e in self.errors]
        if self.source:
            lines = [f"{self.source}: {line}" for line in lines]
        return "\n".join(lines)


def child_path(path: str, key: str) -> str:
    """``field.Path.Child``: join a key onto a path (no leading dot at the root)."""
    if not path:
        return key
    if key.startswith("["):
        return path + key
    return f"{path}.{key}"


def index_path(path: str, index: int) -> str:
    """``field.Path.Index``."""
    return f"{path}[{index}]"


def format_value(value: Any, limit: int = 80) -> str:
    """Render a value the way it appears in YAML/JSON (``"x"``, ``true``, ``null``, ``[1, 2]``)."""
    try:
        text = json.dumps(value, default=repr, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        # an int past Python's digit limit for str(), or a structure nested too deep to print
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


# Constructors mirroring field.Invalid / Required / Duplicate / NotSupported / Forbidden, with
# our one-line message style "<detail>, got <value>".


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"{detail}, got {format_value(value)}")


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, f"required{': ' + detail if detail else ''}")


def duplicate(path: str, value: Any, detail: str = "duplicate value") -> FieldError:
    return FieldError(path, f"{detail} {format_value(value)}")


def not_supported(path: str, value: Any, supported: Sequence[str]) -> FieldError:
    choices = ", ".join(format_value(s) for s in supported)
    return FieldError(path, f"unsupported value {format_value(value)}: supported values: {choices}")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"forbidden: {detail}")
