"""CycleState entries of CapacityScheduling, and the one quota test shared by PreFilter and
preemption."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kubesched.api.resources import Resource
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins import names

from .elasticquota import ElasticQuotaInfo, ElasticQuotaInfos

PRE_FILTER_STATE_KEY = "PreFilter" + names.CAPACITY_SCHEDULING
ELASTIC_QUOTA_SNAPSHOT_KEY = "ElasticQuotaSnapshot"

#: Which pods the sum-of-min test applies to (the ``minSumCheck`` arg).
MinSumCheck = Literal["BorrowingPods", "AllPods"]
BORROWING_PODS: MinSumCheck = "BorrowingPods"
ALL_PODS: MinSumCheck = "AllPods"


@dataclass(slots=True)
class PreFilterState:
    """Upstream ``PreFilterState``: the pod's request, and that request plus the requests of the
    nominated pods that would run first (same quota and at least as important: ``in_eq``; those,
    plus nominated pods of quotas within their min: ``total``)."""

    pod_req: Resource
    nominated_in_eq_with_pod_req: Resource
    nominated_with_pod_req: Resource

    def clone(self) -> PreFilterState:
        return self


@dataclass(slots=True)
class ElasticQuotaSnapshotState:
    """This cycle's copy of every quota; preemption's dry runs clone it per node."""

    infos: ElasticQuotaInfos

    def clone(self) -> ElasticQuotaSnapshotState:
        return ElasticQuotaSnapshotState(self.infos.clone())


def read_pre_filter_state(state: CycleState) -> PreFilterState:
    s = state.get(PRE_FILTER_STATE_KEY)
    if not isinstance(s, PreFilterState):
        raise KeyError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    return s


def read_snapshot_state(state: CycleState) -> ElasticQuotaSnapshotState:
    s = state.get(ELASTIC_QUOTA_SNAPSHOT_KEY)
    if not isinstance(s, ElasticQuotaSnapshotState):
        raise KeyError(f'error reading "{ELASTIC_QUOTA_SNAPSHOT_KEY}" from cycleState: not found')
    return s


#: Why a quota refuses a pod: its own max, or the sum of every quota's min.
OVER_MAX = "max"
OVER_MIN_SUM = "min"


def quota_violation(
    infos: ElasticQuotaInfos,
    eq: ElasticQuotaInfo,
    in_eq_request: Resource,
    total_request: Resource,
    check: MinSumCheck,
) -> str | None:
    """Would admitting the pod break its quota? ``OVER_MAX``, ``OVER_MIN_SUM`` or None.

    The namespace may never exceed its max. The sum of every quota's used may exceed the sum of
    their mins only for a pod that stays within its own namespace's min: such a pod claims its
    guarantee (``BorrowingPods``, the default). With ``AllPods`` the sum applies to every pod, as
    in scheduler-plugins, so a namespace within its min is refused too and must reclaim by
    preemption even where free room exists."""
    if eq.used_over_max_with(in_eq_request):
        return OVER_MAX
    borrowing = check == ALL_PODS or eq.used_over_min_with(in_eq_request)
    if borrowing and infos.aggregated_used_over_min_with(total_request):
        return OVER_MIN_SUM
    return None
