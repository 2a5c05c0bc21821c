"""Plugins wrapped to count their evaluations: upstream's ``instrumented_plugins.go``.

Follows ``pkg/scheduler/framework/runtime/instrumented_plugins.go`` (v1.35) and
``frameworkImpl.setInstrumentedPlugins``: once a profile is built, its PreFilter, Filter, PreScore
and Score plugins are replaced in the point lists by wrappers that count
``scheduler_plugin_evaluation_total{plugin, extension_point, profile}`` on every call (PreFilter
and PreScore only when the plugin did not return Skip), then call the plugin. The counter's label
child is looked up once, at wrapping time, as upstream caches the metric stream.

kubesched's batch forms count too, one evaluation per node they answer for (a ``filter_batch``
over 5000 nodes is 5000 Filter evaluations; upstream would count only the nodes its parallel walk
reached). Everything else a wrapper is asked for (``pre_filter_extensions``, ``score_extensions``,
``events_to_register``, a plugin's own attributes) comes from the plugin itself.

In the cycles sampled for plugin metrics (``CycleState.record_plugin_metrics``, upstream's
``ShouldRecordPluginMetrics``) the wrappers also time each call into
``scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}``, as upstream's
``runPreFilterPlugin``, ``runFilterPlugin``, ``runPreScorePlugin`` and ``runScorePlugin`` do
(the other extension points are timed by ``runtime.py``). A batch call answers for many nodes: it
counts as one observation per node, each of the call's mean duration, labelled Success for the
nodes it accepts and Unschedulable for the others. That label is our deviation: the batch forms
do not compute a rejected node's own code (upstream's per-node call may say
UnschedulableAndUnresolvable); the codes are computed only when the pod fits nowhere.

The extension point's total (``scheduler_framework_extension_point_duration_seconds``) is
recorded in the runtime, as upstream's ``Run*Plugins`` do.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .interfaces import (
    BatchFilterPlugin,
    BatchScorePlugin,
    BoolArray,
    FilterPlugin,
    IntArray,
    Plugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from .status import Code, Status, StatusLike
from .types import NodeInfo, PodInfo, PreFilterResult

if TYPE_CHECKING:
    from .snapshot import Snapshot


class EvaluationCounter(Protocol):
    """One label child of ``scheduler_plugin_evaluation_total`` (``metrics.LightCounter``): the
    wrappers add to ``value`` directly. A wrapper runs on every plugin call of every cycle, so it
    takes no lock: an ``int`` attribute's ``+=`` is not interrupted by another Python thread under
    CPython's GIL (no call or jump inside it), so concurrent counts (the scheduling cycle and a
    preemption's dry runs) are not lost there."""

    value: int


class DurationRecorder(Protocol):
    """``scheduler_plugin_execution_duration_seconds`` of one plugin at one extension point
    (``metrics.PluginDurations``)."""

    def observe(self, status: str, seconds: float, count: int = 1) -> None: ...


_SKIP = Code.SKIP
_clock = time.perf_counter
_T = TypeVar("_T")


def status_label(status: object) -> str:
    """Upstream's ``status.Code().String()`` of what a plugin returned (None is Success; anything
    that is no Status is the Error the runtime turns it into)."""
    if status is None:
        return "Success"
    if isinstance(status, Status):
        return status.code.upstream_name
    return "Error"


def timed(durations: DurationRecorder, fn: Callable[..., StatusLike], *args: object) -> StatusLike:
    """``fn(*args)`` timed into ``durations`` under its status; a call that raises is observed as
    Error (what the runtime turns it into) and the exception goes on to the runtime."""
    start = _clock()
    try:
        status = fn(*args)
    except Exception:
        durations.observe("Error", _clock() - start)
        raise
    durations.observe(status_label(status), _clock() - start)
    return status


def timed_pair(
    durations: DurationRecorder, fn: Callable[..., tuple[_T, StatusLike]], *args: object
) -> tuple[_T, StatusLike]:
    """:func:`timed` for the methods returning ``(value, status)`` (PreFilter, Score)."""
    start = _clock()
    try:
        value, status = fn(*args)
    except Exception:
        durations.observe("Error", _clock() - start)
        raise
    durations.observe(status_label(status), _clock() - start)
    return value, status


class _Instrumented:
    """The wrapped plugin's name, and its other members by delegation."""

    def __init__(
        self, plugin: Plugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
    ) -> None:
        self.plugin = plugin
        self.name = plugin.name
        self._metric = metric
        self._durations = durations

    def __getattr__(self, attr: str) -> object:
        # Only for members the wrapper does not define (upstream: the embedded interface).
        if attr == "plugin":  # not set yet (copy, pickle): no recursion
            raise AttributeError(attr)
        return getattr(self.plugin, attr)

    def __repr__(self) -> str:
        return f"instrumented({self.plugin!r})"


class InstrumentedPreFilterPlugin(_Instrumented):
    """Upstream ``instrumentedPreFilterPlugin``: counted unless the plugin returns Skip."""

    plugin: PreFilterPlugin

    def __init__(
        self, plugin: PreFilterPlugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
    ) -> None:
        super().__init__(plugin, metric, durations)
        #: Not counted: the plugin's own method, without a wrapper's call.
        self.pre_filter_extensions: Callable[[], PreFilterExtensions | None] = plugin.pre_filter_extensions

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, StatusLike]:
        if state.record_plugin_metrics and self._durations is not None:
            result, status = timed_pair(self._durations, self.plugin.pre_filter, state, pod, nodes)
        else:
            result, status = self.plugin.pre_filter(state, pod, nodes)
        if status is None or not isinstance(status, Status) or status.code is not _SKIP:
            self._metric.value += 1
        return result, status


