"""CapacityScheduling's preemption policy (scheduler-plugins ``capacity_scheduling.go``:
``preemptor``), run by the shared Evaluator (kubesched.framework.preemption), as scheduler-plugins
runs it with upstream's ``preemption.Evaluator``.

Who may be a victim depends on the preemptor's quota (KEP 9, "PostFilter"):

* the pod would stay within its namespace's min: it reclaims its guarantee, so the victims are
  pods of *other* namespaces that use more than their min (borrowers), whatever their priority;
  a namespace stops being a victim as soon as removing its pods brings it back to its min, so a
  namespace within its min never loses a pod;
* the pod would take its namespace over its min: only lower-priority pods of its own namespace;
* the pod's namespace has no quota: lower-priority pods of namespaces without a quota.

Victims are then reprieved, most important first (PDB-violating ones first), while the pod still
fits and its quota still admits it. Every node is dry-run (no candidate sampling).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

from kubesched.api.pdb import PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.preemption import (
    Candidate,
    ScoreFunc,
    more_important_pod,
    sort_by_importance,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.defaultpreemption.default_preemption import filter_pods_with_pdb_violation
from kubesched.plugins.jsonview import get_obj

from .state import MinSumCheck, quota_violation, read_pre_filter_state, read_snapshot_state

MSG_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_NO_STATE = "not eligible due to failed to read from cycleState"
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_QUOTA_EXCEEDED = "global quota max exceeded"


class Preemptor:
    """``preemption.Interface`` for one PostFilter call (it reads that cycle's state)."""

    def __init__(self, handle: Handle, state: CycleState, check: MinSumCheck, now_ns: Callable[[], int]) -> None:
        self.handle = handle
        self.state = state
        self.check = check
        self._now_ns = now_ns

    def _more_important(self, a: PodInfo, b: PodInfo) -> bool:
        return more_important_pod(a, b, self._now_ns())

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Candidate]) -> list[ScoreFunc] | None:
        return None

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status) -> tuple[bool, str]:
        """Not with ``preemptionPolicy: Never``; not while a pod this preemptor could have evicted
        is still terminating on its nominated node (its room is on the way)."""
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, MSG_PREEMPT_NEVER
        try:
            pfs = read_pre_filter_state(self.state)
        except KeyError:
            return False, MSG_NO_STATE
        nominated = str(get_obj(pod.pod, "status").get("nominatedNodeName") or "")
        if not nominated:
            return True, ""
        if nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        try:
            infos = read_snapshot_state(self.state).infos
        except KeyError:
            return True, ""
        node_info = self.handle.snapshot_shared_lister().get(nominated)
        if node_info is None:
            return True, ""
        eq = infos.get(pod.namespace)
        if eq is not None:
            more_than_min = eq.used_over_min_with(pfs.nominated_in_eq_with_pod_req)
            for p in node_info.pods:
                if not p.deletion_timestamp:
                    continue
                peq = infos.get(p.namespace)
                if peq is None:
                    continue
                if p.namespace == pod.namespace and p.priority < pod.priority:
                    return False, MSG_TERMINATING
                if p.namespace != pod.namespace and not more_than_min and peq.used_over_min():
                    return False, MSG_TERMINATING
        else:
            for p in node_info.pods:
                if p.namespace in infos:
                    continue
                if p.deletion_timestamp and p.priority < pod.priority:
                    return False, MSG_TERMINATING
        return True, ""

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[PodInfo], int, Status]:
        """Upstream ``SelectVictimsOnNode`` of CapacityScheduling, on clones of the state and node."""
        try:
            infos = read_snapshot_state(state).infos
        except KeyError:
            return [], 0, Status(Code.UNSCHEDULABLE, "Failed to read elasticQuotaSnapshot from cycleState")
        try:
            pfs = read_pre_filter_state(state)
        except KeyError:
            return [], 0, Status(Code.UNSCHEDULABLE, "Failed to read preFilterState from cycleState")
        h = self.handle

        def remove(p: PodInfo) -> Status:
            node_info.remove_pod(p)
            return h.run_pre_filter_extension_remove_pod(state, pod, p, node_info)

        def add(p: PodInfo) -> Status:
            node_info.add_pod(p)
            return h.run_pre_filter_extension_add_pod(state, pod, p, node_info)

        eq = infos.get(pod.namespace)
        # Least important first: a borrowing namespace loses its least important pods until it
        # is back within its min (used_over_min() is re-read after every removal).
        pods = list(node_info.pods)
        pods.sort(key=functools.cmp_to_key(self._ascending))
        more_than_min = eq is not None and eq.used_over_min_with(pfs.nominated_in_eq_with_pod_req)
        potential: list[PodInfo] = []
        for p in pods:
            peq = infos.get(p.namespace)
            if eq is not None:
                if peq is None:
                    continue
                if more_than_min:
                    chosen = p.namespace == pod.namespace and p.priority < pod.priority
                else:
                    chosen = p.namespace != pod.namespace and peq.used_over_min()
            else:
                chosen = peq is None and p.priority < pod.priority
            if chosen:
                potential.append(p)
                st = remove(p)
                if not st.is_success():
                    return [], 0, _as_error(st)
        if not potential:
            return (
                [],
                0,
                Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"No victims found on node {node_info.name} for preemptor pod {pod.name}",
                ),
            )

        # Without every potential victim the pod must fit, and its quota admit it.
        st = h.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not st.is_success():
            return [], 0, st
        if eq is not None and quota_violation(infos, eq, pfs.pod_req, pfs.pod_req, self.check):
            return [], 0, Status(Code.UNSCHEDULABLE, MSG_QUOTA_EXCEEDED)

        sort_by_importance(potential, self._more_important)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        def reprieve(p: PodInfo) -> tuple[bool, Status]:
            st = add(p)
            if not st.is_success():
                return False, st
            fits = h.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success()
            refused = eq is not None and quota_violation(
                infos, eq, pfs.nominated_in_eq_with_pod_req, pfs.nominated_with_pod_req, self.check
            )
            if not fits or refused:
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
        return victims, num_violating, Status(Code.SUCCESS)

    def _ascending(self, a: PodInfo, b: PodInfo) -> int:
        if self._more_important(b, a):
            return -1
        if self._more_important(a, b):
            return 1
        return 0


def _as_error(st: Status) -> Status:
    return st if st.code == Code.ERROR else Status(Code.ERROR, st.message())
