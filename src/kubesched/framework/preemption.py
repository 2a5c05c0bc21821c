"""The generic preemption evaluator (upstream ``pkg/scheduler/framework/preemption/preemption.go``).

A PostFilter plugin that preempts supplies the policy (``PreemptionInterface``: who may preempt,
which pods a node would lose, how many nodes to try); the ``Evaluator`` does the rest exactly as
upstream's: candidate nodes are those whose Filter status is Unschedulable (never
UnschedulableAndUnresolvable), a dry run per node on a clone of the CycleState and of the NodeInfo,
a bounded sample of candidates starting at an offset, the choice of one candidate
(``pick_one_node_for_preemption``), then the victims' deletion and the nomination of the node.

Also here, from upstream ``pkg/scheduler/util/utils.go``: ``more_important_pod``,
``get_pod_start_time`` and ``get_earliest_pod_start_time``. PodDisruptionBudgets are read by
:mod:`kubesched.api.pdb` and times by :mod:`kubesched.api.rfc3339` (both re-exported here).

Where we differ from upstream, on purpose:

* Nodes are dry-run one after another from the offset, as upstream does with parallelism 1 (its
  tests pin that order); with more workers upstream may return a few extra candidates.
* Nodes are listed in snapshot order where upstream iterates a Go map (random order), and ties
  that survive every criterion of ``pick_one_node_for_preemption`` go to the first candidate in
  dry-run order where upstream takes the first of a map iteration.
* Asynchronous preemption (``SchedulerAsyncPreemption``, upstream's default since v1.33) is what
  the Kubernetes backend does: PostFilter nominates the node at once and the victims' API calls
  run on the backend's executor (``submit``, the binding cycles' thread pool); DefaultPreemption's
  PreEnqueue holds the preemptor back until they are done. The victims but the last are deleted
  one after another in that one background job (upstream: in parallel). On the virtual clock
  (the simulator) preemption stays synchronous, upstream's path with the gate off: every call
  completes at once there, so the victims are gone before the next pod is popped, the cluster
  ends in the same state and runs stay as they were; a failed call returns an Error and the pod
  backs off as an Error (upstream's asynchronous path re-activates it at once, which where calls
  take no time would retry it forever at one instant). ``Evaluator.async_preemption`` overrides
  the choice (tests run the asynchronous path on the virtual clock, ``submit`` being a
  zero-delay event there).
* ``scheduler_preemption_goroutines_duration_seconds`` and ``..._execution_total`` carry the
  job's real result and duration on the handle's clock (upstream's deferred ``WithLabelValues``
  evaluates them when the goroutine starts: "success", about 0 s).
* A pod without ``status.startTime`` starts "now" on the handle's clock (upstream: a fresh
  ``time.Now()`` per call, which makes such pods compare in call order).
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.api.pdb import PodDisruptionBudget, parse_pdbs
from kubesched.api.rfc3339 import parse_rfc3339_ns
from kubesched.config.releases import PREEMPTED_PRE_BIND_PODS_BACK_OFF, PREEMPTED_WAITING_PODS_BACK_OFF
from kubesched.framework.cluster import BindConflictError

from .clock import VirtualClock, rfc3339
from .cycle_state import CycleState
from .interfaces import Handle, PluginMetrics
from .status import Code, Status
from .types import Diagnosis, FitError, NodeInfo, NominatingInfo, NominatingMode, PodInfo, PostFilterResult

log = logging.getLogger("kubesched.preemption")

#: Messages, as upstream prints them.
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_NO_NODES = "no nodes available"

#: ``v1.DisruptionTarget`` / ``v1.PodReasonPreemptionByScheduler``.
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

INT32_MAX = 2**31 - 1


# ------------------------------------------------------------------------------------------------
# NodeToStatus
# ------------------------------------------------------------------------------------------------
class NodeToStatus(dict[str, Status]):
    """Upstream ``framework.NodeToStatus``: explicit statuses, plus one status for every absent node.

    A plain dict of the nodes that failed Filter, so PostFilter plugins that take a Mapping keep
    working; ``absent_status`` (default UnschedulableAndUnresolvable, as upstream's
    ``NewDefaultNodeToStatus``) stands for the nodes not in it: those a PreFilter result left out,
    or every node when PreFilter rejected the pod.
    """

    def __init__(self, statuses: Mapping[str, Status] | None = None, absent_status: Status | None = None) -> None:
        super().__init__(statuses or {})
        self.absent_status = absent_status or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @classmethod
    def of(cls, m: Mapping[str, Status]) -> NodeToStatus:
        return m if isinstance(m, NodeToStatus) else cls(m)

    def get_status(self, node_name: str) -> Status:
        """Upstream ``Get``: the node's status, or the absent nodes' status."""
        st = super().get(node_name)
        return st if st is not None else self.absent_status

    def nodes_for_status_code(self, nodes: Sequence[NodeInfo], code: Code) -> list[NodeInfo]:
        """Upstream ``NodesForStatusCode``, in snapshot order."""
        if self.absent_status.code == code:
            return [ni for ni in nodes if self.get_status(ni.name).code == code]
        return [ni for ni in nodes if ni.name in self and self[ni.name].code == code]


# ------------------------------------------------------------------------------------------------
# pkg/scheduler/util: pod importance and start times
# ------------------------------------------------------------------------------------------------
def parse_time_ns(text: str) -> int | None:
    """An RFC 3339 time (``metav1.Time``, with optional fractional seconds) in Unix nanoseconds; None
    when unreadable (the pod then counts as not started)."""
    try:
        return parse_rfc3339_ns(text)
    except ValueError:
        return None


def get_pod_start_time(pod: PodInfo, now_ns: int) -> int:
    """``util.GetPodStartTime`` in nanoseconds: ``status.startTime``, or now for a pod not started."""
    st = (pod.pod.get("status") or {}).get("startTime")
    if isinstance(st, str):
        t = parse_time_ns(st)
        if t is not None:
            return t
    return now_ns


def more_important_pod(pod1: PodInfo, pod2: PodInfo, now_ns: int = 0) -> bool:
    """``util.MoreImportantPod``: higher priority first, then the pod that started earlier."""
    if pod1.priority != pod2.priority:
        return pod1.priority > pod2.priority
    return get_pod_start_time(pod1, now_ns) < get_pod_start_time(pod2, now_ns)


def get_earliest_pod_start_time(victims: Sequence[PodInfo], now_ns: int) -> int | None:
    """``util.GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    if not victims:
        return None
    earliest = get_pod_start_time(victims[0], now_ns)
    max_priority = victims[0].priority
    for p in victims:
        if p.priority == max_priority:
            earliest = min(earliest, get_pod_start_time(p, now_ns))
        elif p.priority > max_priority:
            max_priority = p.priority
            earliest = get_pod_start_time(p, now_ns)
    return earliest


