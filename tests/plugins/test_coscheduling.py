"""Coscheduling (gang scheduling with PodGroups), plugin by plugin.

Ported from scheduler-plugins ``pkg/coscheduling/coscheduling_test.go`` (TestLess, TestPermit,
TestPostFilter, TestPodGroupBackoffTime), ``pkg/coscheduling/core/core_test.go`` (TestPreFilter,
TestPermit, TestCheckClusterResource), ``apis/config/v1/defaults_test.go`` (TestSchedulingDefaults,
Coscheduling cases), ``apis/config/validation/validation_pluginargs_test.go`` and the PodGroup
controller's ``pkg/controllers/podgroup_test.go`` (Test_Run, TestFillGroupStatusOccupied; the version
with the ``scheduled`` counter and the PreScheduling/Scheduled phases). Upstream's times are
``time.Now()`` plus offsets; ours are the same offsets from a fixed instant.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched.config.errors import ConfigError
from kubesched.framework.clock import rfc3339
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from kubesched.plugins.coscheduling import POD_GROUP_LABEL, Coscheduling, CoschedulingArgs
from kubesched.plugins.coscheduling.core import check_cluster_resource, format_resource_gap
from kubesched.plugins.coscheduling.status import reconcile
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

T0 = 1767225600.0  # 2026-01-01T00:00:00Z, the test kit's clock
CS = "Coscheduling"


def config(args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """scheduler-plugins' recommended profile: Coscheduling at every point, the only QueueSort."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": CS}]},
                    "queueSort": {"enabled": [{"name": CS}], "disabled": [{"name": "*"}]},
                },
                "pluginConfig": [{"name": CS, "args": dict(args or {})}],
            }
        ],
    }


