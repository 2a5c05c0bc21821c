"""CapacityScheduling: ElasticQuota max, borrowing within the sum of mins, reclaim by preemption,
status.used.

Ported from kubernetes-sigs/scheduler-plugins:
* pkg/capacityscheduling/elasticquota_test.go: TestReserveResource, TestUnReserveResource,
  TestUsedOverMinWith, TestUsedOverMaxWith, TestUsedOverMin, TestNewElasticQuotaInfo;
* pkg/capacityscheduling/capacity_scheduling_test.go: TestPreFilter, TestPostFilter, TestReserve,
  TestUnreserve, TestDryRunPreemption, TestPodEligibleToPreemptOthers, TestAddElasticQuota,
  TestUpdateElasticQuota, TestDeleteElasticQuota, TestAddPod, TestUpdatePod, TestDeletePod;
* pkg/controllers/elasticquota_controller_test.go: TestElasticQuotaController_Run (status.used; all
  cases but "update pods", whose two pods share one name).

Upstream's tables set a quota's ``Used`` directly; here usage always comes from pods, so each
table's used amount is a bound pod of that size in the namespace. Where our semantics differ on
purpose (see docs/tenancy.md) the case says so and asserts both.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.resources import Resource
from kubesched.config.errors import ConfigError
from kubesched.framework.events import QueueingHint
from kubesched.framework.preemption import Evaluator
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.capacityscheduling import CapacityScheduling
from kubesched.plugins.capacityscheduling.elasticquota import (
    LOWER_BOUND_OF_MIN,
    UPPER_BOUND_OF_MAX,
    ElasticQuotaInfo,
    InvalidElasticQuotaError,
    format_quantity,
    parse_elastic_quota,
)
from kubesched.plugins.capacityscheduling.plugin import quota_hint
from kubesched.plugins.capacityscheduling.preemption import Preemptor
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

GPU = "nvidia.com/gpu"
MID, HIGH = 100, 1000
EQ_API = "scheduling.x-k8s.io/v1alpha1"
CS = "CapacityScheduling"


# -------------------------------------------------------------------------------------------------
# builders
# -------------------------------------------------------------------------------------------------
def res(cpu: int = 0, mem: int = 0, eph: int = 0, gpu: int | None = None) -> Resource:
    """A ``framework.Resource`` literal: cpu in milli-units, memory and storage in bytes."""
    return Resource(cpu, mem, eph, 0, {GPU: gpu} if gpu is not None else {})


def pod(
    name: str, ns: str, mem: int = 0, cpu: int = 0, gpu: int = 0, priority: int = 0, node: str = ""
) -> dict[str, Any]:
    """Upstream's ``makePod(name, namespace, memReq, cpuReq, gpuReq, priority, uid, nodeName)``."""
    requests: dict[str, Any] = {}
    if mem:
        requests["memory"] = str(mem)
    if cpu:
        requests["cpu"] = f"{cpu}m"
    if gpu:
        requests[GPU] = str(gpu)
    w = make_pod(name).namespace(ns).uid(name).priority(priority)
    w.container(requests or None)
    if node:
        w.node(node)
    return w.obj()


def quota(
    ns: str, min_: dict[str, Any] | None = None, max_: dict[str, Any] | None = None, name: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if min_ is not None:
        spec["min"] = {k: str(v) for k, v in min_.items()}
    if max_ is not None:
        spec["max"] = {k: str(v) for k, v in max_.items()}
    return {
        "apiVersion": EQ_API,
        "kind": "ElasticQuota",
        "metadata": {"name": name or f"{ns}-eq", "namespace": ns},
        "spec": spec,
    }


def big_node(name: str = "node-a") -> dict[str, Any]:
    return make_node(name).capacity(cpu="1000", memory="1000Gi").obj()


def framework(
    quotas: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]] = (),  # type: ignore[assignment]
    *,
    check: str = "BorrowingPods",
    plugins: tuple[str, ...] = ("NodeResourcesFit",),
) -> TestFramework:
    return new_framework(
        [*plugins, CS], nodes=nodes, pods=list(pods), objects=quotas, args={CS: {"minSumCheck": check}}
    )


