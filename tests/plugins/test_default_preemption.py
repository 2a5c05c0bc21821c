"""DefaultPreemption and the preemption Evaluator.

Ported from pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
(TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestCustomSelection,
TestCustomOrdering, TestPodEligibleToPreemptOthers, TestPreempt) and
pkg/scheduler/framework/preemption/preemption_test.go (TestPrepareCandidate): the same pods,
nodes, PDBs and arguments, and upstream's expected candidates, victims, filter-call counts,
nominated nodes and messages, as data.

Left out: the cases that need scheduler extenders (kubesched does not call extenders) and the
pod-group / workload-aware cases (v1.36 features). Upstream's offset source is replaced as upstream
replaces ``getOffsetRand``: by Go's ``rand.New(rand.NewSource(4)).Int31n``, replayed bit for bit by
:class:`kubesched.gorand.GoRand`, so the offsets (4, 1, 3) are upstream's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.preemption import Candidate, NodeToStatus, get_pod_start_time
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NominatingInfo, NominatingMode, PodInfo, PostFilterResult
from kubesched.gorand import GoRand
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
INT32_MAX = 2**31 - 1

SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}

U, UU, ERR = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR
VIOLATING_KEY = "test.kubernetes.io/is-violating-pdb"
FOO_LABEL = {"foo": ""}


def epoch(ns: int) -> str:
    """``metav1.NewTime(time.Unix(0, ns))`` as the API server's JSON."""
    return f"1970-01-01T00:00:00.{ns:09d}Z"


def P(
    name: str,
    *,
    prio: int | None = None,
    node: str = "",
    req: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    start: str | None = None,
    uid: str | None = None,
) -> dict[str, Any]:
    w = make_pod(name).uid(uid or name)
    if prio is not None:
        w.priority(prio)
    if node:
        w.node(node)
    if req:
        w.res(dict(req))
    for k, v in (labels or {}).items():
        w.label(k, v)
    if start is not None:
        w.set("status.startTime", start)
    return w.obj()


def with_spec(pod: dict[str, Any], **fields: Any) -> dict[str, Any]:
    pod["spec"].update(fields)
    return pod


ANTI_AFFINITY_FOO_HOSTNAME = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, "topologyKey": "hostname"}]}}


def spread_pod(name: str = "p") -> dict[str, Any]:
    """``SpreadConstraint(1, "zone"/"hostname", DoNotSchedule, Exists("foo"))``, label foo, high priority."""
    return with_spec(P(name, prio=HIGH, labels={"foo": ""}), topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}
        for key in ("zone", "hostname")])


