"""CycleState: the per-scheduling-cycle key/value store plugins share (upstream ``cycle_state.go``)."""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable


@runtime_checkable
class StateData(Protocol):
    """Anything stored in a CycleState must be clonable, because preemption clones the state."""

    def clone(self) -> StateData: ...


T = TypeVar("T")


class StateNotFoundError(KeyError):
    """Raised by :meth:`CycleState.read` for a missing key, as upstream's ``ErrNotFound``."""


class CycleState:
    """Per-cycle storage, written mostly at PreFilter/PreScore and read by Filter/Score.

    Keys are plugin-chosen strings (convention: ``"PreFilter" + plugin name``). Also carries the
    framework's skip sets, which record plugins whose PreFilter/PreScore returned Skip.
    """

    __slots__ = (
        "_data",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        #: PreBind plugins whose PreBindPreFlight returned Skip: their PreBind is not called.
        self.skip_pre_bind_plugins: frozenset[str] = frozenset()
        self.record_plugin_metrics = False

    def read(self, key: str) -> object:
        try:
            return self._data[key]
        except KeyError:
            raise StateNotFoundError(key) from None

    def get(self, key: str, default: T | None = None) -> object | T | None:
        return self._data.get(key, default)

    def read_as(self, key: str, kind: type[T]) -> T:
        """Typed read: raises a clear error when the data is missing or of another type."""
        value = self.read(key)
        if not isinstance(value, kind):
            raise TypeError(f"{value!r} stored under {key!r} is not a {kind.__name__}")
        return value

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        """Deep enough for preemption's dry runs: every value that implements ``clone`` is cloned."""
        c = CycleState()
        for k, v in self._data.items():
            clone = getattr(v, "clone", None)
            c._data[k] = clone() if callable(clone) else v
        c.skip_filter_plugins = self.skip_filter_plugins
        c.skip_score_plugins = self.skip_score_plugins
        c.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        c.record_plugin_metrics = self.record_plugin_metrics
        return c
