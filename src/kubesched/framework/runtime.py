"""The framework runtime: a profile's plugins and how each extension point runs them.

Mirrors ``pkg/scheduler/framework/runtime/framework.go``: plugins are instantiated once per
profile, ``multiPoint`` is expanded with upstream's precedence rules, and every ``run_*`` method
has the same shape — loop over the point's plugins in order, skip what CycleState says to skip,
turn unexpected codes or exceptions into an Error naming the plugin (framework/plugin_calls.py).

Filter has one entry point, upstream's ``RunFilterPluginsWithNominatedPods``: per node here, and
its batch form for the scheduling cycle, :meth:`Framework.node_filter` (framework/filtering.py).
Metrics as upstream: each ``run_*`` records its extension point's duration (framework.go), and the
PreFilter, Filter, PreScore and Score plugins are wrapped to count their evaluations
(instrumented_plugins.go; framework/instrumented_plugins.py).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from kubesched.config.releases import DEFAULT_RELEASE, QUEUE_SIGNS_PODS, Release
from kubesched.config.types import PluginRef, Plugins, PluginSet, Profile

from .batch import OpportunisticBatch
from .cycle_state import CycleState
from .events import WILDCARD_EVENT, ClusterEventWithHint
from .filtering import (
    FilterOutcome,
    FilterPlugins,
    NodeFilter,
    run_filter_plugins,
    run_filter_plugins_with_nominated_pods,
)
from .instrumented_plugins import (
    instrument_filter,
    instrument_pre_filter,
    instrument_pre_score,
    instrument_score,
    status_label,
)
from .interfaces import (
    MAX_NODE_SCORE,
    MAX_PERMIT_TIMEOUT,
    MIN_NODE_SCORE,
    BatchScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    SignPlugin,
)
from .node_rows import names_of
from .plugin_calls import call_plugin, call_plugin_pair, debug_traceback, exception_status, one_line, quote
from .pods_in_pre_bind import PodsInPreBindMap
from .registry import Registry
from .signature import SCHEDULER_NAME_SIGNER, PodSignature
from .signature import encode as encode_signature
from .status import Code, Status, StatusLike
from .types import (
    NodeInfo,
    NodeScore,
    NominatingMode,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from .waiting_pods import WaitingPod, WaitingPodsMap

if TYPE_CHECKING:
    from kubesched.metrics import PluginDurations, SchedulerMetrics

    from .clock import Clock
    from .snapshot import Snapshot

log = logging.getLogger("kubesched.framework")

#: Extension-point attribute of ``Plugins`` -> (upstream name, the Protocol a plugin must satisfy).
EXTENSION_POINTS: dict[str, tuple[str, type]] = {
    "pre_enqueue": ("PreEnqueue", PreEnqueuePlugin),
    "queue_sort": ("QueueSort", QueueSortPlugin),
    "pre_filter": ("PreFilter", PreFilterPlugin),
    "filter": ("Filter", FilterPlugin),
    "post_filter": ("PostFilter", PostFilterPlugin),
    "pre_score": ("PreScore", PreScorePlugin),
    "score": ("Score", ScorePlugin),
    "reserve": ("Reserve", ReservePlugin),
    "permit": ("Permit", PermitPlugin),
    "pre_bind": ("PreBind", PreBindPlugin),
    "bind": ("Bind", BindPlugin),
    "post_bind": ("PostBind", PostBindPlugin),
}

#: Points whose plugins' EnqueueExtensions are honoured (upstream: those that can reject a pod).
_REQUEUE_POINTS = ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")

#: kubesched extension (no upstream plugin sets it): a plugin class attribute saying that its
#: PreEnqueue is part of what it does at its other points, so the profile runs it at PreEnqueue
#: wherever it enables the plugin (e.g. a time-window Filter that gates pods outside the window).
#: An explicit ``preEnqueue: disabled`` of the plugin (or of ``*``) still turns it off there.
IMPLIED_PRE_ENQUEUE = "implied_pre_enqueue"

#: kubesched stand-in for upstream's GangScheduling feature gate (v1.35, alpha), under which
#: ``addPodToSchedulingQueue`` also raises an ``UnscheduledPod``/``Add`` event: a plugin class
#: attribute that turns the event on while the plugin is enabled in some profile, so pods it parked
#: can be let in when a sibling arrives. Without it no event is raised, as upstream without the gate.
UNSCHEDULED_POD_ADD_EVENTS = "unscheduled_pod_add_events"


#: ``PodInfo.cache`` key of the pod's signature, per profile (``Framework.sign_pod``).
_SIGNATURE_KEY = "Signature/"
_SUCCESS = Status(Code.SUCCESS)


class FrameworkError(ValueError):
    """A profile that cannot be built (unknown plugin, duplicate, missing QueueSort/Bind...)."""


def _permit_timeout(value: Any) -> float | None:
    """A Permit plugin's Wait timeout in seconds, or None when it is no number (see
    :meth:`Framework.run_permit_plugins`)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return None
    try:
        t = float(value)
    except OverflowError:  # an int beyond float's range: far above maxTimeout, or far below zero
        t = math.inf if value > 0 else -math.inf
    return None if math.isnan(t) else t


_q = quote
_one_line = one_line
_debug_traceback = debug_traceback


def _implements(plugin: object, proto: type) -> bool:
    return isinstance(plugin, proto)


def _priority_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """Upstream PrioritySort's ``Less``: higher priority first, then the earlier timestamp."""
    pa, pb = a.pod_info.priority, b.pod_info.priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def _bad_score(value: object) -> str | None:
    """Why ``value`` is no node score (upstream's are int64), or None. A finite float is
    truncated as before; NaN, infinities and non-numbers are the plugin's error."""
    if type(value) is int or isinstance(value, np.integer):
        return None
    if isinstance(value, float | np.floating) and math.isfinite(value):
        return None
    return f"returned score {value!r:.60}, not an integer"


def _bad_scores(scores: Any, n: int) -> str | None:
    """:func:`_bad_score` for a batch Score/NormalizeScore result, which must be one number a node."""
    arr = np.asarray(scores)
    if arr.shape != (n,):
        return f"returned {arr.shape[0] if arr.ndim == 1 else arr.shape} scores for {n} nodes"
    if arr.dtype.kind in "iub":
        return None
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        return f"returned score {arr[bad][0]!r}, not an integer" if bad.any() else None
    for v in arr.tolist():
        why = _bad_score(v)
        if why is not None:
            return why
    return None