def pod_group(
    name: str,
    namespace: str = "default",
    min_member: int = 0,
    *,
    created: float | None = None,
    min_resources: Mapping[str, str] | None = None,
    timeout: int | None = None,
    status: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """scheduler-plugins ``testutil.MakePG`` / ``MakePodGroup``."""
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    if created is not None:
        md["creationTimestamp"] = rfc3339(created)
    spec: dict[str, Any] = {"minMember": min_member}
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    pg: dict[str, Any] = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": md}
    pg["spec"] = spec
    if status is not None:
        pg["status"] = dict(status)
    return pg


def member(name: str, group: str | None, namespace: str = "default") -> Any:
    w = make_pod(name).namespace(namespace).uid(name)
    return w.label(POD_GROUP_LABEL, group) if group else w


def framework(
    nodes: list[dict[str, Any]] | None = None,
    pods: list[dict[str, Any]] | None = None,
    groups: list[dict[str, Any]] | None = None,
    args: Mapping[str, Any] | None = None,
) -> TestFramework:
    return new_framework(config(args), nodes=nodes or [], pods=pods or [], objects=groups or [])


def plugin(fw: TestFramework) -> Coscheduling:
    p = fw.plugin(CS)
    assert isinstance(p, Coscheduling)
    return p


def nodes_of(fw: TestFramework) -> list[NodeInfo]:
    return fw.nodes()


def pod_group_status(fw: TestFramework, name: str, namespace: str = "default") -> dict[str, Any]:
    for o in fw.cluster.list_objects("scheduling.x-k8s.io/v1alpha1", "PodGroup"):
        if o["metadata"]["name"] == name and o["metadata"]["namespace"] == namespace:
            return dict(o.get("status") or {})
    raise KeyError(name)


# ------------------------------------------------------------------------------------------------
# args
# ------------------------------------------------------------------------------------------------
def test_args_defaults() -> None:
    """TestSchedulingDefaults, "empty config CoschedulingArgs": 60 s and no backoff."""
    args = plugin(framework()).args
    assert (args.permit_waiting_time_seconds, args.pod_group_backoff_seconds) == (60, 0)
    assert args.pod_group_reject_percentage == 10


def test_args_set() -> None:
    """TestSchedulingDefaults, "set non default CoschedulingArgs"."""
    args = plugin(framework(args={"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 20})).args
    assert (args.permit_waiting_time_seconds, args.pod_group_backoff_seconds) == (60, 20)


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({"permitWaitingTimeSeconds": -1}, ["args.permitWaitingTimeSeconds: must be greater than 0, got -1"]),
        ({"podGroupBackoffSeconds": -1}, ["args.podGroupBackoffSeconds: must be greater than 0, got -1"]),
        ({"podGroupRejectPercentage": 101}, ["args.podGroupRejectPercentage: must be between 0 and 100, got 101"]),
        ({"podGroupRejectPercentage": -1}, ["args.podGroupRejectPercentage: must be between 0 and 100, got -1"]),
    ],
)
def test_args_validation(args: dict[str, Any], errors: list[str]) -> None:
    """ValidateCoschedulingArgs: negative seconds, a percentage outside [0, 100]."""
    with pytest.raises(ConfigError) as err:
        framework(args=args)
    assert [str(e) for e in err.value.errors] == [f"profiles[0].pluginConfig[0].{e}" for e in errors]


def test_zero_args_are_valid() -> None:
    assert CoschedulingArgs(0, 0, 0).validate() == []
    assert CoschedulingArgs(0, 0, 100).validate() == []


# ------------------------------------------------------------------------------------------------
# QueueSort
# ------------------------------------------------------------------------------------------------
_TIMES = [T0 + d for d in (0, 1, 2, 3, -2, -1)]
_LOW, _HIGH = 10, 100


def _qpi(ns: str, name: str, prio: int, group: str | None = None, initial: int | None = None) -> QueuedPodInfo:
    pod = member(name, group, ns).priority(prio).obj()
    return QueuedPodInfo(PodInfo(pod), initial_attempt_timestamp=None if initial is None else _TIMES[initial])


# (name, p1, p2, expected): p = (namespace, priority, group, index of the initial attempt time).
LESS_CASES = [
    ("p1.priority less than p2.priority", ("namespace1", _LOW, None, None), ("namespace2", _HIGH, None, None), False),
    ("p1.priority greater than p2.priority", ("namespace1", _HIGH, None, None), ("namespace2", _LOW, None, None), True),
    ("equal priority. p1 is added to schedulingQ earlier than p2",
     ("namespace1", _HIGH, None, 0), ("namespace2", _HIGH, None, 1), True),
    ("equal priority. p2 is added to schedulingQ earlier than p1",
     ("namespace1", _HIGH, None, 1), ("namespace2", _HIGH, None, 0), False),
    ("p1.priority less than p2.priority, p1 belongs to podGroup1",
     ("namespace1", _LOW, "pg1", None), ("namespace2", _HIGH, None, None), False),
    ("p1.priority greater than p2.priority, p1 belongs to podGroup1",
     ("namespace1", _HIGH, "pg1", None), ("namespace2", _LOW, None, None), True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to podGroup3",
     ("namespace1", _HIGH, "pg3", 0), ("namespace2", _HIGH, None, 1), True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to podGroup3",
     ("namespace1", _HIGH, "pg3", 1), ("namespace2", _HIGH, None, 0), False),
    ("p1.priority less than p2.priority, p1 belongs to podGroup1 and p2 belongs to podGroup2",
     ("namespace1", _LOW, "pg1", None), ("namespace2", _HIGH, "pg2", None), False),
    ("p1.priority greater than p2.priority, p1 belongs to podGroup1 and p2 belongs to podGroup2",
     ("namespace1", _HIGH, "pg1", None), ("namespace2", _LOW, "pg2", None), True),
    ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to podGroup1 and p2 belongs to podGroup2",
     ("namespace1", _HIGH, "pg1", 0), ("namespace2", _HIGH, "pg2", 1), True),
    ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to podGroup4 and p2 belongs to podGroup3",
     ("namespace1", _HIGH, "pg4", 1), ("namespace2", _HIGH, "pg3", 0), False),
    ("equal priority and creation time, p1 belongs to podGroup1 and p2 belongs to podGroup2",
     ("namespace1", _HIGH, "pg1", 0), ("namespace2", _HIGH, "pg2", 0), True),
    ("equal priority and creation time, p2 belong to podGroup2",
     ("namespace1", _HIGH, None, 0), ("namespace2", _HIGH, "pg2", 0), True),
]  # fmt: skip


@pytest.mark.parametrize(("name", "p1", "p2", "expected"), LESS_CASES, ids=[c[0] for c in LESS_CASES])
def test_less(name: str, p1: tuple[Any, ...], p2: tuple[Any, ...], expected: bool) -> None:
    """TestLess: PodGroups pg1 (namespace1) and pg2, pg3, pg4 (namespace2) created at now+2s,
    now+3s, now-2s, now-1s; a pod labelled with a group of another namespace has no group."""
    groups = [
        pod_group("pg1", "namespace1", 5, created=_TIMES[2]),
        pod_group("pg2", "namespace2", 5, created=_TIMES[3]),
        pod_group("pg3", "namespace2", 5, created=_TIMES[4]),
        pod_group("pg4", "namespace2", 5, created=_TIMES[5]),
    ]
    cs = plugin(framework(groups=groups))
    q1 = _qpi(p1[0], "pod1", p1[1], p1[2], p1[3])
    q2 = _qpi(p2[0], "pod2", p2[1], p2[2], p2[3])
    assert cs.less(q1, q2) is expected