def N(name: str, res: Mapping[str, str] = VERY_LARGE, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``st.MakeNode().Capacity(res)``; a name ``a/b/c`` gives labels hostname=a, zone=b, region=c."""
    parts = name.split("/")
    w = make_node(parts[0]).res(dict(res))
    for key, value in zip(("hostname", "zone", "region"), parts, strict=False):
        w.label(key, value)
    for k, v in (labels or {}).items():
        w.label(k, v)
    return w.obj()


def pdb(
    selector: Mapping[str, str],
    allowed: int = 0,
    *,
    name: str = "pdb",
    disrupted: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": dict(selector)}},
        "status": {
            "disruptionsAllowed": allowed,
            "disruptedPods": {p: "2026-01-01T00:00:00Z" for p in disrupted},
        },
    }


# ------------------------------------------------------------------------------------------------
# test plugins (pkg/scheduler/testing/framework/fake_plugins.go and default_preemption_test.go)
# ------------------------------------------------------------------------------------------------
ERR_REASON_FAKE = "Nodes failed the fake plugin"


class TestPlugin:
    """PreFilter whose AddPod/RemovePod fail on nodes labelled ``error=true``."""

    __test__ = False
    name = "test-plugin"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[None, None]:
        return None, None

    def pre_filter_extensions(self) -> TestPlugin:
        return self

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> None:
        return None

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.labels.get("error") == "true":
            return Status(ERR, f"failed to add pod: {pod.name}")
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.labels.get("error") == "true":
            return Status(ERR, f"failed to remove pod: {pod.name}")
        return None


def fake_filter(codes: Mapping[str, Code]) -> type:
    """``tf.FakeFilterPlugin``: counts calls; fails nodes in ``codes`` with that code."""

    class FakeFilter:
        name = "FakeFilter"

        def __init__(self, args: Any = None, handle: Any = None) -> None:
            self.num_filter_called = 0

        def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
            self.num_filter_called += 1
            code = codes.get(node_info.name)
            if code is not None:
                return Status(code, f"injecting failure for pod {pod.name}")
            return None

    return FakeFilter


class FalseFilter:
    name = "FalseFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status:
        return Status(U, ERR_REASON_FAKE)


class TrueFilter:
    name = "TrueFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> None:
        return None


class MatchFilter:
    """Fits only the node named like the pod."""

    name = "MatchFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return None if node_info.name == pod.name else Status(U, ERR_REASON_FAKE)


FIT, SPREAD, AFFINITY = "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"


# ------------------------------------------------------------------------------------------------
# harness
# ------------------------------------------------------------------------------------------------
@dataclass
class Env:
    tf: TestFramework
    pl: DefaultPreemption

    def node_infos(self) -> list[NodeInfo]:
        return sorted(self.tf.nodes(), key=lambda ni: ni.name)

    def pre_filter(self, pod: dict[str, Any]) -> CycleState:
        out = self.tf.run_pre_filter(pod)
        assert out.status.is_success(), out.status
        return self.tf.state

    def deleted(self) -> set[str]:
        return {h["name"] for h in self.tf.cluster.history.values() if h["deletedReason"] == "Preempted"}


def setup(
    plugins: Sequence[Any],
    nodes: Sequence[dict[str, Any]],
    pods: Sequence[dict[str, Any]] = (),
    *,
    preemptor: dict[str, Any] | None = None,
    objects: Sequence[dict[str, Any]] = (),
    args: Mapping[str, int] | None = None,
    release: Release = V1_35,
) -> Env:
    # The simulated cluster keeps (and patches) the objects it is given: hand it copies.
    nodes, pods, objects = copy.deepcopy(list(nodes)), copy.deepcopy(list(pods)), copy.deepcopy(list(objects))
    dp_args = {"DefaultPreemption": dict(args)} if args else None
    # default_preemption_test.go of v1.35.4: its release (later releases' changes have their own tests).
    tf = new_framework(
        [*plugins, "DefaultPreemption"], nodes=nodes, pods=pods, objects=objects, args=dp_args, release=release
    )
    if preemptor is not None:
        # The evaluator reads the preemptor's latest copy from the cluster, as upstream's lister.
        tf.add_pod(copy.deepcopy(preemptor))
    tf.refresh()
    pl = tf.plugin("DefaultPreemption")
    pl.offset_rand = GoRand(4).Int31n
    return Env(tf, pl)


def statuses(explicit: Mapping[str, Code], absent: Code = UU) -> NodeToStatus:
    """``framework.NewNodeToStatus(map, fwk.NewStatus(absent))`` with reason-less statuses."""
    return NodeToStatus({n: Status(c) for n, c in explicit.items()}, Status(absent))


def nominated(node: str) -> PostFilterResult:
    return PostFilterResult(NominatingInfo(node, NominatingMode.OVERRIDE))


# ------------------------------------------------------------------------------------------------
# TestPostFilter
# ------------------------------------------------------------------------------------------------
@dataclass
class PostFilterCase:
    name: str
    pod: dict[str, Any]
    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    node_statuses: NodeToStatus
    want_result: PostFilterResult | None
    want_status: Status
    pdbs: list[dict[str, Any]] = field(default_factory=list)
    #: Hand-derived: the victims that must be gone from the cluster afterwards.
    want_deleted: set[str] = field(default_factory=set)


POST_FILTER = [
    PostFilterCase(
        "pod with higher priority can be made schedulable",
        P("p", prio=HIGH),
        [P("p1", node="node1")],
        [N("node1", ONE_POD)],
        statuses({"node1": U}),
        nominated("node1"),
        Status(Code.SUCCESS),
        want_deleted={"p1"},
    ),
    PostFilterCase(
        "pod with tied priority is still unschedulable",
        P("p"),
        [P("p1", node="node1")],
        [N("node1", ONE_POD)],
        statuses({"node1": U}),
        nominated(""),
        Status(U, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
    ),
    PostFilterCase(
        "preemption should respect filteredNodesStatuses",
        P("p", prio=HIGH),
        [P("p1", node="node1")],
        [N("node1", ONE_POD)],
        statuses({"node1": UU}),
        nominated(""),
        Status(U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ),
    PostFilterCase(
        "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        P("p", prio=HIGH),
        [P("p1", node="node1")],
        [N("node1", ONE_POD)],
        NodeToStatus(),
        nominated(""),
        Status(U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ),
    PostFilterCase(
        "pod can be made schedulable on one node",
        P("p", prio=MID),
        [P("p1", prio=HIGH, node="node1"), P("p2", prio=LOW, node="node2")],
        [N("node1", ONE_POD), N("node2", ONE_POD)],
        statuses({"node1": U, "node2": U}),
        nominated("node2"),
        Status(Code.SUCCESS),
        want_deleted={"p2"},
    ),
    PostFilterCase(
        "pod can be made schedulable on minHighestPriority node",
        P("p", prio=VERY_HIGH),
        [
            P("p1", prio=HIGH, node="node1", labels={VIOLATING_KEY: "non-violating"}),
            P("p2", prio=LOW, node="node1", labels={VIOLATING_KEY: "violating"}),
            P("p3", prio=MID, node="node2", labels={VIOLATING_KEY: "violating"}),
        ],
        [N("node1", ONE_POD), N("node2", ONE_POD)],
        statuses({"node1": U, "node2": U}),
        nominated("node2"),
        Status(Code.SUCCESS),
        pdbs=[
            # MinAvailable 100%: no disruption allowed.
            pdb({VIOLATING_KEY: "violating"}, 0, name="violating-pdb"),
            pdb({VIOLATING_KEY: "non-violating"}, INT32_MAX, name="non-violating-pdb"),
        ],
        want_deleted={"p3"},
    ),
    PostFilterCase(
        "no candidate nodes found, no enough resource after removing low priority pods",
        P("p", prio=HIGH, req=LARGE),
        [P("p1", node="node1"), P("p2", node="node2")],
        [N("node1", NODE_RES), N("node2", NODE_RES)],
        statuses({"node1": U, "node2": U}),
        nominated(""),
        Status(U, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
    ),
    PostFilterCase(
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        P("p", prio=HIGH, req=LARGE),
        [P("p1", node="node1", prio=HIGH), P("p2", node="node2"), P("p3", node="node3", prio=HIGH)],
        [N("node1", ONE_POD), N("node2", NODE_RES), N("node3", ONE_POD)],
        statuses({"node1": U, "node2": U, "node3": U}),
        nominated(""),
        Status(U, "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                  "2 No preemption victims found for incoming pod."),
    ),
    PostFilterCase(
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
        "don't have enough CPU resource",
        P("p", prio=HIGH, req=LARGE),
        [P("p1", node="node1"), P("p2", node="node2")],
        [N("node1", NODE_RES), N("node2", NODE_RES), N("node3", NODE_RES), N("node4", NODE_RES)],
        statuses({"node1": U, "node2": U, "node4": UU}),
        nominated(""),
        Status(U, "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                  "2 Preemption is not helpful for scheduling."),
    ),
    PostFilterCase(
        "only one node but failed with TestPlugin",
        P("p", prio=HIGH, req=LARGE),
        [P("p1", node="node1")],
        [N("node1", LARGE, {"error": "true"})],
        statuses({"node1": U}),
        None,
        Status(ERR, 'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'),
    ),
    PostFilterCase(
        "one failed with TestPlugin and the other pass",
        P("p", prio=HIGH, req=LARGE),
        [P("p1", node="node1"), P("p2", node="node2", req=MEDIUM)],
        [N("node1", LARGE, {"error": "true"}), N("node2", LARGE)],
        statuses({"node1": U, "node2": U}),
        nominated("node2"),
        Status(Code.SUCCESS),
        want_deleted={"p2"},
    ),
]


@pytest.mark.parametrize("case", POST_FILTER, ids=lambda c: c.name)
def test_post_filter(case: PostFilterCase) -> None:
    env = setup([FIT, TestPlugin], case.nodes, case.pods, preemptor=case.pod, objects=case.pdbs)
    pi = env.tf.pod_info(case.pod)
    state = env.pre_filter(case.pod)
    result, status = env.pl.post_filter(state, pi, case.node_statuses)
    assert status.code == case.want_status.code
    assert status.reasons == case.want_status.reasons
    assert result == case.want_result
    assert env.deleted() == case.want_deleted


# ------------------------------------------------------------------------------------------------
# TestDryRunPreemption
# ------------------------------------------------------------------------------------------------
@dataclass
class DryRunCase:
    name: str
    plugins: list[Any]
    node_names: list[str]
    test_pods: list[dict[str, Any]]
    init_pods: list[dict[str, Any]]
    #: Per scheduling cycle: node -> (sorted victim names, PDB violations).
    expected: list[dict[str, tuple[list[str], int]]]
    expected_num_filter_called: list[int]
    fake_filter_rc: Code | None = None
    pdbs: list[dict[str, Any]] = field(default_factory=list)
    args: dict[str, int] | None = None


def _victims(node: str, *names: str, pdb_violations: int = 0) -> dict[str, tuple[list[str], int]]:
    return {node: (list(names), pdb_violations)}


FOO = {"app": "foo"}
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
ARGS_40_2 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}
FIVE = ["node1", "node2", "node3", "node4", "node5"]

DRY_RUN = [
    DryRunCase(
        "a pod that does not fit on any node",
        [FalseFilter],
        ["node1", "node2"],
        [P("p", prio=HIGH)],
        [P("p1", node="node1", prio=MID), P("p2", node="node2", prio=MID)],
        [{}],
        [2],
    ),
    DryRunCase(
        "a pod that fits with no preemption",
        [TrueFilter],
        ["node1", "node2"],
        [P("p", prio=HIGH)],
        [P("p1", node="node1", prio=MID), P("p2", node="node2", prio=MID)],
        [{}],
        [2],
        fake_filter_rc=U,
    ),
    DryRunCase(
        "a pod that fits on one node with no preemption",
        [MatchFilter],
        ["node1", "node2"],
        [P("node1", prio=HIGH)],  # named like the node, to fit MatchFilter
        [P("p1", node="node1", prio=MID), P("p2", node="node2", prio=MID)],
        [{}],
        [2],
        fake_filter_rc=U,
    ),
    DryRunCase(
        "a pod that fits on both nodes when lower priority pods are preempted",
        [FIT],
        ["node1", "node2"],
        [P("p", prio=HIGH, req=LARGE)],
        [P("p1", node="node1", prio=MID, req=LARGE), P("p2", node="node2", prio=MID, req=LARGE)],
        [{**_victims("node1", "p1"), **_victims("node2", "p2")}],
        [4],
    ),
    DryRunCase(
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        [FIT],
        ["node1", "node2"],
        [P("p", prio=LOW, req=LARGE)],
        [P("p1", node="node1", prio=MID, req=LARGE), P("p2", node="node2", prio=MID, req=LARGE)],
        [{}],
        [0],
    ),
    DryRunCase(
        "medium priority pod is preempted, but lower priority one stays as it is small",
        [FIT],
        ["node1", "node2"],
        [P("p", prio=HIGH, req=LARGE)],
        [
            P("p1.1", node="node1", prio=LOW, req=SMALL),
            P("p1.2", node="node1", prio=MID, req=LARGE),
            P("p2", node="node2", prio=MID, req=LARGE),
        ],
        [{**_victims("node1", "p1.2"), **_victims("node2", "p2")}],
        [5],
    ),
    DryRunCase(
        "mixed priority pods are preempted",
        [FIT],
        ["node1", "node2"],
        [P("p", prio=HIGH, req=LARGE)],
        [
            P("p1.1", node="node1", prio=MID, req=SMALL),
            P("p1.2", node="node1", prio=LOW, req=SMALL),
            P("p1.3", node="node1", prio=MID, req=MEDIUM),
            P("p1.4", node="node1", prio=HIGH, req=SMALL),
            P("p2", node="node2", prio=HIGH, req=LARGE),
        ],
        [_victims("node1", "p1.2", "p1.3")],
        [4],
    ),
    DryRunCase(
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        [FIT],
        ["node1", "node2"],
        [P("p", prio=HIGH, req=LARGE)],
        [
            P("p1.1", node="node1", prio=LOW, req=SMALL, start=epoch(5)),
            P("p1.2", node="node1", prio=LOW, req=SMALL, start=epoch(4)),
            P("p1.3", node="node1", prio=MID, req=MEDIUM, start=epoch(3)),
            P("p1.4", node="node1", prio=HIGH, req=SMALL, start=epoch(2)),
            P("p2", node="node2", prio=HIGH, req=LARGE, start=epoch(1)),
        ],
        [_victims("node1", "p1.1", "p1.3")],
        [4],  # no preemption would happen on node2 and no filter call is counted
    ),
    DryRunCase(
        "pod with anti-affinity is preempted",
        [FIT, AFFINITY],
        ["node1", "node2"],
        [P("p", prio=HIGH, req=SMALL, labels={"foo": ""})],
        [
            with_spec(P("p1.1", node="node1", prio=LOW, req=SMALL, labels={"foo": ""}),
                      affinity=ANTI_AFFINITY_FOO_HOSTNAME),
            P("p1.2", node="node1", prio=MID, req=SMALL),
            P("p1.3", node="node1", prio=HIGH, req=SMALL),
            P("p2", node="node2", prio=HIGH, req=SMALL),
        ],
        [_victims("node1", "p1.1")],
        [3],
    ),
    DryRunCase(
        "preemption to resolve pod topology spread filter failure",
        [SPREAD],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [spread_pod()],
        [
            P("pod-a1", node="node-a", prio=MID, labels={"foo": ""}),
            P("pod-a2", node="node-a", prio=LOW, labels={"foo": ""}),
            P("pod-b1", node="node-b", prio=LOW, labels={"foo": ""}),
            P("pod-x1", node="node-x", prio=HIGH, labels={"foo": ""}),
            P("pod-x2", node="node-x", prio=HIGH, labels={"foo": ""}),
        ],
        [{**_victims("node-a", "pod-a2"), **_victims("node-b", "pod-b1")}],
        [5],  # node-a (3), node-b (2), node-x (0)
    ),
    DryRunCase(
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        [FIT],
        ["node1", "node2"],
        [P("p", prio=HIGH, req=LARGE)],
        [P("p1", node="node1", prio=MID, req=LARGE), P("p2", node="node2", prio=MID, req=LARGE)],
        [{}],
        [2],
        fake_filter_rc=U,
    ),
    DryRunCase(
        "preemption with violation of same pdb",
        [FIT],
        ["node1"],
        [P("p", prio=HIGH, req=VERY_LARGE)],
        [
            P("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            P("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [_victims("node1", "p1.1", "p1.2", pdb_violations=1)],
        [3],
        pdbs=[pdb(FOO, 1)],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong "
        "to DisruptedPods",
        [FIT],
        ["node1"],
        [P("p", prio=HIGH, req=VERY_LARGE)],
        [
            P("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            P("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [_victims("node1", "p1.1", "p1.2", pdb_violations=1)],
        [3],
        pdbs=[pdb(FOO, 1, disrupted=["p2"])],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
        "DisruptedPods",
        [FIT],
        ["node1"],
        [P("p", prio=HIGH, req=VERY_LARGE)],
        [
            P("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            P("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [_victims("node1", "p1.1", "p1.2", pdb_violations=0)],
        [3],
        pdbs=[pdb(FOO, 1, disrupted=["p1.2"])],
    ),
    DryRunCase(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs "
        "to DisruptedPods is treated as 'nonViolating'",
        [FIT],
        ["node1"],
        [P("p", prio=HIGH, req=VERY_LARGE)],
        [
            P("p1.1", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            P("p1.2", node="node1", prio=MID, req=MEDIUM, labels=FOO),
            P("p1.3", node="node1", prio=MID, req=MEDIUM, labels=FOO),
        ],
        [_victims("node1", "p1.1", "p1.2", "p1.3", pdb_violations=1)],
        [4],
        pdbs=[pdb(FOO, 1, disrupted=["p1.3"])],
    ),
    DryRunCase(
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        [FIT],
        FIVE,
        [P("p", prio=HIGH, req=LARGE)],
        [P(f"p{i}", node=f"node{i}", prio=MID, req=LARGE) for i in range(1, 6)],
        # cycle=0 => offset=4 => node5 (yes), node1 (yes)
        [{**_victims("node1", "p1"), **_victims("node5", "p5")}],
        [4],
        args=ARGS_40_1,
    ),
    DryRunCase(
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        [FIT],
        FIVE,
        [P("p", prio=HIGH, req=LARGE)],
        [
            P("p1", node="node1", prio=MID, req=LARGE),
            P("p2", node="node2", prio=VERY_HIGH, req=LARGE),
            P("p3", node="node3", prio=MID, req=LARGE),
            P("p4", node="node4", prio=MID, req=LARGE),
            P("p5", node="node5", prio=VERY_HIGH, req=LARGE),
        ],
        # cycle=0 => offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
        [{**_victims("node1", "p1"), **_victims("node3", "p3")}],
        [4],
        args=ARGS_40_1,
    ),
    DryRunCase(
        "preemption offset across multiple scheduling cycles and wrap around",
        [FIT],
        FIVE,
        [P("tp1", prio=HIGH, req=LARGE), P("tp2", prio=HIGH, req=LARGE), P("tp3", prio=HIGH, req=LARGE)],
        [P(f"p{i}", node=f"node{i}", prio=MID, req=LARGE) for i in range(1, 6)],
        [
            {**_victims("node1", "p1"), **_victims("node5", "p5")},  # cycle=0 => offset=4
            {**_victims("node2", "p2"), **_victims("node3", "p3")},  # cycle=1 => offset=1
            {**_victims("node4", "p4"), **_victims("node5", "p5")},  # cycle=2 => offset=3
        ],
        [4, 4, 4],
        args=ARGS_40_1,
    ),
    DryRunCase(
        "preemption looks past numCandidates until a non-PDB violating node is found",
        [FIT],
        FIVE,
        [P("p", prio=HIGH, req=LARGE)],
        [
            P("p1", node="node1", prio=MID, req=LARGE, labels=FOO),
            P("p2", node="node2", prio=MID, req=LARGE, labels=FOO),
            P("p3", node="node3", prio=MID, req=LARGE),
            P("p4", node="node4", prio=MID, req=LARGE),
            P("p5", node="node5", prio=MID, req=LARGE, labels=FOO),
        ],
        # cycle=0 => offset=4 => node5 (yes, pdb), node1 (yes, pdb), node2 (no, pdb), node3 (yes)
        [{**_victims("node1", "p1", pdb_violations=1), **_victims("node3", "p3"),
          **_victims("node5", "p5", pdb_violations=1)}],
        [8],
        pdbs=[pdb(FOO, 0)],
        args=ARGS_40_2,
    ),
]


@pytest.mark.parametrize("case", DRY_RUN, ids=lambda c: c.name)
def test_dry_run_preemption(case: DryRunCase) -> None:
    codes = {n.split("/")[0]: case.fake_filter_rc for n in case.node_names if case.fake_filter_rc is not None}
    fake = fake_filter(codes)
    env = setup([fake, *case.plugins], [N(n) for n in case.node_names], case.init_pods, args=case.args)
    counter = env.tf.plugin("FakeFilter")
    node_infos = env.node_infos()
    prev = 0
    for cycle, pod in enumerate(case.test_pods):
        state = env.pre_filter(pod)
        offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = env.pl.evaluator.dry_run_preemption(
            state, env.tf.pod_info(pod), node_infos, case.pdbs, offset, num
        )
        candidates = {c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in got}
        assert len(candidates) == len(got), "one candidate per node"
        assert candidates == case.expected[cycle], f"cycle {cycle}"
        assert counter.num_filter_called - prev == case.expected_num_filter_called[cycle], f"cycle {cycle}"
        prev = counter.num_filter_called


def test_dry_run_puts_non_violating_candidates_first() -> None:
    case = DRY_RUN[-1]
    env = setup([FIT], [N(n) for n in case.node_names], case.init_pods, args=case.args)
    pod = case.test_pods[0]
    state = env.pre_filter(pod)
    got, _, _ = env.pl.evaluator.dry_run_preemption(state, env.tf.pod_info(pod), env.node_infos(), case.pdbs, 4, 2)
    # Visited node5, node1, node2, node3: the violating list holds two (node2 dropped), node3 leads.
    assert [c.name for c in got] == ["node3", "node5", "node1"]


# ------------------------------------------------------------------------------------------------
# TestSelectBestCandidate
# ------------------------------------------------------------------------------------------------
@dataclass
class SelectCase:
    name: str
    node_names: list[str]
    pod: dict[str, Any]
    pods: list[dict[str, Any]]
    expected: list[str]  # any of them


def _p(name: str, prio: int, req: Mapping[str, str], start: str = epoch(0)) -> dict[str, Any]:
    """``st.MakePod().Name(n).UID(n).Node("node" + n[1]).Priority(prio).Req(req).StartTime(start)``."""
    return P(name, node=f"node{name[1]}", prio=prio, req=req, start=start)


SELECT = [
    SelectCase("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"],
               P("p", prio=HIGH, req=LARGE), [_p("p1", MID, LARGE), _p("p2", MID, LARGE)], ["node1", "node2"]),
    SelectCase("node with min highest priority pod is picked", ["node1", "node2", "node3"],
               P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, MEDIUM), _p("p1.2", MID, LARGE), _p("p2.1", MID, MEDIUM), _p("p2.2", LOW, MEDIUM),
                _p("p3.1", LOW, MEDIUM), _p("p3.2", LOW, MEDIUM)], ["node3"]),
    SelectCase("when highest priorities are the same, minimum sum of priorities is picked",
               ["node1", "node2", "node3"], P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, MEDIUM), _p("p1.2", MID, LARGE), _p("p2.1", MID, LARGE), _p("p2.2", LOW, MEDIUM),
                _p("p3.1", MID, MEDIUM), _p("p3.2", MID, MEDIUM)], ["node2"]),
    SelectCase("when highest priority and sum are the same, minimum number of pods is picked",
               ["node1", "node2", "node3"], P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, SMALL), _p("p1.2", NEG, SMALL), _p("p1.3", MID, SMALL), _p("p1.4", NEG, SMALL),
                _p("p2.1", MID, LARGE), _p("p2.2", NEG, MEDIUM),
                _p("p3.1", MID, MEDIUM), _p("p3.2", NEG, SMALL), _p("p3.3", LOW, SMALL)], ["node2"]),
    SelectCase("sum of adjusted priorities is considered", ["node1", "node2", "node3"],
               P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, SMALL), _p("p1.2", NEG, SMALL), _p("p1.3", NEG, SMALL),
                _p("p2.1", MID, LARGE), _p("p2.2", NEG, MEDIUM),
                _p("p3.1", MID, MEDIUM), _p("p3.2", NEG, SMALL), _p("p3.3", LOW, SMALL)], ["node2"]),
    SelectCase("non-overlapping lowest high priority, sum priorities, and number of pods",
               ["node1", "node2", "node3", "node4"], P("p", prio=VERY_HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, SMALL), _p("p1.2", LOW, SMALL), _p("p1.3", LOW, SMALL),
                _p("p2.1", HIGH, LARGE),
                _p("p3.1", MID, MEDIUM), _p("p3.2", LOW, SMALL), _p("p3.3", LOW, SMALL), _p("p3.4", LOW, MEDIUM),
                _p("p4.1", MID, MEDIUM), _p("p4.2", MID, SMALL), _p("p4.3", MID, SMALL), _p("p4.4", NEG, SMALL)],
               ["node1"]),
    SelectCase("same priority, same number of victims, different start time for each node's pod",
               ["node1", "node2", "node3"], P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, MEDIUM, epoch(2)), _p("p1.2", MID, MEDIUM, epoch(2)),
                _p("p2.1", MID, MEDIUM, epoch(3)), _p("p2.2", MID, MEDIUM, epoch(3)),
                _p("p3.1", MID, MEDIUM, epoch(1)), _p("p3.2", MID, MEDIUM, epoch(1))], ["node2"]),
    SelectCase("same priority, same number of victims, different start time for all pods",
               ["node1", "node2", "node3"], P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", MID, MEDIUM, epoch(4)), _p("p1.2", MID, MEDIUM, epoch(2)),
                _p("p2.1", MID, MEDIUM, epoch(5)), _p("p2.2", MID, MEDIUM, epoch(1)),
                _p("p3.1", MID, MEDIUM, epoch(3)), _p("p3.2", MID, MEDIUM, epoch(6))], ["node3"]),
    SelectCase("different priority, same number of victims, different start time for all pods",
               ["node1", "node2", "node3"], P("p", prio=HIGH, req=VERY_LARGE),
               [_p("p1.1", LOW, MEDIUM, epoch(4)), _p("p1.2", MID, MEDIUM, epoch(2)),
                _p("p2.1", MID, MEDIUM, epoch(6)), _p("p2.2", LOW, MEDIUM, epoch(1)),
                _p("p3.1", LOW, MEDIUM, epoch(3)), _p("p3.2", MID, MEDIUM, epoch(5))], ["node2"]),
]


@pytest.mark.parametrize("case", SELECT, ids=lambda c: c.name)
def test_select_best_candidate(case: SelectCase) -> None:
    env = setup([FIT], [N(n) for n in case.node_names], case.pods)
    state = env.pre_filter(case.pod)
    node_infos = env.tf.nodes()
    offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(
        state, env.tf.pod_info(case.pod), node_infos, [], offset, num
    )
    best = env.pl.evaluator.select_candidate(candidates)
    assert best is not None and best.name in case.expected


# ------------------------------------------------------------------------------------------------
# TestCustomSelection / TestCustomOrdering
# ------------------------------------------------------------------------------------------------
Eligible = Callable[[NodeInfo, PodInfo, PodInfo], bool]


def pod_label_is_eligible(key: str, val: str) -> Eligible:
    return lambda ni, victim, preemptor: victim.labels.get(key) == val


def node_name_is_eligible(name: str) -> Eligible:
    return lambda ni, victim, preemptor: ni.name == name


def priority_below_threshold_cannot_preempt(min_preempting: int) -> Eligible:
    return lambda ni, victim, preemptor: preemptor.priority >= min_preempting


def priority_above_threshold_cannot_be_preempted(max_preemptible: int) -> Eligible:
    return lambda ni, victim, preemptor: victim.priority <= max_preemptible


def _v(name: str, node: str, prio: int, req: Mapping[str, str], **labels: str) -> dict[str, Any]:
    return P(name, node=node, prio=prio, req=req, labels=labels, start=epoch(0))


_BY_LABEL = [
    _v("v1", "node1", MID, LARGE, preemptible="no"),
    _v("v2", "node2", MID, LARGE, preemptible="yes"),
    _v("v3", "node3", LOW, LARGE, preemptible="yes"),
    _v("v4", "node4", LOW, LARGE),
]
_BY_NODE_HIGH = [
    _v("v1", "node1", HIGH, MEDIUM), _v("v2", "node1", MID, SMALL), _v("v3", "node1", LOW, SMALL),
    _v("v4", "node2", MID, LARGE), _v("v5", "node3", LOW, LARGE),
]
_BY_NODE = [
    _v("v1", "node1", HIGH, SMALL), _v("v2", "node1", MID, SMALL), _v("v3", "node1", LOW, SMALL),
    _v("v4", "node2", MID, LARGE), _v("v5", "node3", LOW, LARGE),
]
_BY_PRIORITY = [_v("v1", "node1", HIGH, LARGE), _v("v2", "node2", MID, LARGE), _v("v3", "node3", LOW, LARGE)]
N4 = ["node1", "node2", "node3", "node4"]
N3 = ["node1", "node2", "node3"]

CUSTOM_SELECTION: list[tuple[str, Eligible, list[str], dict[str, Any], list[dict[str, Any]], dict[str, list[str]]]] = [
    ("filter for matching pod label: high priority", pod_label_is_eligible("preemptible", "yes"), N4,
     P("p1", prio=HIGH, req=LARGE), _BY_LABEL, {"node2": ["v2"], "node3": ["v3"]}),
    ("filter for matching pod label: mid priority", pod_label_is_eligible("preemptible", "yes"), N4,
     P("p2", prio=MID, req=LARGE), _BY_LABEL, {"node3": ["v3"]}),
    ("filter for matching pod label: low priority", pod_label_is_eligible("preemptible", "yes"), N4,
     P("p3", prio=LOW, req=LARGE), _BY_LABEL, {}),
    ("filter for matching victim node: high priority", node_name_is_eligible("node1"), N3,
     P("p3", prio=HIGH, req=LARGE), _BY_NODE_HIGH, {"node1": ["v2", "v3"]}),
    ("filter for matching victim node: mid priority", node_name_is_eligible("node1"), N3,
     P("p3", prio=MID, req=LARGE), _BY_NODE, {"node1": ["v3"]}),
    ("filter for matching victim node: low priority", node_name_is_eligible("node1"), N3,
     P("p3", prio=LOW, req=LARGE), _BY_NODE, {}),
    ("only pods at or above specified priority can preempted: high priority",
     priority_below_threshold_cannot_preempt(HIGH), N3, P("p1", prio=HIGH, req=LARGE), _BY_PRIORITY,
     {"node2": ["v2"], "node3": ["v3"]}),
    ("only pods at or above specified priority can preempted: mid priority",
     priority_below_threshold_cannot_preempt(HIGH), N3, P("p2", prio=MID, req=LARGE), _BY_PRIORITY, {}),
    ("only pods at or below specified priority can be preempted: high priority",
     priority_above_threshold_cannot_be_preempted(MID), N3, P("p1", prio=HIGH, req=LARGE), _BY_PRIORITY,
     {"node2": ["v2"], "node3": ["v3"]}),
]


@pytest.mark.parametrize(("name", "eligible", "nodes", "pod", "pods", "expected"), CUSTOM_SELECTION,
                         ids=[c[0] for c in CUSTOM_SELECTION])
def test_custom_selection(
    name: str,
    eligible: Eligible,
    nodes: list[str],
    pod: dict[str, Any],
    pods: list[dict[str, Any]],
    expected: dict[str, list[str]],
) -> None:
    env = setup([FIT], [N(n) for n in nodes], pods)
    env.pl.is_eligible_pod = eligible
    state = env.pre_filter(pod)
    node_infos = env.tf.nodes()
    offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(state, env.tf.pod_info(pod), node_infos, [], offset, num)
    assert len(candidates) == len(expected)
    remaining: list[Candidate] = list(candidates)
    while remaining:
        selected = env.pl.evaluator.select_candidate(remaining)
        assert selected is not None and selected.name in expected
        assert [v.name for v in selected.victims] == expected[selected.name]
        remaining = [c for c in remaining if c.name != selected.name]


def by_oldest_start(a: PodInfo, b: PodInfo) -> bool:
    return get_pod_start_time(a, 0) < get_pod_start_time(b, 0)


def by_pod_name(a: PodInfo, b: PodInfo) -> bool:
    return a.name < b.name


CUSTOM_ORDERING = [
    # The newest two pods are selected, despite one with higher priority.
    ("select newest pods", by_oldest_start,
     [P("v1", node="node1", prio=LOW, req=MEDIUM, start=epoch(2)),
      P("v2", node="node1", prio=LOW, req=MEDIUM, start=epoch(0)),
      P("v3", node="node1", prio=MID, req=MEDIUM, start=epoch(1))],
     ["v3", "v1"]),
    # The last pods in alphabetic order are selected, despite one with higher priority.
    ("select alphabetically-last pods", by_pod_name,
     [P("foo", uid="v1", node="node1", prio=LOW, req=MEDIUM, start=epoch(0)),
      P("bar", uid="v2", node="node1", prio=LOW, req=MEDIUM, start=epoch(0)),
      P("baz", uid="v3", node="node1", prio=MID, req=MEDIUM, start=epoch(0))],
     ["baz", "foo"]),
]


@pytest.mark.parametrize(("name", "order", "pods", "expected"), CUSTOM_ORDERING, ids=[c[0] for c in CUSTOM_ORDERING])
def test_custom_ordering(
    name: str, order: Callable[[PodInfo, PodInfo], bool], pods: list[dict[str, Any]], expected: list[str]
) -> None:
    env = setup([FIT], [N("node1")], pods)
    env.pl.more_important_pod = order
    pod = P("p2", prio=HIGH, req=LARGE)
    state = env.pre_filter(pod)
    node_infos = env.tf.nodes()
    offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(state, env.tf.pod_info(pod), node_infos, [], offset, num)
    assert len(candidates) == 1
    assert [v.name for v in candidates[0].victims] == expected


# ------------------------------------------------------------------------------------------------
# TestPodEligibleToPreemptOthers
# ------------------------------------------------------------------------------------------------
def _terminating(pod: dict[str, Any], *, preempted: bool) -> dict[str, Any]:
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if preempted:
        pod["status"]["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    return pod


def _nominated(pod: dict[str, Any], node: str) -> dict[str, Any]:
    pod["status"]["nominatedNodeName"] = node
    return pod


ELIGIBLE = [
    ("Pod with nominated node", _nominated(P("p_with_nominated_node", uid="p", prio=HIGH), "node1"),
     [_terminating(P("p1", prio=LOW, node="node1"), preempted=False)], ["node1"],
     Status(UU, "node(s) had untolerated taint(s)"), True),
    ("Pod without nominated node", P("p_without_nominated_node", uid="p", prio=HIGH), [], [],
     Status(Code.SUCCESS), True),
    ("Pod with 'PreemptNever' preemption policy",
     make_pod("p_with_preempt_never_policy").uid("p").priority(HIGH).preemption_policy("Never").obj(), [], [],
     Status(Code.SUCCESS), False),
    ("preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
     _nominated(P("p_with_nominated_node", uid="p", prio=HIGH), "node1"),
     [_terminating(P("p1", prio=LOW, node="node1"), preempted=True)], ["node1"], Status(Code.SUCCESS), False),
    ("non-victim Pods terminating", _nominated(P("p_with_nominated_node", uid="p", prio=HIGH), "node1"),
     [_terminating(P("p1", prio=LOW, node="node1"), preempted=False)], ["node1"], Status(Code.SUCCESS), True),
]


@pytest.mark.parametrize(("name", "pod", "pods", "nodes", "nominated_status", "expected"), ELIGIBLE,
                         ids=[c[0] for c in ELIGIBLE])
def test_pod_eligible_to_preempt_others(
    name: str,
    pod: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: list[str],
    nominated_status: Status,
    expected: bool,
) -> None:
    env = setup([], [N(n) for n in nodes], pods)
    ok, msg = env.pl.pod_eligible_to_preempt_others(env.tf.pod_info(pod), nominated_status)
    assert ok is expected
    if not ok:
        assert msg in ("not eligible due to preemptionPolicy=Never.",
                       "not eligible due to a terminating pod on the nominated node.")


# ------------------------------------------------------------------------------------------------
# TestPreempt
# ------------------------------------------------------------------------------------------------
@dataclass
class PreemptCase:
    name: str
    pod: dict[str, Any]
    pods: list[dict[str, Any]]
    node_names: list[str]
    plugin: str
    want: PostFilterResult | None
    expected_pods: list[str]


PREEMPT = [
    PreemptCase(
        "basic preemption logic",
        make_pod("p").uid("p").priority(HIGH).res(VERY_LARGE).preemption_policy("PreemptLowerPriority").obj(),
        [P("p1.1", node="node1", prio=LOW, req=SMALL), P("p1.2", node="node1", prio=LOW, req=SMALL),
         P("p2.1", node="node2", prio=HIGH, req=LARGE), P("p3.1", node="node3", prio=MID, req=MEDIUM)],
        ["node1", "node2", "node3"], FIT, nominated("node1"), ["p1.1", "p1.2"],
    ),
    PreemptCase(
        "preemption for topology spread constraints",
        spread_pod(),
        [P("p-a1", node="node-a", prio=HIGH, labels=FOO_LABEL), P("p-a2", node="node-a", prio=HIGH, labels=FOO_LABEL),
         P("p-b1", node="node-b", prio=LOW, labels=FOO_LABEL), P("p-x1", node="node-x", prio=HIGH, labels=FOO_LABEL),
         P("p-x2", node="node-x", prio=HIGH, labels=FOO_LABEL)],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"], SPREAD, nominated("node-b"), ["p-b1"],
    ),
    PreemptCase(
        "no preempting in pod",
        make_pod("p").uid("p").priority(HIGH).res(VERY_LARGE).preemption_policy("Never").obj(),
        [P("p1.1", node="node1", prio=LOW, req=SMALL), P("p1.2", node="node1", prio=LOW, req=SMALL),
         P("p2.1", node="node2", prio=HIGH, req=LARGE), P("p3.1", node="node3", prio=MID, req=MEDIUM)],
        ["node1", "node2", "node3"], FIT, None, [],
    ),
    PreemptCase(
        "PreemptionPolicy is nil",
        P("p", prio=HIGH, req=VERY_LARGE),
        [P("p1.1", node="node1", prio=LOW, req=SMALL), P("p1.2", node="node1", prio=LOW, req=SMALL),
         P("p2.1", node="node2", prio=HIGH, req=LARGE), P("p3.1", node="node3", prio=MID, req=MEDIUM)],
        ["node1", "node2", "node3"], FIT, nominated("node1"), ["p1.1", "p1.2"],
    ),
]


@pytest.mark.parametrize("case", PREEMPT, ids=lambda c: c.name)
def test_preempt(case: PreemptCase) -> None:
    env = setup([case.plugin], [N(n) for n in case.node_names], case.pods, preemptor=case.pod)
    patched: list[tuple[str, dict[str, Any]]] = []
    real_patch = env.tf.cluster.patch_pod_status

    def patch(pod: Mapping[str, Any], p: Mapping[str, Any]) -> None:
        patched.append((pod["metadata"]["name"], dict(p)))
        real_patch(pod, p)

    env.tf.cluster.patch_pod_status = patch  # type: ignore[method-assign]
    state = env.pre_filter(case.pod)
    all_unschedulable = NodeToStatus({n.split("/")[0]: Status(U) for n in case.node_names})
    res, status = env.pl.evaluator.preempt(state, env.tf.pod_info(case.pod), all_unschedulable)
    assert status.is_success() or status.is_rejected()
    assert res == case.want
    assert sorted(env.deleted()) == sorted(case.expected_pods)
    # Every deleted victim was first marked with the DisruptionTarget condition.
    assert sorted(name for name, _ in patched) == sorted(case.expected_pods)
    for _, p in patched:
        (cond,) = p["conditions"]
        assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": "default-scheduler: preempting to accommodate a higher priority pod",
        }
    # One Preempted event per victim, regarding the victim, related to the preemptor.
    events = [e for e in env.tf.cluster.events if e.reason == "Preempted"]
    assert sorted(e.name for e in events) == sorted(case.expected_pods)
    for e in events:
        assert (e.type, e.action) == ("Normal", "Preempting")
        assert e.note == f"Preempted by pod p on node {case.want.nominating_info.nominated_node_name}"  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------------------
# TestPrepareCandidate (pkg/scheduler/framework/preemption/preemption_test.go)
# ------------------------------------------------------------------------------------------------
DISRUPTION = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "PreemptionByScheduler",
    "message": "default-scheduler: preempting to accommodate a higher priority pod",
}


class FakeClient:
    """A client whose calls are recorded; ``fail-victim`` fails, ``not-found-victim`` is gone (404)."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.patched: list[str] = []

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        name = pod["metadata"]["name"]
        if name == "fail-victim":
            raise RuntimeError("patch pod status failed")
        if name == "not-found-victim":
            from kubesched.framework.cluster import BindConflictError

            raise BindConflictError(f'pods "{name}" not found')
        self.patched.append(name)

    def delete_pod(self, pod: Mapping[str, Any], reason: str = "") -> None:
        name = pod["metadata"]["name"]
        if name == "fail-victim":
            raise RuntimeError("delete pod failed")
        if name == "not-found-victim":
            from kubesched.framework.cluster import BindConflictError

            raise BindConflictError(f'pods "{name}" not found')
        self.deleted.append(name)


class ClientSwap:
    """The test framework's handle with the client replaced."""

    def __init__(self, handle: Any, client: FakeClient) -> None:
        self._h = handle
        self._client = client

    def client(self) -> FakeClient:
        return self._client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._h, name)


