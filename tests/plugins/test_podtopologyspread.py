"""PodTopologySpread: PreFilter/Filter, AddPod/RemovePod, PreScore/Score/NormalizeScore, hints.

Ported from pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestPreFilterState,
TestPreFilterStateAddPod, TestPreFilterStateRemovePod, TestSingleConstraint, TestMultipleConstraints,
TestPreFilterDisabled), scoring_test.go (TestPreScoreSkip, TestPreScoreStateEmptyNodes,
TestPodTopologySpreadScore) and plugin_test.go (Test_isSchedulableAfterNodeChange,
Test_isSchedulableAfterPodChange): the same pods, nodes, Services/ReplicaSets, expected states,
status codes, scores and hints, as data.

Upstream runs some cases with the NodeInclusionPolicy/MatchLabelKeys gates off; both are on in
v1.35 and so here. Cases whose expectation depends on a gate being off are left out
("matchLabelKeys ignored when feature gate disabled", in PreFilter and Score); the other
"gate disabled" cases expect exactly what the gate-on code computes and are kept. Upstream's
states are compared through what they mean: per constraint, matching pods per topology value and
the global minimum (upstream's first critical path), the parsed constraints, ignored nodes and
topology weights.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from _builders import ClientHandle, make_label_selector, make_node, make_pod, make_snapshot

from kubesched.api.labels import Selector, selector_from_label_selector
from kubesched.config.plugin_args import PodTopologySpreadArgs
from kubesched.config.types import PluginRef, Plugins, PluginSet, Profile
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.podtopologyspread.common import TopologySpreadConstraint, WorkloadIndex
from kubesched.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NO_DOMAIN_MIN,
    PreFilterState,
)
from kubesched.plugins.podtopologyspread.plugin import PRE_FILTER_STATE_KEY, PRE_SCORE_STATE_KEY
from kubesched.plugins.podtopologyspread.scoring import PreScoreState
from kubesched.plugins.registry import in_tree_registry

P, N, LS = make_pod, make_node, make_label_selector
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
SUCCESS, U, UAU, SKIP = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SKIP
FOO = LS().exists("foo").obj()
BAR = LS().exists("bar").obj()
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
LIST_ARGS = PodTopologySpreadArgs(defaulting_type="List")


def zn(name: str, zone: str | None = None, **labels: str) -> dict[str, Any]:
    """A node labelled ``zone`` and ``node`` (the tables' ``st.MakeNode().Label("zone", z).Label("node", n)``)."""
    w = N().name(name)
    if zone is not None:
        w.label("zone", zone)
    w.label("node", name)
    return w.labels(labels).obj()


def hn(name: str, **labels: str) -> dict[str, Any]:
    """A node with the hostname label (scoring tables)."""
    return N().name(name).labels(labels).label(HOSTNAME, name).obj()


def ep(name: str, node: str, *keys: str, ns: str = "", **labels: str) -> dict[str, Any]:
    """An existing pod with ``key: ""`` labels (``st.MakePod().Name(n).Node(node).Label(k, "")``)."""
    w = P().name(name).node(node).namespace(ns)
    for k in keys:
        w.label(k, "")
    return w.labels(labels).obj()


def C(
    max_skew: int, key: str, selector: dict[str, Any] | None, min_domains: int = 1,
    naff: str = HONOR, ntaint: str = IGNORE,
) -> TopologySpreadConstraint:
    """An expected parsed constraint; ``selector`` is the LabelSelector it was parsed from."""
    return TopologySpreadConstraint(max_skew, key, selector_from_label_selector(selector), min_domains, naff, ntaint)


def new_plugin(
    pods: list[dict[str, Any]], nodes: list[dict[str, Any]], objects: list[dict[str, Any]] | None = None,
    args: PodTopologySpreadArgs | None = None,
) -> tuple[PodTopologySpread, ClientHandle]:
    handle = ClientHandle(make_snapshot(nodes, pods), objects or [])
    return PodTopologySpread(args or LIST_ARGS, handle), handle


def service(selector: dict[str, str], namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": namespace},
            "spec": {"selector": selector}}


def replica_set(name: str, selector: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": selector}}


NODES_ABXY = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestPreFilterState
# ------------------------------------------------------------------------------------------------
def incoming(*keys: str, **labels: str) -> Any:
    w = P().name("p")
    for k in keys:
        w.label(k, "")
    return w.labels(labels)


PODS_3_2 = [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"), ep("p-y2", "node-y", "foo")]
PODS_3_4 = [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
            ep("p-y1", "node-y", "foo"), ep("p-y2", "node-y", "foo"), ep("p-y3", "node-y", "foo"),
            ep("p-y4", "node-y", "foo")]
NODES_ABC_AFF = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c", bar="")]
PODS_BAR_1_2 = [ep("p-a", "node-a", "bar"), ep("p-b", "node-b", "bar"), ep("p-c", "node-b", "bar"), ep("p-d", "node-c")]
NODES_ABC_TAINT = [
    zn("node-a"), zn("node-b"), N().name("node-c").label("node", "node-c").taints(TAINTS).label("bar", "").obj()
]
FOO_A = [ep(f"p-{n}", f"node-{n[0]}", foo="a") for n in ("a1", "a2", "b1", "y1", "y2")]

PRE_FILTER_STATE_CASES: list[dict[str, Any]] = [
    {
        "name": "clean cluster with one spreadConstraint",
        "pod": incoming("foo").spread_constraint(5, "zone", DNS, LS().label("foo", "bar").obj()).obj(),
        "nodes": NODES_ABXY,
        "want": [(C(5, "zone", LS().label("foo", "bar").obj()), {"zone1": 0, "zone2": 0}, 0)],
    },
    {
        "name": "normal case with one spreadConstraint",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        "nodes": NODES_ABXY, "pods": PODS_3_2,
        "want": [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2}, 2)],
    },
    {
        "name": "normal case with null label selector",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, None).obj(),
        "nodes": NODES_ABXY, "pods": PODS_3_2,
        "want": [(C(1, "zone", None), {"zone1": 0, "zone2": 0}, 0)],
    },
    {
        "name": "normal case with one spreadConstraint, on a 3-zone cluster",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        "nodes": [*NODES_ABXY, zn("node-o", "zone3"), zn("node-p", "zone3")], "pods": PODS_3_2,
        "want": [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2, "zone3": 0}, 0)],
    },
    {
        "name": "namespace mismatch doesn't count",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO).obj(),
        "nodes": NODES_ABXY,
        "pods": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo", ns="ns1"), ep("p-b1", "node-b", "foo"),
                 ep("p-y1", "node-y", "foo", ns="ns2"), ep("p-y2", "node-y", "foo")],
        "want": [(C(1, "zone", FOO), {"zone1": 2, "zone2": 1}, 1)],
    },
    {
        "name": "normal case with two spreadConstraints",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj(),
        "nodes": NODES_ABXY, "pods": PODS_3_4,
        "want": [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, 3),
            (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0),
        ],
    },
    {
        "name": "soft spreadConstraints should be bypassed",
        "pod": incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", SA, FOO).spread_constraint(1, "node", DNS, FOO).obj(),
        "nodes": [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")], "pods": PODS_3_4,
        "want": [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, 3),
            (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-y": 4}, 1),
        ],
    },
    {
        "name": "different labelSelectors - simple version",
        "pod": incoming("foo", "bar").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, BAR)
        .obj(),
        "nodes": [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        "pods": [ep("p-a", "node-a", "foo"), ep("p-b", "node-b", "bar")],
        "want": [
            (C(1, "zone", FOO), {"zone1": 1, "zone2": 0}, 0),
            (C(1, "node", BAR), {"node-a": 0, "node-b": 1, "node-y": 0}, 0),
        ],
    },
    {
        "name": "different labelSelectors - complex pods",
        "pod": incoming("foo", "bar").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, BAR)
        .obj(),
        "nodes": [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        "pods": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo", "bar"), ep("p-b1", "node-b", "foo"),
                 ep("p-y1", "node-y", "foo"), ep("p-y2", "node-y", "foo", "bar"), ep("p-y3", "node-y", "foo"),
                 ep("p-y4", "node-y", "foo", "bar")],
        "want": [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, 3),
            (C(1, "node", BAR), {"node-a": 1, "node-b": 0, "node-y": 2}, 0),
        ],
    },
    {
        "name": "two spreadConstraints, and with podAffinity",
        "pod": incoming("foo").node_affinity_not_in("node", ["node-x"])
        .spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj(),
        "nodes": NODES_ABXY, "pods": PODS_3_4,
        "want": [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, 3),
            (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-y": 4}, 1),
        ],
    },
    {
        "name": "default constraints and a service",
        "pod": incoming(foo="bar", baz="kar").obj(),
        "defaults": [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
                     {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
                     {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}],
        "objs": [service({"foo": "bar"})],
        "want": [
            (C(3, "node", LS().label("foo", "bar").obj()), {}, NO_DOMAIN_MIN),
            (C(5, "rack", LS().label("foo", "bar").obj()), {}, NO_DOMAIN_MIN),
        ],
    },
    {
        "name": "default constraints and a service that doesn't match",
        "pod": incoming(foo="bar").obj(),
        "defaults": [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        "objs": [service({"baz": "kep"})],
        "status": SKIP,
    },
    {
        "name": "default constraints and a service, but pod has constraints",
        "pod": incoming(foo="bar", baz="tar")
        .spread_constraint(1, "zone", DNS, LS().label("baz", "tar").obj())
        .spread_constraint(2, "planet", SA, LS().label("fot", "rok").obj()).obj(),
        "defaults": [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        "objs": [service({"foo": "bar"})],
        "want": [(C(1, "zone", LS().label("baz", "tar").obj()), {}, NO_DOMAIN_MIN)],
    },
    {
        "name": "default soft constraints and a service",
        "pod": incoming(foo="bar").obj(),
        "defaults": [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
        "objs": [service({"foo": "bar"})],
        "status": SKIP,
    },
    {
        "name": "TpKeyToDomainsNum is calculated when MinDomains is enabled",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj(),
        "nodes": NODES_ABXY, "pods": PODS_3_4,
        "want": [
            (C(1, "zone", FOO), {"zone1": 3, "zone2": 4}, 3),
            (C(1, "node", FOO), {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}, 0),
        ],
    },
    {
        "name": "feature gate disabled with NodeAffinityPolicy",
        "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, BAR).obj(),
        "nodes": NODES_ABC_AFF, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR), {"node-a": 1, "node-b": 2}, 1)],
    },
    {
        "name": "NodeAffinityPolicy honored with labelSelectors",
        "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, BAR).obj(),
        "nodes": NODES_ABC_AFF, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR), {"node-a": 1, "node-b": 2}, 1)],
    },
    {
        "name": "NodeAffinityPolicy ignored with labelSelectors",
        "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, BAR, None, IGNORE).obj(),
        "nodes": NODES_ABC_AFF, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR, naff=IGNORE), {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    },
    {
        "name": "NodeAffinityPolicy honored with nodeAffinity",
        "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", DNS, BAR).obj(),
        "nodes": NODES_ABC_AFF,
        "pods": [ep("p-a", "node-a", "bar"), ep("p-c", "node-b", "bar"), ep("p-d", "node-b", "bar"),
                 ep("p-e", "node-c")],
        "want": [(C(1, "node", BAR), {"node-a": 1, "node-b": 2}, 1)],
    },
    {
        "name": "NodeAffinityPolicy ignored with nodeAffinity",
        "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", DNS, BAR, None, IGNORE).obj(),
        "nodes": NODES_ABC_AFF, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR, naff=IGNORE), {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    },
    {
        "name": "feature gate disabled with NodeTaintsPolicy",
        "pod": incoming("foo").spread_constraint(1, "node", DNS, BAR).obj(),
        "nodes": NODES_ABC_TAINT, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR), {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    },
    {
        "name": "NodeTaintsPolicy ignored",
        "pod": incoming("foo").spread_constraint(1, "node", DNS, BAR).obj(),
        "nodes": NODES_ABC_TAINT, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR), {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    },
    {
        "name": "NodeTaintsPolicy honored",
        "pod": incoming("foo").spread_constraint(1, "node", DNS, BAR, None, None, HONOR).obj(),
        "nodes": NODES_ABC_TAINT, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR, ntaint=HONOR), {"node-a": 1, "node-b": 2}, 1)],
    },
    {
        "name": "NodeTaintsPolicy honored with tolerated taints",
        "pod": incoming("foo").toleration("node.kubernetes.io/unschedulable")
        .spread_constraint(1, "node", DNS, BAR, None, None, HONOR).obj(),
        "nodes": NODES_ABC_TAINT, "pods": PODS_BAR_1_2,
        "want": [(C(1, "node", BAR, ntaint=HONOR), {"node-a": 1, "node-b": 2, "node-c": 0}, 0)],
    },
    {
        "name": "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE).obj(),
        "nodes": [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo="")],
        "pods": [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
        "want": [
            (C(1, "zone", FOO), {"zone1": 0, "zone2": 1}, 0),
            (C(1, "node", FOO, naff=IGNORE), {"node-a": 0, "node-b": 2, "node-x": 1}, 0),
        ],
    },
    {
        "name": "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO).obj(),
        "nodes": [zn("node-a", "zone1", foo=""),
                  N().name("node-b").label("zone", "zone1").label("node", "node-b").taints(TAINTS).obj(),
                  zn("node-x", "zone2", foo="")],
        "pods": [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
        "want": [
            (C(1, "zone", FOO, ntaint=HONOR), {"zone1": 0, "zone2": 1}, 0),
            (C(1, "node", FOO), {"node-a": 0, "node-b": 2, "node-x": 1}, 0),
        ],
    },
    {
        "name": "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO).obj(),
        "nodes": [zn("node-a", "zone1"),
                  N().name("node-b").label("zone", "zone1").label("node", "node-b").label("foo", "").taints(TAINTS)
                  .obj(),
                  zn("node-x", "zone2", foo=""), zn("node-y", "zone2")],
        "pods": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-x1", "node-x", "foo"),
                 ep("p-y1", "node-y", "foo")],
        "want": [
            (C(1, "zone", FOO), {"zone1": 0, "zone2": 1}, 0),
            (C(1, "node", FOO), {"node-b": 0, "node-x": 1}, 0),
        ],
    },
    {
        "name": "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", DNS, FOO, None, IGNORE)
        .spread_constraint(1, "node", DNS, FOO, None, None, HONOR).obj(),
        "nodes": [zn("node-a", "zone1"),
                  N().name("node-b").label("zone", "zone1").label("node", "node-b").label("foo", "").taints(TAINTS)
                  .obj(),
                  zn("node-x", "zone2", foo=""), zn("node-y", "zone2", foo="")],
        "pods": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-x1", "node-x", "foo"),
                 ep("p-x2", "node-x", "foo"), ep("p-y1", "node-y", "foo")],
        "want": [
            (C(1, "zone", FOO, naff=IGNORE), {"zone1": 2, "zone2": 3}, 2),
            (C(1, "node", FOO, ntaint=HONOR), {"node-x": 2, "node-y": 1}, 1),
        ],
    },
    {
        "name": "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        "pod": incoming("foo", bar="a").spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"]).obj(),
        "nodes": NODES_ABXY,
        "pods": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo", bar="a"), ep("p-b1", "node-b", "foo"),
                 ep("p-y1", "node-y", "foo", bar="a"), ep("p-y2", "node-y", "bar")],
        "want": [(C(1, "zone", LS().exists("foo").label("bar", "a").obj()), {"zone1": 1, "zone2": 1}, 1)],
    },
    {
        "name": "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        "pod": incoming(foo="a").spread_constraint(1, "zone", DNS, LS().obj(), None, None, None, ["foo"]).obj(),
        "nodes": NODES_ABXY, "pods": FOO_A,
        "want": [(C(1, "zone", LS().label("foo", "a").obj()), {"zone1": 3, "zone2": 2}, 2)],
    },
    {
        "name": "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, None, None, None, None, ["bar"]).obj(),
        "nodes": NODES_ABXY, "pods": FOO_A,
        "want": [(C(1, "zone", None), {"zone1": 0, "zone2": 0}, 0)],
    },
    {
        "name": "no pod is matched when LabelSelector is nil when feature gate disabled",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, None, None, None, None, ["bar"]).obj(),
        "nodes": NODES_ABXY, "pods": FOO_A,
        "want": [(C(1, "zone", None), {"zone1": 0, "zone2": 0}, 0)],
    },
    {
        "name": "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"]).obj(),
        "nodes": NODES_ABXY, "pods": FOO_A,
        "want": [(C(1, "zone", FOO), {"zone1": 3, "zone2": 2}, 2)],
    },
    {
        "name": "skip if not specified",
        "pod": incoming("foo").obj(),
        "nodes": [zn("node-a", "zone1")],
        "status": SKIP,
    },
]