class InstrumentedFilterPlugin(_Instrumented):
    """Upstream ``instrumentedFilterPlugin``: every call counted."""

    plugin: FilterPlugin

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> StatusLike:
        self._metric.value += 1
        if state.record_plugin_metrics and self._durations is not None:
            return timed(self._durations, self.plugin.filter, state, pod, node_info)
        return self.plugin.filter(state, pod, node_info)


class InstrumentedBatchFilterPlugin(InstrumentedFilterPlugin):
    """:class:`InstrumentedFilterPlugin` of a plugin with ``filter_batch``: one count per node."""

    plugin: BatchFilterPlugin

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> BoolArray | None:
        self._metric.value += len(indices)
        if state.record_plugin_metrics and self._durations is not None and len(indices):
            start = _clock()
            mask = self.plugin.filter_batch(state, pod, snapshot, indices)
            each = (_clock() - start) / len(indices)
            passed = len(indices) if mask is None else int(np.count_nonzero(mask))
            self._durations.observe("Success", each, passed)
            self._durations.observe("Unschedulable", each, len(indices) - passed)
            return mask
        return self.plugin.filter_batch(state, pod, snapshot, indices)


class InstrumentedBatchFilterStatusesPlugin(InstrumentedBatchFilterPlugin):
    """... and with ``filter_batch_statuses`` (the reasons of many nodes at once)."""

    def filter_batch_statuses(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> tuple[IntArray, Sequence[Status]]:
        self._metric.value += len(indices)
        answer: tuple[IntArray, Sequence[Status]] = self.plugin.filter_batch_statuses(  # type: ignore[attr-defined]
            state, pod, snapshot, indices
        )
        return answer


class InstrumentedPreScorePlugin(_Instrumented):
    """Upstream ``instrumentedPreScorePlugin``: counted unless the plugin returns Skip."""

    plugin: PreScorePlugin

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> StatusLike:
        if state.record_plugin_metrics and self._durations is not None:
            status = timed(self._durations, self.plugin.pre_score, state, pod, nodes)
        else:
            status = self.plugin.pre_score(state, pod, nodes)
        if status is None or not isinstance(status, Status) or status.code is not _SKIP:
            self._metric.value += 1
        return status


class InstrumentedScorePlugin(_Instrumented):
    """Upstream ``instrumentedScorePlugin``: every call counted."""

    plugin: ScorePlugin

    def __init__(
        self, plugin: ScorePlugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
    ) -> None:
        super().__init__(plugin, metric, durations)
        #: Not counted: the plugin's own method, without a wrapper's call.
        self.score_extensions: Callable[[], ScoreExtensions | None] = plugin.score_extensions

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, StatusLike]:
        self._metric.value += 1
        if state.record_plugin_metrics and self._durations is not None:
            return timed_pair(self._durations, self.plugin.score, state, pod, node_info)
        return self.plugin.score(state, pod, node_info)


class InstrumentedBatchScorePlugin(InstrumentedScorePlugin):
    """:class:`InstrumentedScorePlugin` of a plugin with ``score_batch``: one count per node."""

    plugin: BatchScorePlugin

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> IntArray:
        self._metric.value += len(indices)
        if state.record_plugin_metrics and self._durations is not None and len(indices):
            start = _clock()
            scores = self.plugin.score_batch(state, pod, snapshot, indices)
            self._durations.observe("Success", (_clock() - start) / len(indices), len(indices))
            return scores
        return self.plugin.score_batch(state, pod, snapshot, indices)


def instrument_pre_filter(
    plugin: PreFilterPlugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
) -> PreFilterPlugin:
    return InstrumentedPreFilterPlugin(plugin, metric, durations)


def instrument_filter(
    plugin: FilterPlugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
) -> FilterPlugin:
    """The wrapper with the same batch forms as ``plugin`` (the runtime looks for them)."""
    if callable(getattr(plugin, "filter_batch_statuses", None)) and isinstance(plugin, BatchFilterPlugin):
        return InstrumentedBatchFilterStatusesPlugin(plugin, metric, durations)
    if isinstance(plugin, BatchFilterPlugin):
        return InstrumentedBatchFilterPlugin(plugin, metric, durations)
    return InstrumentedFilterPlugin(plugin, metric, durations)


def instrument_pre_score(
    plugin: PreScorePlugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
) -> PreScorePlugin:
    return InstrumentedPreScorePlugin(plugin, metric, durations)


def instrument_score(
    plugin: ScorePlugin, metric: EvaluationCounter, durations: DurationRecorder | None = None
) -> ScorePlugin:
    if isinstance(plugin, BatchScorePlugin):
        return InstrumentedBatchScorePlugin(plugin, metric, durations)
    return InstrumentedScorePlugin(plugin, metric, durations)


def unwrap(plugin: Plugin) -> Plugin:
    """The plugin itself, wrapped or not."""
    return plugin.plugin if isinstance(plugin, _Instrumented) else plugin


__all__ = [
    "DurationRecorder",
    "EvaluationCounter",
    "InstrumentedBatchFilterPlugin",
    "InstrumentedBatchFilterStatusesPlugin",
    "InstrumentedBatchScorePlugin",
    "InstrumentedFilterPlugin",
    "InstrumentedPreFilterPlugin",
    "InstrumentedPreScorePlugin",
    "InstrumentedScorePlugin",
    "instrument_filter",
    "instrument_pre_filter",
    "instrument_pre_score",
    "instrument_score",
    "status_label",
    "unwrap",
]