@dataclass
class ExtensionPoints:
    """A profile's plugins at each extension point, in the order they run (upstream's
    ``frameworkImpl.preFilterPlugins`` ... ``postBindPlugins``). Attribute names are the
    configuration's (``Plugins``, :data:`EXTENSION_POINTS`); ``points["filter"]`` reads one by
    that name (construction, ``list_plugins``, tests)."""

    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    queue_sort: list[QueueSortPlugin] = field(default_factory=list)
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    filter: list[FilterPlugin] = field(default_factory=list)
    post_filter: list[PostFilterPlugin] = field(default_factory=list)
    pre_score: list[PreScorePlugin] = field(default_factory=list)
    score: list[ScorePlugin] = field(default_factory=list)
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPlugin] = field(default_factory=list)
    pre_bind: list[PreBindPlugin] = field(default_factory=list)
    bind: list[BindPlugin] = field(default_factory=list)
    post_bind: list[PostBindPlugin] = field(default_factory=list)

    def __getitem__(self, point: str) -> list[Plugin]:
        if point not in EXTENSION_POINTS:
            raise KeyError(point)
        return cast(list[Plugin], getattr(self, point))

    def __setitem__(self, point: str, plugins: list[Plugin]) -> None:
        if point not in EXTENSION_POINTS:
            raise KeyError(point)
        setattr(self, point, plugins)

    def __iter__(self) -> Iterator[str]:
        """The points' names, as iterating the dict this replaces did."""
        return iter([f.name for f in fields(self)])

    def items(self) -> list[tuple[str, list[Plugin]]]:
        """(point, plugins) for every point, in :data:`EXTENSION_POINTS` order."""
        return [(name, self[name]) for name in self]


@dataclass
class ScoreResult:
    """Scores of the feasible nodes: per plugin raw/normalised (weighted = normalised × weight)."""

    nodes: Sequence[str]
    raw: dict[str, npt.NDArray[np.int64]]
    normalized: dict[str, npt.NDArray[np.int64]]
    weights: dict[str, int]
    total: npt.NDArray[np.int64]