def sort_by_importance(pods: list[PodInfo], more_important: Callable[[PodInfo, PodInfo], bool]) -> None:
    """Sort in place, most important first (upstream's ``sort.Slice`` with ``MoreImportantPod``)."""

    def cmp(a: PodInfo, b: PodInfo) -> int:
        if more_important(a, b):
            return -1
        if more_important(b, a):
            return 1
        return 0

    pods.sort(key=functools.cmp_to_key(cmp))


# ------------------------------------------------------------------------------------------------
# candidates
# ------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone (upstream ``candidate``).

    ``victims`` are ordered from most to least important, as ``SelectVictimsOnNode`` returns them.
    """

    name: str
    victims: list[PodInfo] = field(default_factory=list)
    num_pdb_violations: int = 0


class _CandidateList:
    """Upstream ``candidateList``: at most ``size`` candidates; later additions are dropped."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: list[Candidate] = []

    def add(self, c: Candidate) -> None:
        if len(self.items) < self.size:
            self.items.append(c)

    def __len__(self) -> int:
        return len(self.items)


def aggregate_error(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` without duplicates."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


#: ``func(node string) int64`` of ``OrderedScoreFuncs``.
ScoreFunc = Callable[[str], int]


class PreemptionInterface(Protocol):
    """The policy a preempting plugin supplies (upstream ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[PodInfo], int, Status]: ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Candidate]) -> list[ScoreFunc] | None: ...


def pick_one_node_for_preemption(
    candidates: Sequence[Candidate], score_funcs: Sequence[ScoreFunc] | None, now_ns: int
) -> str:
    """Upstream ``pickOneNodeForPreemption``: each score function keeps the best nodes; the next
    one breaks ties. Default order: fewest PDB violations, lowest highest-victim priority, smallest
    sum of (priority + 2^31) over victims, fewest victims, latest start of the highest-priority
    victims; then the first candidate."""
    if not candidates:
        return ""
    by_name = {c.name: c for c in candidates}
    nodes = list(by_name)
    if not score_funcs:

        def min_pdb_violations(node: str) -> int:
            return -by_name[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -by_name[node].victims[0].priority

        def min_sum_priorities(node: str) -> int:
            # MaxInt32+1 added to each priority so that negative priorities do not favour more victims.
            return -sum(p.priority + INT32_MAX + 1 for p in by_name[node].victims)

        def min_num_pods(node: str) -> int:
            return -len(by_name[node].victims)

        def latest_start_time(node: str) -> int:
            earliest = get_earliest_pod_start_time(by_name[node].victims, now_ns)
            if earliest is None:
                log.error("unexpected nil earliest start time for node %s", node)
                return -(2**63)
            return earliest

        score_funcs = [min_pdb_violations, min_highest_priority, min_sum_priorities, min_num_pods, latest_start_time]

    for f in score_funcs:
        best = -math.inf
        selected: list[str] = []
        for node in nodes:
            score = f(node)
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        nodes = selected
    return nodes[0]


# ------------------------------------------------------------------------------------------------
# the evaluator
# ------------------------------------------------------------------------------------------------
#: ``PreemptPod(candidate, preemptor, victim) -> error``: the API calls for one victim; returns an
#: error message, or None on success. Replaceable in tests, as upstream's ``Evaluator.PreemptPod``.
PreemptPodFunc = Callable[[Candidate, PodInfo, PodInfo], "str | None"]


class Evaluator:
    """Upstream ``preemption.Evaluator``: the mechanics shared by preempting PostFilter plugins.

    ``handle`` is the framework handle (:class:`kubesched.framework.interfaces.Handle`): when its
    ``metrics`` is not None, preemption records ``scheduler_preemption_victims``.
    """

    def __init__(
        self, plugin_name: str, handle: Handle, interface: PreemptionInterface, *, async_preemption: bool | None = False
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.preempt_pod: PreemptPodFunc = self._preempt_pod
        #: True: victims are preempted in the background (upstream ``prepareCandidateAsync``);
        #: False: within PostFilter (``prepareCandidate``); None: in the background unless the
        #: handle's clock is virtual (see the module docstring).
        self.async_preemption = async_preemption
        # Upstream ``preempting``: the UIDs of preemptors whose background preemption runs.
        self._mu = threading.Lock()
        self._preempting: set[str] = set()

    # -- helpers ----------------------------------------------------------------------------------
    def now_ns(self) -> int:
        return int(self.handle.clock.now() * 1_000_000_000)

    def _metrics(self) -> PluginMetrics | None:
        return self.handle.metrics

    def is_async(self) -> bool:
        """Whether victims are preempted in the background (``enableAsyncPreemption``)."""
        if self.async_preemption is not None:
            return self.async_preemption
        return not isinstance(self.handle.clock, VirtualClock)

    def is_pod_running_preemption(self, pod_uid: str) -> bool:
        """Upstream ``IsPodRunningPreemption``: the pod's background preemption has not reached
        its last victim yet."""
        with self._mu:
            return pod_uid in self._preempting

    def list_pdbs(self) -> list[Mapping[str, Any]]:
        """Every policy/v1 PodDisruptionBudget the cluster holds (upstream's PDB lister)."""
        return list(self.handle.client().list_objects("policy/v1", "PodDisruptionBudget"))

    # -- Preempt ----------------------------------------------------------------------------------
    def preempt(
        self, state: CycleState, pod: PodInfo, m: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``Evaluator.Preempt``.

        * ``(None, Error)``: a transient failure; the nomination is left as it is.
        * ``(None, Unschedulable)``: the pod may not preempt (for now); nomination unchanged.
        * ``(result "", Unschedulable)``: preemption cannot help; the nomination is cleared.
        * ``(result node, Success)``: victims are gone; the pod is nominated to ``node``.
        """
        statuses = NodeToStatus.of(m)
        # 0) The latest version of the pod: its nominatedNodeName may have changed.
        latest = self._latest(pod)
        if latest is None:
            return None, Status(Code.ERROR, f'pod "{pod.name}" not found')
        nominated = str((latest.get("status") or {}).get("nominatedNodeName") or "")
        preemptor = pod if latest is pod.pod else PodInfo(latest)

        # 1) May this pod preempt?
        ok, msg = self.interface.pod_eligible_to_preempt_others(preemptor, statuses.get_status(nominated))
        if not ok:
            log.debug("pod %s is not eligible for preemption: %s", pod.key, msg)
            return None, Status(Code.UNSCHEDULABLE, msg)

        # 2) Candidates.
        all_nodes = self.handle.snapshot_shared_lister().list()
        candidates, node_statuses, err = self.find_candidates(state, all_nodes, pod, statuses)
        if err and not candidates:
            return None, Status(Code.ERROR, err)
        if not candidates:
            log.debug("no preemption candidate for pod %s; preemption is not helpful", pod.key)
            d = Diagnosis()
            d.node_to_status = dict(node_statuses)
            d.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NOT_HELPFUL)
            fit = FitError(pod, len(all_nodes), d)
            return PostFilterResult(NominatingInfo("", NominatingMode.OVERRIDE)), Status(Code.UNSCHEDULABLE, str(fit))

        # 3) Extenders would filter the candidates here; kubesched does not call extenders.
        # 4) The best candidate.
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        log.debug("preemption target for pod %s: node %s", pod.key, best.name)

        # 5) Preempt the victims (in the background, or now), then nominate.
        if self.is_async():
            self.prepare_candidate_async(best, pod)
        else:
            st = self.prepare_candidate(best, pod)
            if not st.is_success():
                return None, st
        return PostFilterResult(NominatingInfo(best.name, NominatingMode.OVERRIDE)), Status(Code.SUCCESS)

    def _latest(self, pod: PodInfo) -> dict[str, Any] | None:
        latest: dict[str, Any] | None = self.handle.client().get_pod(pod.namespace, pod.name)
        return latest

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: PodInfo, m: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus, str]:
        """Upstream ``findCandidates``: (candidates, dry-run statuses, aggregated error message)."""
        if not all_nodes:
            return [], NodeToStatus(), MSG_NO_NODES
        potential = m.nodes_for_status_code(all_nodes, Code.UNSCHEDULABLE)
        if not potential:
            log.debug("preemption will not help schedule pod %s on any node", pod.key)
            return [], NodeToStatus(), ""
        try:
            pdbs = self.list_pdbs()
        except Exception as err:
            return [], NodeToStatus(), str(err) or type(err).__name__
        offset, num = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[Mapping[str, Any]],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, str]:
        """Upstream ``DryRunPreemption``: victims per node, from ``offset`` round the list, until
        ``num_candidates`` are found of which at least one violates no PDB. Candidates that violate
        no PDB come first."""
        parsed = parse_pdbs(pdbs)
        non_violating = _CandidateList(num_candidates)
        violating = _CandidateList(num_candidates)
        statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential_nodes)
        # Optional: a node with no pod the policy may preempt is rejected without the clones.
        quick_reject: Callable[[NodeInfo, PodInfo], Status | None] | None = getattr(
            self.interface, "reject_without_victims", None
        )
        for i in range(n):
            original = potential_nodes[(offset + i) % n]
            early = quick_reject(original, pod) if quick_reject is not None else None
            if early is not None:
                statuses[original.name] = early
                continue
            node_info = original.clone()
            victims, num_violations, st = self.interface.select_victims_on_node(
                state.clone(), pod, node_info, parsed
            )
            if st.is_success() and victims:
                c = Candidate(node_info.name, victims, num_violations)
                (violating if num_violations else non_violating).add(c)
                if len(non_violating) and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st.is_success():
                st = Status(Code.ERROR, f'expected at least one victim pod on node "{node_info.name}"')
            if st.code == Code.ERROR:
                errors.append(st.message())
            statuses[node_info.name] = st
        return non_violating.items + violating.items, statuses, aggregate_error(errors) if errors else ""

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Upstream ``SelectCandidate``."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        by_name = {c.name: c for c in candidates}
        score_funcs = self.interface.ordered_score_funcs(by_name)
        name = pick_one_node_for_preemption(candidates, score_funcs, self.now_ns())
        return by_name.get(name, candidates[0])

    # -- prepareCandidate -------------------------------------------------------------------------
    def prepare_candidate(self, c: Candidate, pod: PodInfo) -> Status:
        """Upstream ``prepareCandidate``: preempt each victim not already terminating, then clear
        the nominations of lower-priority pods on the node, which may no longer fit there."""
        for victim in c.victims:
            if victim.deletion_timestamp:
                log.debug("victim %s is already being deleted", victim.key)
                continue
            err = self.preempt_pod(c, pod, victim)
            if err is not None:
                return Status(Code.ERROR, err)
        metrics = self._metrics()
        if metrics is not None:
            metrics.preemption_victims.observe(len(c.victims))
        self.clear_lower_priority_nominations(pod, c.name)
        return Status(Code.SUCCESS)

    def _preempt_pod(self, c: Candidate, preemptor: PodInfo, victim: PodInfo) -> str | None:
        """Upstream ``PreemptPod``: reject a victim waiting at Permit; otherwise mark it with the
        DisruptionTarget condition and delete it. A victim already gone is not an error."""
        wp = self.handle.get_waiting_pod(victim.uid)
        delete, in_memory = True, False
        if wp is not None and self.handle.release.has(PREEMPTED_WAITING_PODS_BACK_OFF):
            # v1.36+ (framework/preemption/executor.go): the waiting victim backs off; only one
            # that was no longer waiting is deleted through the API like any other victim.
            in_memory = wp.preempt(self.plugin_name, "preempted")
            delete = not in_memory
        elif wp is not None:
            wp.reject(self.plugin_name, "preempted")  # v1.35: rejected, never deleted
            delete = False
        elif self.handle.release.has(PREEMPTED_PRE_BIND_PODS_BACK_OFF):
            # v1.36+: a victim still in PreBind has its binding cancelled (it backs off); one that
            # already finished PreBind is deleted like any other victim.
            in_pre_bind = self.handle.get_pod_in_pre_bind(victim.uid)
            if in_pre_bind is not None and in_pre_bind.cancel_pod(f"preempted by {self.plugin_name}"):
                log.debug("preemptor %s cancelled the binding of %s in PreBind", preemptor.key, victim.key)
                delete, in_memory = False, True
        if not delete and wp is not None:
            log.debug("preemptor %s preempted waiting pod %s on node %s", preemptor.key, victim.key, c.name)
        elif delete:
            client = self.handle.client()
            condition = {
                "type": DISRUPTION_TARGET,
                "status": "True",
                "reason": REASON_PREEMPTION_BY_SCHEDULER,
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
            }
            if not _has_condition(victim.pod, condition):
                stamped = {**condition, "lastTransitionTime": rfc3339(self.handle.clock.now())}
                try:
                    client.patch_pod_status(victim.pod, {"conditions": [stamped]})
                except BindConflictError:
                    log.debug("victim %s is already deleted", victim.key)
                    return None
                except Exception as err:
                    log.error("could not add DisruptionTarget condition to %s: %s", victim.key, err)
                    return str(err) or type(err).__name__
            try:
                client.delete_pod(victim.pod, "Preempted")
            except BindConflictError:
                log.debug("victim %s is already deleted", victim.key)
                return None
            except Exception as err:
                log.error("could not preempt %s for %s: %s", victim.key, preemptor.key, err)
                return str(err) or type(err).__name__
            log.debug("preemptor %s preempted %s on node %s", preemptor.key, victim.key, c.name)
        note = f"Preempted by pod {preemptor.uid} on node {c.name}"
        self.handle.event_recorder().eventf(
            victim.pod,
            preemptor.pod,
            "Normal",
            "Preempted",
            "Preempting",
            note + " (in kube-scheduler memory)." if in_memory else note,
        )
        return None

    def clear_lower_priority_nominations(self, pod: PodInfo, node_name: str) -> bool:
        """Upstream ``getLowerPriorityNominatedPods`` + ``clearNominatedNodeName``: patch their
        ``status.nominatedNodeName`` away and drop them from the nominator, as the informer's
        update would. Failures are logged, not returned (upstream: not critical); False if any."""
        ok = True
        for p in self.handle.nominated_pods_for_node(node_name):
            if p.priority >= pod.priority:
                continue
            try:
                if (p.pod.get("status") or {}).get("nominatedNodeName"):
                    self.handle.client().patch_pod_status(p.pod, {"nominatedNodeName": None})
            except Exception as err:
                log.error("cannot clear nominatedNodeName of %s: %s", p.key, err)
                ok = False
            self.handle.delete_nominated_pod_if_exists(p)
        return ok

    # -- prepareCandidateAsync --------------------------------------------------------------------
    def prepare_candidate_async(self, c: Candidate, pod: PodInfo) -> None:
        """Upstream ``prepareCandidateAsync``: mark the pod as preempting (DefaultPreemption's
        PreEnqueue holds it back meanwhile) and hand the API calls to the backend's executor.

        The background job clears lower-priority nominations on the node, preempts every victim
        not already terminating but the last (one after another), unmarks the pod, then
        preempts the last victim (nothing happens when every victim is already terminating).
        Unmarking first matters: the last deletion is the event that brings the pod back; seen
        while the pod is still marked, it would be ignored and the pod left gated (v1.33's order;
        later upstream keeps the pod marked and asks its informer whether the last victim is
        terminating, ``lastVictimsPendingPreemption``, closing the short window in which the pod
        may be retried before the last call is sent). After a failure the remaining
        victims are skipped (upstream cancels their calls) and the pod is activated so that it is
        not stuck in the unschedulable pool.
        """
        to_delete = [v for v in c.victims if not v.deletion_timestamp]
        if not to_delete:
            # Every victim is already terminating: no API call to make (upstream's executor.go
            # returns here too, leaving lower-priority nominations as they are).
            return
        metrics = self._metrics()
        if metrics is not None:
            metrics.preemption_victims.observe(len(c.victims))
        with self._mu:
            self._preempting.add(pod.uid)
        clock = self.handle.clock

        def unmark() -> None:
            with self._mu:
                self._preempting.discard(pod.uid)

        def run() -> None:
            start = clock.now()
            result = "success"
            try:
                log.debug(
                    "start the preemption asynchronously: preemptor %s, node %s, %d victims",
                    pod.key,
                    c.name,
                    len(to_delete),
                )
                if not self.clear_lower_priority_nominations(pod, c.name):
                    result = "error"
                failed = False
                for victim in to_delete[:-1]:
                    err = self.preempt_pod(c, pod, victim)
                    if err is not None:
                        log.error("error occurred during async preemption of %s: %s", victim.key, err)
                        result, failed = "error", True
                        break
                unmark()
                if not failed:
                    err = self.preempt_pod(c, pod, to_delete[-1])
                    if err is not None:
                        log.error("error occurred during async preemption of %s: %s", to_delete[-1].key, err)
                        result = "error"
            except Exception:
                log.exception("async preemption for %s failed", pod.key)
                result = "error"
            finally:
                unmark()
                if result == "error":
                    # The pod may otherwise wait in the unschedulable pool for an event that
                    # will not come.
                    self.handle.activate([pod.pod])
                if metrics is not None:
                    metrics.observe_preemption_goroutine(result, clock.now() - start)
                log.debug("async preemption finished: preemptor %s, node %s, result %s", pod.key, c.name, result)

        self.handle.client().submit(run)


def _has_condition(pod: Mapping[str, Any], want: Mapping[str, str]) -> bool:
    """Whether ``apipod.UpdatePodCondition`` would change nothing (same status, reason, message)."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == want["type"]:
            return all(cond.get(k) == want[k] for k in ("status", "reason", "message"))
    return False


__all__ = [
    "DISRUPTION_TARGET",
    "MSG_NOT_HELPFUL",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "Evaluator",
    "NodeToStatus",
    "PodDisruptionBudget",
    "PreemptionInterface",
    "aggregate_error",
    "get_earliest_pod_start_time",
    "get_pod_start_time",
    "more_important_pod",
    "parse_pdbs",
    "parse_time_ns",
    "pick_one_node_for_preemption",
    "sort_by_importance",
]
