"""NodeDeclaredFeatures: a pod goes only to nodes declaring the features it needs
(upstream ``pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``, v1.36.3
and v1.37.2).

A kubelet lists the features it supports in ``status.declaredFeatures`` (gate NodeDeclaredFeatures:
Alpha and off in v1.35, on from v1.36, GA in v1.37); a pod using one (a RestartAllContainers restart
rule, host network with a user namespace, bind mount options from v1.37) must not land on an older
or differently configured node. Most pods need none: PreFilter returns Skip for them, so ordinary
pods pay one cached scan of their spec and no Filter call.

v1.35 registers the plugin but its factory returns it disabled while the gate is off (its default):
enabled in a profile, it skips every pod and registers no events, and so does kubesched's under
1.35. Not ported: SignPod (kubesched has no opportunistic batching yet) and the deferred-resize skip
of v1.37 (gate InPlacePodVerticalScalingSchedulerPreemption, Alpha and off).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from kubesched.config.releases import DEFAULT_RELEASE, NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE, SPLIT_POD_EVENTS
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
)
from kubesched.framework.signature import SignFragment
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, JSONValue, NodeInfo, PodInfo, PreFilterResult, pod_uid
from kubesched.plugins import names
from kubesched.plugins.jsonview import as_object, get_obj, require_object

from .features import framework_for
from .featureset import FeatureFramework, FeatureSet, Version, parse_version

__all__ = ["ERR_REASON_UNSATISFIED_REQUIREMENTS", "PRE_FILTER_STATE_KEY", "NodeDeclaredFeatures"]

#: Upstream ``preFilterStateKey``.
PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_DECLARED_FEATURES
#: Upstream ``errReasonUnsatisfiedRequirements`` (v1.36.3, v1.37.2).
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
_CACHE_KEY = names.NODE_DECLARED_FEATURES + "/requirements"
#: Distinct specs remembered (a workload has a few).
_BY_SPEC_MAX = 1024


class _PreFilterState:
    """The pod's required features, from PreFilter to Filter; immutable, so clones share it."""

    __slots__ = ("reqs",)

    def __init__(self, reqs: FeatureSet) -> None:
        self.reqs = reqs

    def clone(self) -> _PreFilterState:
        return self


def declared_features(node: JSONObj | None) -> list[str]:
    """The node's ``status.declaredFeatures`` (names only; anything else reads as none)."""
    value = get_obj(node or {}, "status").get("declaredFeatures")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Rejects nodes lacking a declared feature the pod needs, keyed on the release's registry."""

    name = names.NODE_DECLARED_FEATURES
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        release = handle.release if handle is not None else DEFAULT_RELEASE
        # Upstream New: the gate (off in 1.35, on from 1.36) decides; disabled, the plugin is inert.
        self._enabled = release.has(NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE)
        self._framework: FeatureFramework | None = framework_for(release) if self._enabled else None
        #: Upstream reads the binary's version (``version.Get()``): the release's patch release.
        self._version: Version | None = parse_version(release.binary) if self._enabled else None
        #: v1.37 registers the pod's own updates as TargetPod events; v1.36 as Pod updates, which
        #: its hint narrows to the pod by UID.
        self._target_pod_events = release.has(SPLIT_POD_EVENTS)
        #: Inferred requirements by the repr of the spec they were inferred from.
        self._by_spec: dict[str, FeatureSet] = {}

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend only on the features the pod needs (OpportunisticBatching)."""
        if not self._enabled:
            return [SignFragment(sign.FEATURES_SIGNER, [])], None
        try:
            reqs = self._requirements(pod)
        except ValueError as err:
            return [], Status.as_status(err)
        return [SignFragment(sign.FEATURES_SIGNER, [reqs.bits, reqs.size])], None

    @classmethod
    def with_framework(
        cls,
        framework: FeatureFramework,
        version: Version | None,
        *,
        enabled: bool = True,
        target_pod_events: bool = True,
    ) -> NodeDeclaredFeatures:
        """The plugin over another registry and version, as upstream's tests build the struct
        (``target_pod_events``: v1.37's registration, False for v1.36's)."""
        pl = cls()
        pl._enabled, pl._framework, pl._version = enabled, framework, version
        pl._target_pod_events = target_pod_events
        return pl

    # -- PreFilter ---------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self._enabled:
            return None, Status(Code.SKIP)
        try:
            reqs = self._requirements(pod)
        except ValueError as err:
            return None, Status.as_status(err)
        if reqs.is_empty():
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(reqs))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _requirements(self, pod: PodInfo) -> FeatureSet:
        """The pod's required features, inferred once per pod version (``PodInfo.cache`` is
        dropped when the pod changes), so a pod retried for hours costs one scan."""
        cached = pod.cache.get(_CACHE_KEY)
        if isinstance(cached, FeatureSet):
            return cached
        # The inference reads the spec only: new pods of a known spec (and status) reuse its
        # answer; about 20 µs -> 1 µs a new pod.
        key = pod.spec_key
        reqs = self._by_spec.get(key) if key is not None else None
        if reqs is None:
            reqs = self._infer(pod.pod)
            if key is not None:
                if len(self._by_spec) >= _BY_SPEC_MAX:
                    self._by_spec.clear()
                self._by_spec[key] = reqs
        pod.cache[_CACHE_KEY] = reqs
        return reqs

    def _infer(self, pod: JSONObj) -> FeatureSet:
        """Upstream ``InferForPodScheduling`` on the pod's spec (``ValueError`` as its error)."""
        if self._framework is None:
            raise ValueError("NodeDeclaredFeatures is disabled")
        return self._framework.infer_for_pod_scheduling(get_obj(pod, "spec"), self._version)

    # -- Filter ------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not self._enabled or self._framework is None:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found')
        # Upstream maps the node's features in NodeInfo.SetNode (TryMap over the same registry);
        # only pods with requirements get here, so mapping per call costs ordinary pods nothing.
        node_features = self._framework.try_map(declared_features(node_info.node))
        try:
            if not s.reqs.is_subset(node_features):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
        except ValueError as err:
            return Status.as_status(err)
        return None

    # -- EnqueueExtensions -------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node added or declaring other features; the pod's own update (v1.37: TargetPod/Update;
        v1.36: Pod/Update, with a UID check in the hint)."""
        if not self._enabled:
            return []
        pod_resource = EventResource.TARGET_POD if self._target_pod_events else EventResource.POD
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(pod_resource, ActionType.UPDATE),
                self.is_schedulable_after_target_pod_update,
            ),
        ]

    def is_schedulable_after_target_pod_update(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Queue when the pod's own update changed the features it needs."""
        old_pod = as_object(old, "Pod")
        new_pod = require_object(new, "Pod")
        if not self._target_pod_events and pod_uid(new_pod) != pod_uid(pod):
            return QueueingHint.QUEUE_SKIP
        old_reqs = self._infer(old_pod or {})
        new_reqs = self._infer(new_pod)
        return QueueingHint.QUEUE_SKIP if new_reqs == old_reqs else QueueingHint.QUEUE

    def is_schedulable_after_node_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Queue for a new node, or one whose ``status.declaredFeatures`` changed (the API server
        keeps the list sorted, so comparing lists compares sets)."""
        old_node = as_object(old, "Node")
        new_node = require_object(new, "Node")
        if old_node is not None and _declared(old_node) == _declared(new_node):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _declared(node: JSONObj) -> JSONValue:
    """The raw ``status.declaredFeatures`` (None when unset), as the hint compares it."""
    return get_obj(node, "status").get("declaredFeatures") or None
