"""NodeAffinity: ``spec.nodeSelector`` and required node affinity filter nodes, preferred terms score
them (upstream ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``).

PreFilter narrows the candidates to the node names a pod pins through ``matchFields`` on
``metadata.name`` (DaemonSet pods), so Filter then runs on those nodes only. The ``addedAffinity``
argument is ANDed with every pod's affinity: its required part rejects nodes with its own reason,
its preferred terms add to every pod's score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Final, cast

import numpy as np
import numpy.typing as npt

from kubesched.api.errors import InvalidObjectError, raise_if_any
from kubesched.api.nodeaffinity import NodeSelector, PreferredSchedulingTerms, RequiredNodeAffinity
from kubesched.config.plugin_args import NodeAffinityArgs
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
    MAX_NODE_SCORE,
    BatchFilterPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    Handle,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
)
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, JSONValue, NodeInfo, NodeScore, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.helper.normalize_score import (
    default_normalize_score,
    default_normalize_score_batch,
)
from kubesched.plugins.jsonview import as_object, get_list, get_obj, get_objs

from .batch import node_selector_mask, preferred_scores, required_mask

PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_AFFINITY
PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_AFFINITY

#: The reason for a pod's node affinity/selector not matching (upstream ``ErrReasonPod``).
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: The reason for the plugin's ``addedAffinity`` not matching (upstream ``errReasonEnforced``).
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: The pod's ``matchFields`` name every term to disjoint node sets (upstream ``errReasonConflict``).
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_OBJECT_NAME_FIELD = "metadata.name"
_PREFERRED_CACHE_KEY = names.NODE_AFFINITY + "/preferred"
_NAMES_CACHE_KEY = names.NODE_AFFINITY + "/node-names"
_NO_SELECTOR: Final[JSONObj] = {}


class _PreFilterState:
    __slots__ = ("required",)

    def __init__(self, required: RequiredNodeAffinity) -> None:
        self.required = required

    def clone(self) -> _PreFilterState:
        return self


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: PreferredSchedulingTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreScoreState:
        return self


def _node_affinity(pod: JSONObj) -> JSONObj | None:
    affinity = get_obj(pod, "spec").get("affinity")
    if not isinstance(affinity, Mapping):
        return None
    na = affinity.get("nodeAffinity")
    return na if isinstance(na, Mapping) else None


def _required_selector(pod: JSONObj) -> JSONObj | None:
    na = _node_affinity(pod)
    if na is None:
        return None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    return req if isinstance(req, Mapping) else None


def pod_preferred_node_affinity(pod: PodInfo) -> PreferredSchedulingTerms | None:
    """``getPodPreferredNodeAffinity``, parsed once per pod; raises InvalidObjectError for bad terms."""
    cached = pod.cache.get(_PREFERRED_CACHE_KEY)
    if cached is None:
        na = _node_affinity(pod.pod)
        terms = None if na is None else na.get("preferredDuringSchedulingIgnoredDuringExecution")
        try:
            cached = (PreferredSchedulingTerms(cast("Sequence[JSONObj]", terms)) if terms is not None else None, None)
        except InvalidObjectError as err:
            cached = (None, err)
        pod.cache[_PREFERRED_CACHE_KEY] = cached
    terms_or_none, error = cached
    if error is not None:
        raise error
    return terms_or_none


def _pinned_node_names(terms: Sequence[JSONValue]) -> set[str] | None:
    """Node names the required terms allow through ``metadata.name In`` fields; None: any node."""
    node_names: set[str] = set()
    for t in terms:
        term_names: set[str] | None = None
        for r in get_objs(t, "matchFields") if isinstance(t, Mapping) else ():
            if r.get("key") == _OBJECT_NAME_FIELD and r.get("operator") == "In":
                # Requirements are ANDed inside a term: intersect.
                s = {str(v) for v in get_list(r, "values")}
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            # A term without a node-name field lets every node through; terms are ORed.
            return None
        node_names |= term_names
    return node_names


class NodeAffinity(
    EnqueueExtensions,
    PreFilterPlugin,
    BatchFilterPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    ScoreExtensions,
):
    name = names.NODE_AFFINITY
    args_type = NodeAffinityArgs

    def __init__(self, args: NodeAffinityArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or NodeAffinityArgs()
        self.handle = handle
        errs = self.args.validate()
        if errs:
            raise ValueError("; ".join(str(e) for e in errs))
        self.added_node_selector: NodeSelector | None = None
        self.added_pref_sched_terms: PreferredSchedulingTerms | None = None
        added = self.args.added_affinity
        if added is not None:
            ns = added.get("requiredDuringSchedulingIgnoredDuringExecution")
            if ns is not None:
                try:
                    self.added_node_selector = NodeSelector(ns)
                except InvalidObjectError as err:
                    raise ValueError(
                        f"parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: {err}"
                    ) from err
            terms = added.get("preferredDuringSchedulingIgnoredDuringExecution")
            if terms:
                try:
                    self.added_pref_sched_terms = PreferredSchedulingTerms(cast("Sequence[JSONObj]", terms))
                except InvalidObjectError as err:
                    raise ValueError(
                        f"parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {err}"
                    ) from err

    # -- PreFilter / Filter -----------------------------------------------------------------------
    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its results depend on the pod's node affinity and node selector (OpportunisticBatching)."""
        selector = pod.spec.get("nodeSelector")
        return [
            SignFragment(sign.NODE_AFFINITY_SIGNER, sign.node_affinity(pod)),
            SignFragment(sign.NODE_SELECTOR_SIGNER, selector if isinstance(selector, Mapping) else None),
        ], None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        required = _required_selector(pod.pod)
        if required is None and self.added_node_selector is None and pod.spec.get("nodeSelector") is None:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.required_node_affinity))
        terms = get_list(required or _NO_SELECTOR, "nodeSelectorTerms")
        if not terms:
            return None, None
        if _NAMES_CACHE_KEY not in pod.cache:
            pod.cache[_NAMES_CACHE_KEY] = _pinned_node_names(terms)
        node_names: set[str] | None = pod.cache[_NAMES_CACHE_KEY]
        if node_names is None:
            return None, None
        if not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return PreFilterResult(set(node_names)), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        node = node_info.node or {}
        if self.added_node_selector is not None and not self.added_node_selector.match(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        s = state.get(PRE_FILTER_STATE_KEY)
        # Without PreFilter (disabled) fall back to the pod's own parse.
        required = s.required if isinstance(s, _PreFilterState) else pod.required_node_affinity
        if not required.match(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        mask = np.ones(len(indices), dtype=np.bool_)
        if self.added_node_selector is not None:
            mask &= node_selector_mask(snapshot, self.added_node_selector, indices)
        s = state.get(PRE_FILTER_STATE_KEY)
        required = s.required if isinstance(s, _PreFilterState) else pod.required_node_affinity
        if mask.any():
            mask &= required_mask(snapshot, required, indices)
        return mask

    # -- PreScore / Score -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            preferred = pod_preferred_node_affinity(pod)
        except InvalidObjectError as err:
            return Status.as_status(err)
        if preferred is None and self.added_pref_sched_terms is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node or {}
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(node)
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            preferred = s.preferred
        else:
            # PreScore disabled: parse here (cached on the pod, so once).
            try:
                preferred = pod_preferred_node_affinity(pod)
            except InvalidObjectError as err:
                return 0, Status.as_status(err)
        if preferred is not None:
            count += preferred.score(node)
        return count, None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        counts = np.zeros(len(indices), dtype=np.int64)
        if self.added_pref_sched_terms is not None:
            counts += preferred_scores(snapshot, self.added_pref_sched_terms, indices)
        s = state.get(PRE_SCORE_STATE_KEY)
        preferred = s.preferred if isinstance(s, _PreScoreState) else pod_preferred_node_affinity(pod)
        if preferred is not None:
            counts += preferred_scores(snapshot, preferred, indices)
        return counts

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_batch(
        self, state: CycleState, pod: PodInfo, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        return default_normalize_score_batch(scores, reverse=False)

    # -- queueing ---------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Queue when a node was added that matches, or an update turned a mismatch into a match."""
        modified = as_object(new, "Node") or {}
        original = as_object(old, "Node")
        if self.added_node_selector is not None and not self.added_node_selector.match(modified):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity(pod)
        if required.required is not None and required.required.errors:
            # Upstream's Match returns the parse error, and an error means Queue.
            raise_if_any(required.required.errors)
        if not required.match(modified):
            return QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        if required.match(original):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