def _state_view(s: PreFilterState) -> list[tuple[TopologySpreadConstraint, dict[str, int], int]]:
    return [(c, s.tp_value_to_match_num[i], s.min_match_num[i]) for i, c in enumerate(s.constraints)]


@pytest.mark.parametrize("case", PRE_FILTER_STATE_CASES, ids=lambda c: c["name"][:80])
def test_pre_filter_state(case: dict[str, Any]) -> None:
    args = PodTopologySpreadArgs(default_constraints=case.get("defaults", []), defaulting_type="List")
    pl, handle = new_plugin(case.get("pods", []), case.get("nodes", []), case.get("objs"), args)
    state = CycleState()
    _, st = pl.pre_filter(state, PodInfo(case["pod"]), handle.snapshot.list())
    if "status" in case:
        assert st is not None and st.code == case["status"]
        return
    assert st is None
    assert _state_view(state.read_as(PRE_FILTER_STATE_KEY, PreFilterState)) == case["want"]


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestPreFilterStateAddPod / TestPreFilterStateRemovePod
# ------------------------------------------------------------------------------------------------
NODE_C = C(1, "node", FOO)
ZONE_C = C(1, "zone", FOO)
NODES_AB = [zn("node-a", "zone1"), zn("node-b", "zone1")]
NODES_AX = [zn("node-a", "zone1"), zn("node-x", "zone2")]
NODES_ABX = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
NODES_AFF = [zn("node-a", "zone1", foo="bar"), zn("node-b", "zone2", foo="")]
NODES_TAINT_A = [N().name("node-a").label("zone", "zone1").label("node", "node-a").taints(TAINTS).obj(),
                 zn("node-b", "zone2")]
