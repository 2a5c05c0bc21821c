"""The Filter extension point: upstream's ``RunFilterPluginsWithNominatedPods`` and its batch forms.

Upstream (``pkg/scheduler/framework/runtime/framework.go``, v1.35) has one Filter entry point for
the scheduling cycle, ``RunFilterPluginsWithNominatedPods``, called once per node by
``findNodesThatPassFilters``; it runs ``RunFilterPlugins`` (every Filter plugin in order, stopping
at the first failure) twice when higher-priority pods are nominated to the node.

Here the same entry point has a batch form for many nodes, :class:`NodeFilter`, built once per
cycle by ``Framework.node_filter``: the plugins with a ``filter_batch`` answer for every candidate
at once (a mask), and ``NodeFilter.run_filter_plugins_with_nominated_pods`` runs the rest on one
node, or the whole chain with the nominated pods added. The reasons of the nodes a mask rejected
are computed only when the pod fits nowhere (``NodeFilter.statuses_coded``), with exactly the
statuses the per-node chain gives. ``Framework.run_filter_plugins`` and
``Framework.run_filter_plugins_with_nominated_pods`` are the per-node forms (tests, preemption).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .interfaces import BatchFilterPlugin, FilterPlugin
from .plugin_calls import call_plugin, debug_traceback, quote
from .status import Code, Status
from .types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from .snapshot import Snapshot

#: ``Framework.run_pre_filter_extension_add_pod``: a nominated pod added to a node copy.
AddPod = Callable[[CycleState, PodInfo, PodInfo, NodeInfo], Status]

_OK = Status(Code.SUCCESS)


@dataclass
class FilterOutcome:
    """Per-plugin statuses of one node when every Filter plugin runs (``kubesched explain``)."""

    statuses: dict[str, Status] = field(default_factory=dict)

    def first_failure(self) -> Status | None:
        for s in self.statuses.values():
            if not s.is_success() and not s.is_skip():
                return s
        return None


@dataclass(frozen=True)
class FilterPlugins:
    """A profile's Filter plugins in order, split once into those with a batch form and the
    others (``isinstance`` against a runtime Protocol is too slow for every cycle)."""

    all: tuple[FilterPlugin, ...]
    batch: tuple[BatchFilterPlugin, ...]
    per_node: tuple[FilterPlugin, ...]

    @classmethod
    def of(cls, plugins: Sequence[FilterPlugin]) -> FilterPlugins:
        batch = tuple(p for p in plugins if isinstance(p, BatchFilterPlugin))
        return cls(tuple(plugins), batch, tuple(p for p in plugins if p not in batch))


def filter_rejection(plugin: FilterPlugin, s: Status) -> Status:
    """A Filter plugin's non-Success status as the framework reports it: a rejection names the
    plugin; anything else is an Error (Filter plugins may only return Success or a rejection)."""
    s.plugin = plugin.name
    if not s.is_rejected():
        return Status(
            Code.ERROR, f"running {quote(plugin.name)} filter plugin: {s.message()}", error=s.error, plugin=plugin.name
        )
    return s


def run_filter_plugins(
    plugins: Sequence[FilterPlugin], state: CycleState, pod: PodInfo, node_info: NodeInfo
) -> Status:
    """Upstream ``RunFilterPlugins``: ``plugins`` in order on one node, stopping at the first failure."""
    skip = state.skip_filter_plugins
    for p in plugins:
        if p.name in skip:
            continue
        s = call_plugin(p, "Filter", p.filter, state, pod, node_info)
        if not s.is_success():
            return filter_rejection(p, s)
    return Status(Code.SUCCESS)  # a new one: callers may set its plugin


def run_filter_plugins_with_nominated_pods(
    plugins: Sequence[FilterPlugin],
    add_pod: AddPod,
    state: CycleState,
    pod: PodInfo,
    node_info: NodeInfo,
    nominated: Sequence[PodInfo],
    *,
    clone_state: bool = True,
) -> Status:
    """Upstream ``RunFilterPluginsWithNominatedPods``: the filters with the nominated pods of at
    least the pod's priority added to a copy of the node, then (if there were any) without them.

    ``clone_state=False``: no PreFilter plugin of the cycle has AddPod, so the copy of the
    CycleState upstream makes would only be read: the state itself is read instead."""
    relevant = [p for p in nominated if p.uid != pod.uid and p.priority >= pod.priority]
    if relevant:
        st2 = state.clone() if clone_state else state
        ni2 = node_info.clone()
        for np_ in relevant:
            ni2.add_pod(np_)
            s = add_pod(st2, pod, np_, ni2)
            if not s.is_success():
                return s
        s = run_filter_plugins(plugins, st2, pod, ni2)
        if not s.is_success():
            return s
    return run_filter_plugins(plugins, state, pod, node_info)


def all_filter_statuses(
    plugins: Sequence[FilterPlugin], state: CycleState, pod: PodInfo, node_info: NodeInfo
) -> FilterOutcome:
    """Every Filter plugin, not stopping at failures: what ``kubesched explain`` shows."""
    out = FilterOutcome()
    for p in plugins:
        if p.name in state.skip_filter_plugins:
            out.statuses[p.name] = Status(Code.SKIP)
            continue
        s = call_plugin(p, "Filter", p.filter, state, pod, node_info)
        s.plugin = p.name
        out.statuses[p.name] = s
    return out


class NodeFilter:
    """One scheduling cycle's Filter over candidate rows of the snapshot (see the module docstring).

    ``mask[k]`` says whether the batch forms accept ``rows[k]``; ``error`` is set when one of them
    failed (the cycle ends with it). Built by ``Framework.node_filter``."""

    __slots__ = ("_active", "_add_pod", "_clone_state", "_filters", "_per_node", "_pod", "_snapshot", "_state",
                 "error", "mask")

    def __init__(
        self,
        filters: FilterPlugins,
        add_pod: AddPod,
        state: CycleState,
        pod: PodInfo,
        snapshot: Snapshot,
        rows: npt.NDArray[np.intp],
        *,
        active: Sequence[FilterPlugin] | None = None,
        clone_state: bool = True,
    ) -> None:
        """``active``: the plugins of ``filters.all`` the cycle did not skip (all of them checked
        against the skip set when not given); ``clone_state``: see
        :func:`run_filter_plugins_with_nominated_pods`."""
        self._filters = filters
        self._active = tuple(active) if active is not None else filters.all
        self._clone_state = clone_state
        self._add_pod = add_pod
        self._state = state
        self._pod = pod
        self._snapshot = snapshot
        skip = state.skip_filter_plugins
        self._per_node = tuple(p for p in filters.per_node if p.name not in skip) if skip else filters.per_node
        self.error: Status | None = None
        # The first mask a plugin returns is taken as it is (never written to: a plugin may keep
        # it), the others combined into new arrays; all ones only when no plugin returned one.
        mask: npt.NDArray[np.bool_] | None = None
        for p in filters.batch:
            if p.name in skip:
                continue
            try:
                m = p.filter_batch(state, pod, snapshot, rows)
                if m is None:
                    continue
                if mask is not None:
                    mask = mask & m
                elif type(m) is np.ndarray and m.dtype == np.bool_ and m.shape == rows.shape:
                    mask = m
                else:  # anything else as ``ones &= m`` takes it (or fails on it)
                    mask = np.ones(len(rows), dtype=np.bool_)
                    mask &= m
            except Exception as err:
                debug_traceback(p.name, "Filter (batch)")
                self.error = Status(
                    Code.ERROR, f"running {quote(p.name)} filter plugin: {err}", error=err, plugin=p.name
                )
                self.mask = np.ones(len(rows), dtype=np.bool_) if mask is None else mask
                return
        self.mask = np.ones(len(rows), dtype=np.bool_) if mask is None else mask

    @property
    def has_per_node_plugins(self) -> bool:
        """Whether some plugin this cycle runs has no batch form (then the walk goes node by node)."""
        return bool(self._per_node)

    def run_filter_plugins_with_nominated_pods(self, node_info: NodeInfo, nominated: Sequence[PodInfo]) -> Status:
        """Upstream's entry point on one node the masks accepted, or on any node with nominated
        pods (then the whole chain runs, with and without them, as upstream)."""
        if nominated:
            return run_filter_plugins_with_nominated_pods(
                self._active, self._add_pod, self._state, self._pod, node_info, nominated,
                clone_state=self._clone_state,
            )
        if self._per_node:
            return run_filter_plugins(self._per_node, self._state, self._pod, node_info)
        return _OK

    def statuses(self, rows: Sequence[int] | npt.NDArray[np.intp]) -> list[Status]:
        """The status :func:`run_filter_plugins` gives each node ``snapshot.node_infos[r]`` of ``rows``."""
        codes, statuses = self.statuses_coded(rows)
        return list(map(statuses.__getitem__, codes.tolist()))

    def statuses_coded(
        self, rows: Sequence[int] | npt.NDArray[np.intp]
    ) -> tuple[npt.NDArray[np.int64], list[Status]]:
        """:meth:`statuses` as ``(codes, statuses)``: the status of ``rows[k]`` is
        ``statuses[codes[k]]``, nodes rejected for the same reason sharing one Status (a caller
        counts them per reason without visiting every node). Computed plugin by plugin over the
        nodes still passing: a plugin with ``filter_batch_statuses`` answers for all of them at
        once, the others run node by node (where a batch mask says which pass, only on the rest).

        The scheduler explains a pod that fits nowhere with it: on a large cluster, calling every
        plugin on every node was most of the cost of each failed attempt."""
        state, pod, snapshot = self._state, self._pod, self._snapshot
        nodes = snapshot.node_infos
        row_array = np.asarray(rows, dtype=np.intp)
        statuses: list[Status] = [Status(Code.SUCCESS)]
        codes = np.zeros(len(row_array), dtype=np.int64)
        pending = np.arange(len(row_array))
        batch = self._filters.batch
        for p in self._filters.all:
            if not len(pending):
                break
            if p.name in state.skip_filter_plugins:
                continue
            batch_statuses = getattr(p, "filter_batch_statuses", None)
            if not callable(batch_statuses):
                candidates = pending
                passed = np.zeros(0, dtype=np.intp)
                mask_fn = getattr(p, "filter_batch", None) if p in batch else None
                if mask_fn is not None:
                    # The batch mask tells which nodes pass; only the others need the per-node
                    # call, for their status (a node it rejects that the per-node form accepts
                    # stays pending, as the reference says).
                    try:
                        mask = mask_fn(state, pod, snapshot, row_array[pending])
                    except Exception:
                        mask = np.zeros(len(pending), dtype=np.bool_)
                    if mask is None:
                        continue
                    passed, candidates = pending[mask], pending[~mask]
                still: list[int] = passed.tolist()
                one = (p,)
                for k in candidates.tolist():
                    s = run_filter_plugins(one, state, pod, nodes[int(row_array[k])])
                    if s.is_success():
                        still.append(k)
                    else:
                        codes[k] = len(statuses)
                        statuses.append(s)
                pending = np.array(sorted(still), dtype=np.intp)
                continue
            try:
                got, answers = batch_statuses(state, pod, snapshot, row_array[pending])
                got = np.asarray(got, dtype=np.int64)
                rejected = got >= 0
                codes[pending[rejected]] = got[rejected] + len(statuses)
                statuses.extend(filter_rejection(p, s) for s in answers)
            except Exception as err:
                debug_traceback(p.name, "Filter (batch statuses)")
                error = Status(Code.ERROR, f"running {quote(p.name)} filter plugin: {err}", error=err, plugin=p.name)
                codes[pending] = len(statuses)
                statuses.append(error)
                return codes, statuses
            pending = pending[~rejected]
        return codes, statuses


__all__ = [
    "FilterOutcome",
    "FilterPlugins",
    "NodeFilter",
    "all_filter_statuses",
    "filter_rejection",
    "run_filter_plugins",
    "run_filter_plugins_with_nominated_pods",
]
