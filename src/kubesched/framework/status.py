"""Status codes and the Status value returned by every extension point.

Mirrors ``staging/src/k8s.io/kube-scheduler/framework/interface.go``: the same seven codes in the
same order, the same predicates, and ``None`` standing for Success so plugins can simply return
nothing when all is well.
"""

from __future__ import annotations

import enum


class Code(enum.IntEnum):
    """Upstream's status codes (iota 0..6)."""

    SUCCESS = 0
    #: An internal failure; the pod goes to backoff without waiting for cluster events.
    ERROR = 1
    #: The pod does not fit; PostFilter (preemption) may help. Requeued by matching cluster events.
    UNSCHEDULABLE = 2
    #: The pod does not fit and preemption cannot help: such nodes are never preemption candidates.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    #: Permit only: hold the pod until another plugin allows or rejects it, or a timeout.
    WAIT = 4
    #: PreFilter/PreScore: skip the coupled Filter/Score; Bind: let the next binder decide.
    SKIP = 5
    #: The cycle succeeded as far as the plugin goes, but the pod must wait for an external component.
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        """The name kube-scheduler prints (``UnschedulableAndUnresolvable``)."""
        return _UPSTREAM_NAMES[self]


_UPSTREAM_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """The outcome of running a plugin: a code, human-readable reasons and the plugin that failed.

    Statuses are values: the framework never mutates one a plugin returned, except to record which
    plugin produced a rejection (upstream's ``WithPlugin``).
    """

    __slots__ = ("code", "error", "plugin", "reasons")

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        error: BaseException | None = None,
        plugin: str = "",
    ) -> None:
        self.code = code
        self.reasons: list[str] = list(reasons)
        self.error = error
        self.plugin = plugin
        if error is not None and not self.reasons:
            self.reasons = [str(error)]

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        """``UnschedulableAndUnresolvable``: preemption cannot help."""
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def as_status(cls, err: BaseException) -> Status:
        """Upstream ``AsStatus(err)``: an Error status carrying the exception."""
        return cls(Code.ERROR, error=err)

    # -- predicates -----------------------------------------------------------------------------
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (upstream ``IsRejected``)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    # -- accessors ------------------------------------------------------------------------------
    def message(self) -> str:
        """Reasons joined by ", " as upstream's ``Status.Message``."""
        return ", ".join(self.reasons)

    def as_error(self) -> Exception | None:
        """``None`` for Success/Wait/Skip, an exception otherwise (upstream ``AsError``)."""
        if self.code in (Code.SUCCESS, Code.WAIT, Code.SKIP):
            return None
        if isinstance(self.error, Exception):
            return self.error
        return RuntimeError(self.message())

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.code == Code.SUCCESS
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, tuple(self.reasons)))

    def __repr__(self) -> str:
        plugin = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.upstream_name}, {self.reasons!r}{plugin})"


#: What a plugin may return where a Status is expected: ``None`` means Success.
StatusLike = Status | None


def or_success(value: StatusLike) -> Status:
    """A plugin's return value as a Status, ``None`` as Success: Go's nil ``*Status``, whose methods
    answer Success. (Not ``as_status``: that is upstream's ``AsStatus(err)``, :meth:`Status.as_status`.)"""
    return _SUCCESS if value is None else value


def is_success(value: StatusLike) -> bool:
    return value is None or value.code == Code.SUCCESS


# A shared immutable-by-convention success value for normalisation; never handed to callers that mutate.
_SUCCESS = Status(Code.SUCCESS)
