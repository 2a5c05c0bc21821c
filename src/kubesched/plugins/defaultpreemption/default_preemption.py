"""DefaultPreemption: the default PostFilter (upstream
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``).

When a pod fits no node, it looks for nodes where removing lower-priority pods would let it fit,
picks the node whose victims matter least, deletes them and nominates the node, so the pod is
scheduled there once they are gone. The mechanics live in :mod:`kubesched.framework.preemption`
(upstream's ``preemption.Evaluator``); this plugin is the policy:

* ``pod_eligible_to_preempt_others``: not with ``preemptionPolicy: Never``, and not while a
  victim of an earlier preemption is still terminating on the nominated node;
* ``select_victims_on_node``: remove every lower-priority pod (on a clone of the NodeInfo and the
  CycleState, through the PreFilter plugins' RemovePod), check the pod fits, then add victims back
  (PDB-violating ones first, each group most important first) while it still fits;
* ``get_offset_and_num_candidates``: how many nodes to dry-run (``minCandidateNodesPercentage``,
  ``minCandidateNodesAbsolute``) and where to start. The start is drawn from the scheduler's
  seeded random source (``handle.rng``), so a simulation with a seed is reproducible; tests replace
  ``offset_rand`` as upstream replaces ``getOffsetRand``.

Asynchronous preemption (upstream's default, ``SchedulerAsyncPreemption``): against a real
cluster PostFilter nominates the node at once and the victims are deleted in the background
(see :mod:`kubesched.framework.preemption`); meanwhile ``pre_enqueue`` keeps the preemptor out
of activeQ ("waiting for the preemption for this pod to be finished"), so that it does not
preempt again. Enabled at every point through multiPoint, DefaultPreemption is a PreEnqueue
plugin of the default profile, as upstream's. Its queueing hint differs from upstream's (always
Skip, because upstream asks the hints of every plugin that rejected the pod, gated or not):
our queue asks only the gating plugin about a gated pod, so a pod deletion requeues the
preemptor once its preemption no longer runs.

``is_eligible_pod`` and ``more_important_pod`` may be replaced to customise which pods may be
victims and in which order they are reprieved (upstream ``IsEligiblePod`` / ``MoreImportantPod``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence

from kubesched.api.pdb import PodDisruptionBudget
from kubesched.config.plugin_args import DefaultPreemptionArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, Handle, PostFilterPlugin, PreEnqueuePlugin
from kubesched.framework.preemption import (
    DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    Candidate,
    Evaluator,
    ScoreFunc,
    more_important_pod,
    sort_by_importance,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PostFilterResult, pod_uid
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_obj, get_objs

log = logging.getLogger("kubesched.plugins.defaultpreemption")

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
MSG_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"

#: ``IsEligiblePodFunc(nodeInfo, victim, preemptor) -> bool``.
IsEligiblePodFunc = Callable[[NodeInfo, PodInfo, PodInfo], bool]
#: ``MoreImportantPodFunc(pod1, pod2) -> bool``: pod1 is reprieved before pod2.
MoreImportantPodFunc = Callable[[PodInfo, PodInfo], bool]


class DefaultPreemption(PreEnqueuePlugin, EnqueueExtensions, PostFilterPlugin):
    name = names.DEFAULT_PREEMPTION
    args_type = DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        self.args = args or DefaultPreemptionArgs()
        errs = self.args.validate()
        if errs:
            raise ValueError("; ".join(str(e) for e in errs))
        self.handle = handle
        self.evaluator = Evaluator(self.name, handle, self, async_preemption=None)
        # A Framework built only to check a configuration passes no handle (and never preempts).
        source = handle.rng if handle is not None else random.Random(0)
        #: ``getOffsetRand``: ``n -> [0, n)``.
        self.offset_rand: Callable[[int], int] = source.randrange
        self.is_eligible_pod: IsEligiblePodFunc = lambda node_info, victim, preemptor: True
        self.more_important_pod: MoreImportantPodFunc = self._default_more_important

    def _default_more_important(self, pod1: PodInfo, pod2: PodInfo) -> bool:
        return more_important_pod(pod1, pod2, self.evaluator.now_ns())

    # -- PreEnqueue / EnqueueExtensions ----------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Hold a pod back while its preemption runs in the background (upstream ``PreEnqueue``)."""
        if self.evaluator.is_pod_running_preemption(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAITING_FOR_PREEMPTION)
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A pod's deletion may end the wait (its last victim's). Registered on the synchronous
        path too (upstream: only with the gate on), where PreEnqueue never rejects so the hint is
        never asked; ``evaluator.async_preemption`` may then be switched on after start-up."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), self._is_pod_schedulable_after_pod_deletion
            )
        ]

    def _is_pod_schedulable_after_pod_deletion(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        if self.evaluator.is_pod_running_preemption(pod_uid(pod)):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # -- PostFilter -------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        try:
            result, status = self.evaluator.preempt(state, pod, filtered_node_status)
        finally:
            metrics = self.handle.metrics
            if metrics is not None:
                metrics.preemption_attempts.inc()
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg)
        return result, status

    # -- preemption.Interface ---------------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """max(numNodes × minCandidateNodesPercentage / 100, minCandidateNodesAbsolute), at most numNodes."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.offset_rand(num_nodes), self.calculate_num_candidates(num_nodes)

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Candidate]) -> list[ScoreFunc] | None:
        return None

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status) -> tuple[bool, str]:
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, MSG_PREEMPT_NEVER
        nominated = str(get_obj(pod.pod, "status").get("nominatedNodeName") or "")
        if nominated:
            # A nominated node the filters now call UnschedulableAndUnresolvable: preempt again.
            if nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            node_info = self.handle.snapshot_shared_lister().get(nominated)
            if node_info is not None:
                for p in node_info.pods:
                    if self.is_preemption_allowed(node_info, p, pod) and pod_terminating_by_preemption(p):
                        return False, MSG_TERMINATING_ON_NOMINATED
        return True, ""

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
        return victim.priority < preemptor.priority and self.is_eligible_pod(node_info, victim, preemptor)

    def reject_without_victims(self, node_info: NodeInfo, pod: PodInfo) -> Status | None:
        """What ``select_victims_on_node`` returns for a node without potential victims, found
        before the evaluator clones the node and the CycleState for it (most nodes, often)."""
        if any(self.is_preemption_allowed(node_info, p, pod) for p in node_info.pods):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[PodInfo], int, Status]:
        """The fewest pods to remove from ``node_info`` (a clone) for ``pod`` to fit, and how many
        of them violate a PDB."""
        h = self.handle

        def remove(p: PodInfo) -> Status:
            node_info.remove_pod(p)
            return h.run_pre_filter_extension_remove_pod(state, pod, p, node_info)

        def add(p: PodInfo) -> Status:
            node_info.add_pod(p)
            return h.run_pre_filter_extension_add_pod(state, pod, p, node_info)

        potential = [p for p in node_info.pods if self.is_preemption_allowed(node_info, p, pod)]
        for p in potential:
            st = remove(p)
            if not st.is_success():
                return [], 0, _as_error(st)
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)

        # If the pod does not fit even without every lower-priority pod, this node cannot help.
        # (Affinity of the pod to a victim is not considered, as upstream.)
        st = h.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not st.is_success():
            return [], 0, st

        sort_by_importance(potential, self.more_important_pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        def reprieve(p: PodInfo) -> tuple[bool, Status]:
            st = add(p)
            if not st.is_success():
                return False, st
            fits = h.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success()
            if not fits:
                st = remove(p)
                if not st.is_success():
                    return False, st
                victims.append(p)
            return fits, Status(Code.SUCCESS)

        num_violating = 0
        for p in violating:
            fits, st = reprieve(p)
            if not st.is_success():
                return [], 0, _as_error(st)
            if not fits:
                num_violating += 1
        for p in non_violating:
            _, st = reprieve(p)
            if not st.is_success():
                return [], 0, _as_error(st)
        # Keep the victims ordered from most to least important.
        if violating and non_violating:
            sort_by_importance(victims, self.more_important_pod)
        return victims, num_violating, Status(Code.SUCCESS)


def _as_error(st: Status) -> Status:
    """``fwk.AsStatus(status.AsError())``: the same message, as an Error."""
    return st if st.code == Code.ERROR else Status(Code.ERROR, st.message())


def pod_terminating_by_preemption(p: PodInfo) -> bool:
    """Terminating, with the DisruptionTarget condition the scheduler sets on its victims."""
    if not p.deletion_timestamp:
        return False
    for cond in get_objs(get_obj(p.pod, "status"), "conditions"):
        if cond.get("type") == DISRUPTION_TARGET:
            return bool(cond.get("status") == "True" and cond.get("reason") == REASON_PREEMPTION_BY_SCHEDULER)
    return False


def filter_pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``filterPodsWithPDBViolation``: (violating, non-violating), each in input order.

    Each matching PDB's ``disruptionsAllowed`` is spent pod by pod; a pod that overdraws one is
    violating. Pods already in a PDB's ``disruptedPods`` were counted by the API server: they do
    not spend it again."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:  # a pod without labels matches no PDB
            for i, pdb in enumerate(pdbs):
                if not pdb.matches(p) or p.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(p)
    return violating, non_violating