def _victim(name: str, *, prio: int = MID, condition: bool = False, terminating: bool = False) -> PodInfo:
    pod = P(name, uid="victim1" if name != "victim2" else "victim2", node="node1", prio=prio)
    if condition:
        pod["status"]["conditions"] = [dict(DISRUPTION)]
    if terminating:
        pod["metadata"]["deletionTimestamp"] = "2025-12-31T23:58:20Z"
    return PodInfo(pod)


@dataclass
class PrepareCase:
    name: str
    victims: list[PodInfo]
    patched: list[str]
    deleted: list[str]
    want: Status | None = None


PREPARE = [
    PrepareCase("no victims", [], [], []),
    PrepareCase("one victim without condition", [_victim("victim1")], ["victim1"], ["victim1"]),
    PrepareCase("one victim, but victim is already being deleted",
                [_victim("victim1-with-deletion-timestamp", terminating=True)], [], []),
    PrepareCase("one victim, but victim is already deleted", [_victim("not-found-victim")], [], []),
    PrepareCase("one victim with same condition", [_victim("victim1", condition=True)], [], ["victim1"]),
    PrepareCase("one victim, not-found victim error is ignored when patching",
                [_victim("victim1", condition=True)], [], ["victim1"]),
    PrepareCase("one victim, but pod deletion failed", [_victim("fail-victim", condition=True)], [], [],
                Status(ERR, "delete pod failed")),
    PrepareCase("one victim, not-found victim error is ignored when deleting", [_victim("victim1")],
                ["victim1"], ["victim1"]),
    PrepareCase("one victim, but patch pod failed", [_victim("fail-victim")], [], [],
                Status(ERR, "patch pod status failed")),
    # Sequential: the first victim fails before the second is touched (upstream allows either).
    PrepareCase("two victims without condition, one passes successfully and the second fails",
                [_victim("fail-victim"), _victim("victim2", prio=50000)], [], [],
                Status(ERR, "patch pod status failed")),
]