def test_gang_members_leave_the_queue_together() -> None:
    """Members arrive interleaved with other pods; activeQ hands each gang out in one run, the
    earlier-created PodGroup first, then (same creation time) by group name, where upstream would
    interleave alpha's and beta's members by pod name; pods without a group go by their queue time."""
    groups = [
        pod_group("late", min_member=2, created=T0 - 5),
        pod_group("early", min_member=2, created=T0 - 10),
        pod_group("beta", min_member=2, created=T0 - 1),
        pod_group("alpha", min_member=2, created=T0 - 1),
    ]
    arrivals = [
        member("late-0", "late"), member("solo", None), member("job-1", "beta"), member("early-0", "early"),
        member("job-0", "alpha"), member("late-1", "late"), member("job-3", "beta"), member("early-1", "early"),
        member("job-2", "alpha"),
    ]  # fmt: skip
    fw = framework(groups=groups)
    for w in arrivals:
        fw.add_pod(w.obj())
    order = []
    while (q := fw.scheduler.queue.pop()) is not None:
        order.append(q.pod_info.name)
    assert order == ["early-0", "early-1", "late-0", "late-1", "job-0", "job-2", "job-1", "job-3", "solo"]


# ------------------------------------------------------------------------------------------------
# PreEnqueue
# ------------------------------------------------------------------------------------------------
def test_pre_enqueue() -> None:
    """Members wait outside activeQ until their PodGroup exists with minMember pods."""
    fw = framework(groups=[pod_group("pg1", "ns", 2)])
    assert fw.run_pre_enqueue(member("solo", None, "ns").obj()).is_success()
    st = fw.run_pre_enqueue(member("p", "missing", "ns").obj())
    assert (st.code, st.message(), st.plugin) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PodGroup ns/missing not found",
        CS,
    )
    fw.add_pod(member("p1a", "pg1", "ns").obj())
    st = fw.run_pre_enqueue(member("p1a", "pg1", "ns").obj())
    assert (
        st.message()
        == "pre-enqueue pod p1a cannot find enough sibling pods, current pods number: 1, minMember of group: 2"
    )
    fw.add_pod(member("p1b", "pg1", "ns").obj())
    assert fw.run_pre_enqueue(member("p1a", "pg1", "ns").obj()).is_success()


def test_gated_members_enter_when_the_last_sibling_arrives() -> None:
    fw = framework(nodes=[make_node("n").capacity(cpu="4").obj()], groups=[pod_group("pg", min_member=3)])
    for i in range(2):
        fw.add_pod(member(f"m{i}", "pg").req(cpu="1").obj())
    assert fw.scheduler.queue.counts()["gated"] == 2
    fw.add_pod(member("m2", "pg").req(cpu="1").obj())
    assert fw.scheduler.queue.counts() == {"active": 3, "backoff": 0, "unschedulable": 0, "gated": 0}


def test_gated_members_enter_when_their_pod_group_is_created() -> None:
    fw = framework(nodes=[make_node("n").capacity(cpu="4").obj()])
    fw.add_pod(member("m0", "pg").obj())
    fw.add_pod(member("m1", "pg").obj())
    fw.cluster.create_object("scheduling.x-k8s.io/v1alpha1", "PodGroup", pod_group("other", min_member=1))
    assert fw.scheduler.queue.counts()["gated"] == 2
    fw.cluster.create_object("scheduling.x-k8s.io/v1alpha1", "PodGroup", pod_group("pg", min_member=2))
    assert fw.scheduler.queue.counts()["active"] == 2
    fw.schedule()
    assert len(fw.scheduler.stats.bound_at) == 2