ONE_NODE = incoming("foo").spread_constraint(1, "node", DNS, FOO).obj()
ZONE_NODE = incoming("foo").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj()
ZONE_FOO_NODE_BAR = incoming("foo", "bar").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, BAR)
ONE_ZONE = incoming("foo").spread_constraint(1, "zone", DNS, FOO)
AFF_UNMATCHED = incoming("foo").node_affinity_not_in("foo", ["bar"]).spread_constraint(1, "zone", DNS, FOO)


def zpod(name: str, node: str, zone: str, *keys: str) -> dict[str, Any]:
    return ep(name, node, *keys, zone=zone)


ADD_POD_CASES: list[dict[str, Any]] = [
    {"name": "node a and b both impact current min match", "preemptor": ONE_NODE,
     "added": ep("p-a1", "node-a", "foo"), "existing": [], "node": 0, "nodes": NODES_AB,
     "want": [(NODE_C, {"node-a": 1, "node-b": 0}, 0)]},
    {"name": "only node a impacts current min match", "preemptor": ONE_NODE,
     "added": ep("p-a1", "node-a", "foo"), "existing": [ep("p-b1", "node-b", "foo")], "node": 0, "nodes": NODES_AB,
     "want": [(NODE_C, {"node-a": 1, "node-b": 1}, 1)]},
    {"name": "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap", "preemptor": ONE_NODE,
     "added": ep("p-a1", "node-a", "foo", ns="ns1"), "existing": [ep("p-b1", "node-b", "foo")], "node": 0,
     "nodes": NODES_AB, "want": [(NODE_C, {"node-a": 0, "node-b": 1}, 0)]},
    {"name": "add pod on non-critical node won't trigger re-calculation", "preemptor": ONE_NODE,
     "added": ep("p-b2", "node-b", "foo"), "existing": [ep("p-b1", "node-b", "foo")], "node": 1, "nodes": NODES_AB,
     "want": [(NODE_C, {"node-a": 0, "node-b": 2}, 0)]},
    {"name": "node a and x both impact topologyKeyToMinPodsMap on zone and node", "preemptor": ZONE_NODE,
     "added": ep("p-a1", "node-a", "foo"), "existing": [], "node": 0, "nodes": NODES_AX,
     "want": [(ZONE_C, {"zone1": 1, "zone2": 0}, 0), (NODE_C, {"node-a": 1, "node-x": 0}, 0)]},
    {"name": "only node a impacts topologyKeyToMinPodsMap on zone and node", "preemptor": ZONE_NODE,
     "added": ep("p-a1", "node-a", "foo"), "existing": [ep("p-x1", "node-x", "foo")], "node": 0, "nodes": NODES_AX,
     "want": [(ZONE_C, {"zone1": 1, "zone2": 1}, 1), (NODE_C, {"node-a": 1, "node-x": 1}, 1)]},
    {"name": "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
     "preemptor": ZONE_NODE, "added": ep("p-a1", "node-a", "foo"),
     "existing": [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
     "node": 0, "nodes": NODES_ABX,
     "want": [(ZONE_C, {"zone1": 3, "zone2": 1}, 1), (NODE_C, {"node-a": 1, "node-b": 2, "node-x": 1}, 1)]},
    {"name": "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
     "preemptor": ZONE_FOO_NODE_BAR.obj(), "added": ep("p-a1", "node-a", "foo"),
     "existing": [ep("p-b1", "node-b", "foo", "bar"), ep("p-x1", "node-x", "foo", "bar"), ep("p-x2", "node-x", "bar")],
     "node": 0, "nodes": NODES_ABX,
     "want": [(ZONE_C, {"zone1": 2, "zone2": 1}, 1), (C(1, "node", BAR), {"node-a": 0, "node-b": 1, "node-x": 2}, 0)]},
    {"name": "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
     "preemptor": ZONE_FOO_NODE_BAR.obj(), "added": ep("p-a1", "node-a", "foo", "bar"),
     "existing": [ep("p-b1", "node-b", "bar"), ep("p-x1", "node-x", "foo", "bar"), ep("p-x2", "node-x", "bar")],
     "node": 0, "nodes": NODES_ABX,
     "want": [(ZONE_C, {"zone1": 1, "zone2": 1}, 1), (C(1, "node", BAR), {"node-a": 1, "node-b": 1, "node-x": 2}, 1)]},
    {"name": "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
     "preemptor": AFF_UNMATCHED.obj(), "added": zpod("p-a1", "node-a", "zone1", "foo"),
     "existing": [zpod("p-a2", "node-a", "zone1", "foo"), zpod("p-b1", "node-b", "zone2", "foo")],
     "node": 0, "nodes": NODES_AFF, "want": [(ZONE_C, {"zone2": 1}, 1)]},
    {"name": "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     "preemptor": AFF_UNMATCHED.obj(), "added": zpod("p-a1", "node-a", "zone1", "foo"),
     "existing": [zpod("p-a2", "node-a", "zone1", "foo"), zpod("p-b1", "node-b", "zone2", "foo")],
     "node": 0, "nodes": NODES_AFF, "want": [(ZONE_C, {"zone2": 1}, 1)]},
    {"name": "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
     "preemptor": ONE_ZONE.obj(), "added": zpod("p-b1", "node-b", "zone2", "foo"),
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "node": 1, "nodes": NODES_AFF, "want": [(ZONE_C, {"zone1": 1, "zone2": 2}, 1)]},
    {"name": "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
     "preemptor": ONE_ZONE.obj(), "added": zpod("p-b1", "node-b", "zone2", "foo"),
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "node": 1, "nodes": NODES_AFF, "want": [(ZONE_C, {"zone1": 1, "zone2": 2}, 1)]},
    {"name": "add a label selector not matched pod when with NodeInclusionPolicy enabled",
     "preemptor": ONE_ZONE.obj(), "added": zpod("p-b1", "node-b", "zone2"),
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "node": 1, "nodes": NODES_AFF, "want": [(ZONE_C, {"zone1": 1, "zone2": 1}, 1)]},
    {"name": "add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
     "preemptor": ONE_ZONE.obj(), "added": zpod("p-b1", "node-b", "zone2", "foo"),
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "node": 1, "nodes": NODES_TAINT_A, "want": [(ZONE_C, {"zone1": 1, "zone2": 2}, 1)]},
    {"name": "add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
     "preemptor": incoming("foo").toleration("node.kubernetes.io/unschedulable")
     .spread_constraint(1, "zone", DNS, FOO).obj(),
     "added": zpod("p-b1", "node-b", "zone2", "foo"),
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "node": 1, "nodes": NODES_TAINT_A, "want": [(ZONE_C, {"zone1": 1, "zone2": 2}, 1)]},
]


def _prefilter(pl: PodTopologySpread, handle: ClientHandle, pod: PodInfo) -> CycleState:
    state = CycleState()
    _, st = pl.pre_filter(state, pod, handle.snapshot.list())
    assert st is None
    return state


@pytest.mark.parametrize("case", ADD_POD_CASES, ids=lambda c: c["name"][:80])
def test_pre_filter_state_add_pod(case: dict[str, Any]) -> None:
    pl, handle = new_plugin(case["existing"], case["nodes"])
    preemptor = PodInfo(case["preemptor"])
    state = _prefilter(pl, handle, preemptor)
    ni = handle.snapshot.get(case["nodes"][case["node"]]["metadata"]["name"])
    assert ni is not None
    assert pl.add_pod(state, preemptor, PodInfo(case["added"]), ni) is None
    assert _state_view(state.read_as(PRE_FILTER_STATE_KEY, PreFilterState)) == case["want"]


REMOVE_POD_CASES: list[dict[str, Any]] = [
    {"name": "one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged", "preemptor": ONE_ZONE.obj(),
     "nodes": NODES_ABX,
     "existing": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-x1", "node-x", "foo")],
     "deleted": 0, "node": 0, "want": [(ZONE_C, {"zone1": 1, "zone2": 1}, 1)]},
    {"name": "one spreadConstraint on node, topologyKeyToMinPodsMap changed", "preemptor": ONE_ZONE.obj(),
     "nodes": NODES_ABXY,
     "existing": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-x1", "node-x", "foo"),
                  ep("p-y1", "node-y", "foo")],
     "deleted": 0, "node": 0, "want": [(ZONE_C, {"zone1": 1, "zone2": 2}, 1)]},
    {"name": "delete an irrelevant pod won't help", "preemptor": ONE_ZONE.obj(), "nodes": NODES_ABXY,
     "existing": [ep("p-a0", "node-a", "bar"), ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
                  ep("p-x1", "node-x", "foo"), ep("p-y1", "node-y", "foo")],
     "deleted": 0, "node": 0, "want": [(ZONE_C, {"zone1": 2, "zone2": 2}, 2)]},
    {"name": "delete a non-existing pod won't help", "preemptor": ONE_ZONE.obj(), "nodes": NODES_ABXY,
     "existing": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-x1", "node-x", "foo"),
                  ep("p-y1", "node-y", "foo")],
     "deleted": ep("p-a0", "node-a", "bar"), "node": 0, "want": [(ZONE_C, {"zone1": 2, "zone2": 2}, 2)]},
    {"name": "two spreadConstraints", "preemptor": ZONE_NODE, "nodes": NODES_ABX,
     "existing": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
                  ep("p-x1", "node-x", "foo"), ep("p-x2", "node-x", "foo")],
     "deleted": 3, "node": 2,
     "want": [(ZONE_C, {"zone1": 3, "zone2": 1}, 1), (NODE_C, {"node-a": 2, "node-b": 1, "node-x": 1}, 1)]},
    # In the next four, upstream's deletedPodIdx is left at 0: existingPods[0] is the pod removed.
    {"name": "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
     "preemptor": AFF_UNMATCHED.obj(), "nodes": NODES_AFF,
     "existing": [zpod("p-a2", "node-a", "zone1", "foo"), zpod("p-b1", "node-b", "zone2", "foo")],
     "deleted": 0, "node": 0, "want": [(ZONE_C, {"zone2": 1}, 1)]},
    {"name": "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
     "preemptor": AFF_UNMATCHED.obj(), "nodes": NODES_AFF,
     "existing": [zpod("p-a2", "node-a", "zone1", "foo"), zpod("p-b1", "node-b", "zone2", "foo")],
     "deleted": 0, "node": 0, "want": [(ZONE_C, {"zone2": 1}, 1)]},
    {"name": "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
     "preemptor": ONE_ZONE.obj(), "nodes": NODES_AFF,
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "deleted": 0, "node": 1, "want": [(ZONE_C, {"zone1": 1, "zone2": 0}, 0)]},
    {"name": "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
     "preemptor": ONE_ZONE.obj(), "nodes": NODES_AFF,
     "existing": [zpod("p-a1", "node-a", "zone1", "foo"), zpod("p-b2", "node-b", "zone2", "foo")],
     "deleted": 0, "node": 1, "want": [(ZONE_C, {"zone1": 1, "zone2": 0}, 0)]},
]