@pytest.mark.parametrize("case", PREPARE, ids=lambda c: c.name)
def test_prepare_candidate(case: PrepareCase) -> None:
    env = setup([], [N("node1")])
    client = FakeClient()
    handle = ClientSwap(env.pl.handle, client)
    env.pl.evaluator.handle = handle
    preemptor = PodInfo(P("preemptor", prio=HIGH))
    st = env.pl.evaluator.prepare_candidate(Candidate("node1", case.victims), preemptor)
    if case.want is None:
        assert st.is_success()
    else:
        assert (st.code, st.reasons) == (case.want.code, case.want.reasons)
    assert client.patched == case.patched
    assert client.deleted == case.deleted
    events = [e.note for e in env.tf.cluster.events if e.reason == "Preempted"]
    assert events == ["Preempted by pod preemptor on node node1" for _ in case.deleted]


# ------------------------------------------------------------------------------------------------
# beyond the upstream tables
# ------------------------------------------------------------------------------------------------
def test_waiting_pod_victim_is_rejected_not_deleted() -> None:
    """A victim held at Permit is rejected with "preempted" (upstream ``Reject(pluginName, "preempted")``)."""
    from kubesched.framework.waiting_pods import WaitingPod

    env = setup([FIT], [N("node1")], [P("w", node="node1", prio=LOW, req=LARGE)])
    wp = WaitingPod(env.tf.pod_info(P("w", node="node1", prio=LOW, req=LARGE)), "node1", {"Hold": 30.0}, env.tf.clock)
    env.tf.framework.waiting_pods.add(wp)
    outcome: list[Status] = []
    wp.on_done(outcome.append)
    st = env.pl.evaluator.prepare_candidate(Candidate("node1", [wp.pod_info]), PodInfo(P("hi", prio=HIGH)))
    assert st.is_success()
    assert [(s.code, s.reasons, s.plugin) for s in outcome] == [(U, ["preempted"], "DefaultPreemption")]
    assert env.deleted() == set()
    assert "default/w" in env.tf.cluster.pods
    assert [e.note for e in env.tf.cluster.events if e.reason == "Preempted"] == ["Preempted by pod hi on node node1"]


