"""InterPodAffinity: required and preferred pod (anti-)affinity
(upstream ``pkg/scheduler/framework/plugins/interpodaffinity/{plugin,filtering,scoring}.go``, v1.35).

Filter reasons and codes are upstream's: a node failing the incoming pod's affinity is
UnschedulableAndUnresolvable ("node(s) didn't match pod affinity rules"): preemption removes pods,
it cannot add the pods affinity needs. Anti-affinity failures, the pod's own and existing pods',
are Unschedulable since evicting the offending pods can help.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from kubesched.config.plugin_args import InterPodAffinityArgs
from kubesched.config.releases import (
    DEFAULT_RELEASE,
    HINTS_COUNT_NOMINATED_PODS,
    INTER_POD_AFFINITY_HINT_ANY_TERM,
    INTER_POD_AFFINITY_HINT_TARGET_AND_REVERSE,
    SPLIT_POD_EVENTS,
    V1_36,
    Release,
)
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    BatchFilterPlugin,
    BatchScorePlugin,
    EnqueueExtensions,
    Handle,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
)
from kubesched.framework.lazy_state import filter_by_batch_mask
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, NodeScore, PodInfo, PreFilterResult, pod_uid
from kubesched.plugins import names
from kubesched.plugins.jsonview import as_pod_info, get_obj

from .batch import (
    AFFINITY,
    ANTI,
    PREFERRED,
    ExistingTerms,
    IncomingIndex,
    LazyPreFilterState,
    LazyPreScoreState,
    existing_anti_blocked,
    filter_mask,
    normalize_batch,
    score_data,
    weighted_terms,
)
from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NodeContribution,
    PreFilterState,
    pod_matches_all_terms,
)
from .memo import NodeMemo
from .namespaces import NamespaceIndex, namespace_index
from .scoring import PreScoreState, ScoreContribution, normalize
from .terms import AffinityTerm, WeightedAffinityTerm, parse_pod_affinity_terms, pod_affinity_terms

PRE_FILTER_STATE_KEY = "PreFilter" + names.INTER_POD_AFFINITY
PRE_SCORE_STATE_KEY = "PreScore" + names.INTER_POD_AFFINITY

_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _unroll(term: AffinityTerm, namespaces: NamespaceIndex) -> AffinityTerm:
    """Upstream ``mergeAffinityTermNamespacesIfNotEmpty``: an incoming pod's namespaceSelector is
    replaced by the namespaces it selects now, so matching existing pods needs no label lookups.
    An empty selector (all namespaces) stays as is; an absent one (labels.Nothing) adds nothing."""
    sel = term.namespace_selector
    if sel.empty or sel.nothing:
        return term
    return term.with_namespaces(namespaces.select(sel))


def _unroll_weighted(
    terms: Sequence[WeightedAffinityTerm], namespaces: NamespaceIndex
) -> tuple[WeightedAffinityTerm, ...]:
    return tuple(WeightedAffinityTerm(_unroll(w.term, namespaces), w.weight) for w in terms)


class InterPodAffinity(
    EnqueueExtensions,
    PreFilterPlugin,
    PreFilterExtensions,
    BatchFilterPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    ScoreExtensions,
):
    name = names.INTER_POD_AFFINITY
    args_type = InterPodAffinityArgs

    def __init__(self, args: InterPodAffinityArgs | None, handle: Handle) -> None:
        self.args = args or InterPodAffinityArgs()
        errs = self.args.validate()
        if errs:
            raise ValueError("; ".join(str(e) for e in errs))
        self.handle = handle
        self.release = handle.release if handle is not None else DEFAULT_RELEASE
        self._filter_memo: NodeMemo[NodeContribution] = NodeMemo()
        self._score_memo: NodeMemo[ScoreContribution] = NodeMemo()
        # The batch forms' per-row counts, kept across cycles (batch.py).
        self._existing = ExistingTerms()
        self._incoming = IncomingIndex()

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """A pod with (anti-)affinity depends on other pods' places: not signable. Otherwise its
        labels matter (other pods' terms may select it), unless existing pods' preferred terms
        are ignored (``ignorePreferredTermsOfExistingPods``)."""
        if pod.has_affinity:
            return [], Status(Code.UNSCHEDULABLE, "pods with InterPodAffinity are not signable")
        if self.args.ignore_preferred_terms_of_existing_pods:
            return [], None
        return [SignFragment(sign.LABELS_SIGNER, dict(pod.labels))], None

    def _snapshot(self) -> Snapshot:
        return self.handle.snapshot_shared_lister()

    # ------------------------------------------------------------------------------------------
    # PreFilter / Filter
    # ------------------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        terms = pod_affinity_terms(pod)
        if terms.error:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {terms.error}")
        snapshot = self._snapshot()
        if not terms.required_affinity and not terms.required_anti_affinity:
            # Upstream's Skip below, decided without the namespaces when no existing pod carries a
            # required anti-affinity term at all (about 8 µs a pod without affinity).
            self._existing.refresh(snapshot)
            if not self._existing.carried(ANTI):
                return None, Status(Code.SKIP)
        namespaces = namespace_index(state, self.handle)
        affinity = tuple(_unroll(t, namespaces) for t in terms.required_affinity)
        anti_affinity = tuple(_unroll(t, namespaces) for t in terms.required_anti_affinity)
        ns_labels = namespaces.labels_of(pod.namespace)
        # The batch data decides (every row at once); the reference counts are filled only if a
        # per-node path asks for them (LazyPreFilterState).
        table = snapshot.table
        self._existing.refresh(snapshot)
        blocked, any_existing = existing_anti_blocked(table, self._existing.matching(ANTI, pod, ns_labels))
        if not any_existing and not affinity and not anti_affinity:
            return None, Status(Code.SKIP)
        own = pod_matches_all_terms(affinity, pod)
        incoming = self._incoming.get(affinity, anti_affinity)
        incoming.refresh(snapshot)
        memo = self._filter_memo

        def fill(s: PreFilterState) -> None:
            s.count_existing_anti_affinity(snapshot.have_pods_with_required_anti_affinity_list())
            s.count_incoming(snapshot.list(), memo)

        lazy = LazyPreFilterState(
            pod, affinity, anti_affinity, ns_labels, pending=fill, batch_mask=filter_mask(table, incoming, own, blocked)
        )
        lazy.matches_own_affinity = own
        state.write(PRE_FILTER_STATE_KEY, lazy)
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_add, node_info.labels, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_remove, node_info.labels, -1)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        labels = node_info.labels
        if not s.satisfies_pod_affinity(labels):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not s.satisfies_pod_anti_affinity(labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not s.satisfies_existing_pods_anti_affinity(labels):
            return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            raise KeyError(s.message())
        mask = s.batch_mask if isinstance(s, LazyPreFilterState) else None
        return filter_by_batch_mask(self, state, pod, snapshot, indices, mask)

    # ------------------------------------------------------------------------------------------
    # PreScore / Score / NormalizeScore
    # ------------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.affinity
        pa, paa = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
        has_constraints = bool(
            (isinstance(pa, Mapping) and pa.get(_PREFERRED)) or (isinstance(paa, Mapping) and paa.get(_PREFERRED))
        )
        # Without preferences of its own, the pod only needs existing pods' terms scored; the
        # option skips even those (upstream ignorePreferredTermsOfExistingPods).
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        snapshot = self._snapshot()
        terms = pod_affinity_terms(pod)
        if terms.error:
            return Status(Code.ERROR, f"failed to parse pod: {terms.error}")
        hard = self.args.hard_pod_affinity_weight
        if not has_constraints:
            # Only existing pods' terms could score: Skip below, decided without the namespaces
            # when no pod carries a preferred term (or, with a hard weight, a required affinity one).
            self._existing.refresh(snapshot)
            if not self._existing.carried(PREFERRED) and not (hard > 0 and self._existing.carried(AFFINITY)):
                return Status(Code.SKIP)
        namespaces = namespace_index(state, self.handle)
        preferred = _unroll_weighted(terms.preferred_affinity, namespaces)
        preferred_anti = _unroll_weighted(terms.preferred_anti_affinity, namespaces)
        ns_labels = namespaces.labels_of(pod.namespace)
        self._existing.refresh(snapshot)
        existing = self._existing.matching(PREFERRED, pod, ns_labels)
        if hard > 0:
            existing += [(t, hard, arr) for t, _, arr in self._existing.matching(AFFINITY, pod, ns_labels)]
        incoming = None
        if has_constraints:
            incoming = self._incoming.get((), (), weighted_terms(preferred, preferred_anti))
            incoming.refresh(snapshot)
        data = score_data(snapshot.table, existing, incoming)
        if not data.matched:
            return Status(Code.SKIP)
        memo = self._score_memo

        def fill(s: PreScoreState) -> None:
            all_nodes = snapshot.list() if has_constraints else snapshot.have_pods_with_affinity_list()
            s.process_nodes(all_nodes, has_constraints, memo)

        state.write(
            PRE_SCORE_STATE_KEY,
            LazyPreScoreState(pod, preferred, preferred_anti, ns_labels, hard, pending=fill, batch=data),
        )
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        return s.score(node_info.labels), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            raise KeyError(s.message())
        if isinstance(s, LazyPreScoreState):
            return s.batch.scores(snapshot.table, indices)
        infos = snapshot.node_infos
        return np.fromiter((s.score(infos[i].labels) for i in indices.tolist()), dtype=np.int64, count=len(indices))

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score_batch(
        self, state: CycleState, pod: PodInfo, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            raise KeyError(s.message())
        return normalize_batch(scores, MAX_NODE_SCORE) if s.matched else scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = _pre_score_state(state)
        if isinstance(s, Status):
            return s
        if s.topology_score:
            normalize(scores)
        return None

    # ------------------------------------------------------------------------------------------
    # EnqueueExtensions
    # ------------------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Node updates: QueueingHints are on in v1.35, so the preCheck workaround of also
        # registering UpdateNodeTaint is gone.
        release = self.release
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        if release.has(SPLIT_POD_EVENTS):
            pod_events = [
                ClusterEventWithHint(
                    ClusterEvent(EventResource.ASSIGNED_POD, pod_actions),
                    lambda pod, old, new: is_schedulable_after_assigned_pod_change(pod, old, new, release),
                ),
                ClusterEventWithHint(
                    ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
                    is_schedulable_after_target_pod_update_label,
                ),
            ]
        else:
            pod_events = [
                ClusterEventWithHint(
                    ClusterEvent(EventResource.POD, pod_actions),
                    lambda pod, old, new: is_schedulable_after_pod_change(pod, old, new, release),
                )
            ]
        return [
            *pod_events,
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                is_schedulable_after_node_change,
            ),
        ]


def _pre_filter_state(state: CycleState) -> PreFilterState | Status:
    """The PreFilter state, or upstream's Error when PreFilter did not run."""
    s = state.get(PRE_FILTER_STATE_KEY)
    if isinstance(s, PreFilterState):
        return s
    return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')


def _pre_score_state(state: CycleState) -> PreScoreState | Status:
    s = state.get(PRE_SCORE_STATE_KEY)
    if isinstance(s, PreScoreState):
        return s
    return Status(Code.ERROR, f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')


# ----------------------------------------------------------------------------------------------
# Queueing hints (plugin.go isSchedulableAfterPodChange / isSchedulableAfterNodeChange)
# ----------------------------------------------------------------------------------------------
def _labels(obj: object) -> Mapping[str, str]:
    meta = get_obj(cast("JSONObj", obj), "metadata")
    labels = meta.get("labels")
    return cast("Mapping[str, str]", labels) if isinstance(labels, Mapping) else {}


def _placed(p: PodInfo, release: Release) -> bool:
    """Whether a changed pod counts for the pending pod's terms: assigned, or from v1.36
    (``HintsCountNominatedPods``) nominated, as scheduling counts nominated pods."""
    if p.node_name:
        return True
    if not release.has(HINTS_COUNT_NOMINATED_PODS):
        return False
    status = p.pod.get("status")
    return isinstance(status, Mapping) and bool(status.get("nominatedNodeName"))


def _matches_terms(terms: Sequence[AffinityTerm], pod: PodInfo, release: Release) -> bool:
    """v1.35/v1.36 ``podMatchesAllAffinityTerms``; v1.37 ``podMatchesAnyAffinityTerms``
    (``InterPodAffinityHintAnyTerm``): one matching anti-affinity term is enough to block."""
    if release.has(INTER_POD_AFFINITY_HINT_ANY_TERM):
        return any(t.matches(pod, None) for t in terms)
    return pod_matches_all_terms(terms, pod)


def is_schedulable_after_pod_change(pod: JSONObj, old: object, new: object, release: Release = V1_36) -> QueueingHint:
    """Upstream ``isSchedulableAfterPodChange`` (v1.35/v1.36; ``release`` defaults to its last
    form, v1.36's): an assigned pod was added, relabelled or deleted, or the pending pod itself
    relabelled. v1.37 splits it into :func:`is_schedulable_after_assigned_pod_change` and
    :func:`is_schedulable_after_target_pod_update_label`."""
    after, before = as_pod_info(new), as_pod_info(old)
    if (
        release.has(INTER_POD_AFFINITY_HINT_TARGET_AND_REVERSE)
        and after is not None
        and before is not None
        and after.uid == pod_uid(pod)
    ):
        # The pending pod itself was relabelled: another pod's anti-affinity may no longer match it.
        return QueueingHint.QUEUE
    return is_schedulable_after_assigned_pod_change(pod, old, new, release)


def is_schedulable_after_target_pod_update_label(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """v1.37 ``isSchedulableAfterTargetPodUpdateLabel``: the pending pod's own labels changed."""
    return QueueingHint.QUEUE


def is_schedulable_after_assigned_pod_change(
    pod: JSONObj, old: object, new: object, release: Release
) -> QueueingHint:
    """v1.37 ``isSchedulableAfterAssignedPodChange`` (and the rest of the older
    ``isSchedulableAfterPodChange``): does the added, relabelled or deleted pod matter to the
    pending pod's required terms, or (from v1.36) did its own anti-affinity keep the pod out?"""
    target = PodInfo(dict(pod))
    after, before = as_pod_info(new), as_pod_info(old)
    if (after is not None and not _placed(after, release)) or (before is not None and not _placed(before, release)):
        return QueueingHint.QUEUE_SKIP
    terms = parse_pod_affinity_terms(target.namespace, target.affinity)
    if terms.error:
        return QueueingHint.QUEUE
    aff, anti = terms.required_affinity, terms.required_anti_affinity
    if after is not None and before is not None:
        if not pod_matches_all_terms(aff, before) and pod_matches_all_terms(aff, after):
            return QueueingHint.QUEUE
        if _matches_terms(anti, before, release) and not _matches_terms(anti, after, release):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if after is not None:
        return QueueingHint.QUEUE if pod_matches_all_terms(aff, after) else QueueingHint.QUEUE_SKIP
    if before is None:
        return QueueingHint.QUEUE
    deleted = before
    if _matches_terms(anti, deleted, release):
        return QueueingHint.QUEUE
    if not release.has(INTER_POD_AFFINITY_HINT_TARGET_AND_REVERSE):
        return QueueingHint.QUEUE_SKIP
    # The deleted pod's own anti-affinity may have been what kept ``pod`` out (kubernetes#135394);
    # upstream matches its terms with no namespace labels (fwk.GetAffinityTerms, Matches(pod, nil)).
    deleted_terms = pod_affinity_terms(deleted)
    if deleted_terms.error:
        return QueueingHint.QUEUE
    if _matches_terms(deleted_terms.required_anti_affinity, target, release):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_node_change(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A node was added or relabelled: can its topology values change what the pod's terms see?"""
    if new is None:
        return QueueingHint.QUEUE
    target = PodInfo(dict(pod))
    terms = parse_pod_affinity_terms(target.namespace, target.affinity)
    if terms.error:
        return QueueingHint.QUEUE
    new_labels, old_labels = _labels(new), _labels(old) if old is not None else None
    for t in terms.required_affinity:
        after = new_labels.get(t.topology_key)
        if old_labels is None:
            if after is not None:
                return QueueingHint.QUEUE
            continue
        before = old_labels.get(t.topology_key)
        if after is not None and (before is None or before != after):
            return QueueingHint.QUEUE
    for t in terms.required_anti_affinity:
        if old_labels is None:
            return QueueingHint.QUEUE
        before, after = old_labels.get(t.topology_key), new_labels.get(t.topology_key)
        if before is not None and (after is None or before != after):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