@pytest.mark.parametrize("case", REMOVE_POD_CASES, ids=lambda c: c["name"][:80])
def test_pre_filter_state_remove_pod(case: dict[str, Any]) -> None:
    pl, handle = new_plugin(case["existing"], case["nodes"])
    preemptor = PodInfo(case["preemptor"])
    state = _prefilter(pl, handle, preemptor)
    deleted = case["existing"][case["deleted"]] if isinstance(case["deleted"], int) else case["deleted"]
    ni = handle.snapshot.get(case["nodes"][case["node"]]["metadata"]["name"])
    assert ni is not None
    assert pl.remove_pod(state, preemptor, PodInfo(deleted), ni) is None
    assert _state_view(state.read_as(PRE_FILTER_STATE_KEY, PreFilterState)) == case["want"]


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter's state is an Error."""
    pl, _ = new_plugin([], [])
    st = pl.filter(CycleState(), PodInfo(P().obj()), NodeInfo(N().obj()))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestSingleConstraint / TestMultipleConstraints
# ------------------------------------------------------------------------------------------------
def codes(*pairs: str) -> dict[str, Code]:
    """``"a:S", "b:U"`` -> {node-a: Success, node-b: Unschedulable}; ``UAU`` for UnschedulableAndUnresolvable."""
    m = {"S": SUCCESS, "U": U, "UAU": UAU}
    return {f"node-{k}": m[v] for k, v in (p.split(":") for p in pairs)}


NODES_ABC = [zn("node-a"), zn("node-b"), zn("node-c")]
PODS_2_1_0_3 = [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
                ep("p-y1", "node-y", "foo"), ep("p-y2", "node-y", "foo"), ep("p-y3", "node-y", "foo")]
PODS_2_2_1 = [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
              ep("p-b2", "node-b", "foo"), ep("p-c1", "node-c", "foo")]
PODS_ZONE_2_1 = [ep("p-b1", "node-a", "foo"), ep("p-b2", "node-b", "foo"), ep("p-y1", "node-y", "foo")]
NODES_ABXY_FOO = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-x", foo=""), zn("node-y")]
NODES_ABXY_TAINT = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-x", foo=""),
                    N().name("node-y").label("node", "node-y").taints(TAINTS).obj()]

SINGLE_CONSTRAINT_CASES: list[dict[str, Any]] = [
    {"name": "no existing pods", "pod": ONE_ZONE.obj(), "nodes": NODES_ABXY, "pods": [],
     "want": codes("a:S", "b:S", "x:S", "y:S")},
    {"name": "no existing pods, incoming pod doesn't match itself",
     "pod": incoming("foo").spread_constraint(1, "zone", DNS, BAR).obj(), "nodes": NODES_ABXY, "pods": [],
     "want": codes("a:S", "b:S", "x:S", "y:S")},
    {"name": "existing pods in a different namespace do not count", "pod": ONE_ZONE.obj(), "nodes": NODES_ABXY,
     "pods": [ep("p-a1", "node-a", "foo", ns="ns1"), ep("p-b1", "node-a", "foo", ns="ns2"),
              ep("p-x1", "node-x", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:S", "b:S", "x:U", "y:U")},
    {"name": "existing pods do not match null selector",
     "pod": incoming("foo").spread_constraint(1, "zone", DNS, None).obj(), "nodes": NODES_ABXY,
     "pods": [ep("p-x1", "node-x", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:S", "b:S", "x:S", "y:S")},
    {"name": "pods spread across zones as 3/3, all nodes fit", "pod": ONE_ZONE.obj(), "nodes": NODES_ABXY,
     "pods": PODS_2_1_0_3, "want": codes("a:S", "b:S", "x:S", "y:S")},
    {"name": "pods spread across zones as 1/2 due to absence of label 'zone' on node-b", "pod": ONE_ZONE.obj(),
     "nodes": [zn("node-a", "zone1"), zn("node-b", zon="zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")],
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-x1", "node-x", "foo"),
              ep("p-y1", "node-y", "foo")],
     "want": codes("a:S", "b:UAU", "x:U", "y:U")},
    {"name": "pod cannot be scheduled as all nodes don't have label 'rack'",
     "pod": incoming("foo").spread_constraint(1, "rack", DNS, FOO).obj(),
     "nodes": [zn("node-a", "zone1"), zn("node-x", "zone2")], "pods": [], "want": codes("a:UAU", "x:UAU")},
    {"name": "pods spread across nodes as 2/1/0/3, only node-x fits", "pod": ONE_NODE, "nodes": NODES_ABXY,
     "pods": PODS_2_1_0_3, "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     "pod": incoming("foo").spread_constraint(2, "node", DNS, FOO).obj(), "nodes": NODES_ABXY,
     "pods": PODS_2_1_0_3, "want": codes("a:U", "b:S", "x:S", "y:U")},
    {"name": "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     "pod": incoming("bar").spread_constraint(1, "node", DNS, FOO).obj(), "nodes": NODES_ABXY,
     "pods": PODS_2_1_0_3, "want": codes("a:U", "b:S", "x:S", "y:U")},
    {"name": "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     "pod": incoming("foo").node_affinity_in("node", ["node-a", "node-y"]).spread_constraint(1, "node", DNS, FOO)
     .obj(),
     "nodes": NODES_ABXY, "pods": PODS_2_1_0_3, "want": codes("a:S", "b:S", "x:S", "y:U")},
    {"name": "terminating Pods should be excluded", "pod": ONE_NODE, "nodes": [zn("node-a"), zn("node-b")],
     "pods": [P().name("p-a").node("node-a").label("foo", "").terminating().obj(), ep("p-b", "node-b", "foo")],
     "want": codes("a:S", "b:U")},
    {"name": "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
     "pod": incoming("foo").node_affinity_not_in("node", ["node-b"]).spread_constraint(1, "zone", DNS, FOO).obj(),
     "nodes": NODES_ABXY,
     "pods": [ep("p-b1", "node-b", "foo"), ep("p-b2", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:S", "b:S", "x:U", "y:U")},
    {"name": "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the "
     "third node fits",
     "pod": incoming("foo").spread_constraint(2, "node", DNS, FOO, 4).obj(), "nodes": NODES_ABC, "pods": PODS_2_2_1,
     "want": codes("a:U", "b:U", "c:S")},
    {"name": "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all "
     "nodes fit",
     "pod": incoming("foo").spread_constraint(2, "node", DNS, FOO, 2).obj(), "nodes": NODES_ABC, "pods": PODS_2_2_1,
     "want": codes("a:S", "b:S", "c:S")},
    {"name": "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and "
     "fourth nodes fit",
     "pod": incoming("foo").spread_constraint(2, "zone", DNS, FOO, 3).obj(), "nodes": NODES_ABXY,
     "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:S")},
    {"name": "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes "
     "fit",
     "pod": incoming("foo").spread_constraint(2, "zone", DNS, FOO, 1).obj(), "nodes": NODES_ABXY,
     "pods": PODS_ZONE_2_1, "want": codes("a:S", "b:S", "x:S", "y:S")},
    {"name": "NodeAffinityPolicy honored with labelSelectors",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, FOO).obj(),
     "nodes": NODES_ABXY_FOO, "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:S")},
    {"name": "NodeAffinityPolicy ignored with labelSelectors",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", DNS, FOO, None, IGNORE).obj(),
     "nodes": NODES_ABXY_FOO, "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "NodeAffinityPolicy honored with nodeAffinity",
     "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", DNS, FOO).obj(),
     "nodes": NODES_ABXY_FOO, "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:S")},
    {"name": "NodeAffinityPolicy ignored with nodeAffinity",
     "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", DNS, FOO, None, IGNORE).obj(),
     "nodes": NODES_ABXY_FOO, "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "NodeTaintsPolicy honored",
     "pod": incoming("foo").spread_constraint(1, "node", DNS, FOO, None, None, HONOR).obj(),
     "nodes": NODES_ABXY_TAINT, "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:S")},
    {"name": "NodeTaintsPolicy ignored",
     "pod": incoming("foo").spread_constraint(1, "node", DNS, FOO).obj(),
     "nodes": NODES_ABXY_TAINT, "pods": PODS_ZONE_2_1, "want": codes("a:U", "b:U", "x:S", "y:U")},
]

MULTIPLE_CONSTRAINTS_CASES: list[dict[str, Any]] = [
    {"name": "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", "pod": ZONE_NODE, "nodes": NODES_ABXY,
     "pods": PODS_2_1_0_3, "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", "pod": ZONE_NODE, "nodes": NODES_ABXY,
     "pods": PODS_3_4, "want": codes("a:U", "b:U", "x:U", "y:U")},
    {"name": "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]", "pod": ZONE_FOO_NODE_BAR.obj(),
     "nodes": NODES_ABXY, "pods": [ep("p-a1", "node-a", "foo"), ep("p-y1", "node-y", "bar")],
     "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]", "pod": ZONE_FOO_NODE_BAR.obj(),
     "nodes": NODES_ABXY,
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-x1", "node-x", "bar"), ep("p-y1", "node-y", "bar")],
     "want": codes("a:U", "b:U", "x:U", "y:U")},
    {"name": "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]", "pod": ZONE_FOO_NODE_BAR.obj(),
     "nodes": NODES_ABXY,
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo", "bar"), ep("p-y1", "node-y", "foo"),
              ep("p-y2", "node-y", "foo", "bar"), ep("p-y3", "node-y", "foo")],
     "want": codes("a:U", "b:S", "x:U", "y:U")},
    {"name": "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     "pod": incoming("bar").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, BAR).obj(),
     "nodes": NODES_ABXY,
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-x1", "node-x", "bar"), ep("p-y1", "node-y", "bar")],
     "want": codes("a:S", "b:S", "x:U", "y:U")},
    {"name": "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     "pod": ZONE_NODE,
     "nodes": [zn("node-a", "zone1"), zn("node-b", "zone1"), N().name("node-x").label("zone", "zone2").obj(),
               zn("node-y", "zone2")],
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-y3", "node-y", "foo")],
     "want": codes("a:U", "b:S", "x:UAU", "y:U")},
    {"name": "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", DNS, FOO)
     .spread_constraint(1, "node", DNS, FOO, None, IGNORE).obj(),
     "nodes": [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
               zn("node-y", "zone2")],
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
     "pod": incoming("foo").spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
     .spread_constraint(1, "node", DNS, FOO).obj(),
     "nodes": [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
               N().name("node-y").label("zone", "zone2").label("node", "node-y").taints(TAINTS).obj()],
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:U", "b:U", "x:S", "y:U")},
    {"name": "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", DNS, FOO)
     .spread_constraint(1, "node", DNS, FOO).obj(),
     "nodes": [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
               N().name("node-y").label("zone", "zone2").label("node", "node-y").label("foo", "").taints(TAINTS)
               .obj()],
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:U", "b:S", "x:S", "y:U")},
    {"name": "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
     .spread_constraint(1, "node", DNS, FOO, None, IGNORE).obj(),
     "nodes": [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
               N().name("node-y").label("zone", "zone2").label("node", "node-y").label("foo", "").taints(TAINTS)
               .obj()],
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo"), ep("p-y1", "node-y", "foo")],
     "want": codes("a:U", "b:U", "x:S", "y:U")},
]