def test_victim_in_pre_bind_has_its_binding_cancelled_from_v1_36() -> None:
    """framework/preemption/executor.go (v1.36.3): a victim in PreBind is cancelled
    (``CancelPod("preempted by DefaultPreemption")``), not deleted, and the event says so."""
    env = setup([FIT], [N("node1")], [P("b", node="node1", prio=LOW, req=LARGE)], release=V1_36)
    victim = env.tf.pod_info(P("b", node="node1", prio=LOW, req=LARGE))
    entry = env.tf.framework.pods_in_pre_bind.add(victim.uid)
    st = env.pl.evaluator.prepare_candidate(Candidate("node1", [victim]), PodInfo(P("hi", prio=HIGH)))
    assert st.is_success()
    assert entry.canceled and entry.cause == "preempted by DefaultPreemption"
    assert env.deleted() == set()
    assert [e.note for e in env.tf.cluster.events if e.reason == "Preempted"] == [
        "Preempted by pod hi on node node1 (in kube-scheduler memory)."
    ]


def test_victim_past_pre_bind_is_deleted() -> None:
    env = setup([FIT], [N("node1")], [P("b", node="node1", prio=LOW, req=LARGE)], release=V1_37)
    victim = env.tf.pod_info(P("b", node="node1", prio=LOW, req=LARGE))
    assert env.tf.framework.pods_in_pre_bind.add(victim.uid).mark_prebound()
    st = env.pl.evaluator.prepare_candidate(Candidate("node1", [victim]), PodInfo(P("hi", prio=HIGH)))
    assert st.is_success() and env.deleted() == {"b"}