def quotas_from_table(table: dict[str, dict[str, int]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Quota objects (memory min/max) and one bound pod per quota holding its ``used`` memory."""
    objs, used = [], []
    for ns, q in table.items():
        objs.append(quota(ns, {"memory": q["min"]}, {"memory": q["max"]}))
        if q.get("used"):
            used.append(pod(f"{ns}-used", ns, mem=q["used"], node="node-a"))
    return objs, used


def plugin(fw: TestFramework) -> CapacityScheduling:
    p: CapacityScheduling = fw.plugin(CS)
    return p


def eq_status(fw: TestFramework, ns: str) -> dict[str, str] | None:
    """``status.used`` of the namespace's quota, once the writes queued so far are done."""
    fw.clock.run_due()
    for o in fw.cluster.list_objects(EQ_API, "ElasticQuota"):
        if o["metadata"]["namespace"] == ns:
            used: dict[str, str] | None = (o.get("status") or {}).get("used")
            return used
    raise KeyError(ns)


def bound(fw: TestFramework) -> dict[str, str]:
    return {k: p["spec"]["nodeName"] for k, p in fw.cluster.pods.items() if p["spec"].get("nodeName")}


# -------------------------------------------------------------------------------------------------
# elasticquota_test.go
# -------------------------------------------------------------------------------------------------
def test_reserve_resource() -> None:
    """TestReserveResource: "ElasticQuotaInfo ReserveResource"."""
    info = ElasticQuotaInfo("ns1", Resource(), Resource(), res(1000, 200, gpu=2))
    for p in (pod("t1-p1", "ns1", 50, 1000, 1), pod("t1-p2", "ns2", 100, 2000, 0), pod("t1-p3", "ns2", 0, 0, 2)):
        info.reserve_resource(PodInfo(p).requests)
    assert (info.used.milli_cpu, info.used.memory, info.used.scalar_resources[GPU]) == (4000, 350, 5)


def test_unreserve_resource() -> None:
    """TestUnReserveResource: "ElasticQuotaInfo UnReserveResource"."""
    info = ElasticQuotaInfo("ns1", Resource(), Resource(), res(4000, 200, gpu=5))
    for p in (pod("t1-p1", "ns1", 50, 1000, 1), pod("t1-p2", "ns2", 100, 2000, 0), pod("t1-p3", "ns2", 0, 0, 2)):
        info.unreserve_resource(PodInfo(p).requests)
    assert (info.used.milli_cpu, info.used.memory, info.used.scalar_resources[GPU]) == (1000, 50, 2)


NO_BOUND = None  # the quota has no min (max): upstream's nil, our unspecified list

OVER_MIN_WITH = [
    (
        "ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Bigger Than Min",
        res(4000, 200, gpu=5),
        res(3000, 100, gpu=5),
        res(1500, 100),
        True,
    ),
    (
        "ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Not Bigger Than Min",
        res(300, 100, gpu=5),
        res(4000, 200, gpu=5),
        res(100, 50),
        False,
    ),
    (
        "ElasticQuotaInfo OverMinWith ElasticQuotaInfo Doesn't Have Max",
        res(3900, 100, gpu=5),
        NO_BOUND,
        res(100, 100),
        True,
    ),
    (
        "ElasticQuotaInfo OverMinWith Used And Min Don't Have GPU Value",
        res(10, 10),
        res(3000, 100),
        res(10, 10, gpu=5),
        True,
    ),
    ("ElasticQuotaInfo OverMinWith EphemeralStorage", res(10, 10, 10), res(3000, 100, 100), res(10, 10, 10), False),
]


@pytest.mark.parametrize(("name", "used", "min_", "pod_req", "want"), OVER_MIN_WITH, ids=[c[0] for c in OVER_MIN_WITH])
def test_used_over_min_with(name: str, used: Resource, min_: Resource | None, pod_req: Resource, want: bool) -> None:
    from kubesched.plugins.capacityscheduling.elasticquota import parse_min

    info = ElasticQuotaInfo("ns1", min_ if min_ is not None else parse_min(None), Resource(), used)
    assert info.used_over_min_with(pod_req) is want


OVER_MAX_WITH = [
    (
        "ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Bigger Than Max",
        res(4000, 200, gpu=5),
        res(4000, 200, gpu=5),
        res(100, 100),
        True,
    ),
    (
        "ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Not Bigger Than Max",
        res(3900, 100, gpu=5),
        res(4000, 200, gpu=5),
        res(100, 100),
        False,
    ),
    (
        "ElasticQuotaInfo OverMaxWith ElasticQuotaInfo Doesn't Have Max",
        res(3900, 100, gpu=5),
        NO_BOUND,
        res(100, 100),
        False,
    ),
    (
        "ElasticQuotaInfo OverMaxWith Used And Max Don't Have GPU Value",
        res(10, 10),
        res(3000, 100),
        res(10, 10, gpu=5),
        False,
    ),
    ("ElasticQuotaInfo OverMaxWith EphemeralStorage", res(10, 10, 10), res(3000, 100, 100), res(10, 10, 100), True),
]


@pytest.mark.parametrize(("name", "used", "max_", "pod_req", "want"), OVER_MAX_WITH, ids=[c[0] for c in OVER_MAX_WITH])
def test_used_over_max_with(name: str, used: Resource, max_: Resource | None, pod_req: Resource, want: bool) -> None:
    from kubesched.plugins.capacityscheduling.elasticquota import parse_max

    info = ElasticQuotaInfo("ns1", Resource(), max_ if max_ is not None else parse_max(None), used)
    assert info.used_over_max_with(pod_req) is want


OVER_MIN = [
    ("ElasticQuotaInfo OverMin Used Is Bigger Than Min", res(4000, 200, gpu=5), res(3000, 300, gpu=5), True),
    ("ElasticQuotaInfo OverMin Used Is Not Bigger Than Min", res(300, 100, gpu=5), res(4000, 200, gpu=5), False),
    ("ElasticQuotaInfo OverMin ElasticQuotaInfo Doesn't Have Min", res(3900, 100, gpu=5), NO_BOUND, True),
    ("ElasticQuotaInfo OverMin Used Has GPU But Min Doesn't Have GPU", res(300, 100, gpu=5), res(4000, 200), True),
    ("ElasticQuotaInfo OverMin EphemeralStorage", res(300, 100, 100), res(4000, 200, 10), True),
]


@pytest.mark.parametrize(("name", "used", "min_", "want"), OVER_MIN, ids=[c[0] for c in OVER_MIN])
def test_used_over_min(name: str, used: Resource, min_: Resource | None, want: bool) -> None:
    from kubesched.plugins.capacityscheduling.elasticquota import parse_min

    info = ElasticQuotaInfo("ns1", min_ if min_ is not None else parse_min(None), Resource(), used)
    assert info.used_over_min() is want


def rl(cpu_milli: int, mem: int) -> dict[str, str]:
    """Upstream's ``makeResourceList(cpu, mem)``: cpu in milli-units, memory in bytes."""
    return {"cpu": f"{cpu_milli}m", "memory": str(mem)}


U, L = UPPER_BOUND_OF_MAX, LOWER_BOUND_OF_MIN
NEW_INFO = [
    # (name, max, min, want max (cpu, mem, eph), want min (cpu, mem, eph))
    # Upstream leaves ephemeral-storage of a max that names only cpu and memory at 0 (any pod
    # asking for storage is then over max); KEP 9 says max is unlimited by default, per resource.
    ("ElasticQuota", rl(100, 1000), rl(10, 100), (100, 1000, U), (10, 100, 0)),
    ("ElasticQuota Without Max", None, rl(10, 100), (U, U, U), (10, 100, 0)),
    ("ElasticQuota Without Min", rl(100, 1000), None, (100, 1000, U), (L, L, L)),
    ("ElasticQuota Without Max and Min", None, None, (U, U, U), (L, L, L)),
]


@pytest.mark.parametrize(("name", "max_", "min_", "want_max", "want_min"), NEW_INFO, ids=[c[0] for c in NEW_INFO])
def test_new_elastic_quota_info(
    name: str,
    max_: dict[str, str] | None,
    min_: dict[str, str] | None,
    want_max: tuple[int, int, int],
    want_min: tuple[int, int, int],
) -> None:
    """TestNewElasticQuotaInfo and TestAddElasticQuota (same four quotas, parsed from objects)."""
    info = ElasticQuotaInfo.new("ns1", min_, max_, rl(0, 0))
    for got in (info, parse_elastic_quota(quota("ns1", min_, max_, name="t1-eq1"))):
        assert (got.max.milli_cpu, got.max.memory, got.max.ephemeral_storage) == want_max
        assert (got.min.milli_cpu, got.min.memory, got.min.ephemeral_storage) == want_min
        assert (got.used.milli_cpu, got.used.memory) == (0, 0)
        assert got.pods == set()


# -------------------------------------------------------------------------------------------------
# TestPreFilter
# -------------------------------------------------------------------------------------------------
PRE_FILTER = [
    {
        "name": "pod subjects to ElasticQuota",
        "quotas": {"ns1": {"min": 1000, "max": 2000, "used": 300}},
        "pods": [("ns1-p1", "ns1", 500), ("ns1-p2", "ns1", 1800)],
        "want": ["Success", "Unschedulable"],
        "message": "Pod ns1/ns1-p2 is rejected in PreFilter because ElasticQuota ns1 is more than Max",
    },
    {
        # ns2 would use 700 of its min 1000: under AllPods (scheduler-plugins) the sum of used
        # (2500) over the sum of min (2000) refuses it anyway; under BorrowingPods it claims its
        # guarantee (and reclaims it by preemption if the nodes are full).
        "name": "the sum of used is bigger than the sum of min",
        "quotas": {
            "ns1": {"min": 1000, "max": 2000, "used": 1800},
            "ns2": {"min": 1000, "max": 2000, "used": 200},
        },
        "pods": [("ns2-p1", "ns2", 500)],
        "want": ["Unschedulable"],
        "want_borrowing_pods": ["Success"],
        "message": "Pod ns2/ns2-p1 is rejected in PreFilter because total ElasticQuota used is more than min",
    },
    {
        "name": "without elasticQuotaInfo",
        "quotas": {},
        "pods": [("ns2-p1", "ns2", 500)],
        "want": ["Success"],
    },
]


@pytest.mark.parametrize("check", ["AllPods", "BorrowingPods"])
@pytest.mark.parametrize("case", PRE_FILTER, ids=lambda c: c["name"])
def test_pre_filter(case: dict[str, Any], check: str) -> None:
    objs, used = quotas_from_table(case["quotas"])
    fw = framework(objs, [big_node()], used, check=check)
    want = case.get("want_borrowing_pods", case["want"]) if check == "BorrowingPods" else case["want"]
    for (name, ns, mem), code in zip(case["pods"], want, strict=True):
        st = fw.run_pre_filter(pod(name, ns, mem)).status
        assert st.code.upstream_name == code, st
        if code == "Unschedulable":
            assert st.message() == case["message"]
            assert st.plugin == CS


def test_pre_filter_counts_nominated_pods_of_the_same_quota() -> None:
    """PreFilter adds the requests of nominated pods that go first (same quota, priority >=)."""
    fw = framework([quota("ns1", {"memory": 1000}, {"memory": 2000})], [big_node()])
    nominated = PodInfo(pod("nominated", "ns1", 1500, priority=HIGH))
    fw.scheduler.queue.add_nominated_pod(nominated, "node-a")
    st = fw.run_pre_filter(pod("p", "ns1", 600, priority=MID)).status
    assert st.message() == "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    # A less important nominated pod does not go first.
    assert fw.run_pre_filter(pod("q", "ns1", 600, priority=HIGH + 1)).status.is_success()


def test_pre_filter_asks_the_nominator_about_every_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's PreFilter (scheduler-plugins pkg/capacityscheduling/capacity_scheduling.go) calls
    ``NominatedPodsForNode`` for every node; no other member of the handle can skip that walk
    (an earlier version asked a ``has_nominated_pods`` the handle never had)."""
    fw = framework([quota("ns1", {"memory": 1000}, {"memory": 2000})], [big_node()])
    fw.scheduler.queue.add_nominated_pod(PodInfo(pod("nominated", "ns1", 1500, priority=HIGH)), "node-a")
    handle = fw.scheduler.handles[fw.framework.profile_name]
    monkeypatch.setattr(handle, "has_nominated_pods", lambda: False, raising=False)
    st = fw.run_pre_filter(pod("p", "ns1", 600, priority=MID)).status
    assert st.message() == "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max"


# -------------------------------------------------------------------------------------------------
# TestReserve / TestUnreserve
# -------------------------------------------------------------------------------------------------
def test_reserve() -> None:
    """TestReserve "Reserve pods": ns1 used 300 -> 350; a pod of ns2 (no quota) leaves it alone."""
    fw = framework(
        [quota("ns1", {"memory": 1000}, {"memory": 2000})], [big_node()], [pod("used", "ns1", 300, node="node-a")]
    )
    fw.run_pre_filter(pod("probe", "ns1"))
    cs = plugin(fw)
    assert fw.run_reserve(pod("t1-p1", "ns1", 50, priority=MID), "node-a").is_success()
    assert cs.usage.used["ns1"].memory == 350
    assert cs.usage.pods_of("ns1") == {"used", "t1-p1"}
    assert fw.run_reserve(pod("t1-p2", "ns2", 50, priority=MID), "node-a").is_success()
    assert cs.usage.used["ns1"].memory == 350
    assert eq_status(fw, "ns1") == {"memory": "350"}


def test_unreserve() -> None:
    """TestUnreserve "Unreserve pods": pods t1-p3, t1-p4 counted (300); unreserving t1-p1 (not
    counted) and t1-p2 (other namespace) changes nothing, t1-p3 releases its 50."""
    fw = framework(
        [quota("ns1", {"memory": 1000}, {"memory": 2000})],
        [big_node()],
        [pod("t1-p3", "ns1", 50, node="node-a"), pod("t1-p4", "ns1", 250, node="node-a")],
    )
    fw.run_pre_filter(pod("probe", "ns1"))
    cs = plugin(fw)
    for name, ns, want in (("t1-p1", "ns1", 300), ("t1-p2", "ns2", 300), ("t1-p3", "ns1", 250)):
        fw.run_unreserve(pod(name, ns, 50, priority=MID), "node-a")
        assert cs.usage.used["ns1"].memory == want
    assert cs.usage.pods_of("ns1") == {"t1-p4"}
    assert eq_status(fw, "ns1") == {"memory": "250"}


# -------------------------------------------------------------------------------------------------
# TestPostFilter / TestDryRunPreemption
# -------------------------------------------------------------------------------------------------
def node_150() -> dict[str, Any]:
    return make_node("node-a").res({"memory": "150"}).obj()


IN_NAMESPACE = {
    "pod": ("t1-p1", "ns1", HIGH),
    "exist": [("t1-p2", "ns1", MID), ("t1-p3", "ns2", MID), ("t1-p4", "ns2", MID)],
    "quotas": {"ns1": {"min": 50, "max": 200}, "ns2": {"min": 200, "max": 200}},
}
CROSS_NAMESPACE = {
    "pod": ("t1-p1", "ns1", HIGH),
    "exist": [("t1-p2", "ns1", MID), ("t1-p3", "ns2", MID), ("t1-p4", "ns2", MID)],
    "quotas": {"ns1": {"min": 150, "max": 200}, "ns2": {"min": 50, "max": 200}},
}
WITHOUT_QUOTAS = {
    "pod": ("t1-p1", "ns1", HIGH),
    "exist": [("t1-p2", "ns1", MID), ("t1-p3", "ns2", MID), ("t1-p4", "ns2", MID)],
    "quotas": {},
}

POST_FILTER = [
    # (name, case, the victims that may be deleted, how many are)
    ("in-namespace preemption", IN_NAMESPACE, {"ns1/t1-p2"}, 1),
    # ns2 uses 100 of min 50: once one of its pods goes it is back within its min, so only one
    # (either: equal priority) may go; ns1's own pod never does.
    ("cross-namespace preemption", CROSS_NAMESPACE, {"ns2/t1-p3", "ns2/t1-p4"}, 1),
    # No quotas: lower-priority pods of namespaces without a quota; one is enough.
    ("without elasticQuotas", WITHOUT_QUOTAS, {"ns1/t1-p2", "ns2/t1-p3", "ns2/t1-p4"}, 1),
]


def setup_preemption(case: dict[str, Any]) -> tuple[TestFramework, dict[str, Any]]:
    objs = [quota(ns, {"memory": q["min"]}, {"memory": q["max"]}) for ns, q in case["quotas"].items()]
    exist = [pod(n, ns, 50, priority=pr, node="node-a") for n, ns, pr in case["exist"]]
    fw = framework(objs, [node_150()], exist)
    name, ns, pr = case["pod"]
    return fw, pod(name, ns, 50, priority=pr)


@pytest.mark.parametrize(("name", "case", "allowed", "count"), POST_FILTER, ids=[c[0] for c in POST_FILTER])
def test_post_filter(name: str, case: dict[str, Any], allowed: set[str], count: int) -> None:
    fw, p = setup_preemption(case)
    fw.add_pod(p)  # the Evaluator reads the preemptor's latest copy from the cluster
    pf = fw.run_pre_filter(p)
    assert pf.status.is_success()
    st = fw.run_filter(p, "node-a", pre_filter=False)
    assert st.code == Code.UNSCHEDULABLE and st.message() == "Insufficient memory"
    before = set(fw.cluster.pods)
    result, status = fw.framework.run_post_filter_plugins(fw.state, fw.pod_info(p), {"node-a": st})
    assert status.is_success(), status
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == "node-a"
    gone = before - set(fw.cluster.pods)
    assert len(gone) == count and gone <= allowed
    preempted = [e for e in fw.cluster.events if e.reason == "Preempted"]
    assert [f"{e.namespace}/{e.name}" for e in preempted] == sorted(gone)
    assert preempted[0].note == f"Preempted by pod {p['metadata']['uid']} on node node-a"


DRY_RUN = [
    ("in-namespace preemption", IN_NAMESPACE, ["t1-p1"]),
    # t1-p2 of ns2 has the high priority: t1-p3 (mid) is removed first and brings ns2 back to
    # its min, so t1-p2 is no potential victim at all.
    (
        "cross-namespace preemption",
        {
            **CROSS_NAMESPACE,
            "pod": ("t1-p", "ns1", HIGH),
            "exist": [("t1-p1", "ns1", MID), ("t1-p2", "ns2", HIGH), ("t1-p3", "ns2", MID)],
        },
        ["t1-p3"],
    ),
]
DRY_RUN[0] = (
    "in-namespace preemption",
    {
        **IN_NAMESPACE,
        "pod": ("t1-p", "ns1", HIGH),
        "exist": [("t1-p1", "ns1", MID), ("t1-p2", "ns2", MID), ("t1-p3", "ns2", MID)],
    },
    ["t1-p1"],
)


@pytest.mark.parametrize(("name", "case", "victims"), DRY_RUN, ids=[c[0] for c in DRY_RUN])
def test_dry_run_preemption(name: str, case: dict[str, Any], victims: list[str]) -> None:
    fw, p = setup_preemption(case)
    assert fw.run_pre_filter(p).status.is_success()
    pi = fw.pod_info(p)
    preemptor = Preemptor(fw.framework.handle, fw.state, "BorrowingPods", lambda: 0)
    ev = Evaluator(CS, fw.framework.handle, preemptor)
    candidates, _, err = ev.dry_run_preemption(fw.state, pi, fw.nodes(), [], 0, 1)
    assert err == ""
    assert [(c.name, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in candidates] == [
        ("node-a", victims, 0)
    ]
    assert len(fw.cluster.pods) == 3  # a dry run deletes nothing


# -------------------------------------------------------------------------------------------------
# TestPodEligibleToPreemptOthers
# -------------------------------------------------------------------------------------------------
def terminating(name: str, ns: str, mem: int, priority: int) -> dict[str, Any]:
    p = pod(name, ns, mem, priority=priority, node="node-a")
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return p


UU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)")
ELIGIBLE = [
    {
        "name": "Pod with PreemptNever preemption policy",
        "pod": make_pod("t1-p1").uid("t1-p1").priority(HIGH).preemption_policy("Never").obj(),
        "exist": [pod("t1-p0", "ns1", 50, 10, priority=MID, node="node-a")],
        "status": UU,
        "quotas": {"ns1": (50, 150)},
        "want": False,
    },
    {
        "name": "Pod with unschedulableAndUnresolvable nominated node",
        "pod": make_pod("t1-p1").uid("t1-p1").priority(HIGH).nominated_node("node-a").obj(),
        "exist": [pod("t1-p0", "ns1", 50, 10, priority=MID, node="node-a")],
        "status": UU,
        "quotas": {"ns1": (50, 150)},
        "want": True,
    },
    {
        "name": "Pod with terminating pod in the same namespace",
        "pod": make_pod("t1-p1").namespace("ns1").uid("t1-p1").priority(HIGH).nominated_node("node-a").obj(),
        "exist": [terminating("t1-p0", "ns1", 0, MID)],
        "status": Status(),
        "quotas": {"ns1": (50, 150)},
        "want": False,
    },
    {
        # ns2's used 100 is the terminating pod's own request here.
        "name": "Pod with terminating pod in another namespace",
        "pod": make_pod("t1-p1").namespace("ns1").uid("t1-p1").priority(HIGH).nominated_node("node-a").obj(),
        "exist": [terminating("t1-p0", "ns2", 100, MID)],
        "status": Status(),
        "quotas": {"ns1": (50, 150), "ns2": (50, 150)},
        "want": False,
    },
    {
        "name": "Pod without elasticQuotas and terminating pod exists in the same namespace",
        "pod": make_pod("t1-p1").namespace("ns1").uid("t1-p1").priority(HIGH).nominated_node("node-a").obj(),
        "exist": [terminating("t1-p0", "ns2", 0, MID)],
        "status": Status(),
        "quotas": {},
        "want": False,
    },
    {
        "name": "Pod without ElasticQuotas and terminating pod exists in another namespace",
        "pod": make_pod("t1-p1").namespace("ns1").uid("t1-p1").priority(HIGH).nominated_node("node-a").obj(),
        "exist": [terminating("t1-p0", "ns2", 100, MID)],
        "status": Status(),
        "quotas": {"ns2": (50, 150)},
        "want": True,
    },
]


@pytest.mark.parametrize("case", ELIGIBLE, ids=lambda c: c["name"])
def test_pod_eligible_to_preempt_others(case: dict[str, Any]) -> None:
    objs = [quota(ns, {"memory": lo}, {"memory": hi}) for ns, (lo, hi) in case["quotas"].items()]
    fw = framework(objs, [node_150()], case["exist"])
    assert fw.run_pre_filter(case["pod"]).status.is_success()
    preemptor = Preemptor(fw.framework.handle, fw.state, "BorrowingPods", lambda: 0)
    ok, _ = preemptor.pod_eligible_to_preempt_others(fw.pod_info(case["pod"]), case["status"])
    assert ok is case["want"]


def test_not_eligible_without_pre_filter_state() -> None:
    fw = framework([], [node_150()])
    preemptor = Preemptor(fw.framework.handle, fw.new_cycle(), "BorrowingPods", lambda: 0)
    assert preemptor.pod_eligible_to_preempt_others(fw.pod_info(pod("p", "ns1")), Status()) == (
        False,
        "not eligible due to failed to read from cycleState",
    )


# -------------------------------------------------------------------------------------------------
# status.used (elasticquota_controller_test.go, TestElasticQuotaController_Run)
# -------------------------------------------------------------------------------------------------
def container_pod(
    ns: str, name: str, containers: list[dict[str, Any]], inits: list[dict[str, Any]] = (), node: str = ""
) -> dict[str, Any]:  # type: ignore[assignment]
    w = make_pod(name).namespace(ns)
    for c in containers:
        w.container(c)
    for c in inits:
        w.init_req(c)
    if node:
        w.node(node)
    return w.obj()


def rlist(cpu: int, mem: int, gpu: int | None = None) -> dict[str, Any]:
    """The controller tests' ``MakeResourceList().CPU(c).Mem(m).GPU(g)``: whole cores, bytes."""
    out: dict[str, Any] = {"cpu": cpu, "memory": mem}
    if gpu is not None:
        out[GPU] = gpu
    return out


# A pod bound to node-a stands for a Running pod; an unbound one for a Pending pod.
STATUS_USED = [
    {
        "name": "no init Containers pod",
        "quotas": [quota("t1-ns1", rlist(3, 5), rlist(5, 15, 1), "t1-eq1")],
        "pods": [
            container_pod("t1-ns1", "pod1", [rlist(1, 2, 1)], node="node-a"),
            container_pod("t1-ns1", "pod2", [rlist(1, 2, 0)]),
        ],
        "want": {"t1-ns1": rlist(1, 2, 1)},
    },
    {
        "name": "have init Containers pod",
        "quotas": [quota("t2-ns1", rlist(3, 5), rlist(5, 15), "t2-eq1")],
        "pods": [
            container_pod("t2-ns1", "pod1", [rlist(1, 2), rlist(1, 2)], node="node-a"),
            container_pod("t2-ns1", "pod2", [rlist(2, 1), rlist(1, 1)], [rlist(2, 1), rlist(2, 3)], node="node-a"),
        ],
        "want": {"t2-ns1": rlist(5, 7)},
    },
    {
        "name": "min and max have the same fields",
        "quotas": [quota("t4-ns1", rlist(3, 5), rlist(5, 15), "t4-eq1")],
        "pods": [],
        "want": {"t4-ns1": rlist(0, 0)},
    },
    {
        "name": "min and max have the different fields",
        "quotas": [quota("t5-ns1", rlist(3, 5, 2), rlist(5, 15), "t5-eq1")],
        "pods": [],
        "want": {"t5-ns1": rlist(0, 0, 0)},
    },
    {
        "name": "pod and eq in the different namespaces",
        "quotas": [
            quota("t6-ns1", rlist(3, 5, 2), rlist(50, 15), "t6-eq1"),
            quota("t6-ns2", rlist(3, 5, 2), rlist(50, 15), "t6-eq2"),
        ],
        "pods": [container_pod("t6-ns3", "pod1", [rlist(1, 2, 1), rlist(1, 2)], node="node-a")],
        "want": {"t6-ns1": rlist(0, 0, 0), "t6-ns2": rlist(0, 0, 0)},
    },
]


@pytest.mark.parametrize("case", STATUS_USED, ids=lambda c: c["name"])
def test_status_used(case: dict[str, Any]) -> None:
    node = make_node("node-a").capacity(cpu="100", memory="100Gi").res({GPU: "8"}).obj()
    fw = framework(case["quotas"], [node], case["pods"])
    fw.run_pre_filter(pod("probe", "elsewhere"))
    for ns, want in case["want"].items():
        assert eq_status(fw, ns) == {k: str(v) for k, v in sorted(want.items())}


def test_format_quantity() -> None:
    assert [format_quantity("cpu", v) for v in (0, 1500, 2000)] == ["0", "1500m", "2"]
    assert [format_quantity("memory", v) for v in (0, 2**30, 10**9, 1000, 1536)] == ["0", "1Gi", "1G", "1k", "1536"]
    assert format_quantity(GPU, 3) == "3"


# -------------------------------------------------------------------------------------------------
# behaviour in the whole scheduler
# -------------------------------------------------------------------------------------------------
def cpu_pod(name: str, ns: str, cpu: str, priority: int = 0) -> dict[str, Any]:
    return make_pod(name).namespace(ns).req(cpu=cpu).priority(priority).obj()


def cpu_quota(ns: str, lo: str, hi: str) -> dict[str, Any]:
    return quota(ns, {"cpu": lo}, {"cpu": hi})


PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": CS}]},
                "postFilter": {"disabled": [{"name": "*"}], "enabled": [{"name": CS}]},
            },
        }
    ],
}