# ------------------------------------------------------------------------------------------------
# PreFilter
# ------------------------------------------------------------------------------------------------
PRE_FILTER_CASES = [
    # (name, pod (name, group), pending pods (name, group), pod groups (name, minMember, minResources cpu), success)
    ("pod does not belong to any pg", ("p", None),
     [("p1", "pg1"), ("p2", "pg2")], [("pg1", 1, None), ("pg2", 1, None)], True),
    ("pod belongs to a non-existent pg", ("p", "pg-non-existent"), [], [("pg1", 1, None)], True),
    ("pod count less than minMember", ("p", "pg1"), [("pg2-1", "pg2")], [("pg1", 2, None), ("pg2", 2, None)], False),
    ("pod count equal minMember", ("p1a", "pg1"),
     [("p1b", "pg1"), ("p1c", "pg1")], [("pg1", 2, None), ("pg2", 2, None)], True),
    ("pod count more than minMember", ("p1a", "pg1"),
     [("p1b", "pg1"), ("p1c", "pg1")], [("pg1", 2, None), ("pg2", 2, None)], True),
    ("cluster's resource satisfies minResource", ("p1a", "pg1"),
     [("p1b", "pg1"), ("p1c", "pg1")], [("pg1", 2, "6")], True),
    ("cluster's resource cannot satisfy minResource", ("p1a", "pg1"),
     [("p1b", "pg1"), ("p1c", "pg1")], [("pg1", 2, "10")], False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "pod", "pending", "groups", "success"), PRE_FILTER_CASES, ids=[c[0] for c in PRE_FILTER_CASES]
)
def test_pre_filter(
    name: str,
    pod: tuple[str, str | None],
    pending: list[tuple[str, str]],
    groups: list[tuple[str, int, str | None]],
    success: bool,
) -> None:
    """core_test.go TestPreFilter: two nodes of 4 CPUs; the pod lister holds the pending pods (the
    pod under test is not in it); a rejection is UnschedulableAndUnresolvable."""
    nodes = [make_node(n).capacity(cpu="4").obj() for n in ("node-a", "node-b")]
    pgs = [pod_group(g, "ns", m, min_resources=None if cpu is None else {"cpu": cpu}) for g, m, cpu in groups]
    fw = framework(nodes=nodes, pods=[member(n, g, "ns").obj() for n, g in pending], groups=pgs)
    st = fw.run_pre_filter(member(pod[0], pod[1], "ns").obj()).status
    assert st.is_success() is success
    if not success:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_pre_filter_messages() -> None:
    nodes = [make_node(n).capacity(cpu="4").obj() for n in ("node-a", "node-b")]
    pgs = [pod_group("few", "ns", 2), pod_group("big", "ns", 2, min_resources={"cpu": "10", "memory": "1Gi"})]
    fw = framework(nodes=nodes, pods=[member("b1", "big", "ns").obj(), member("b2", "big", "ns").obj()], groups=pgs)
    assert fw.run_pre_filter(member("f1", "few", "ns").obj()).status.message() == (
        "pre-filter pod f1 cannot find enough sibling pods, current pods number: 0, minMember of group: 2"
    )
    # 8 CPUs in all; the nodes declare no memory.
    assert fw.run_pre_filter(member("b1", "big", "ns").obj()).status.message() == "resource gap: map[cpu:2 memory:1Gi]"


def test_check_cluster_resource_counts_pod_slots() -> None:
    """``pods: minMember`` joins minResources: three free slots cannot hold four members."""
    nodes = [make_node("n").capacity(cpu="8", pods="3").obj()]
    fw = framework(nodes=nodes, pods=[member(f"m{i}", "pg", "ns").obj() for i in range(4)],
                   groups=[pod_group("pg", "ns", 4, min_resources={"cpu": "1"})])  # fmt: skip
    assert fw.run_pre_filter(member("m0", "pg", "ns").obj()).status.message() == "resource gap: map[pods:1]"


def test_min_resources_check_is_skipped_while_permitted() -> None:
    """permittedPG: a group that passed the resource check is not checked again for
    ``permitWaitingTimeSeconds``, and is checked again after PostFilter or Unreserve."""
    nodes = [make_node("n").capacity(cpu="4").obj()]
    pg = pod_group("pg", "ns", 1, min_resources={"cpu": "4"})
    fw = framework(
        nodes=nodes, pods=[member("m", "pg", "ns").obj()], groups=[pg], args={"permitWaitingTimeSeconds": 10}
    )
    assert fw.run_pre_filter(member("m", "pg", "ns").obj()).status.is_success()
    fw.add_pod(make_pod("hog").req(cpu="1").node("n").obj())
    assert fw.run_pre_filter(member("m", "pg", "ns").obj()).status.is_success()
    fw.clock.advance_to(T0 + 10)
    assert fw.run_pre_filter(member("m", "pg", "ns").obj()).status.message() == "resource gap: map[cpu:1]"