def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    env = setup([FIT], [N("node1"), N("node2")], [P("v", node="node1", prio=LOW, req=LARGE)])
    queue = env.tf.scheduler.queue
    low = _nominated(P("low", prio=MID, req=SMALL), "node1")
    same = _nominated(P("same", prio=HIGH, req=SMALL), "node1")
    other = _nominated(P("other", prio=LOW, req=SMALL), "node2")
    for pod in (low, same, other):
        env.tf.add_pod(pod)
        queue.add_nominated_pod(env.tf.pod_info(pod), pod["status"]["nominatedNodeName"])
    st = env.pl.evaluator.prepare_candidate(Candidate("node1", [env.tf.node_info("node1").pods[0]]),
                                            PodInfo(P("hi", prio=HIGH)))
    assert st.is_success()
    assert sorted(p.name for p in queue.nominated_pods_for_node("node1")) == ["same"]
    assert [p.name for p in queue.nominated_pods_for_node("node2")] == ["other"]
    assert "nominatedNodeName" not in env.tf.cluster.pods["default/low"]["status"]
    assert env.tf.cluster.pods["default/same"]["status"]["nominatedNodeName"] == "node1"


def test_calculate_num_candidates() -> None:
    """``calculateNumCandidates``: max(n × pct / 100, abs), at most n (integer division as int32)."""
    env = setup([], [N("node1")], args={"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100})
    assert [env.pl.calculate_num_candidates(n) for n in (1, 50, 100, 1000, 5000)] == [1, 50, 100, 100, 500]
    env = setup([], [N("node1")], args=ARGS_40_1)
    assert [env.pl.calculate_num_candidates(n) for n in (1, 2, 5, 7)] == [1, 1, 2, 2]


def test_metrics_count_attempts_and_victims() -> None:
    case = POST_FILTER[0]
    env = setup([FIT, TestPlugin], case.nodes, case.pods, preemptor=case.pod)
    m = env.tf.scheduler.metrics
    state = env.pre_filter(case.pod)
    env.pl.post_filter(state, env.tf.pod_info(case.pod), case.node_statuses)
    env.pl.post_filter(state, env.tf.pod_info(case.pod), NodeToStatus())  # nothing to preempt
    reg = m.registry
    assert reg.get_sample_value("scheduler_preemption_attempts_total") == 2
    assert reg.get_sample_value("scheduler_preemption_victims_count") == 1
    assert reg.get_sample_value("scheduler_preemption_victims_sum") == 1


def _c(node: str, *victims: tuple[int, int], violations: int = 0) -> Candidate:
    """A candidate whose victims are (priority, start in ns) pairs, most important first."""
    pods = [PodInfo(P(f"{node}-v{i}", prio=prio, start=epoch(t))) for i, (prio, t) in enumerate(victims)]
    return Candidate(node, pods, violations)


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        # Hand-computed, one criterion deciding each time.
        ([_c("a", (MID, 0), violations=1), _c("b", (HIGH, 0))], "b"),
        ([_c("a", (HIGH, 0)), _c("b", (MID, 0), (MID, 0), (MID, 0))], "b"),
        ([_c("a", (MID, 0), (LOW, 0)), _c("b", (MID, 0), (NEG, 0))], "b"),
        # Adjusted sums: two victims at -100 weigh more than one at -100 (2^31 added to each).
        ([_c("a", (NEG, 0), (NEG, 0)), _c("b", (NEG, 0))], "b"),
        ([_c("a", (MID, 0), (MID, 0)), _c("b", (MID, 0), (LOW, 0), (LOW, 0))], "a"),
        # Latest earliest-start among the highest-priority victims: a's earliest is 1, b's is 3.
        ([_c("a", (MID, 1), (MID, 6)), _c("b", (MID, 3), (MID, 4))], "b"),
        # Only the highest-priority victims count: a's low victim started at 0 but is ignored.
        ([_c("a", (MID, 5), (LOW, 0)), _c("b", (MID, 4), (LOW, 9))], "a"),
        # Full tie: the first candidate.
        ([_c("a", (MID, 2)), _c("b", (MID, 2))], "a"),
        ([_c("b", (MID, 2)), _c("a", (MID, 2))], "b"),
    ],
)
def test_pick_one_node_for_preemption(candidates: list[Candidate], want: str) -> None:
    from kubesched.framework.preemption import pick_one_node_for_preemption

    assert pick_one_node_for_preemption(candidates, None, 10**18) == want