class Framework:
    """One profile's configured plugins, ready to run.

    ``handle`` is what factories receive; it must provide the members of
    :class:`kubesched.framework.interfaces.Handle`. The framework itself adds the waiting-pods map.
    """

    def __init__(
        self,
        profile: Profile,
        registry: Registry,
        handle: Handle,
        *,
        metrics: SchedulerMetrics | None = None,
        opportunistic_batching: bool = False,
    ) -> None:
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.handle = handle
        self.metrics = metrics
        self.waiting_pods = WaitingPodsMap()
        #: Pods in PreBind after a successful PreBindPreFlight (framework/pods_in_pre_bind.py).
        self.pods_in_pre_bind = PodsInPreBindMap()
        self.plugins: dict[str, Plugin] = {}
        self.score_weights: dict[str, int] = {}
        self.points = ExtensionPoints()
        self._build(profile.plugins, registry)
        self.queue_sort = self.points.queue_sort[0]
        #: Whether an enabled plugin asked for ``UnscheduledPod``/``Add`` events (see above).
        self.unscheduled_pod_add_events = any(
            getattr(p, UNSCHEDULED_POD_ADD_EVENTS, False) is True for p in self.plugins.values()
        )
        if metrics is not None:
            self._set_instrumented_plugins(metrics)
        #: Plugins with a batch Score form (checked once: Protocol isinstance checks are slow).
        self._batch_score: dict[str, BatchScorePlugin] = {
            p.name: p for p in self.points.score if isinstance(p, BatchScorePlugin)
        }
        self._filters = FilterPlugins.of(self.points.filter)
        #: OpportunisticBatching (gate on): the batch state, and the plugins that sign pods.
        self.batch: OpportunisticBatch | None = None
        self._signers: tuple[SignPlugin, ...] = ()
        self._sign_durations: tuple[PluginDurations | None, ...] = ()
        self._sign_memo_keys: tuple[str | None, ...] = ()
        self.signatures_enabled = False
        #: v1.36+: the queue signs pods (QueueSignsPods); v1.35: every scheduling cycle does.
        self._queue_signs = self.release.has(QUEUE_SIGNS_PODS)
        if opportunistic_batching:
            self._compute_batchable_plugins()
            self.batch = OpportunisticBatch(self, handle.clock.now)
        #: By a cycle's skipped Filter plugins: the PreFilter plugins whose AddPod/RemovePod run
        #: (a plugin's PreFilterExtensions are fixed, as every in-tree plugin's), and the Filter
        #: plugins that run. Preemption's dry run asks both thousands of times a pod.
        self._extensions_by_skip: dict[frozenset[str], tuple[tuple[PreFilterPlugin, PreFilterExtensions], ...]] = {}
        self._filters_by_skip: dict[frozenset[str], tuple[FilterPlugin, ...]] = {}

    # ------------------------------------------------------------------------------------------
    # construction
    # ------------------------------------------------------------------------------------------
    def _build(self, plugins: Plugins, registry: Registry) -> None:
        needed: list[str] = []
        for attr in [*EXTENSION_POINTS, "multi_point"]:
            for ref in getattr(plugins, attr).enabled:
                if ref.name not in needed:
                    needed.append(ref.name)
        # Every missing plugin and every factory that raises is reported, one line each, naming
        # the profile's place in the configuration file when the loader recorded it.
        where = (f"{self.profile.origin} ({self.profile_name})" if self.profile.origin
                 else f"profile {_q(self.profile_name)}")
        problems: list[str] = []
        for name in needed:
            if name not in registry:
                problems.append(f"{where}: plugin {_q(name)} is not registered")
                continue
            spec = registry[name]
            args = self.profile.args_for(name)
            try:
                plugin = spec.factory(args, self.handle)
            except Exception as err:  # a plugin's own bug or check: report it, never a traceback
                log.debug("profile %s: creating plugin %s failed", self.profile_name, name, exc_info=True)
                expected = ""
                if spec.args_type is not None and not isinstance(args, spec.args_type):
                    from kubesched.config.args import describe_args

                    expected = f" (expected args {describe_args(spec.args_type)})"
                detail = " ".join(str(err).split()) or type(err).__name__
                problems.append(f"{where}: plugin {_q(name)}: creating the plugin failed: {detail}{expected}")
                continue
            if not getattr(plugin, "name", None):
                with contextlib.suppress(AttributeError):
                    plugin.name = name
            self.plugins[name] = plugin
        if problems:
            raise FrameworkError("\n".join(problems))

        for attr, (upstream, proto) in EXTENSION_POINTS.items():
            pset: PluginSet = getattr(plugins, attr)
            for ref in pset.enabled:
                plugin = self.plugins[ref.name]
                if not _implements(plugin, proto):
                    raise FrameworkError(
                        f"profile {self.profile_name!r}: plugin {ref.name!r} does not extend {upstream} plugin"
                    )
                if plugin in self.points[attr]:
                    raise FrameworkError(
                        f"profile {self.profile_name!r}: plugin {ref.name!r} already registered as {upstream}Plugin"
                    )
                self.points[attr].append(plugin)
            self._expand_multi_point(attr, upstream, proto, pset, plugins.multi_point)
        self._add_implied_pre_enqueue(plugins.pre_enqueue)

        self._score_weights(plugins)
        if len(self.points.queue_sort) != 1:
            raise FrameworkError(
                f"profile {self.profile_name!r}: exactly one QueueSort plugin is required, "
                f"got {len(self.points.queue_sort)}"
            )
        if not self.points.bind:
            raise FrameworkError(f"profile {self.profile_name!r}: at least one Bind plugin is required")

    def _compute_batchable_plugins(self) -> None:
        """Upstream ``computeBatchablePlugins``: every PreFilter, Filter, PreScore and Score plugin
        must sign pods, or the profile never batches (said once, at start-up)."""
        signers: list[SignPlugin] = []
        unsupported: list[str] = []
        seen: set[str] = set()
        for point in ("pre_filter", "filter", "pre_score", "score"):
            for wrapped in self.points[point]:
                name = wrapped.name
                if name in seen:
                    continue
                seen.add(name)
                plugin = self.plugins.get(name, wrapped)
                if callable(getattr(plugin, "sign_pod", None)):
                    signers.append(cast(SignPlugin, plugin))
                else:
                    unsupported.append(name)
        self._signers = tuple(signers)
        # Each signer's Sign durations, looked up once: every pod signs, every call is observed.
        metrics = self.metrics
        self._sign_durations = tuple(
            metrics.plugin_duration_recorder(p.name, "Sign") if metrics is not None else None for p in signers
        )
        #: Signers whose fragments depend on the pod's spec and status only (``signs_by_spec``):
        #: their answers are kept per spec template, by this key.
        self._sign_memo_keys = tuple(
            f"Sign/{self.profile_name}/{p.name}" if getattr(p, "signs_by_spec", False) is True else None
            for p in signers
        )
        self.signatures_enabled = not unsupported
        if unsupported:
            log.info("Disabling signatures for profile %s because plugins do not support it: %s",
                     self.profile_name, ", ".join(sorted(unsupported)))

    @property
    def release(self) -> Release:
        return cast("Release", getattr(self.handle, "release", DEFAULT_RELEASE))

    def sign_pod(self, pod: PodInfo, record: bool = False) -> PodSignature | None:
        """Upstream ``SignPod``: the pod's signature, or None when signatures are off for this
        profile or some plugin cannot sign the pod. Every call signs: each signer's call is timed
        into ``scheduler_plugin_execution_duration_seconds{extension_point="Sign"}`` (not sampled,
        as upstream's); ``record`` also observes the Sign extension point, even when the profile
        does not sign (upstream's deferred observation comes first)."""
        start = time.perf_counter()
        signature = self._sign(pod) if self.signatures_enabled else None
        if record:
            self._observe("Sign", _SUCCESS, start)
        return signature

    def sign_queued_pod(self, pod: PodInfo) -> None:
        """v1.36+ with OpportunisticBatching on: the queue signs a pod when it enters the queue and
        when a queued pod is updated (``scheduling_queue.go`` ``signPod``), observing the Sign
        extension point every time; the cycle then uses that signature (:meth:`cycle_signature`)."""
        if self.batch is None or not self._queue_signs:
            return
        pod.cache[_SIGNATURE_KEY + self.profile_name] = self.sign_pod(pod, record=True)

    def cycle_signature(self, pod: PodInfo, record: bool) -> PodSignature | None:
        """The signature a scheduling cycle batches by. v1.35 signs in every attempt (in
        ``GetNodeHint``; the extension point only in sampled cycles, ``record``); v1.36+ takes the
        one the queue computed, signing now only for a pod that did not come through the queue
        (or was updated while in flight)."""
        if not self._queue_signs:
            return self.sign_pod(pod, record)
        key = _SIGNATURE_KEY + self.profile_name
        cache = pod.cache
        if key in cache:
            return cast("PodSignature | None", cache[key])
        signature = cache[key] = self.sign_pod(pod, record=True)
        return signature

    def _sign(self, pod: PodInfo) -> PodSignature | None:
        """Each signer in turn until one cannot sign; the JSON of the fragments."""
        fragments: dict[str, Any] = {SCHEDULER_NAME_SIGNER: pod.scheduler_name}
        signature: PodSignature | None = None
        perf_counter = time.perf_counter
        # Pods of one spec and status share a template (PodInfo.share_spec_parses): what a
        # spec-only signer answered for the template holds for each of them. The call is still
        # made (to the memo) and timed, one observation a pod and plugin as upstream's.
        template = pod.__dict__.get("_template")
        shared: dict[str, Any] | None = template.cache if template is not None else None
        for p, durations, memo_key in zip(self._signers, self._sign_durations, self._sign_memo_keys, strict=True):
            t0 = perf_counter()
            if memo_key is not None and shared is not None and memo_key in shared:
                parts, st = shared[memo_key]
            else:
                try:
                    parts, st = p.sign_pod(pod)
                except Exception as err:
                    debug_traceback(p.name, "SignPod")
                    parts, st = (), Status(Code.ERROR, one_line(err))
                if memo_key is not None and shared is not None and (st is None or st.code != Code.ERROR):
                    shared[memo_key] = (tuple(parts), st)
            if st is None or st.code == Code.SUCCESS:
                if durations is not None:
                    durations.observe("Success", perf_counter() - t0)
                for fragment in parts:
                    fragments[fragment.key] = fragment.value
                continue
            if durations is not None:
                durations.observe(st.code.upstream_name, perf_counter() - t0)
            if st.code == Code.ERROR:
                log.error("SignPod failed for plugin %s: %s", p.name, st.message())
            log.debug("SignPod can't sign pod %s due to plugin %s: %s", pod.key, p.name, st.message())
            break
        else:
            signature = encode_signature(fragments)
        return signature

    def _set_instrumented_plugins(self, metrics: SchedulerMetrics) -> None:
        """Upstream ``setInstrumentedPlugins``: the PreFilter, Filter, PreScore and Score plugins
        replaced by wrappers counting ``scheduler_plugin_evaluation_total``
        (framework/instrumented_plugins.py); ``self.plugins`` keeps the plugins themselves."""
        points, profile = self.points, self.profile_name
        count, durations = metrics.plugin_evaluation_counter, metrics.plugin_duration_recorder
        points.pre_filter = [
            instrument_pre_filter(p, count(p.name, "PreFilter", profile), durations(p.name, "PreFilter"))
            for p in points.pre_filter
        ]
        points.filter = [
            instrument_filter(p, count(p.name, "Filter", profile), durations(p.name, "Filter")) for p in points.filter
        ]
        points.pre_score = [
            instrument_pre_score(p, count(p.name, "PreScore", profile), durations(p.name, "PreScore"))
            for p in points.pre_score
        ]
        points.score = [
            instrument_score(p, count(p.name, "Score", profile), durations(p.name, "Score")) for p in points.score
        ]

    def _expand_multi_point(self, attr: str, upstream: str, proto: type, pset: PluginSet, multi: PluginSet) -> None:
        """Upstream ``expandMultiPointPlugins``: specific config wins over multiPoint."""
        disabled = {r.name for r in pset.disabled}
        if "*" in disabled:
            return
        enabled = [r.name for r in pset.enabled]
        overrides: list[str] = []
        multi_enabled: list[str] = []
        for ref in multi.enabled:
            plugin = self.plugins[ref.name]
            if not _implements(plugin, proto) or ref.name in disabled:
                continue
            if ref.name in enabled:
                overrides.append(ref.name)
                continue
            if ref.name in multi_enabled:
                raise FrameworkError(
                    f"profile {self.profile_name!r}: plugin {ref.name!r} already registered as {upstream}Plugin"
                )
            multi_enabled.append(ref.name)
        order = [n for n in enabled if n in overrides] + multi_enabled + [n for n in enabled if n not in overrides]
        self.points[attr] = [self.plugins[n] for n in order]

    def _add_implied_pre_enqueue(self, pset: PluginSet) -> None:
        """Append, after the configured PreEnqueue plugins, every enabled plugin that declares
        ``implied_pre_enqueue`` and is not at PreEnqueue yet (see :data:`IMPLIED_PRE_ENQUEUE`)."""
        disabled = {r.name for r in pset.disabled}
        for name, plugin in self.plugins.items():
            if getattr(plugin, IMPLIED_PRE_ENQUEUE, False) is not True:
                continue
            if not _implements(plugin, PreEnqueuePlugin):
                raise FrameworkError(
                    f"profile {self.profile_name!r}: plugin {name!r} sets {IMPLIED_PRE_ENQUEUE} "
                    "but does not extend PreEnqueue plugin"
                )
            if plugin not in self.points.pre_enqueue and not disabled & {name, "*"}:
                self.points.pre_enqueue.append(cast(PreEnqueuePlugin, plugin))

    def _score_weights(self, plugins: Plugins) -> None:
        weights: dict[str, int] = {}
        for ref in plugins.multi_point.enabled:
            weights[ref.name] = ref.weight or 1
        for ref in plugins.score.enabled:  # the specific point's weight takes precedence
            weights[ref.name] = ref.weight or 1
        total = 0
        for p in self.points.score:
            w = weights.get(p.name, 1)
            self.score_weights[p.name] = w
            total += w * MAX_NODE_SCORE
        if total > 2**63 - 1:
            raise FrameworkError(f"profile {self.profile_name!r}: total score of Score plugins could overflow")

    def list_plugins(self) -> dict[str, list[str]]:
        """Upstream names of points -> enabled plugin names (logged at start-up)."""
        out: dict[str, list[str]] = {}
        for attr, (upstream, _) in EXTENSION_POINTS.items():
            names = [
                f"{p.name}(weight={self.score_weights[p.name]})" if attr == "score" else p.name
                for p in self.points[attr]
            ]
            if names:
                out[upstream] = names
        return out

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Plugin name -> events it registered; plugins without EnqueueExtensions get the wildcard.

        A plugin whose ``events_to_register`` raises, or returns anything but ClusterEventWithHints,
        makes the profile unusable: :class:`FrameworkError`, one line per plugin. That is upstream's
        behaviour (``buildQueueingHintMap`` joins the plugins' errors and ``scheduler.New`` fails, so
        kube-scheduler does not start); registering "all events" instead would hide the bug and
        retry that plugin's pods on every event."""
        out: dict[str, list[ClusterEventWithHint]] = {}
        problems: list[str] = []
        for attr in _REQUEUE_POINTS:
            for wrapped in self.points[attr]:
                if wrapped.name in out:
                    continue
                # The plugin itself, not its instrumented wrapper: from Python 3.12 a runtime
                # Protocol check looks attributes up statically, past the wrapper's __getattr__.
                p = self.plugins.get(wrapped.name, wrapped)
                if isinstance(p, EnqueueExtensions):
                    try:
                        events = list(p.events_to_register())
                    except Exception as err:
                        log.debug("plugin %s failed at EventsToRegister", p.name, exc_info=True)
                        problems.append(f"{self._where()}: plugin {_q(p.name)}: EventsToRegister failed: "
                                        f"{_one_line(err)}")
                        continue
                    bad = [e for e in events if not isinstance(e, ClusterEventWithHint)]
                    if bad:
                        problems.append(f"{self._where()}: plugin {_q(p.name)}: EventsToRegister returned "
                                        f"{bad[0]!r:.100}, not a ClusterEventWithHint")
                        continue
                    out[p.name] = events
                else:
                    out[p.name] = [ClusterEventWithHint(WILDCARD_EVENT)]
        if problems:
            raise FrameworkError("\n".join(problems))
        return out

    def _where(self) -> str:
        """The profile as construction errors name it: its place in the config file, if known."""
        origin = self.profile.origin
        return f"{origin} ({self.profile_name})" if origin else f"profile {_q(self.profile_name)}"

    # ------------------------------------------------------------------------------------------
    # helpers
    # ------------------------------------------------------------------------------------------
    def _observe(self, point: str, status: Status, start: float) -> None:
        """``scheduler_framework_extension_point_duration_seconds``, recorded by each ``run_*`` as
        upstream's ``Run*Plugins`` do in their deferred ``metrics.FrameworkExtensionPointDuration``
        (pkg/scheduler/framework/runtime/framework.go); evaluations are counted by the wrappers
        (:meth:`_set_instrumented_plugins`)."""
        if self.metrics is not None:
            self.metrics.framework_extension_point_duration(
                point, status, self.profile_name, time.perf_counter() - start
            )

    def _timed_call(
        self, record: bool, plugin: Plugin, point: str, fn: Callable[..., StatusLike], *args: Any
    ) -> Status:
        """:func:`call_plugin`, timed into ``scheduler_plugin_execution_duration_seconds`` when
        ``record`` (a cycle sampled for plugin metrics, ``state.record_plugin_metrics``), as
        upstream's ``run<Point>Plugin`` helpers do. PreFilter, Filter, PreScore and Score are timed
        by their instrumented wrappers instead."""
        if not record or self.metrics is None:
            return call_plugin(plugin, point, fn, *args)
        start = time.perf_counter()
        s = call_plugin(plugin, point, fn, *args)
        self.metrics.observe_plugin_duration(point, plugin.name, s.code.upstream_name, time.perf_counter() - start)
        return s

    def _time_plugin(self, state: CycleState, plugin: Plugin, point: str, status: str, start: float) -> None:
        """One call that started at ``start``, in a sampled cycle (Unreserve, PostBind, NormalizeScore)."""
        if state.record_plugin_metrics and self.metrics is not None:
            self.metrics.observe_plugin_duration(point, plugin.name, status, time.perf_counter() - start)

    #: One plugin method called safely (framework/plugin_calls.py); ``explain`` uses it too.
    _call = staticmethod(call_plugin)
    _call_pair = staticmethod(call_plugin_pair)
    _exception_status = staticmethod(exception_status)

    # ------------------------------------------------------------------------------------------
    # queue
    # ------------------------------------------------------------------------------------------
    #: Whether the QueueSort plugin's failure was logged (once per profile).
    _less_failed = False

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """The QueueSort plugin's ``less``. Where it raises, that comparison falls back to
        upstream's PrioritySort order (higher priority first, then the earlier timestamp) and the
        failure is logged once: a heap whose comparator raises is left half-sifted, losing or
        misplacing pods, while a comparator that never raises keeps every pod in the queue."""
        try:
            return bool(self.queue_sort.less(a, b))
        except Exception as err:
            if not self._less_failed:
                self._less_failed = True
                log.warning(
                    "plugin %s failed at QueueSort: %s; comparing by priority and timestamp (PrioritySort) instead",
                    _q(self.queue_sort.name),
                    _one_line(err),
                )
                _debug_traceback(self.queue_sort.name, "QueueSort")
            return _priority_sort_less(a, b)

    def run_pre_enqueue_plugins(self, pod: PodInfo) -> Status:
        """Upstream's queue ``runPreEnqueuePlugins``: the extension point's duration always, each
        plugin's for a sample of runs (its own draw, as the queue's ``shouldRecordMetric``)."""
        start = time.perf_counter()
        record = self.metrics is not None and self.metrics.sample_plugin_metrics()
        for p in self.points.pre_enqueue:
            s = self._timed_call(record, p, "PreEnqueue", p.pre_enqueue, pod)
            if not s.is_success():
                if not s.is_rejected():
                    s = Status(Code.ERROR, f"running PreEnqueue plugin {_q(p.name)}: {s.message()}", error=s.error)
                s.plugin = p.name
                self._observe("PreEnqueue", s, start)
                return s
        ok = Status(Code.SUCCESS)
        self._observe("PreEnqueue", ok, start)
        return ok

    # ------------------------------------------------------------------------------------------
    # scheduling cycle
    # ------------------------------------------------------------------------------------------
    def run_pre_filter_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Upstream ``RunPreFilterPlugins``: the merged node narrowing, the status, and the plugins
        whose results narrowed the nodes (a rejecting plugin is recorded on the status)."""
        start = time.perf_counter()
        result: PreFilterResult | None = None
        skip: set[str] = set()
        returned: Status | None = None
        narrowing_plugins: list[str] = []
        for p in self.points.pre_filter:
            r, s = self._call_pair(p, "PreFilter", p.pre_filter, state, pod, nodes)
            if s.is_skip():
                skip.add(p.name)
                continue
            if not s.is_success():
                s.plugin = p.name
                if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    # Preemption cannot help: no need to run the other PreFilters.
                    state.skip_filter_plugins = frozenset(skip)
                    self._observe("PreFilter", s, start)
                    return None, s, set()
                if s.code == Code.UNSCHEDULABLE:
                    # Keep going so that preemption sees the state of every PreFilter (upstream #119770).
                    returned = s
                    continue
                s = Status(
                    Code.ERROR, f"running PreFilter plugin {_q(p.name)}: {s.message()}", error=s.error, plugin=p.name
                )
                state.skip_filter_plugins = frozenset(skip)
                self._observe("PreFilter", s, start)
                return None, s, set()
            if r is not None and not r.all_nodes():
                narrowing_plugins.append(p.name)
                result = r if result is None else result.merge(r)
                if not result.node_names:
                    # upstream prints sets.List(pluginsWithNodes): the names sorted.
                    names = sorted(narrowing_plugins)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg, plugin=p.name)
                    state.skip_filter_plugins = frozenset(skip)
                    self._observe("PreFilter", st, start)
                    return result, st, set(narrowing_plugins)
        state.skip_filter_plugins = frozenset(skip)
        status = returned or Status(Code.SUCCESS)
        self._observe("PreFilter", status, start)
        return result, status, set(narrowing_plugins)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Upstream ``RunPreFilterExtensionAddPod``: AddPod of every PreFilter plugin that has
        extensions and was not skipped (plugins without extensions are neither called nor timed,
        as upstream; preemption's dry run calls this for every victim of every node)."""
        return self._run_pre_filter_extension(state, pod, pod_to_add, node_info, add=True)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Upstream ``RunPreFilterExtensionRemovePod`` (see the AddPod form)."""
        return self._run_pre_filter_extension(state, pod, pod_to_remove, node_info, add=False)

    def _active_extensions(
        self, skip: frozenset[str]
    ) -> tuple[tuple[PreFilterPlugin, PreFilterExtensions], ...] | None:
        """The (plugin, extensions) pairs not skipped, in order; None when some plugin's
        ``pre_filter_extensions`` raises (then each call reports it)."""
        got = self._extensions_by_skip.get(skip)
        if got is not None:
            return got
        pairs = []
        for p in self.points.pre_filter:
            if p.name in skip:
                continue
            try:
                ext = p.pre_filter_extensions()
            except Exception:
                return None
            if ext is not None:
                pairs.append((p, ext))
        if len(self._extensions_by_skip) >= 64:
            self._extensions_by_skip.clear()
        got = self._extensions_by_skip[skip] = tuple(pairs)
        return got

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether some PreFilter plugin of the cycle has AddPod/RemovePod: else nothing but the
        Filter plugins reads a copy of the CycleState made for a node (nominated pods, dry runs)."""
        skip = frozenset(state.skip_filter_plugins)
        return self._active_extensions(skip) != ()

    def active_filter_plugins(self, state: CycleState) -> tuple[FilterPlugin, ...]:
        """The Filter plugins of the cycle, without those whose PreFilter returned Skip."""
        skip = frozenset(state.skip_filter_plugins)
        got = self._filters_by_skip.get(skip)
        if got is None:
            if len(self._filters_by_skip) >= 64:
                self._filters_by_skip.clear()
            got = self._filters_by_skip[skip] = tuple(p for p in self._filters.all if p.name not in skip)
        return got

    def _run_pre_filter_extension(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo, *, add: bool
    ) -> Status:
        point, verb = ("PreFilterExtensionAddPod", "AddPod") if add else ("PreFilterExtensionRemovePod", "RemovePod")
        skip = frozenset(state.skip_filter_plugins)
        pairs = self._active_extensions(skip)
        if pairs is not None:
            record = state.record_plugin_metrics
            for p, ext in pairs:
                fn = ext.add_pod if add else ext.remove_pod
                s = self._timed_call(record, p, point, fn, state, pod, other, node_info)
                if not s.is_success():
                    return Status(
                        Code.ERROR, f"running {verb} on PreFilter plugin {_q(p.name)}: {s.message()}", plugin=p.name
                    )
            return Status(Code.SUCCESS)
        for p in self.points.pre_filter:
            if p.name in skip:
                continue
            try:
                maybe = p.pre_filter_extensions()
            except Exception as err:
                s = self._exception_status(p, point, err)
            else:
                if maybe is None:
                    continue
                fn = maybe.add_pod if add else maybe.remove_pod
                s = self._timed_call(state.record_plugin_metrics, p, point, fn, state, pod, other, node_info)
            if not s.is_success():
                return Status(
                    Code.ERROR, f"running {verb} on PreFilter plugin {_q(p.name)}: {s.message()}", plugin=p.name
                )
        return Status(Code.SUCCESS)

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status:
        """Upstream ``RunFilterPlugins``: every Filter plugin in order on one node, stopping at the
        first failure (the reference chain the batch forms agree with)."""
        return run_filter_plugins(self.active_filter_plugins(state), state, pod, node_info)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, nominated: Sequence[PodInfo] = ()
    ) -> Status:
        """Upstream ``RunFilterPluginsWithNominatedPods`` on one node: the filters with the
        nominated pods of at least the pod's priority added, then (if any) without them."""
        if not nominated:  # the common case, in preemption's dry runs above all
            return run_filter_plugins(self.active_filter_plugins(state), state, pod, node_info)
        return run_filter_plugins_with_nominated_pods(
            self.active_filter_plugins(state), self.run_pre_filter_extension_add_pod, state, pod, node_info,
            nominated, clone_state=self.has_pre_filter_extensions(state),
        )

    def node_filter(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: npt.NDArray[np.intp]
    ) -> NodeFilter:
        """The scheduling cycle's Filter over ``rows`` of the snapshot: the batch forms of
        ``run_filter_plugins_with_nominated_pods`` (framework/filtering.py)."""
        return NodeFilter(
            self._filters, self.run_pre_filter_extension_add_pod, state, pod, snapshot, rows,
            active=self.active_filter_plugins(state), clone_state=self.has_pre_filter_extensions(state),
        )

    @property
    def filter_plugins(self) -> tuple[FilterPlugin, ...]:
        """The Filter plugins in order (``kubesched explain`` runs each on each node)."""
        return self._filters.all

    def run_post_filter_plugins(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        start = time.perf_counter()
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        for p in self.points.post_filter:
            r: PostFilterResult | None = None

            def call(p: PostFilterPlugin = p) -> StatusLike:
                nonlocal r
                r, st = p.post_filter(state, pod, filtered_node_status)
                return st

            s = self._timed_call(state.record_plugin_metrics, p, "PostFilter", call)
            if s.is_success() or s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                s.plugin = p.name
                self._observe("PostFilter", s, start)
                return r, s
            if not s.is_rejected():
                # Anything but Success or a rejection is an Error, and its result is dropped.
                err = Status(Code.ERROR, s.message(), error=s.error, plugin=p.name)
                self._observe("PostFilter", err, start)
                return None, err
            ni = r.nominating_info if r is not None else None
            if ni is not None and ni.mode != NominatingMode.NO_OVERRIDE:
                result = r  # the last meaningful (non-noop) result, as upstream
            reasons.extend(s.reasons)
            rejector = rejector or p.name
        status = Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)
        self._observe("PostFilter", status, start)
        return result, status

    def run_pre_score_plugins(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        start = time.perf_counter()
        skip: set[str] = set()
        for p in self.points.pre_score:
            s = self._call(p, "PreScore", p.pre_score, state, pod, nodes)
            if s.is_skip():
                skip.add(p.name)
                continue
            if not s.is_success():
                st = Status(Code.ERROR, f"running PreScore plugin {_q(p.name)}: {s.message()}", plugin=p.name)
                state.skip_score_plugins = frozenset(skip)
                self._observe("PreScore", st, start)
                return st
        state.skip_score_plugins = frozenset(skip)
        ok = Status(Code.SUCCESS)
        self._observe("PreScore", ok, start)
        return ok

    def run_score_plugins(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        snapshot: Snapshot | None = None,
        indices: npt.NDArray[np.intp] | None = None,
    ) -> ScoreResult | Status:
        """Score, normalise and weight; scores outside [0, 100] after normalisation are an Error.

        As upstream: every plugin's raw scores first, then every normaliser, then the weights."""
        start = time.perf_counter()
        names = names_of(nodes)
        raw: dict[str, npt.NDArray[np.int64]] = {}
        for p in self.points.score:
            if p.name in state.skip_score_plugins:
                continue
            try:
                batch = self._batch_score.get(p.name)
                if batch is not None and snapshot is not None and indices is not None:
                    got = batch.score_batch(state, pod, snapshot, indices)
                    why = _bad_scores(got, len(nodes))
                    if why is not None:
                        return self._score_error(p.name, why, start, "score")
                    scores = np.asarray(got, dtype=np.int64)
                else:
                    scores = np.empty(len(nodes), dtype=np.int64)
                    for i, ni in enumerate(nodes):
                        value, st = p.score(state, pod, ni)
                        if st is not None and not st.is_success():
                            return self._score_error(p.name, st.message(), start, "score")
                        if type(value) is not int and (why := _bad_score(value)) is not None:
                            return self._score_error(p.name, why, start, "score")
                        scores[i] = value
            except Exception as err:
                _debug_traceback(p.name, "Score")
                return self._score_error(p.name, _one_line(err), start, "score")
            raw[p.name] = scores
        res = self._normalize_scores(state, pod, names, raw, start)
        if isinstance(res, ScoreResult):
            self._observe("Score", Status(Code.SUCCESS), start)
        return res

    def run_raw_score_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> dict[str, int] | Status:
        """Upstream ``RunRawScorePlugins`` (v1.37): each non-skipped Score plugin's raw score of one
        node (OpportunisticBatching re-scores the previous pod's node with it)."""
        out: dict[str, int] = {}
        for p in self.points.score:
            if p.name in state.skip_score_plugins:
                continue
            try:
                value, st = p.score(state, pod, node)
            except Exception as err:
                _debug_traceback(p.name, "Score")
                return Status(Code.ERROR, f"plugin {_q(p.name)} failed with: {_one_line(err)}", plugin=p.name)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f"plugin {_q(p.name)} failed with: {st.message()}", plugin=p.name)
            if type(value) is not int and (why := _bad_score(value)) is not None:
                return Status(Code.ERROR, f"plugin {_q(p.name)} failed with: {why}", plugin=p.name)
            out[p.name] = int(value)
        return out

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, names: Sequence[str], raw: Mapping[str, npt.NDArray[np.int64]]
    ) -> ScoreResult | Status:
        """Upstream ``NormalizeScores`` (v1.37): normalise and weight raw scores computed earlier."""
        return self._normalize_scores(state, pod, names, raw, None)

    def _normalize_scores(
        self,
        state: CycleState,
        pod: PodInfo,
        names: Sequence[str],
        raw_scores: Mapping[str, npt.NDArray[np.int64]],
        start: float | None,
    ) -> ScoreResult | Status:
        raw: dict[str, npt.NDArray[np.int64]] = {}
        normalized: dict[str, npt.NDArray[np.int64]] = {}
        n = len(names)
        # Each plugin's normalised scores land in a row of one array, weighted and summed at the end.
        every = np.empty((len(self.points.score), n), dtype=np.int64)
        weights: list[int] = []
        for p in self.points.score:
            if p.name in state.skip_score_plugins:
                continue
            scores = raw_scores.get(p.name, np.zeros(n, dtype=np.int64))
            raw[p.name] = scores
            try:
                ext = p.score_extensions()
            except Exception as err:
                _debug_traceback(p.name, "ScoreExtensions")
                return self._score_error(p.name, _one_line(err), start, "normalize")
            if ext is not None:
                batch_norm = getattr(ext, "normalize_score_batch", None)
                scores = scores.copy()  # a normaliser may rewrite its input in place
                try:
                    if callable(batch_norm):
                        norm_start = time.perf_counter()
                        got = batch_norm(state, pod, scores)
                        self._time_plugin(state, p, "ScoreExtensionNormalize", "Success", norm_start)
                        why = _bad_scores(got, n)
                        if why is not None:
                            return self._score_error(p.name, why, start, "normalize")
                        scores = np.asarray(got, dtype=np.int64)
                    else:
                        lst = [NodeScore(name, int(v)) for name, v in zip(names, scores, strict=True)]
                        norm_start = time.perf_counter()
                        st = ext.normalize_score(state, pod, lst)
                        self._time_plugin(state, p, "ScoreExtensionNormalize", status_label(st), norm_start)
                        if st is not None and not st.is_success():
                            return self._score_error(p.name, st.message(), start, "normalize")
                        why = next((w for ns in lst if (w := _bad_score(ns.score)) is not None), None)
                        if why is not None:
                            return self._score_error(p.name, why, start, "normalize")
                        scores = np.fromiter((ns.score for ns in lst), dtype=np.int64, count=len(lst))
                except Exception as err:
                    _debug_traceback(p.name, "NormalizeScore")
                    return self._score_error(p.name, _one_line(err), start, "normalize")
            row = len(weights)
            every[row] = scores
            normalized[p.name] = every[row]
            weights.append(self.score_weights[p.name])
        # Upstream applies the weights once every plugin has normalised, checking each plugin's
        # scores in plugin order; one maximum over all of them finds out whether any is out of range
        # (MIN_NODE_SCORE is 0: as unsigned, a negative score is above any maximum), and one product
        # with the weights sums them: 2 numpy calls instead of 3 a plugin (about 10 µs a cycle).
        used = every[: len(weights)]
        if weights and n and int(used.view(np.uint64).max()) > MAX_NODE_SCORE:
            for name, sc in normalized.items():
                out_of_range = (sc < MIN_NODE_SCORE) | (sc > MAX_NODE_SCORE)
                if out_of_range.any():
                    return self._score_error(
                        name,
                        f"returns an invalid score {int(sc[out_of_range][0])}, it should in the range of "
                        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        start,
                        "weight",
                    )
        total = np.einsum("i,ij->j", np.array(weights, dtype=np.int64), used)
        return ScoreResult(names, raw, normalized, dict(self.score_weights), total)

    def _score_error(self, plugin: str, msg: str, start: float | None, what: str) -> Status:
        """Upstream's messages: a failing Score or NormalizeScore, or an out-of-range score."""
        if what == "score":
            text = f"running Score plugins: plugin {_q(plugin)} failed with: {msg}"
        elif what == "normalize":
            text = f"running Normalize on Score plugins: plugin {_q(plugin)} failed with: {msg}"
        else:
            text = f"applying score defaultWeights on Score plugins: plugin {_q(plugin)} {msg}"
        st = Status(Code.ERROR, text, plugin=plugin)
        if start is not None:
            self._observe("Score", st, start)
        return st

    def run_reserve_plugins_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        start = time.perf_counter()
        for p in self.points.reserve:
            s = self._timed_call(state.record_plugin_metrics, p, "Reserve", p.reserve, state, pod, node_name)
            if not s.is_success():
                s.plugin = p.name
                if not s.is_rejected():
                    s = Status(Code.ERROR, f"running Reserve plugin {_q(p.name)}: {s.message()}", plugin=p.name)
                self._observe("Reserve", s, start)
                return s
        ok = Status(Code.SUCCESS)
        self._observe("Reserve", ok, start)
        return ok

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; failures are logged, never raised."""
        start = time.perf_counter()
        for p in reversed(self.points.reserve):
            plugin_start = time.perf_counter()
            try:
                p.unreserve(state, pod, node_name)
            except Exception as err:  # upstream's Unreserve returns nothing: only logged
                log.warning("plugin %s failed at Unreserve of pod %s: %s", _q(p.name), pod.key, _one_line(err))
                _debug_traceback(p.name, "Unreserve")
            self._time_plugin(state, p, "Unreserve", "Success", plugin_start)
        self._observe("Unreserve", Status(Code.SUCCESS), start)

    def run_permit_plugins(self, state: CycleState, pod: PodInfo, node_name: str, clock: Clock) -> Status:
        """Success, a rejection, or Wait (a WaitingPod is registered with one timer per plugin).

        A Wait's timeout follows upstream's ``RunPermitPlugins``: above ``maxTimeout`` (15 min) it
        is 15 min, so +inf waits 15 min; zero or negative times out at once, as Go's
        ``time.AfterFunc`` does, and the rejection prints the value ("after waiting -5s"). A
        timeout that is no number at all (NaN, a string) has no Go counterpart: it is this
        plugin's Error for this pod, which backs off like any other."""
        start = time.perf_counter()
        timeouts: dict[str, float] = {}
        for p in self.points.permit:
            timeout: Any = 0.0

            def call(p: PermitPlugin = p) -> StatusLike:
                nonlocal timeout
                st, timeout = p.permit(state, pod, node_name)
                return st

            s = self._timed_call(state.record_plugin_metrics, p, "Permit", call)
            if s.is_success():
                continue
            if s.is_wait():
                wait = _permit_timeout(timeout)
                if wait is not None:
                    timeouts[p.name] = min(wait, MAX_PERMIT_TIMEOUT)
                    continue
                s = Status(Code.ERROR, f"invalid timeout {timeout!r:.60}: not a duration in seconds")
            s.plugin = p.name
            if not s.is_rejected():
                s = Status(Code.ERROR, f"running Permit plugin {_q(p.name)}: {s.message()}", plugin=p.name)
            self._observe("Permit", s, start)
            return s
        if timeouts:
            self.waiting_pods.add(WaitingPod(pod, node_name, timeouts, clock))
            st = Status(Code.WAIT, f"one or more plugins asked to wait and no plugin rejected pod {_q(pod.name)}")
            self._observe("Permit", st, start)
            return st
        ok = Status(Code.SUCCESS)
        self._observe("Permit", ok, start)
        return ok

    def run_pre_bind_pre_flights(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Upstream ``RunPreBindPreFlights``: Success when some PreBind plugin will work for the
        pod, Skip when none will (those plugins' PreBind is then skipped), an Error naming the
        plugin otherwise. A plugin without ``pre_bind_pre_flight`` counts as Success."""
        start = time.perf_counter()
        skip: set[str] = set()
        returning = Status(Code.SKIP)
        for p in self.points.pre_bind:
            flight = getattr(p, "pre_bind_pre_flight", None)
            if not callable(flight):
                s = Status(Code.SUCCESS)
            else:
                s = self._timed_call(state.record_plugin_metrics, p, "PreBindPreFlight", flight, state, pod, node_name)
            if s.code == Code.ERROR:
                err = Status(Code.ERROR, f"running PreBindPreFlight {_q(p.name)}: {s.message()}", error=s.error,
                             plugin=p.name)
                self._observe("PreBindPreFlight", err, start)
                return err
            if s.is_success():
                returning = Status(Code.SUCCESS)
            elif s.is_skip():
                skip.add(p.name)
            else:
                err = Status(
                    Code.ERROR,
                    f"PreBindPreFlight {p.name} returned {_q(s.code.upstream_name)}, which is unsupported. "
                    "It is supposed to return Success, Skip, or Error status",
                    plugin=p.name,
                )
                self._observe("PreBindPreFlight", err, start)
                return err
        state.skip_pre_bind_plugins = frozenset(skip)
        self._observe("PreBindPreFlight", returning, start)
        return returning

    def will_wait_on_permit(self, pod: PodInfo) -> bool:
        """Upstream ``WillWaitOnPermit``: the pod is held at Permit."""
        return self.waiting_pods.get(pod.uid) is not None

    def run_pre_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        start = time.perf_counter()
        for p in self.points.pre_bind:
            if p.name in state.skip_pre_bind_plugins:
                continue
            s = self._timed_call(state.record_plugin_metrics, p, "PreBind", p.pre_bind, state, pod, node_name)
            if s.is_skip():
                continue
            if not s.is_success():
                s.plugin = p.name
                if s.code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE and not s.is_rejected():
                    s = Status(Code.ERROR, f"running PreBind plugin {_q(p.name)}: {s.message()}", plugin=p.name)
                self._observe("PreBind", s, start)
                return s
        ok = Status(Code.SUCCESS)
        self._observe("PreBind", ok, start)
        return ok

    def run_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        start = time.perf_counter()
        s = Status(Code.SKIP)
        for p in self.points.bind:
            s = self._timed_call(state.record_plugin_metrics, p, "Bind", p.bind, state, pod, node_name)
            if s.is_skip():
                continue
            if not s.is_success():
                s.plugin = p.name
                if not s.is_rejected():
                    s = Status(
                        Code.ERROR, f"running Bind plugin {_q(p.name)}: {s.message()}", error=s.error, plugin=p.name
                    )
            break
        self._observe("Bind", s, start)
        return s

    def run_post_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        start = time.perf_counter()
        for p in self.points.post_bind:
            plugin_start = time.perf_counter()
            try:
                p.post_bind(state, pod, node_name)
            except Exception as err:  # upstream's PostBind returns nothing: only logged
                log.warning("plugin %s failed at PostBind of pod %s: %s", _q(p.name), pod.key, _one_line(err))
                _debug_traceback(p.name, "PostBind")
            self._time_plugin(state, p, "PostBind", "Success", plugin_start)
        self._observe("PostBind", Status(Code.SUCCESS), start)

    # ------------------------------------------------------------------------------------------
    # waiting pods
    # ------------------------------------------------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def has_filter_plugins(self) -> bool:
        return bool(self.points.filter)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.points.post_filter)

    def has_score_plugins(self) -> bool:
        return bool(self.points.score)


__all__ = [
    "EXTENSION_POINTS",
    "IMPLIED_PRE_ENQUEUE",
    "UNSCHEDULED_POD_ADD_EVENTS",
    "ExtensionPoints",
    "FilterOutcome",
    "Framework",
    "FrameworkError",
    "NodeFilter",
    "PluginRef",
    "ScoreResult",
]