CHECK_CLUSTER_RESOURCE_CASES = [
    # (name, existing pods (name, group, node, cpu), want)
    ("Cluster resource enough", [("p1", None, "node-a", "2")], True),
    ("Cluster resource not enough", [("p1", None, "node-a", "2"), ("p2", None, "node-b", "1")], False),
    ("Cluster resource enough as p1's resource needs to be excluded from minResources",
     [("p1", "pg1", "node-a", "2"), ("p2", None, "node-b", "1")], True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "existing", "want"), CHECK_CLUSTER_RESOURCE_CASES, ids=[c[0] for c in CHECK_CLUSTER_RESOURCE_CASES]
)
def test_check_cluster_resource(name: str, existing: list[tuple[str, str | None, str, str]], want: bool) -> None:
    """core_test.go TestCheckClusterResource: 2 nodes x 3 CPUs, minResources 4 CPUs for ns/pg1."""
    nodes = [make_node(n).capacity(cpu="3").obj() for n in ("node-a", "node-b")]
    pods = [member(n, g, "ns").node(node).req(cpu=cpu).obj() for n, g, node, cpu in existing]
    fw = framework(nodes=nodes, pods=pods)
    gap = check_cluster_resource(nodes_of(fw), {"cpu": 4000}, "ns/pg1")
    assert (not gap) is want


def test_resource_gap_format() -> None:
    assert (
        format_resource_gap({"pods": 1, "cpu": 1500, "memory": 2 * 2**30})
        == "resource gap: map[cpu:1500m memory:2Gi pods:1]"
    )


# ------------------------------------------------------------------------------------------------
# Permit
# ------------------------------------------------------------------------------------------------
def _permit(fw: TestFramework, pod: dict[str, Any], node: str = "node") -> tuple[Code, float, str]:
    fw.refresh()
    st, timeout = plugin(fw).permit(CycleState(), fw.pod_info(pod), node)
    code = Code.SUCCESS if st is None else st.code
    return code, timeout, "" if st is None else st.message()


@pytest.mark.parametrize(
    ("name", "pod", "expected"),
    [
        ("pods do not belong to any podGroup", member("pod1", None), Code.SUCCESS),
        ("pods belong to a podGroup, Wait", member("pod1", "pg1", "ns1"), Code.WAIT),
        ("pods belong to a podGroup, Allow", member("pod1", "pg2", "ns1"), Code.SUCCESS),
    ],
)
def test_permit(name: str, pod: Any, expected: Code) -> None:
    """coscheduling_test.go TestPermit: pg1 (minMember 2), pg2 (minMember 1) in ns1."""
    fw = framework(nodes=[make_node("test").obj()], groups=[pod_group("pg1", "ns1", 2), pod_group("pg2", "ns1", 1)])
    assert _permit(fw, pod.obj(), "test")[0] == expected


@pytest.mark.parametrize(
    ("name", "pod", "existing", "expected", "message"),
    [
        ("pod does not belong to any pg", member("p", None, "ns"), [], Code.SUCCESS, ""),
        ("pod specifies a non-existent pg", member("p", "pg-non-existent", "ns"), [], Code.UNSCHEDULABLE,
         "PodGroup not found"),
        ("pod belongs to a pg that doesn't have quorum", member("p", "pg1", "ns"), [], Code.WAIT, ""),
        ("pod belongs to a pg that have quorum satisfied", member("p1a", "pg1", "ns"),
         [member("p1b", "pg1", "ns").node("node")], Code.SUCCESS, ""),
    ],
)  # fmt: skip
def test_core_permit(name: str, pod: Any, existing: list[Any], expected: Code, message: str) -> None:
    """core_test.go TestPermit: PodGroupNotSpecified (Success), PodGroupNotFound (Unschedulable),
    Wait, Success; pg1 has minMember 2, a member bound to the node counts toward it."""
    fw = framework(nodes=[make_node("node").capacity(cpu="4").obj()], pods=[w.obj() for w in existing],
                   groups=[pod_group("pg1", "ns", 2)])  # fmt: skip
    code, _, msg = _permit(fw, pod.obj())
    assert (code, msg) == (expected, message)


@pytest.mark.parametrize(
    ("group_timeout", "args", "expected"),
    [
        (None, {}, 60.0),
        (None, {"permitWaitingTimeSeconds": 30}, 30.0),
        (0, {"permitWaitingTimeSeconds": 30}, 30.0),
        (10, {"permitWaitingTimeSeconds": 30}, 10.0),
        (None, {"permitWaitingTimeSeconds": 0}, 60.0),
    ],
)
def test_permit_wait_time(group_timeout: int | None, args: dict[str, Any], expected: float) -> None:
    """``GetWaitTimeDuration``: the group's scheduleTimeoutSeconds, else the args', else 60 s."""
    fw = framework(
        nodes=[make_node("node").obj()], groups=[pod_group("pg", min_member=2, timeout=group_timeout)], args=args
    )
    assert _permit(fw, member("m", "pg").obj())[:2] == (Code.WAIT, expected)