def test_rfc3339_start_times_keep_nanoseconds() -> None:
    from kubesched.framework.preemption import parse_time_ns

    assert parse_time_ns("1970-01-01T00:00:00Z") == 0
    assert parse_time_ns("1970-01-01T00:00:00.000000005Z") == 5
    assert parse_time_ns("2026-01-01T00:00:01.5+01:00") == 1767225600 * 10**9 - 3600 * 10**9 + 1_500_000_000
    assert parse_time_ns("yesterday") is None


def test_aggregate_error_message() -> None:
    """``utilerrors.NewAggregate``: one error as is, duplicates once, several in brackets."""
    from kubesched.framework.preemption import aggregate_error

    assert aggregate_error(["a"]) == "a"
    assert aggregate_error(["a", "a"]) == "a"
    assert aggregate_error(["a", "b", "a"]) == "[a, b]"


def test_pdb_violating_victims_are_reprieved_first() -> None:
    """Hand-computed: room for the preemptor and one more pod. Reprieving in importance order would
    keep ``a`` and evict ``b`` (violating its PDB); upstream tries the violating ``b`` first."""
    env = setup([FIT], [N("node1", {"pods": "2"})],
                [P("a", node="node1", prio=MID), P("b", node="node1", prio=LOW, labels=FOO)],
                objects=[pdb(FOO, 0)])
    pod = P("p", prio=HIGH)
    state = env.pre_filter(pod)
    got, _, _ = env.pl.evaluator.dry_run_preemption(
        state, env.tf.pod_info(pod), env.node_infos(), [pdb(FOO, 0)], 0, 1
    )
    assert [(c.name, [v.name for v in c.victims], c.num_pdb_violations) for c in got] == [("node1", ["a"], 0)]