REASONS = {U: ERR_REASON_CONSTRAINTS_NOT_MATCH, UAU: ERR_REASON_NODE_LABEL_NOT_MATCH}


@pytest.mark.parametrize(
    "case", SINGLE_CONSTRAINT_CASES + MULTIPLE_CONSTRAINTS_CASES, ids=lambda c: c["name"][:80]
)
def test_filter_constraints(case: dict[str, Any]) -> None:
    pl, handle = new_plugin(case["pods"], case["nodes"])
    pod = PodInfo(case["pod"])
    state = _prefilter(pl, handle, pod)
    for name, want in case["want"].items():
        ni = handle.snapshot.get(name)
        assert ni is not None
        st = pl.filter(state, pod, ni)
        got = Code.SUCCESS if st is None else st.code
        assert got == want, name
        if st is not None:
            assert st.reasons == [REASONS[want]]


# ------------------------------------------------------------------------------------------------
# scoring_test.go TestPreScoreSkip / TestPreScoreStateEmptyNodes
# ------------------------------------------------------------------------------------------------
def rs_owned(*keys: str, **labels: str) -> Any:
    return incoming(*keys, **labels).namespace("default").owner_reference("rs1", "apps/v1", "ReplicaSet")


PRE_SCORE_SKIP_CASES: list[dict[str, Any]] = [
    {"name": "the pod doesn't have soft topology spread Constraints", "pod": P().name("p").namespace("default").obj(),
     "args": LIST_ARGS, "nodes": [hn("node-a"), hn("node-b")]},
    {"name": "default constraints and a replicaset that doesn't match",
     "pod": P().name("p").namespace("default").labels({"foo": "bar", "baz": "sup"})
     .owner_reference("rs2", "apps/v1", "ReplicaSet").obj(),
     "args": PodTopologySpreadArgs(
         default_constraints=[{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
         defaulting_type="List"),
     "nodes": [N().name("node-a").label("planet", "mars").obj()],
     "objs": [replica_set("rs1", LS().exists("tar").obj())]},
]


@pytest.mark.parametrize("case", PRE_SCORE_SKIP_CASES, ids=lambda c: c["name"])
def test_pre_score_skip(case: dict[str, Any]) -> None:
    pl, handle = new_plugin([], case["nodes"], case.get("objs"), case["args"])
    st = pl.pre_score(CycleState(), PodInfo(case["pod"]), handle.snapshot.list())
    assert st is not None and st.code == SKIP


def w(domains: int) -> float:
    """scoring.go topologyNormalizingWeight, written out: ln(domains + 2)."""
    return math.log(domains + 2)

NODES_ABX_ZONE_HOST = [hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-x", zone="zone2")]
NODES_ABX_AFF = [hn("node-a", zone="zone1", foo=""), hn("node-b", zone="zone1", foo=""), hn("node-x", zone="zone2")]
NODES_ABX_TAINT = [hn("node-a", zone="zone1", foo=""), hn("node-b", zone="zone1", foo=""),
                   N().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").taints(TAINTS).obj()]
ZONE_COUNTS = {"zone1": 0, "zone2": 0}

PRE_SCORE_STATE_CASES: list[dict[str, Any]] = [
    {"name": "normal case",
     "pod": incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOSTNAME, SA, FOO).obj(),
     "nodes": NODES_ABX_ZONE_HOST, "args": LIST_ARGS,
     "constraints": [C(1, "zone", FOO), C(1, HOSTNAME, FOO)], "ignored": set(),
     "counts": [ZONE_COUNTS, {}], "weights": [w(2), w(3)]},
    {"name": "null selector", "pod": incoming("foo").spread_constraint(1, "zone", SA, None).obj(),
     "nodes": NODES_ABX_ZONE_HOST, "args": LIST_ARGS,
     "constraints": [C(1, "zone", None)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
    {"name": "node-x doesn't have label zone",
     "pod": incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOSTNAME, SA, BAR).obj(),
     "nodes": [hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-x")], "args": LIST_ARGS,
     "constraints": [C(1, "zone", FOO), C(1, HOSTNAME, BAR)], "ignored": {"node-x"},
     "counts": [{"zone1": 0}, {}], "weights": [w(1), w(2)]},
    {"name": "system default constraints and a replicaset", "pod": rs_owned(foo="tar", baz="sup").obj(),
     "args": PodTopologySpreadArgs(defaulting_type="System"),
     # Nodes with no zone are not excluded. They are considered a separate zone.
     "nodes": [hn("node-a", **{ZONE: "mars"}), hn("node-b", **{ZONE: "mars"}), hn("node-c"), hn("node-d")],
     "objs": [replica_set("rs1", FOO)],
     "constraints": [C(3, HOSTNAME, FOO), C(5, ZONE, FOO)], "ignored": set(),
     "counts": [{}, {"mars": 0, "": 0}], "weights": [w(4), w(2)]},
    {"name": "default constraints and a replicaset", "pod": rs_owned(foo="tar", baz="sup").obj(),
     "args": PodTopologySpreadArgs(default_constraints=[
         {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SA},
         {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},
     ], defaulting_type="List"),
     "nodes": [hn("node-a", rack="rack1", planet="mars")], "objs": [replica_set("rs1", FOO)],
     "constraints": [C(1, HOSTNAME, FOO), C(2, "planet", FOO)], "ignored": set(),
     "counts": [{}, {"mars": 0}], "weights": [w(1), w(1)]},
    {"name": "default constraints and a replicaset, but pod has constraints",
     "pod": rs_owned(foo="bar", baz="sup").spread_constraint(1, "zone", DNS, BAR)
     .spread_constraint(2, "planet", SA, LS().label("baz", "sup").obj()).obj(),
     "args": PodTopologySpreadArgs(default_constraints=[
         {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}], defaulting_type="List"),
     "nodes": [N().name("node-a").labels({"planet": "mars", "galaxy": "andromeda"}).obj()],
     "objs": [replica_set("rs1", FOO)],
     "constraints": [C(2, "planet", LS().label("baz", "sup").obj())], "ignored": set(),
     "counts": [{"mars": 0}], "weights": [w(1)]},
    {"name": "NodeAffinityPolicy honored with labelSelectors",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", SA, BAR).obj(),
     "nodes": NODES_ABX_AFF, "args": LIST_ARGS,
     "constraints": [C(1, "zone", BAR)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
    {"name": "NodeAffinityPolicy ignored with labelSelectors",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", SA, BAR, None, IGNORE).obj(),
     "nodes": NODES_ABX_AFF, "args": LIST_ARGS,
     "constraints": [C(1, "zone", BAR, naff=IGNORE)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
    {"name": "NodeAffinityPolicy honored with nodeAffinity",
     "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "zone", SA, BAR).obj(),
     "nodes": NODES_ABX_AFF, "args": LIST_ARGS,
     "constraints": [C(1, "zone", BAR)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
    {"name": "NodeAffinityPolicy ignored with nodeAffinity",
     "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "zone", SA, BAR, None, IGNORE).obj(),
     "nodes": NODES_ABX_AFF, "args": LIST_ARGS,
     "constraints": [C(1, "zone", BAR, naff=IGNORE)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
    {"name": "NodeTaintsPolicy honored",
     "pod": incoming("foo").spread_constraint(1, "zone", SA, BAR, None, None, HONOR).obj(),
     "nodes": NODES_ABX_TAINT, "args": LIST_ARGS,
     "constraints": [C(1, "zone", BAR, ntaint=HONOR)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
    {"name": "NodeTaintsPolicy ignored", "pod": incoming("foo").spread_constraint(1, "zone", SA, BAR).obj(),
     "nodes": NODES_ABX_TAINT, "args": LIST_ARGS,
     "constraints": [C(1, "zone", BAR)], "ignored": set(), "counts": [ZONE_COUNTS], "weights": [w(2)]},
]


@pytest.mark.parametrize("case", PRE_SCORE_STATE_CASES, ids=lambda c: c["name"])
def test_pre_score_state_empty_nodes(case: dict[str, Any]) -> None:
    pl, handle = new_plugin([], case["nodes"], case.get("objs"), case["args"])
    state = CycleState()
    assert pl.pre_score(state, PodInfo(case["pod"]), handle.snapshot.list()) is None
    s = state.read_as(PRE_SCORE_STATE_KEY, PreScoreState)
    assert s.constraints == case["constraints"]
    assert s.ignored_nodes == case["ignored"]
    for i, c in enumerate(s.constraints):
        if c.topology_key != HOSTNAME:
            assert s.topology_value_to_pod_counts[i] == case["counts"][i]
    assert s.topology_normalizing_weight == case["weights"]


# ------------------------------------------------------------------------------------------------
# scoring_test.go TestPodTopologySpreadScore (plugin configured with defaultingType: System)
# ------------------------------------------------------------------------------------------------
def hpods(spec: str) -> list[dict[str, Any]]:
    """``"a:2 b:1"`` -> p-a1, p-a2 on node-a and p-b1 on node-b, all labelled foo."""
    out = []
    for part in spec.split():
        n, k = part.split(":")
        out += [ep(f"p-{n}{i + 1}", f"node-{n}", "foo") for i in range(int(k))]
    return out


H_ABCD = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
ONE_HOST = incoming("foo").spread_constraint(1, HOSTNAME, SA, FOO).obj()
ZONE_HOST_FOO_BAR = incoming("foo", "bar").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOSTNAME, SA, BAR)
ZH = {name: hn(f"node-{name[0]}", zone=f"zone{name[1]}") for name in ("a1", "b1", "x2", "y2")}
NODES_ABC_NODE_FOO = [zn("node-a", foo=""), zn("node-b", foo=""), zn("node-c")]
PODS_ABC_2_1_1 = [ep("p-a1", "node-a", "foo"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
                  ep("p-c1", "node-c", "foo")]
ZH_ABCD = [
    hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-c", zone="zone2"), hn("node-d", zone="zone2")
]

SCORE_CASES: list[dict[str, Any]] = [
    {"name": "one constraint on node, no existing pods", "pod": ONE_HOST, "pods": [],
     "nodes": [hn("node-a"), hn("node-b")], "want": [100, 100]},
    {"name": "one constraint on node, only one node is candidate", "pod": ONE_HOST, "pods": hpods("a:2 b:1"),
     "nodes": [hn("node-a")], "failed": [hn("node-b")], "want": [100]},
    {"name": "one constraint on node, all nodes have the same number of matching pods", "pod": ONE_HOST,
     "pods": hpods("a:1 b:1"), "nodes": [hn("node-a"), hn("node-b")], "want": [100, 100]},
    {"name": "one constraint on node, all 4 nodes are candidates", "pod": ONE_HOST, "pods": hpods("a:2 b:1 d:3"),
     "nodes": H_ABCD, "want": [20, 60, 100, 0]},
    {"name": "one constraint on node, null selector",
     "pod": incoming("foo").spread_constraint(1, HOSTNAME, SA, None).obj(), "pods": hpods("a:2 b:1 d:3"),
     "nodes": H_ABCD, "want": [100, 100, 100, 100]},
    {"name": "one constraint on node, all 4 nodes are candidates, maxSkew=2",
     "pod": incoming("foo").spread_constraint(2, HOSTNAME, SA, FOO).obj(), "pods": hpods("a:2 b:1 d:3"),
     "nodes": H_ABCD, "want": [33, 66, 100, 16]},
    {"name": "one constraint on node, all 4 nodes are candidates, maxSkew=3",
     "pod": incoming("foo").spread_constraint(3, HOSTNAME, SA, FOO).obj(), "pods": hpods("a:4 b:3 c:2 d:1"),
     "nodes": H_ABCD, "want": [44, 66, 77, 100]},
    {"name": "system defaulting, nodes don't have zone, pods match service", "pod": incoming("foo").obj(),
     "pods": hpods("a:4 b:3 c:2 d:1"), "nodes": H_ABCD, "objs": [service({"foo": ""})],
     "want": [44, 66, 77, 100]},
    {"name": "one constraint on node, 3 out of 4 nodes are candidates", "pod": ONE_HOST,
     "pods": hpods("a:4 b:2 x:1 y:3"), "nodes": [hn("node-a"), hn("node-b"), hn("node-x")],
     "failed": [hn("node-y")], "want": [33, 83, 100]},
    {"name": "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     "pod": ONE_HOST, "pods": hpods("a:4 b:2 x:1 y:3"),
     "nodes": [hn("node-a"), N().name("node-b").label("n", "node-b").obj(), hn("node-x")],
     "failed": [hn("node-y")], "want": [16, 0, 100]},
    {"name": "one constraint on zone, 3 out of 4 nodes are candidates",
     "pod": incoming("foo").spread_constraint(1, "zone", SA, FOO).obj(), "pods": hpods("a:4 b:2 x:1 y:3"),
     "nodes": [ZH["a1"], ZH["b1"], ZH["x2"]], "failed": [ZH["y2"]], "want": [75, 75, 100]},
    {"name": "two Constraints on zone and node, 2 out of 4 nodes are candidates",
     "pod": incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOSTNAME, SA, FOO).obj(),
     "pods": hpods("a:2 b:1 x:2 y:4"), "nodes": [ZH["a1"], ZH["x2"]], "failed": [ZH["b1"], ZH["y2"]],
     "want": [100, 63]},
    {"name": "two Constraints on zone and node, with different labelSelectors", "pod": ZONE_HOST_FOO_BAR.obj(),
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo", "bar"), ep("p-y1", "node-y", "foo"),
              ep("p-y2", "node-y", "bar")],
     "nodes": [ZH["a1"], ZH["b1"], ZH["x2"], ZH["y2"]], "want": [60, 20, 100, 60]},
    {"name": "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     "pod": ZONE_HOST_FOO_BAR.obj(),
     "pods": [ep("p-b1", "node-b", "bar"), ep("p-x1", "node-x", "foo"), ep("p-y1", "node-y", "foo", "bar")],
     "nodes": [ZH["a1"], ZH["b1"], ZH["x2"], ZH["y2"]], "want": [100, 60, 40, 0]},
    {"name": "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     "pod": ZONE_HOST_FOO_BAR.obj(),
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo", "bar"), ep("p-y1", "node-y", "foo"),
              ep("p-y2", "node-y", "bar")],
     "nodes": [ZH["a1"], ZH["b1"], ZH["x2"]], "failed": [ZH["y2"]], "want": [50, 25, 100]},
    {"name": "existing pods in a different namespace do not count", "pod": ONE_HOST,
     "pods": [ep("p-a1", "node-a", "foo", ns="ns1"), ep("p-a2", "node-a", "foo"), ep("p-b1", "node-b", "foo"),
              ep("p-b2", "node-b", "foo")],
     "nodes": [hn("node-a"), hn("node-b")], "want": [100, 33]},
    {"name": "terminating Pods should be excluded", "pod": ONE_HOST,
     "pods": [P().name("p-a").node("node-a").label("foo", "").terminating().obj(), ep("p-b", "node-b", "foo")],
     "nodes": [hn("node-a"), hn("node-b")], "want": [100, 0]},
    {"name": "minDomains has no effect when ScheduleAnyway",
     "pod": incoming("foo").spread_constraint(2, "node", SA, FOO, 10).obj(), "pods": hpods("a:2 b:2 c:1"),
     "nodes": [zn("node-a"), zn("node-b"), zn("node-c")], "want": [75, 75, 100]},
    {"name": "NodeAffinityPolicy honoed with labelSelectors",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", SA, FOO).obj(),
     "pods": PODS_ABC_2_1_1, "nodes": NODES_ABC_NODE_FOO, "want": [0, 33, 100]},
    {"name": "NodeAffinityPolicy ignored with labelSelectors",
     "pod": incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "node", SA, FOO, None, IGNORE).obj(),
     "pods": PODS_ABC_2_1_1, "nodes": NODES_ABC_NODE_FOO, "want": [66, 100, 100]},
    {"name": "NodeAffinityPolicy honoed with nodeAffinity",
     "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", SA, FOO).obj(),
     "pods": PODS_ABC_2_1_1, "nodes": NODES_ABC_NODE_FOO, "want": [0, 33, 100]},
    {"name": "NodeAffinityPolicy ignored with nodeAffinity",
     "pod": incoming("foo").node_affinity_in("foo", [""]).spread_constraint(1, "node", SA, FOO, None, IGNORE).obj(),
     "pods": PODS_ABC_2_1_1, "nodes": NODES_ABC_NODE_FOO, "want": [66, 100, 100]},
    {"name": "NodeTaintsPolicy honored",
     "pod": incoming("foo").spread_constraint(1, "node", SA, FOO, None, None, HONOR).obj(), "pods": PODS_ABC_2_1_1,
     "nodes": [zn("node-a"), zn("node-b"), N().name("node-c").label("node", "node-c").taints(TAINTS).obj()],
     "want": [0, 33, 100]},
    {"name": "NodeTaintsPolicy ignored", "pod": incoming("foo").spread_constraint(1, "node", SA, FOO).obj(),
     "pods": PODS_ABC_2_1_1,
     "nodes": [zn("node-a"), zn("node-b"), N().name("node-c").label("node", "node-c").taints(TAINTS).obj()],
     "want": [66, 100, 100]},
    {"name": "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
     "pod": incoming("foo", "bar").spread_constraint(1, "zone", SA, LS().obj(), None, None, None, ["foo"])
     .spread_constraint(1, HOSTNAME, SA, LS().obj(), None, None, None, ["bar"]).obj(),
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo", "bar"), ep("p-y1", "node-c", "foo"),
              ep("p-y2", "node-c", "bar")],
     "nodes": ZH_ABCD, "want": [60, 20, 60, 100]},
    {"name": "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     "pod": incoming("foo", "bar", "baz").spread_constraint(1, "zone", SA, FOO)
     .spread_constraint(1, HOSTNAME, SA, BAR, None, None, None, ["baz"]).obj(),
     "pods": [ep("p-a1", "node-a", "foo"), ep("p-b1", "node-b", "foo", "bar", "baz"), ep("p-c1", "node-c", "foo"),
              ep("p-c2", "node-c", "bar"), ep("p-d3", "node-c", "bar", "baz")],
     "nodes": ZH_ABCD, "want": [60, 20, 60, 100]},
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c["name"][:80])
def test_pod_topology_spread_score(case: dict[str, Any]) -> None:
    all_nodes = case["nodes"] + case.get("failed", [])
    pl, handle = new_plugin(case["pods"], all_nodes, case.get("objs"), PodTopologySpreadArgs(defaulting_type="System"))
    pod, state = PodInfo(case["pod"]), CycleState()
    candidates = [handle.snapshot.get(n["metadata"]["name"]) for n in case["nodes"]]
    assert all(ni is not None for ni in candidates)
    feasible = [ni for ni in candidates if ni is not None]
    assert pl.pre_score(state, pod, feasible) is None
    scores = []
    for ni in feasible:
        value, st = pl.score(state, pod, ni)
        assert st is None
        scores.append(NodeScore(ni.name, value))
    assert pl.normalize_score(state, pod, scores) is None
    assert [s.score for s in scores] == case["want"]


# ------------------------------------------------------------------------------------------------
# plugin_test.go Test_isSchedulableAfterNodeChange / Test_isSchedulableAfterPodChange
# ------------------------------------------------------------------------------------------------
Q, QS = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
ZONE_ONLY = P().name("p").spread_constraint(1, "zone", DNS, FOO).obj()
ZONE_AND_NODE = P().name("p").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj()


def na(**labels: str) -> dict[str, Any]:
    return N().name("node-a").labels(labels).obj()


NODE_HINT_CASES: list[dict[str, Any]] = [
    {"name": "node updates label which matches topologyKey", "pod": ZONE_ONLY, "old": na(zone="zone1"),
     "new": na(zone="zone2"), "want": Q},
    {"name": "node that doesn't match topologySpreadConstraints updates non-related label", "pod": ZONE_ONLY,
     "old": na(foo="bar1"), "new": na(foo="bar2"), "want": QS},
    # Upstream's older table expected Queue here; v1.35's plugin.go only requeues for a change of a
    # topology key's value or of the taints, so removing an unrelated label is QueueSkip.
    {"name": "node that match topologySpreadConstraints adds non-related label", "pod": ZONE_AND_NODE,
     "old": na(zone="zone1", node="node1", foo="bar"), "new": na(zone="zone1", node="node1"), "want": QS},
    {"name": "create node with non-related labels", "pod": ZONE_ONLY, "new": na(foo="bar"), "want": QS},
    {"name": "create node with related labels", "pod": ZONE_ONLY, "new": na(zone="zone1"), "want": Q},
    {"name": "delete node with non-related labels", "pod": ZONE_ONLY, "old": na(foo="bar"), "want": QS},
    {"name": "delete node with related labels", "pod": ZONE_ONLY, "old": na(zone="zone1"), "want": Q},
    {"name": "add node with related labels that only match one of topologySpreadConstraints", "pod": ZONE_AND_NODE,
     "new": na(zone="zone1"), "want": QS},
    {"name": "add node with related labels that match all topologySpreadConstraints", "pod": ZONE_AND_NODE,
     "new": na(zone="zone1", node="node1"), "want": Q},
    {"name": "update node with related labels that only match one of topologySpreadConstraints",
     "pod": ZONE_AND_NODE, "old": na(zone="zone1"), "new": na(zone="zone1"), "want": QS},
    {"name": "update node with related labels that match all topologySpreadConstraints", "pod": ZONE_AND_NODE,
     "old": na(zone="zone1", node="node1"), "new": na(zone="zone1", node="node2"), "want": Q},
]


@pytest.mark.parametrize("case", NODE_HINT_CASES, ids=lambda c: c["name"][:80])
def test_is_schedulable_after_node_change(case: dict[str, Any]) -> None:
    pl, _ = new_plugin([], [])
    assert pl.is_schedulable_after_node_change(case["pod"], case.get("old"), case.get("new")) == case["want"]


TARGET = P().name("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj()
TARGET_2 = P().name("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO)\
    .spread_constraint(1, "node", DNS, BAR).obj()


def bound(*keys: str, node: str = "fake-node", ns: str = "", **labels: str) -> dict[str, Any]:
    w = P().namespace(ns)
    if node:
        w.node(node)
    for k in keys:
        w.label(k, "")
    return w.labels(labels).obj()


POD_HINT_CASES: list[dict[str, Any]] = [
    {"name": "add pod with labels match topologySpreadConstraints selector", "pod": TARGET, "new": bound("foo"),
     "want": Q},
    {"name": "add un-scheduled pod", "pod": TARGET, "new": bound("foo", node=""), "want": QS},
    {"name": "update un-scheduled pod", "pod": TARGET, "new": bound("foo", node=""), "old": bound("bar", node=""),
     "want": QS},
    {"name": "delete un-scheduled pod", "pod": TARGET, "old": bound("foo", node=""), "want": QS},
    {"name": "add pod with different namespace", "pod": TARGET, "new": bound("foo", ns="fake-namespace"), "want": QS},
    {"name": "add pod with labels don't match topologySpreadConstraints selector", "pod": TARGET, "new": bound("bar"),
     "want": QS},
    {"name": "delete pod with labels that match topologySpreadConstraints selector", "pod": TARGET,
     "old": bound("foo"), "want": Q},
    {"name": "delete pod with labels that don't match topologySpreadConstraints selector", "pod": TARGET,
     "old": bound("bar"), "want": QS},
    {"name": "update pod's non-related label", "pod": TARGET, "old": bound("foo", bar="bar1"),
     "new": bound("foo", bar="bar2"), "want": QS},
    {"name": "add pod's label that matches topologySpreadConstraints selector", "pod": TARGET, "old": bound(),
     "new": bound("foo"), "want": Q},
    {"name": "delete pod label that matches topologySpreadConstraints selector", "pod": TARGET, "old": bound("foo"),
     "new": bound(), "want": Q},
    {"name": "change pod's label that matches topologySpreadConstraints selector", "pod": TARGET,
     "old": bound(foo="foo1"), "new": bound(foo="foo2"), "want": QS},
    {"name": "change pod's label that doesn't match topologySpreadConstraints selector", "pod": TARGET,
     "old": bound("foo", bar="bar1"), "new": bound("foo", bar="bar2"), "want": QS},
    {"name": "add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
     "pod": TARGET_2, "old": bound("foo"), "new": bound("foo", bar="bar2"), "want": Q},
    {"name": "change pod's label that doesn't match topologySpreadConstraints selector with multi "
     "topologySpreadConstraints", "pod": TARGET_2, "old": bound("foo"), "new": bound("foo", "baz"), "want": QS},
    {"name": "change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
     "pod": TARGET_2, "old": bound("foo", "bar"), "new": bound("foo", bar="bar2"), "want": QS},
]


@pytest.mark.parametrize("case", POD_HINT_CASES, ids=lambda c: c["name"][:80])
def test_is_schedulable_after_pod_change(case: dict[str, Any]) -> None:
    pl, _ = new_plugin([], [])
    assert pl.is_schedulable_after_pod_change(case["pod"], case.get("old"), case.get("new")) == case["want"]


def test_new_toleration_of_the_pending_pod_requeues_it_with_taints_policy_honor() -> None:
    """plugin.go isSchedulableAfterPodChange: the pod itself got a toleration, NodeTaintsPolicy Honor."""
    honor = P().uid("me").name("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
    updated = P().uid("me").name("p").label("foo", "").toleration("node.kubernetes.io/unschedulable")\
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
    pl, _ = new_plugin([], [])
    assert pl.is_schedulable_after_pod_change(honor.obj(), honor.obj(), updated.obj()) == Q
    ignore = P().uid("me").name("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO)
    ignore_updated = P().uid("me").name("p").label("foo", "").toleration("node.kubernetes.io/unschedulable")\
        .spread_constraint(1, "zone", DNS, FOO)
    assert pl.is_schedulable_after_pod_change(ignore.obj(), ignore.obj(), ignore_updated.obj()) == QS


def test_events_to_register() -> None:
    pl, _ = new_plugin([], [])
    pod_event, node_event = (e.event for e in pl.events_to_register())
    assert pod_event.action == (
        ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE
    )
    assert node_event.action == (
        ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
    )


# ------------------------------------------------------------------------------------------------
# Beyond the upstream tables
# ------------------------------------------------------------------------------------------------
def _default_selector(pod: dict[str, Any], objs: list[dict[str, Any]]) -> Selector:
    pl, _ = new_plugin([], [], objs, PodTopologySpreadArgs(defaulting_type="System"))
    return WorkloadIndex(pl.handle).default_selector(PodInfo(pod))


def test_default_selector_merges_services_and_owner() -> None:
    """helper/spread.go DefaultSelector: Service selectors merged, then the controller's selector."""
    labels = {"app": "web", "tier": "fe", "pod-template-hash": "h1"}
    objs = [
        service({"app": "web"}), service({"tier": "fe"}), service({"app": "db"}), service({}, namespace="other"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless", "namespace": "default"}, "spec": {}},
        replica_set("rs1", LS().label("pod-template-hash", "h1").obj()),
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc1", "namespace": "default"},
         "spec": {"selector": {"rc": "x"}}},
    ]
    plain = P().labels(labels).obj()
    assert _default_selector(plain, objs) == selector_from_label_selector({"matchLabels": {"app": "web", "tier": "fe"}})
    rs = P().labels(labels).owner_reference("rs1", "apps/v1", "ReplicaSet").obj()
    assert _default_selector(rs, objs) == selector_from_label_selector(
        {"matchLabels": {"app": "web", "tier": "fe", "pod-template-hash": "h1"}})
    rc = P().labels(labels).owner_reference("rc1", "v1", "ReplicationController").obj()
    assert _default_selector(rc, objs) == selector_from_label_selector(
        {"matchLabels": {"app": "web", "tier": "fe", "rc": "x"}})
    job = P().labels({"x": "y"}).owner_reference("j", "batch/v1", "Job").obj()
    assert _default_selector(job, objs).empty  # not a supported controller, no Service: no default spreading


def test_workloads_listed_once_per_cycle() -> None:
    """Default constraints need cluster objects: PreFilter and PreScore of one cycle share one listing."""
    nodes = [hn("node-a", **{ZONE: "z1"}), hn("node-b", **{ZONE: "z2"})]
    pl, handle = new_plugin([], nodes, [service({"app": "web"})], PodTopologySpreadArgs(
        default_constraints=[{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS},
                             {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SA}],
        defaulting_type="List"))
    pod = PodInfo(P().labels({"app": "web"}).owner_reference("rs1", "apps/v1", "ReplicaSet").obj())
    state = CycleState()
    _, st = pl.pre_filter(state, pod, handle.snapshot.list())
    assert st is None
    assert pl.pre_score(state, pod, handle.snapshot.list()) is None
    assert handle.client().list_calls == 2  # Services and ReplicaSets, once each; no RCs/StatefulSets needed


def test_invalid_selector_is_an_error() -> None:
    bad = LS().in_("foo", ["{{.bad-value.}}"]).obj()
    pl, handle = new_plugin([], [zn("node-a", "zone1")])
    pod = PodInfo(incoming("foo").spread_constraint(1, "zone", DNS, bad).spread_constraint(1, "zone", SA, bad).obj())
    _, st = pl.pre_filter(CycleState(), pod, handle.snapshot.list())
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("get constraints from pod: obtaining pod's hard topology spread constraints: ")
    st = pl.pre_score(CycleState(), pod, handle.snapshot.list())
    assert st is not None and st.code == Code.ERROR
    assert st.message().startswith("calculating preScoreState: obtaining pod's soft topology spread constraints: ")


def test_minimum_stays_exact_over_several_add_pods() -> None:
    """Three zones at 1/1/1: adding to two of them leaves the minimum at 1 (zone3), where v1.35's
    two critical paths would report 2 and reject zone3-balanced placements."""
    nodes = [zn("node-a", "zone1"), zn("node-b", "zone2"), zn("node-c", "zone3")]
    pods = [ep("p-a", "node-a", "foo"), ep("p-b", "node-b", "foo"), ep("p-c", "node-c", "foo")]
    pl, handle = new_plugin(pods, nodes)
    pod = PodInfo(ONE_ZONE.obj())
    state = _prefilter(pl, handle, pod)
    for node in ("node-a", "node-b"):
        ni = handle.snapshot.get(node)
        assert ni is not None
        assert pl.add_pod(state, pod, PodInfo(ep("n", node, "foo")), ni) is None
    s = state.read_as(PRE_FILTER_STATE_KEY, PreFilterState)
    assert s.tp_value_to_match_num[0] == {"zone1": 2, "zone2": 2, "zone3": 1}
    assert s.min_match_num[0] == 1
    ni_a = handle.snapshot.get("node-a")
    assert ni_a is not None
    st = pl.filter(state, pod, ni_a)  # 2 + 1 - 1 = 2 > maxSkew 1
    assert st is not None and st.code == U
    clone = s.clone()
    assert pl.remove_pod(state, pod, PodInfo(ep("n", "node-a", "foo")), ni_a) is None
    assert clone.tp_value_to_match_num[0]["zone1"] == 2 and s.tp_value_to_match_num[0]["zone1"] == 1


def test_through_the_framework() -> None:
    """Runtime integration: the FailedScheduling histogram carries upstream's reasons."""
    nodes = [zn("node-a", "zone1"), zn("node-b", "zone1"), N().name("node-c").obj()]
    pods = hpods("a:1")
    handle = ClientHandle(make_snapshot(nodes, pods), [])
    profile = Profile(plugins=Plugins(
        queue_sort=PluginSet([PluginRef("PrioritySort")]),
        bind=PluginSet([PluginRef("DefaultBinder")]),
        multi_point=PluginSet([PluginRef("PodTopologySpread", 2)]),
    ))
    fw = Framework(profile, in_tree_registry(), handle)
    pod = PodInfo(incoming("foo").spread_constraint(1, "node", DNS, FOO).obj())
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, pod, handle.snapshot.list())
    assert st.is_success()
    got: dict[str, Status] = {}
    for ni in handle.snapshot.list():
        got[ni.name] = fw.run_filter_plugins(state, pod, ni)
    assert got["node-a"].reasons == [ERR_REASON_CONSTRAINTS_NOT_MATCH]
    assert got["node-b"].is_success()
    assert (got["node-c"].code, got["node-c"].reasons) == (UAU, [ERR_REASON_NODE_LABEL_NOT_MATCH])


def test_memoised_counts_follow_node_changes_across_cycles() -> None:
    """Counts are reused across cycles only while a node is unchanged (its NodeInfo generation)."""
    pl, handle = new_plugin(hpods("a:1"), [zn("node-a", "zone1"), zn("node-b", "zone2")])
    pod = PodInfo(ONE_ZONE.obj())
    s = _prefilter(pl, handle, pod).read_as(PRE_FILTER_STATE_KEY, PreFilterState)
    assert s.tp_value_to_match_num[0] == {"zone1": 1, "zone2": 0}
    ni_b = handle.snapshot.get("node-b")
    assert ni_b is not None
    ni_b.add_pod(PodInfo(ep("p-b1", "node-b", "foo")))
    ni_b.add_pod(PodInfo(ep("p-b2", "node-b", "foo")))
    s = _prefilter(pl, handle, pod).read_as(PRE_FILTER_STATE_KEY, PreFilterState)
    assert s.tp_value_to_match_num[0] == {"zone1": 1, "zone2": 2}
    assert s.min_match_num[0] == 1