def test_permit_allows_the_waiting_siblings() -> None:
    pods = [member(f"m{i}", "pg").req(cpu="1").obj() for i in range(3)] + [member("x", "other").obj()]
    fw = framework(nodes=[make_node("n").capacity(cpu="4").obj()], groups=[pod_group("pg", min_member=3)], pods=pods)
    fw.cluster.create_object("scheduling.x-k8s.io/v1alpha1", "PodGroup", pod_group("other", min_member=2))
    for _ in range(2):
        assert fw.scheduler.schedule_one()
    assert sorted(wp.pod_info.name for wp in _waiting(fw)) == ["m0", "m1"]
    assert fw.scheduler.stats.bound_at == {}
    assert fw.scheduler.schedule_one()
    fw.clock.run_due()
    assert _waiting(fw) == []
    assert set(fw.scheduler.stats.bound_at) == {"m0", "m1", "m2"}


def _waiting(fw: TestFramework) -> list[Any]:
    out: list[Any] = []
    fw.framework.waiting_pods.iterate(out.append)
    return out


def test_first_waiting_member_activates_its_siblings() -> None:
    """TestPodGroupBackoffTime (first half): the first member to wait asks for its siblings."""
    fw = framework(nodes=[make_node("test").obj()], groups=[pod_group("pg1", "ns1", 3)],
                   pods=[member(f"pod{i}", "pg1", "ns1").obj() for i in (1, 2, 3)])  # fmt: skip
    activated: list[list[str]] = []
    cs = plugin(fw)
    cs.handle.activate = lambda pods: activated.append(sorted(p["metadata"]["name"] for p in pods))
    assert _permit(fw, member("pod1", "pg1", "ns1").obj(), "test")[0] == Code.WAIT
    assert activated == [["pod2", "pod3"]]


# ------------------------------------------------------------------------------------------------
# PostFilter and backoff
# ------------------------------------------------------------------------------------------------
def test_post_filter() -> None:
    """coscheduling_test.go TestPostFilter: no group -> a message; enough members assigned ->
    Unschedulable without a message (the gang stays); none assigned -> the gang is rejected."""
    nodes = [make_node(f"n{i}").capacity(cpu="8").obj() for i in range(3)]
    fw = framework(nodes=nodes, groups=[pod_group("pg", "ns1", 2)])
    cs = plugin(fw)

    def post_filter(pod: dict[str, Any]) -> str:
        fw.refresh()
        _, st = cs.post_filter(CycleState(), fw.pod_info(pod), {})
        assert st.code == Code.UNSCHEDULABLE
        return st.message()

    assert post_filter(member("pod1", None, "ns1").obj()) == "can not find pod group"
    assert post_filter(member("pod1", "pg", "ns1").obj()) == (
        "PodGroup ns1/pg gets rejected due to Pod pod1 is unschedulable even after PostFilter"
    )
    for i in range(3):  # MakeNodesAndPods: members of pg spread over the nodes
        fw.add_pod(member(f"existing{i}", "pg", "ns1").node(f"n{i}").obj())
    assert post_filter(member("pod1", "pg", "ns1").obj()) == ""


@pytest.mark.parametrize(
    ("percentage", "assigned", "rejected"), [(10, 9, False), (10, 8, True), (0, 9, True), (100, 0, False)]
)
def test_post_filter_reject_percentage(percentage: int, assigned: int, rejected: bool) -> None:
    """minMember 10: PostFilter leaves the waiting members be while at most podGroupRejectPercentage
    of minMember is unassigned (upstream's fixed 10 %: 9 of 10 waits, 8 of 10 is rejected)."""
    nodes = [make_node("n").capacity(cpu="100").obj()]
    fw = framework(nodes=nodes, groups=[pod_group("pg", min_member=10)], args={"podGroupRejectPercentage": percentage},
                   pods=[member(f"m{i}", "pg").req(cpu="1").obj() for i in range(10)])  # fmt: skip
    for _ in range(assigned):
        fw.scheduler.schedule_one()
    assert len(_waiting(fw)) == assigned
    fw.refresh()
    _, st = plugin(fw).post_filter(CycleState(), fw.pod_info(member("m9", "pg").req(cpu="1").obj()), {})
    assert (st.message() != "") is rejected
    fw.clock.run_due()
    assert len(_waiting(fw)) == (0 if rejected else assigned)