def scheduler(quotas: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> TestFramework:
    return new_framework(PROFILE, nodes=nodes, objects=quotas)


def failures(fw: TestFramework, key: str) -> list[str]:
    return [e.note for e in fw.cluster.events if e.reason == "FailedScheduling" and f"{e.namespace}/{e.name}" == key]


def test_max_exceeded_in_the_scheduler() -> None:
    fw = scheduler([cpu_quota("a", "2", "2")], [make_node("n1").capacity(cpu="8").obj()])
    for i in range(3):
        fw.add_pod(cpu_pod(f"p{i}", "a", "1"))
    fw.schedule()
    assert sorted(bound(fw)) == ["a/p0", "a/p1"]
    assert failures(fw, "a/p2")[0].startswith(
        "0/1 nodes are available: Pod a/p2 is rejected in PreFilter because ElasticQuota a is more than Max."
    )
    assert eq_status(fw, "a") == {"cpu": "2"}


def test_borrowing_within_idle_guarantees_then_refused_when_the_min_sum_is_exhausted() -> None:
    """a (min 2) borrows b's idle guarantee (min 2) up to the sum of mins (4), not beyond, although
    its max (6) and the node (8 CPU) would allow more."""
    fw = scheduler([cpu_quota("a", "2", "6"), cpu_quota("b", "2", "6")], [make_node("n1").capacity(cpu="8").obj()])
    for i in range(5):
        fw.add_pod(cpu_pod(f"p{i}", "a", "1"))
    fw.schedule()
    assert sorted(bound(fw)) == ["a/p0", "a/p1", "a/p2", "a/p3"]
    assert failures(fw, "a/p4")[-1].startswith(
        "0/1 nodes are available: Pod a/p4 is rejected in PreFilter because total ElasticQuota used is more than min."
    )
    assert eq_status(fw, "a") == {"cpu": "4"}
    assert eq_status(fw, "b") == {"cpu": "0"}
    # b claims its guarantee: the node has room (8 CPU), so no preemption is needed.
    fw.add_pod(cpu_pod("q0", "b", "1"))
    fw.schedule()
    assert "b/q0" in bound(fw)
    assert not [e for e in fw.cluster.events if e.reason == "Preempted"]


@pytest.mark.parametrize("check", ["BorrowingPods", "AllPods"])
def test_reclaim_preempts_borrowers_only(check: str) -> None:
    """b (within its min) reclaims by preempting a's borrowed pods, never c's, which is within its
    min; a's pods go although their priority is higher than b's."""
    quotas = [cpu_quota("a", "2", "8"), cpu_quota("c", "2", "8"), cpu_quota("b", "4", "8")]
    cfg = {
        **PROFILE,
        "profiles": [{**PROFILE["profiles"][0], "pluginConfig": [{"name": CS, "args": {"minSumCheck": check}}]}],
    }  # type: ignore[dict-item]
    fw = new_framework(cfg, nodes=[make_node("n1").capacity(cpu="8").obj()], objects=quotas)
    for i in range(2):
        fw.add_pod(cpu_pod(f"c{i}", "c", "1", priority=0))
    fw.schedule()
    for i in range(6):
        fw.add_pod(cpu_pod(f"a{i}", "a", "1", priority=100))
    fw.schedule()
    assert len(bound(fw)) == 8
    fw.add_pod(cpu_pod("b0", "b", "2", priority=50))
    fw.schedule()
    preempted = sorted(f"{e.namespace}/{e.name}" for e in fw.cluster.events if e.reason == "Preempted")
    assert len(preempted) == 2 and all(k.startswith("a/") for k in preempted)
    placed = bound(fw)
    assert placed["b/b0"] == "n1"
    assert {"c/c0", "c/c1"} <= set(placed)
    assert eq_status(fw, "a") == {"cpu": "4"} and eq_status(fw, "b") == {"cpu": "2"}


def test_borrowing_pod_preempts_only_lower_priority_pods_of_its_own_namespace() -> None:
    """A pod that would take its namespace over its min only preempts its own namespace's
    lower-priority pods (KEP 9, "restricted single-namespace preemption")."""
    quotas = [cpu_quota("a", "1", "4"), cpu_quota("b", "3", "4")]
    fw = scheduler(quotas, [make_node("n1").capacity(cpu="4").obj()])
    fw.add_pod(cpu_pod("low", "a", "1", priority=0))
    for i in range(3):
        fw.add_pod(cpu_pod(f"b{i}", "b", "1", priority=0))
    fw.schedule()
    fw.add_pod(cpu_pod("high", "a", "1", priority=100))
    fw.schedule()
    preempted = [f"{e.namespace}/{e.name}" for e in fw.cluster.events if e.reason == "Preempted"]
    assert preempted == ["a/low"]
    assert bound(fw)["a/high"] == "n1"


def test_pod_deletion_releases_usage() -> None:
    fw = scheduler([cpu_quota("a", "2", "2")], [make_node("n1").capacity(cpu="8").obj()])
    for i in range(3):
        fw.add_pod(cpu_pod(f"p{i}", "a", "1"))
    fw.schedule()
    assert sorted(bound(fw)) == ["a/p0", "a/p1"]
    fw.cluster.delete_pod(fw.cluster.pods["a/p0"])
    fw.schedule()  # the AssignedPod delete event requeues p2; its PreFilter sees p0 gone
    assert sorted(bound(fw)) == ["a/p1", "a/p2"]
    assert eq_status(fw, "a") == {"cpu": "2"}


def test_quota_created_later_counts_existing_pods() -> None:
    fw = scheduler([], [make_node("n1").capacity(cpu="8").obj()])
    for i in range(2):
        fw.add_pod(cpu_pod(f"p{i}", "a", "1"))
    fw.schedule()
    fw.cluster.create_object(EQ_API, "ElasticQuota", cpu_quota("a", "2", "2"))
    fw.add_pod(cpu_pod("p2", "a", "1"))
    fw.schedule()
    assert "a/p2" not in bound(fw)
    assert "because ElasticQuota a is more than Max" in failures(fw, "a/p2")[0]
    assert eq_status(fw, "a") == {"cpu": "2"}


# -------------------------------------------------------------------------------------------------
# invalid quotas, args, events
# -------------------------------------------------------------------------------------------------
def test_min_above_max_is_an_object_error_of_the_quota() -> None:
    bad = quota("a", {"cpu": "8", "memory": "1Gi"}, {"cpu": "6", "memory": "2Gi"}, "quota-a")
    fw = scheduler([bad, cpu_quota("b", "1", "2")], [make_node("n1").capacity(cpu="8").obj()])
    fw.add_pod(cpu_pod("p", "a", "1"))
    fw.add_pod(cpu_pod("q", "b", "1"))
    fw.schedule(until=fw.clock.now() + 5)
    err = (
        'ElasticQuota.scheduling.x-k8s.io "quota-a" is invalid: '
        'spec.min.cpu: Invalid value: "8": must be less than or equal to spec.max.cpu'
    )
    assert failures(fw, "a/p")[0] == f'running PreFilter plugin "CapacityScheduling": {err}'
    assert "b/q" in bound(fw)
    warnings = [e for e in fw.cluster.events if e.reason == "InvalidElasticQuota"]
    assert [(e.namespace, e.name, e.type, e.note) for e in warnings] == [("a", "quota-a", "Warning", err)]


def test_invalid_quantities_are_reported_together() -> None:
    bad = quota("a", {"cpu": "lots", "memory": "-1"}, {"cpu": "2"}, "quota-a")
    with pytest.raises(InvalidElasticQuotaError) as err:
        parse_elastic_quota(bad)
    assert str(err.value).startswith('ElasticQuota.scheduling.x-k8s.io "quota-a" is invalid: [spec.min.cpu: ')
    assert 'spec.min.memory: Invalid value: "-1": must be greater than or equal to 0]' in str(err.value)
    assert [e.field for e in err.value.errors] == ["spec.min.cpu", "spec.min.memory"]


def test_only_the_first_quota_of_a_namespace_is_used() -> None:
    fw = scheduler(
        [
            cpu_quota("a", "1", "1") | {"metadata": {"name": "z", "namespace": "a"}},
            cpu_quota("a", "2", "2") | {"metadata": {"name": "first", "namespace": "a"}},
        ],
        [make_node("n1").capacity(cpu="8").obj()],
    )
    for i in range(3):
        fw.add_pod(cpu_pod(f"p{i}", "a", "1"))
    fw.schedule(until=fw.clock.now() + 5)
    assert len(bound(fw)) == 2  # max 2 of "first", not 1 of "z"
    notes = [e.note for e in fw.cluster.events if e.reason == "InvalidElasticQuota"]
    assert notes == ["only one ElasticQuota per namespace is supported; a/first is used"]


def test_args_are_validated() -> None:
    with pytest.raises(ConfigError) as err:
        new_framework([CS], args={CS: {"minSumCheck": "Sometimes"}})
    assert [str(e) for e in err.value.errors] == [
        'profiles[0].pluginConfig[0].args.minSumCheck: must be one of "BorrowingPods", "AllPods", got "Sometimes"'
    ]
    with pytest.raises(ConfigError):
        new_framework([CS], args={CS: {"unknown": 1}})


def test_quota_hint_ignores_status_only_updates() -> None:
    old = cpu_quota("a", "1", "2")
    assert quota_hint({}, old, {**old, "status": {"used": {"cpu": "1"}}}) == QueueingHint.QUEUE_SKIP
    assert quota_hint({}, old, cpu_quota("a", "1", "3")) == QueueingHint.QUEUE
    assert quota_hint({}, None, old) == QueueingHint.QUEUE
    assert quota_hint({}, old, None) == QueueingHint.QUEUE


def test_quota_raised_requeues_the_pod() -> None:
    fw = scheduler([cpu_quota("a", "1", "1")], [make_node("n1").capacity(cpu="8").obj()])
    fw.add_pod(cpu_pod("p0", "a", "1"))
    fw.add_pod(cpu_pod("p1", "a", "1"))
    fw.schedule(until=fw.clock.now() + 10)
    assert "a/p1" not in bound(fw)
    start = fw.clock.now()
    fw.cluster.create_object(EQ_API, "ElasticQuota", cpu_quota("a", "2", "2"))
    fw.schedule(until=start + 10)
    assert fw.scheduler.stats.bound_at[fw.cluster.pods["a/p1"]["metadata"]["uid"]] < start + 10


def test_status_writes_happen_off_the_cycle_and_a_failed_one_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    fw = framework([quota("ns1", {"memory": 1000}, {"memory": 2000})], [big_node()])
    fw.run_pre_filter(pod("probe", "ns1"))
    fw.clock.run_due()
    writes: list[dict[str, Any]] = []
    real = fw.cluster.update_object_status

    def flaky(obj: Any, status: Any) -> None:
        writes.append(dict(status))
        if len(writes) == 1:
            raise RuntimeError("the server is currently unable to handle the request")
        real(obj, status)

    monkeypatch.setattr(fw.cluster, "update_object_status", flaky)
    fw.run_reserve(pod("p1", "ns1", 100), "node-a")
    assert writes == []  # not during Reserve: queued on the backend
    assert eq_status(fw, "ns1") == {"memory": "0"}  # the write failed
    fw.run_reserve(pod("p2", "ns1", 50), "node-a")
    assert eq_status(fw, "ns1") == {"memory": "150"}
    assert [w["used"] for w in writes] == [{"memory": "100"}, {"memory": "150"}]


# -------------------------------------------------------------------------------------------------
# TestUpdateElasticQuota, TestDeleteElasticQuota, TestAddPod, TestUpdatePod, TestDeletePod: upstream
# feeds informer events to the plugin; here the same changes go through the simulated cluster and
# the plugin sees them at its next PreFilter.
# -------------------------------------------------------------------------------------------------
def eq_t1() -> dict[str, Any]:
    """``makeEQ("ns1", "t1-eq1", makeResourceList(100, 1000), makeResourceList(10, 100))``."""
    return quota("ns1", rl(10, 100), rl(100, 1000), "t1-eq1")


def infos_after_pre_filter(fw: TestFramework) -> dict[str, ElasticQuotaInfo]:
    fw.run_pre_filter(pod("probe", "elsewhere"))
    from kubesched.plugins.capacityscheduling.state import read_snapshot_state

    return dict(read_snapshot_state(fw.state).infos)


def used_of(info: ElasticQuotaInfo) -> tuple[int, int, int]:
    return info.used.milli_cpu, info.used.memory, info.used.scalar_resources.get(GPU, 0)


def test_update_elastic_quota() -> None:
    """Upstream "Update ElasticQuota without Used": the new bounds apply, the usage is kept."""
    fw = framework([eq_t1()], [big_node()], [pod("t1-p1", "ns1", 50, 10, node="node-a")])
    infos_after_pre_filter(fw)
    fw.cluster.create_object(EQ_API, "ElasticQuota", quota("ns1", rl(10, 100), rl(300, 1000), "t1-eq1"))
    info = infos_after_pre_filter(fw)["ns1"]
    assert (info.max.milli_cpu, info.max.memory, info.min.milli_cpu, info.min.memory) == (300, 1000, 10, 100)
    assert used_of(info) == (10, 50, 0) and info.pods == {"t1-p1"}


def test_delete_elastic_quota() -> None:
    fw = framework([eq_t1()], [big_node()])
    assert "ns1" in infos_after_pre_filter(fw)
    fw.cluster.delete_object(EQ_API, "ElasticQuota", eq_t1())
    assert infos_after_pre_filter(fw) == {}
    assert fw.run_pre_filter(pod("big", "ns1", 10**6, 10**6)).status.is_success()  # no quota: no limit


def test_add_pod() -> None:
    """Upstream "AddPod": three pods of ns1 on node-a count 30m CPU and 150 bytes."""
    fw = framework([eq_t1()], [big_node()])
    for name in ("t1-p1", "t1-p2", "t1-p3"):
        fw.add_pod(pod(name, "ns1", 50, 10, priority=MID, node="node-a"))
    info = infos_after_pre_filter(fw)["ns1"]
    assert used_of(info) == (30, 150, 0) and info.pods == {"t1-p1", "t1-p2", "t1-p3"}


def phase(p: dict[str, Any], value: str) -> dict[str, Any]:
    return {**p, "status": {**p.get("status", {}), "phase": value}}


@pytest.mark.parametrize(
    ("name", "old_phase", "new_phase", "want_used", "want_pods"),
    [
        ("Update Pod With Pod Status PodSucceeded and PodRunning", "Succeeded", "Running", (30, 100, 0), {"t1-p1"}),
        ("Update Pod With Pod Status PodPending and PodFailed", "Pending", "Failed", (0, 0, 0), set()),
    ],
)
def test_update_pod(
    name: str, old_phase: str, new_phase: str, want_used: tuple[int, int, int], want_pods: set[str]
) -> None:
    fw = framework([eq_t1()], [big_node()])
    old = phase(pod("t1-p1", "ns1", 100, 30, priority=MID, node="node-a"), old_phase)
    fw.add_pod(old)
    infos_after_pre_filter(fw)
    new = phase(pod("t1-p1", "ns1", 100, 30, priority=HIGH, node="node-a"), new_phase)
    fw.cluster.pods["ns1/t1-p1"] = new
    fw.scheduler.on_pod_update(old, new)
    info = infos_after_pre_filter(fw)["ns1"]
    assert used_of(info) == want_used and info.pods == want_pods


@pytest.mark.parametrize(
    ("name", "delete", "want_used", "want_pods"),
    [
        ("Delete All Pods", ["t1-p1", "t1-p2"], (0, 0, 0), set()),
        ("Delete one Pod", ["t1-p1"], (30, 100, 0), {"t1-p2"}),
    ],
)
def test_delete_pod(name: str, delete: list[str], want_used: tuple[int, int, int], want_pods: set[str]) -> None:
    fw = framework(
        [eq_t1()],
        [big_node()],
        [
            pod("t1-p1", "ns1", 100, 30, priority=MID, node="node-a"),
            pod("t1-p2", "ns1", 100, 30, priority=HIGH, node="node-a"),
        ],
    )
    infos_after_pre_filter(fw)
    for n in delete:
        fw.cluster.delete_pod(fw.cluster.pods[f"ns1/{n}"])
    info = infos_after_pre_filter(fw)["ns1"]
    assert used_of(info) == want_used and info.pods == want_pods
    assert eq_status(fw, "ns1") == {"cpu": format_quantity("cpu", want_used[0]), "memory": str(want_used[1])}