def test_pod_group_backoff_time() -> None:
    """TestPodGroupBackoffTime: "pod in infinite scheduling loop." With podGroupBackoffSeconds 1,
    after PostFilter rejected the gang its members are turned away at PreFilter."""
    pods = [member(f"pod{i}", "pg1", "ns1").obj() for i in (1, 2, 3)]
    fw = framework(nodes=[make_node("test").obj()], groups=[pod_group("pg1", "ns1", 3)], pods=pods,
                   args={"podGroupBackoffSeconds": 1})  # fmt: skip
    cs = plugin(fw)
    assert _permit(fw, member("pod1", "pg1", "ns1").obj(), "test")[0] == Code.WAIT
    cs.post_filter(CycleState(), fw.pod_info(member("pod2", "pg1", "ns1").obj()), {})
    st = fw.run_pre_filter(member("pod3", "pg1", "ns1").obj()).status
    assert (st.code, st.reasons[0]) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "podGroup ns1/pg1 failed recently")
    fw.clock.advance_to(T0 + 1)
    assert "failed recently" not in fw.run_pre_filter(member("pod3", "pg1", "ns1").obj()).status.message()


def test_no_backoff_for_a_group_without_enough_members() -> None:
    fw = framework(nodes=[make_node("n").obj()], groups=[pod_group("pg", min_member=3)],
                   pods=[member("m0", "pg").obj()], args={"podGroupBackoffSeconds": 10})  # fmt: skip
    fw.refresh()
    plugin(fw).post_filter(CycleState(), fw.pod_info(member("m0", "pg").obj()), {})
    assert plugin(fw).pg_mgr.backed_off_until("default/pg") is None


# ------------------------------------------------------------------------------------------------
# Unreserve
# ------------------------------------------------------------------------------------------------
def test_unreserve_rejects_the_waiting_siblings() -> None:
    fw = framework(nodes=[make_node("n").capacity(cpu="8").obj()], groups=[pod_group("pg", min_member=4)],
                   pods=[member(f"m{i}", "pg").obj() for i in range(4)] + [member("o0", "other").obj()])  # fmt: skip
    fw.cluster.create_object("scheduling.x-k8s.io/v1alpha1", "PodGroup", pod_group("other", min_member=2))
    for _ in range(3):
        fw.scheduler.schedule_one()
    assert len(_waiting(fw)) == 3
    rejected: list[str] = []
    for wp in _waiting(fw):
        wp.on_done(lambda st, n=wp.pod_info.name: rejected.append(f"{n}: {st.message()}"))
    plugin(fw).unreserve(CycleState(), fw.pod_info(member("m3", "pg").obj()), "n")
    assert sorted(rejected) == [f"m{i}: rejection in Unreserve" for i in range(3)]


# ------------------------------------------------------------------------------------------------
# events and hints
# ------------------------------------------------------------------------------------------------
def test_events_to_register() -> None:
    events = {str(e.event): e.event for e in plugin(framework()).events_to_register()}
    assert events["PodAdd"] == ClusterEvent(EventResource.POD, ActionType.ADD)
    assert events["PodGroupChange"] == ClusterEvent(
        EventResource.CUSTOM, ActionType.ADD | ActionType.UPDATE, "PodGroup"
    )
    assert set(events) == {"PodAdd", "PodGroupChange", "PodGroupBackoffExpiredAll", "AssignedPodDelete", "NodeChange"}


def test_hints() -> None:
    fw = framework()
    hints = {str(e.event): e.hint for e in plugin(fw).events_to_register()}
    pod = member("m0", "pg").obj()
    sibling, stranger = member("m1", "pg").obj(), member("x", "other").obj()
    bound_stranger = member("y", None).node("n").obj()
    pod_add, pg_change = hints["PodAdd"], hints["PodGroupChange"]
    assert pod_add is not None and pg_change is not None
    assert pod_add(pod, None, sibling) == QueueingHint.QUEUE
    assert pod_add(pod, None, stranger) == QueueingHint.QUEUE_SKIP
    assert pod_add(pod, None, pod) == QueueingHint.QUEUE_SKIP
    assert pod_add(pod, None, bound_stranger) == QueueingHint.QUEUE  # upstream: any pod add
    assert pod_add(pod, None, member("m1", "pg").node("n").obj()) == QueueingHint.QUEUE_SKIP  # its own gang
    assert pg_change(pod, None, pod_group("pg")) == QueueingHint.QUEUE
    assert pg_change(pod, None, pod_group("other")) == QueueingHint.QUEUE_SKIP
    assert pg_change(pod, None, pod_group("pg", "elsewhere")) == QueueingHint.QUEUE_SKIP


# ------------------------------------------------------------------------------------------------
# PodGroup status
# ------------------------------------------------------------------------------------------------
_CREATED = T0 - 3600


def _controller_pods(names: list[str], phase: str, owners: list[str] | None = None) -> list[dict[str, Any]]:
    pods = []
    for n in names:
        p = member(n, "pg").obj()
        p["status"] = {"phase": phase}
        if owners:
            p["metadata"]["ownerReferences"] = [{"name": o} for o in owners]
        pods.append(p)
    return pods


RUN_CASES = [
    # (name, minMember, pods, pod phase (after the update), previous phase, desired phase, created)
    ("Group running", 2, ["pod1", "pod2"], "Running", "Scheduled", "Running", None),
    ("Group running, more than min member", 2, ["pod11", "pod21"], "Running", "Scheduled", "Running", None),
    ("Group failed", 2, ["pod1", "pod2"], "Failed", "Scheduled", "Failed", None),
    ("Group finished", 2, ["pod1", "pod2"], "Succeeded", "Scheduled", "Finished", None),
    ("Group status convert from scheduling to scheduled", 2, ["pod1", "pod2"],
     "Pending", "Scheduling", "Scheduled", None),
    ("Group status convert from scheduling to succeed", 2, ["pod1", "pod2"],
     "Succeeded", "Scheduling", "Finished", None),
    ("Group status convert from pending to prescheduling", 2, ["pod1", "pod2"],
     "Succeeded", "Pending", "Finished", None),
    ("Group should not enqueue, created too long", 2, ["pod1", "pod2"],
     "Running", "Pending", "Pending", T0 - 72 * 3600),
    ("Group min member more than Pod number", 3, ["pod91", "pod92"], "Pending", "Pending", "Pending", None),
    ("Group status convert from running to pending", 2, [], "Pending", "Running", "Pending", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "min_member", "pods", "pod_phase", "previous", "desired", "created"),
    RUN_CASES,
    ids=[c[0] for c in RUN_CASES],
)
def test_controller_reconcile(
    name: str, min_member: int, pods: list[str], pod_phase: str, previous: str, desired: str, created: float | None
) -> None:
    """podgroup_test.go Test_Run: makePG sets scheduled = minMember, a schedule start of now and
    the previous phase; the pods are in their (next) phase."""
    status = {"phase": previous, "occupiedBy": "test", "scheduled": min_member, "scheduleStartTime": rfc3339(T0)}
    new = reconcile(status, min_member, _controller_pods(pods, pod_phase), created if created is not None else T0)
    assert new["phase"] == desired


@pytest.mark.parametrize(
    ("owners", "expected"),
    [
        (["new-occupied"], "default/new-occupied"),
        (["new-occupied-2", "new-occupied-1"], "default/new-occupied-1,default/new-occupied-2"),
    ],
)
def test_fill_group_status_occupied(owners: list[str], expected: str) -> None:
    """podgroup_test.go TestFillGroupStatusOccupied: owners of the first pod, sorted."""
    new = reconcile(
        {"phase": "Pending", "occupiedBy": "test"}, 2, _controller_pods(["pod1", "pod2"], "Pending", owners)
    )
    assert (new["phase"], new["occupiedBy"]) == ("PreScheduling", expected)


def test_status_through_a_gang_lifecycle() -> None:
    """Pending while members are missing, PreScheduling once minMember pods exist, Scheduling with
    its start time when the first member waits, Scheduled with ``scheduled`` once they are bound,
    Running when their pods run."""
    fw = framework(nodes=[make_node("n").capacity(cpu="4").obj()], groups=[pod_group("pg", min_member=2)])
    fw.add_pod(member("m0", "pg").obj())
    assert pod_group_status(fw, "pg") == {"phase": "Pending"}
    fw.add_pod(member("m1", "pg").obj())
    assert pod_group_status(fw, "pg") == {"phase": "PreScheduling"}
    fw.clock.advance_to(T0 + 5)
    fw.scheduler.schedule_one()
    assert pod_group_status(fw, "pg") == {"phase": "Scheduling", "scheduleStartTime": "2026-01-01T00:00:05Z"}
    fw.schedule()
    assert pod_group_status(fw, "pg") == {
        "phase": "Scheduled",
        "scheduled": 2,
        "scheduleStartTime": "2026-01-01T00:00:05Z",
    }
    for key in ("default/m0", "default/m1"):
        old = fw.cluster.pods[key]
        new = copy.deepcopy(old)
        new["status"]["phase"] = "Running"
        fw.cluster.pods[key] = new
        fw.scheduler.on_pod_update(old, new)
    # The status follows at the plugin's next look at the group (here: a new member arrives).
    fw.add_pod(member("m2", "pg").obj())
    assert pod_group_status(fw, "pg")["phase"] == "Running"
    assert pod_group_status(fw, "pg")["running"] == 2
