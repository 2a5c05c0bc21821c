"""InterPodAffinity: PreFilter/Filter, AddPod/RemovePod, PreScore/Score/NormalizeScore.

Ported from pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod, TestPreFilterStateClone, TestGetTPMapMatchingIncomingAffinityAntiAffinity),
scoring_test.go (TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight) and
plugin_test.go (Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange): same pods,
nodes, namespaces, expected statuses, scores and hints, written as data.

Two mechanical differences from the Go tables: upstream leaves most namespaces empty; our PodInfo
reads an empty namespace as ``default`` (the API server always sets one), so the one term that
lists ``""`` explicitly lists ``default`` here. The label-syntax error messages carry our field
path (``matchExpressions[0].values[0]``) where upstream prints ``values[0][service]``; the rest of
the message is upstream's.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _builders import REQUIRED, ClientHandle, make_node, make_pod, make_snapshot

from kubesched.config.plugin_args import InterPodAffinityArgs
from kubesched.config.types import PluginRef, Plugins, PluginSet, Profile
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, QueueingHint
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.plugins.interpodaffinity import InterPodAffinity, apply_match_label_keys
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFF,
)
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
)
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
)
from kubesched.plugins.interpodaffinity.filtering import PreFilterState
from kubesched.plugins.interpodaffinity.plugin import (
    PRE_FILTER_STATE_KEY,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)
from kubesched.plugins.interpodaffinity.terms import pod_affinity_terms
from kubesched.plugins.registry import in_tree_registry

P, N = make_pod, make_node
U, UAU, SKIP = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SKIP

NS_LABEL_T1 = {"team": "team1"}
NS_LABEL_T2 = {"team": "team2"}


def _ns(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


# scoring_test.go ``namespaces``
NAMESPACES = [
    _ns("subteam1.team1", NS_LABEL_T1),
    _ns("subteam2.team1", NS_LABEL_T1),
    _ns("subteam1.team2", NS_LABEL_T2),
    _ns("subteam2.team2", NS_LABEL_T2),
]


def expr(key: str, op: str, values: list[str] | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        e["values"] = values
    return e


def term(
    exprs: list[dict[str, Any]],
    topology_key: str = "",
    namespaces: list[str] | None = None,
    namespace_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": exprs}}
    if topology_key:
        t["topologyKey"] = topology_key
    if namespaces is not None:
        t["namespaces"] = namespaces
    if namespace_selector is not None:
        t["namespaceSelector"] = namespace_selector
    return t


def pod_with_terms(
    namespace: str,
    labels: dict[str, str],
    affinity: list[dict[str, Any]] | None,
    anti_affinity: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """filtering_test.go ``createPodWithAffinityTerms`` (no node name)."""
    aff: dict[str, Any] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": affinity},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti_affinity},
    }
    return P().namespace(namespace).labels(labels).affinity(aff).obj()


def new_plugin(
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]] | None = None,
    args: InterPodAffinityArgs | None = None,
) -> tuple[InterPodAffinity, ClientHandle]:
    handle = ClientHandle(make_snapshot(nodes, pods), objects or [])
    return InterPodAffinity(args or InterPodAffinityArgs(), handle), handle


def status_of(s: Status | None) -> tuple[Code, str] | None:
    if s is None or s.is_success():
        return None
    return s.code, s.message()


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestRequiredAffinitySingleNode
# ------------------------------------------------------------------------------------------------
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = N().name("node1").labels({"region": "r1", "zone": "z11"}).obj()
EXISTING_POD = P().labels(POD_LABEL).node("node1").obj()

BAD_VALUE_MSG = (
    'Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric '
    "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

SINGLE_NODE_CASES: list[dict[str, Any]] = [
    {
        "name": "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing "
        "pods",
        "pod": P().obj(),
        "pre_filter": (SKIP, ""),
    },
    {
        "name": "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
        "pod": P().labels(POD_LABEL2).pod_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
        "pods": [EXISTING_POD],
    },
    {
        "name": "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in "
        "operator in labelSelector that matches the existing pod",
        "pod": P().labels(POD_LABEL2).pod_affinity_not_in("service", "region", ["securityscan3", "value3"]).obj(),
        "pods": [EXISTING_POD],
    },
    {
        "name": "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        "pod": pod_with_terms(
            "", POD_LABEL2, [term([expr("service", "In", ["securityscan", "value2"])], namespaces=["DiffNameSpace"])],
            None,
        ),
        "pods": [P().namespace("ns").label("service", "securityscan").node("node1").obj()],
        "filter": (UAU, AFF),
    },
    {
        "name": "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        "pod": P().labels(POD_LABEL).pod_affinity_in("service", "", ["antivirusscan", "value2"]).obj(),
        "pods": [EXISTING_POD],
        "filter": (UAU, AFF),
    },
    {
        "name": "satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
        "pod": pod_with_terms("", POD_LABEL2, [
            term([expr("service", "Exists"), expr("wrongkey", "DoesNotExist")], "region"),
            term([expr("service", "In", ["securityscan"]), expr("service", "NotIn", ["WrongValue"])], "region"),
        ], None),
        "pods": [EXISTING_POD],
    },
    {
        "name": "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the "
        "node because one of the matchExpression item don't match.",
        "pod": pod_with_terms("", POD_LABEL2, [
            term([expr("service", "Exists"), expr("wrongkey", "DoesNotExist")], "region"),
            term([expr("service", "In", ["securityscan2"]), expr("service", "NotIn", ["WrongValue"])], "region"),
        ], None),
        "pods": [EXISTING_POD],
        "filter": (UAU, AFF),
    },
    {
        "name": "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        "pod": P().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"])
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
        "pods": [EXISTING_POD],
    },
    {
        "name": "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        "pod": P().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"])
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
        "pods": [
            P().node("node1").labels(POD_LABEL)
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj()
        ],
    },
    {
        "name": "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        "pod": P().labels(POD_LABEL2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"])
        .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj(),
        "pods": [EXISTING_POD],
        "filter": (U, ANTI),
    },
    {
        "name": "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
        "pod": P().labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["securityscan", "value2"])
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
        "pods": [
            P().labels(POD_LABEL).node("node1")
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj()
        ],
        "filter": (U, EXISTING),
    },
    {
        "name": "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        "pod": P().labels(POD_LABEL).pod_affinity_not_in("service", "region", ["securityscan", "value2"]).obj(),
        "pods": [P().label("service", "securityscan").node("node2").obj()],
        "filter": (UAU, AFF),
    },
    {
        "name": "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        "pod": P().labels(POD_LABEL).obj(),
        "pods": [
            P().node("node1").labels(POD_LABEL)
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj()
        ],
        "filter": (U, EXISTING),
    },
    {
        "name": "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
        "pod": P().labels(POD_LABEL).obj(),
        "pods": [
            P().node("node1").labels(POD_LABEL)
            .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"]).obj()
        ],
        "pre_filter": (SKIP, ""),
    },
    {
        "name": "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
        "pod": P().labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "region").pod_anti_affinity_exists("security", "region").obj(),
        "pods": [P().node("node1").labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj()],
        "filter": (U, ANTI),
    },
    {
        "name": "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        "pod": P().labels(POD_LABEL)
        .pod_anti_affinity_exists("service", "zone").pod_anti_affinity_exists("security", "zone").obj(),
        "pods": [P().node("node1").labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj()],
        "filter": (U, ANTI),
    },
    {
        "name": "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        "pod": P().labels(POD_LABEL2).pod_anti_affinity_exists("security", "zone").obj(),
        "pods": [
            P().node("node1").labels(POD_LABEL)
            .pod_anti_affinity_exists("service", "zone").pod_anti_affinity_exists("security", "zone").obj()
        ],
        "filter": (U, EXISTING),
    },
    {
        "name": "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        "pod": P().labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj(),
        "pods": [
            P().node("node1").labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj()
        ],
        "filter": (U, ANTI),
    },
    {
        "name": "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on "
        "AffinityTerms",
        "pod": P().labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj(),
        "pods": [
            P().node("node1").labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj()
        ],
        "filter": (U, ANTI),
    },
    {
        "name": "PodAffinity fails PreFilter with an invalid affinity label syntax",
        "pod": P().labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["{{.bad-value.}}"])
        .pod_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
        "pre_filter": (UAU, "parsing pod: requiredAffinityTerms: "),
    },
    {
        "name": "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        "pod": P().labels(POD_LABEL)
        .pod_affinity_in("service", "region", ["foo"])
        .pod_affinity_in("service", "node", ["{{.bad-value.}}"]).obj(),
        "pre_filter": (UAU, "parsing pod: requiredAffinityTerms: "),
    },
    {
        "name": "affinity with NamespaceSelector",
        "pod": pod_with_terms("", POD_LABEL2, [
            term([expr("service", "In", ["securityscan", "value2"])], "region",
                 namespace_selector={"matchExpressions": [expr("team", "In", ["team1"])]}),
        ], None),
        "pods": [P().node("node1").namespace("subteam1.team1").labels(POD_LABEL).obj()],
    },
    {
        "name": "affinity with non-matching NamespaceSelector",
        "pod": pod_with_terms("", POD_LABEL2, [
            term([expr("service", "In", ["securityscan", "value2"])], "region",
                 namespace_selector={"matchExpressions": [expr("team", "In", ["team1"])]}),
        ], None),
        "pods": [P().node("node1").namespace("subteam1.team2").labels(POD_LABEL).obj()],
        "filter": (UAU, AFF),
    },
    {
        "name": "anti-affinity with matching NamespaceSelector",
        "pod": pod_with_terms("subteam1.team1", POD_LABEL2, None, [
            term([expr("service", "In", ["securityscan", "value2"])], "zone",
                 namespace_selector={"matchExpressions": [expr("team", "In", ["team1"])]}),
        ]),
        "pods": [P().node("node1").namespace("subteam2.team1").labels(POD_LABEL).obj()],
        "filter": (U, ANTI),
    },
    {
        "name": "anti-affinity with matching all NamespaceSelector",
        "pod": pod_with_terms("subteam1.team1", POD_LABEL2, None, [
            term([expr("service", "In", ["securityscan", "value2"])], "zone", namespace_selector={}),
        ]),
        "pods": [P().node("node1").namespace("subteam2.team1").labels(POD_LABEL).obj()],
        "filter": (U, ANTI),
    },
    {
        "name": "anti-affinity with non-matching NamespaceSelector",
        "pod": pod_with_terms("subteam1.team1", POD_LABEL2, None, [
            term([expr("service", "In", ["securityscan", "value2"])], "zone",
                 namespace_selector={"matchExpressions": [expr("team", "In", ["team1"])]}),
        ]),
        "pods": [P().node("node1").namespace("subteam1.team2").labels(POD_LABEL).obj()],
    },
]


@pytest.mark.parametrize("case", SINGLE_NODE_CASES, ids=lambda c: c["name"][:80])
def test_required_affinity_single_node(case: dict[str, Any]) -> None:
    pl, handle = new_plugin(case.get("pods", []), [NODE1], NAMESPACES)
    state, pod = CycleState(), PodInfo(case["pod"])
    _, st = pl.pre_filter(state, pod, handle.snapshot.list())
    want_pf = case.get("pre_filter")
    if want_pf is None:
        assert st is None
    else:
        assert st is not None and st.code == want_pf[0]
        assert st.message().startswith(want_pf[1])
        if "bad-value" in str(case["pod"]):
            assert st.message().endswith(BAD_VALUE_MSG)
        return
    ni = handle.snapshot.get("node1")
    assert ni is not None
    assert status_of(pl.filter(state, pod, ni)) == case.get("filter")


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestRequiredAffinityMultipleNodes
# ------------------------------------------------------------------------------------------------
RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _n(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return N().name(name).labels(labels).obj()


def _rzh(name: str, zone: str) -> dict[str, Any]:
    return _n(name, {"region": "r1", "zone": zone, "hostname": name})


MULTI_NODE_CASES: list[dict[str, Any]] = [
    {
        "name": "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of "
        "them has an existing pod that matches the affinity rules",
        "pod": P().pod_affinity_in("foo", "region", ["bar"]).obj(),
        "pods": [P().name("p1").node("node1").labels({"foo": "bar"}).obj()],
        "nodes": [_n("node1", RG_CHINA), _n("node2", RG_CHINA_AZ1), _n("node3", RG_INDIA)],
        "filter": [None, None, (UAU, AFF)],
    },
    {
        "name": "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod "
        "of the collection should not be blocked from being scheduled onto any node, even there's no existing pod "
        "that matches the rule anywhere.",
        "pod": P().labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"]).pod_affinity_in("service", "zone", ["securityscan"]).obj(),
        "pods": [P().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        "nodes": [_n("nodeA", {"zone": "az1", "hostname": "h1"}), _n("nodeB", {"zone": "az2", "hostname": "h2"})],
        "filter": [None, None],
    },
    {
        "name": "The first pod of the collection can only be scheduled on nodes labelled with the requested topology "
        "keys",
        "pod": P().labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"]).pod_affinity_in("service", "zone", ["securityscan"]).obj(),
        "pods": [P().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        "nodes": [
            _n("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), _n("nodeB", {"zoneLabel": "az2", "hostname": "h2"})
        ],
        "filter": [(UAU, AFF), (UAU, AFF)],
    },
    {
        "name": "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        "pod": P().pod_anti_affinity_in("foo", "region", ["abc"]).obj(),
        "pods": [P().node("nodeA").labels({"foo": "abc"}).obj()],
        "nodes": [
            _n("nodeA", {"region": "r1", "hostname": "nodeA"}), _n("nodeB", {"region": "r1", "hostname": "nodeB"})
        ],
        "filter": [(U, ANTI), (U, ANTI)],
    },
    {
        "name": "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a "
        "pod.",
        "pod": P().pod_anti_affinity_in("foo", "region", ["abc"])
        .pod_anti_affinity_in("service", "zone", ["securityscan"]).obj(),
        "pods": [P().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, ANTI), (U, ANTI)],
    },
    {
        "name": "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        "pod": P().pod_anti_affinity_in("foo", "region", ["abc"]).obj(),
        "pods": [P().node("nodeA").labels({"foo": "abc"}).obj()],
        "nodes": [_n("nodeA", RG_CHINA), _n("nodeB", RG_CHINA_AZ1), _n("nodeC", RG_INDIA)],
        "filter": [(U, ANTI), (U, ANTI), None],
    },
    {
        "name": "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the "
        "inter "
        "pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC "
        "has an existing pod that match the inter pod affinity rule but in different namespace)",
        "pod": P().namespace("NS1").labels({"foo": "123"}).pod_anti_affinity_in("foo", "region", ["bar"]).obj(),
        "pods": [
            P().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
            P().node("nodeC").namespace("NS2").pod_anti_affinity_in("foo", "region", ["123"]).obj(),
        ],
        "nodes": [_n("nodeA", RG_CHINA), _n("nodeB", RG_CHINA_AZ1), _n("nodeC", RG_INDIA)],
        "filter": [(U, ANTI), (U, ANTI), None],
    },
    {
        "name": "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
        "labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        "pod": P().label("foo", "").obj(),
        "pods": [P().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label").obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")],
        "pre_filter": SKIP,
    },
    {
        "name": "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey "
        "matches",
        "pod": P().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label").obj(),
        "pods": [P().node("nodeA").labels({"foo": ""}).obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")],
        "filter": [None, None],
    },
    {
        "name": "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
        "pod": P().label("foo", "").label("bar", "").obj(),
        "pods": [
            P().node("nodeA").pod_anti_affinity_exists("foo", "zone").obj(),
            P().node("nodeA").pod_anti_affinity_exists("bar", "region").obj(),
        ],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, EXISTING), (U, EXISTING)],
    },
    {
        "name": "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates "
        "one anti-affinity rule of existingPod",
        "pod": P().pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("bar", "region").obj(),
        "pods": [P().node("nodeA").labels({"foo": ""}).obj(), P().node("nodeB").labels({"bar": ""}).obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, ANTI), (U, ANTI)],
    },
    {
        "name": "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
        "as "
        "a single term match - case when one term has invalid topologyKey",
        "pod": P().label("foo", "").label("bar", "").obj(),
        "pods": [
            P().node("nodeA").pod_anti_affinity_exists("foo", "invalid-node-label")
            .pod_anti_affinity_exists("bar", "zone").obj()
        ],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, EXISTING), None],
    },
    {
        "name": "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
        "as "
        "a single term match - case when one term has invalid topologyKey",
        "pod": P().pod_anti_affinity_exists("foo", "invalid-node-label").pod_anti_affinity_exists("bar", "zone").obj(),
        "pods": [P().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, ANTI), None],
    },
    {
        "name": "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
        "as "
        "a single term match - case when all terms have valid topologyKey",
        "pod": P().label("foo", "").label("bar", "").obj(),
        "pods": [
            P().node("nodeA").pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone").obj()
        ],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, EXISTING), (U, EXISTING)],
    },
    {
        "name": "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted "
        "as "
        "a single term match - case when all terms have valid topologyKey",
        "pod": P().pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone").obj(),
        "pods": [P().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(U, ANTI), (U, ANTI)],
    },
    {
        "name": "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
        "pod": P().label("foo", "").label("bar", "").obj(),
        "pods": [
            P().node("nodeA").pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("labelA", "zone").obj(),
            P().node("nodeB").pod_anti_affinity_exists("bar", "zone").pod_anti_affinity_exists("labelB", "zone").obj(),
        ],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2"), _rzh("nodeC", "z3")],
        "filter": [(U, EXISTING), (U, EXISTING), None],
    },
    {
        "name": "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match",
        "pod": P().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
        "pods": [P().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")],
        "filter": [None, None],
    },
    {
        "name": "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all "
        "topologyKeys match, and the match logic should be satisfied on the same pod",
        "pod": P().pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
        "pods": [
            P().node("nodeA").name("pod1").labels({"foo": ""}).obj(),
            P().node("nodeB").name("pod2").labels({"bar": ""}).obj(),
        ],
        "nodes": [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        "filter": [(UAU, AFF), (UAU, AFF)],
    },
]


@pytest.mark.parametrize("case", MULTI_NODE_CASES, ids=lambda c: c["name"][:80])
def test_required_affinity_multiple_nodes(case: dict[str, Any]) -> None:
    pl, handle = new_plugin(case["pods"], case["nodes"], [_ns("NS1")])
    state, pod = CycleState(), PodInfo(case["pod"])
    _, st = pl.pre_filter(state, pod, handle.snapshot.list())
    if case.get("pre_filter") is not None:
        assert st is not None and st.code == case["pre_filter"]
        return
    assert st is None
    got = []
    for n in case["nodes"]:
        ni = handle.snapshot.get(n["metadata"]["name"])
        assert ni is not None
        got.append(status_of(pl.filter(state, pod, ni)))
    assert got == case["filter"]


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter's state is an Error."""
    pl, _ = new_plugin([], [])
    st = pl.filter(CycleState(), PodInfo(P().obj()), NodeInfo(N().obj()))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestPreFilterStateAddRemovePod
# ------------------------------------------------------------------------------------------------
LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = {"requiredDuringSchedulingIgnoredDuringExecution": [term([expr("foo", "In", ["bar"])], "region")]}
COMPLEX_TERMS = [
    term([expr("foo", "In", ["bar", "buzz"])], "region"),
    term([expr("service", "NotIn", ["bar", "security", "test"])], "zone"),
]
ANTI_COMPLEX = {"requiredDuringSchedulingIgnoredDuringExecution": COMPLEX_TERMS}
AFF_COMPLEX = {"requiredDuringSchedulingIgnoredDuringExecution": COMPLEX_TERMS}
ADD_REMOVE_NODES = [_n("nodeA", LABEL1), _n("nodeB", LABEL2), _n("nodeC", LABEL3)]

ADD_REMOVE_CASES: list[dict[str, Any]] = [
    {
        "name": "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        "pending": P().name("pending").labels(SELECTOR1).affinity({"podAntiAffinity": ANTI_FOO_BAR}).obj(),
        "existing": [
            P().name("p1").labels(SELECTOR1).node("nodeA").obj(),
            P().name("p2").node("nodeC").affinity({"podAntiAffinity": ANTI_FOO_BAR}).obj(),
        ],
        "added": P().name("addedPod").labels(SELECTOR1).node("nodeB").affinity({"podAntiAffinity": ANTI_FOO_BAR}).obj(),
        "anti": {"region": {"r1": 2}},
        "affinity": {},
    },
    {
        "name": "preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
        "pending": P().name("pending").labels(SELECTOR1).affinity({"podAntiAffinity": ANTI_COMPLEX}).obj(),
        "existing": [
            P().name("p1").labels(SELECTOR1).node("nodeA").obj(),
            P().name("p2").node("nodeC").affinity({"podAntiAffinity": ANTI_FOO_BAR}).obj(),
        ],
        "added": P().name("addedPod").labels(SELECTOR1).node("nodeA").affinity({"podAntiAffinity": ANTI_COMPLEX}).obj(),
        "anti": {"region": {"r1": 2}, "zone": {"z11": 2, "z21": 1}},
        "affinity": {},
    },
    {
        "name": "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and "
        "removing a pod",
        "pending": P().name("pending").labels(SELECTOR1).affinity({"podAffinity": AFF_COMPLEX}).obj(),
        "existing": [
            P().name("p1").labels(SELECTOR1).node("nodeA").obj(),
            P().name("p2").node("nodeC").affinity({"podAntiAffinity": ANTI_FOO_BAR, "podAffinity": AFF_COMPLEX}).obj(),
        ],
        "added": P().name("addedPod").labels(SELECTOR1).node("nodeA").affinity({"podAntiAffinity": ANTI_COMPLEX}).obj(),
        "anti": {},
        "affinity": {"region": {"r1": 2}, "zone": {"z11": 2}},
    },
]


def _pre_filter_state(pods: list[dict[str, Any]], pending: dict[str, Any]) -> tuple[InterPodAffinity, CycleState]:
    pl, handle = new_plugin(pods, ADD_REMOVE_NODES)
    state = CycleState()
    _, st = pl.pre_filter(state, PodInfo(pending), handle.snapshot.list())
    assert st is None
    return pl, state


def _counts(s: PreFilterState) -> tuple[Any, Any, Any]:
    return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts


@pytest.mark.parametrize("case", ADD_REMOVE_CASES, ids=lambda c: c["name"][:80])
def test_pre_filter_state_add_remove_pod(case: dict[str, Any]) -> None:
    pending = PodInfo(case["pending"])
    _, all_state = _pre_filter_state([*case["existing"], case["added"]], case["pending"])
    all_counts = _counts(all_state.read_as(PRE_FILTER_STATE_KEY, PreFilterState))
    pl, state = _pre_filter_state(case["existing"], case["pending"])
    s = state.read_as(PRE_FILTER_STATE_KEY, PreFilterState)
    original = s.clone()
    node = NodeInfo(next(n for n in ADD_REMOVE_NODES if n["metadata"]["name"] == case["added"]["spec"]["nodeName"]))
    added = PodInfo(case["added"])
    assert pl.add_pod(state, pending, added, node) is None
    assert s.anti_affinity_counts == case["anti"]
    assert s.affinity_counts == case["affinity"]
    assert _counts(s) == all_counts
    assert pl.remove_pod(state, pending, added, node) is None
    assert _counts(s) == _counts(original)


def test_pre_filter_state_clone_is_deep() -> None:
    """TestPreFilterStateClone: the clone has equal, but independent, counts."""
    s = PreFilterState(PodInfo(P().obj()), (), (), {})
    s.existing_anti_affinity_counts = {"name": {"node1": 1, "node2": 1}}
    s.affinity_counts = {"name": {"nodeA": 1, "nodeC": 2}}
    s.anti_affinity_counts = {"name": {"nodeN": 3, "nodeM": 1}}
    c = s.clone()
    assert c is not s and _counts(c) == _counts(s)
    c.affinity_counts["name"]["nodeA"] = 7
    assert s.affinity_counts["name"]["nodeA"] == 1


# ------------------------------------------------------------------------------------------------
# filtering_test.go TestGetTPMapMatchingIncomingAffinityAntiAffinity
# ------------------------------------------------------------------------------------------------
def _normal(*labels: str) -> dict[str, Any]:
    w = P().name("normal").node("nodeA")
    for lbl in labels:
        w.label(lbl, "")
    return w.obj()


NODE_A_HOST = _n("nodeA", {"hostname": "nodeA"})

INCOMING_COUNT_CASES: list[dict[str, Any]] = [
    {"name": "nil test", "existing": [], "pod": P().name("aaa-normal").obj(), "aff": {}, "anti": {}},
    {
        "name": "incoming pod without affinity/anti-affinity causes a no-op",
        "existing": [_normal("aaa")], "pod": P().name("aaa-normal").obj(), "aff": {}, "anti": {},
    },
    {
        "name": "no pod has label that violates incoming pod's affinity and anti-affinity",
        "existing": [_normal("bbb")],
        "pod": P().name("aaa-anti").pod_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("aaa", "hostname")
        .obj(),
        "aff": {}, "anti": {},
    },
    {
        "name": "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        "existing": [_normal("aaa")],
        "pod": P().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname").obj(),
        "aff": {"hostname": {"nodeA": 1}}, "anti": {"hostname": {"nodeA": 1}},
    },
    {
        "name": "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        "existing": [_normal("aaa", "bbb")],
        "pod": P().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname").obj(),
        "aff": {"hostname": {"nodeA": 2}}, "anti": {"hostname": {"nodeA": 1}},
    },
    {
        "name": "existing pod not match incoming pod's affinity but matches anti-affinity",
        "existing": [_normal("aaa")],
        "pod": P().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("bbb", "hostname").obj(),
        "aff": {}, "anti": {"hostname": {"nodeA": 1}},
    },
    {
        "name": "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        "existing": [_normal("aaa", "bbb")],
        "pod": P().name("anaffi-antiaffiti").pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("ccc", "hostname").pod_anti_affinity_exists("aaa", "hostname")
        .pod_anti_affinity_exists("ccc", "hostname").obj(),
        "aff": {}, "anti": {"hostname": {"nodeA": 1}},
    },
    {
        "name": "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
        "existing": [_normal("bbb")],
        "pod": P().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
        .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("bbb", "hostname").obj(),
        "aff": {}, "anti": {"hostname": {"nodeA": 1}},
    },
]


@pytest.mark.parametrize("case", INCOMING_COUNT_CASES, ids=lambda c: c["name"][:80])
def test_incoming_affinity_anti_affinity_counts(case: dict[str, Any]) -> None:
    snapshot = make_snapshot([NODE_A_HOST], case["existing"])
    pod = PodInfo(case["pod"])
    terms = pod_affinity_terms(pod)
    s = PreFilterState(pod, terms.required_affinity, terms.required_anti_affinity, {})
    s.count_incoming(snapshot.list())
    assert s.affinity_counts == case["aff"]
    assert s.anti_affinity_counts == case["anti"]


# ------------------------------------------------------------------------------------------------
# scoring_test.go TestPreferredAffinity
# ------------------------------------------------------------------------------------------------
def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def preferred(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


S1, S2 = {"security": "S1"}, {"security": "S2"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
TEAM1_SEL = {"matchExpressions": [expr("team", "In", ["team1"])]}

STAY_WITH_S1_IN_REGION = preferred("podAffinity", weighted(5, term([expr("security", "In", ["S1"])], "region")))
STAY_WITH_S2_IN_REGION = preferred("podAffinity", weighted(6, term([expr("security", "In", ["S2"])], "region")))
AFFINITY3 = preferred(
    "podAffinity",
    weighted(8, term([expr("security", "NotIn", ["S1"]), expr("security", "In", ["S2"])], "region")),
    weighted(2, term([expr("security", "Exists"), expr("wrongkey", "DoesNotExist")], "region")),
)
HARD_AFFINITY = {
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        term([expr("security", "In", ["S1", "value2"])], "region"),
        term([expr("security", "Exists"), expr("wrongkey", "DoesNotExist")], "region"),
    ]}
}
AWAY_FROM_S1_IN_AZ = preferred("podAntiAffinity", weighted(5, term([expr("security", "In", ["S1"])], "az")))
AWAY_FROM_S2_IN_AZ = preferred("podAntiAffinity", weighted(5, term([expr("security", "In", ["S2"])], "az")))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    **preferred("podAffinity", weighted(8, term([expr("security", "In", ["S1"])], "region"))),
    **preferred("podAntiAffinity", weighted(5, term([expr("security", "In", ["S2"])], "az"))),
}
AFFINITY_NAMESPACE_SELECTOR = preferred("podAffinity", weighted(5, term(
    [expr("security", "In", ["S1"])], "region", namespaces=["subteam2.team2"], namespace_selector=TEAM1_SEL)))
ANTI_AFFINITY_NAMESPACE_SELECTOR = preferred("podAntiAffinity", weighted(5, term(
    [expr("security", "In", ["S1"])], "region", namespaces=["subteam2.team2"], namespace_selector=TEAM1_SEL)))
INVALID_AFFINITY_LABELS = preferred(
    "podAffinity", weighted(8, term([expr("security", "In", ["{{.bad-value.}}"])], "region")))
INVALID_ANTI_AFFINITY_LABELS = preferred(
    "podAntiAffinity", weighted(5, term([expr("security", "In", ["{{.bad-value.}}"])], "az")))


def sp(node: str = "", labels: dict[str, str] | None = None, affinity: dict[str, Any] | None = None,
       namespace: str = "") -> dict[str, Any]:
    """A scoring-test pod: ``&v1.Pod{Spec: {NodeName, Affinity}, ObjectMeta: {Namespace, Labels}}``."""
    w = P().namespace(namespace).labels(labels or {})
    if node:
        w.node(node)
    if affinity is not None:
        w.affinity(affinity)
    return w.obj()


def nodes3(*labels: dict[str, str]) -> list[dict[str, Any]]:
    return [_n(f"node{i + 1}", lbl) for i, lbl in enumerate(labels)]


M = 100
PREFERRED_CASES: list[dict[str, Any]] = [
    {
        "name": "all nodes are same priority as Affinity is nil",
        "pod": sp(labels=S1), "pods": [], "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1), "status": SKIP,
    },
    {
        "name": "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others which "
        "doesn't match either pods in nodes or in topology key",
        "pod": sp(labels=S1, affinity=STAY_WITH_S1_IN_REGION),
        "pods": [sp("node1", S1), sp("node2", S2), sp("node3", S1)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1),
        "want": [M, 0, 0],
    },
    {
        "name": "All the nodes that have the same topology key & label value with one of them has an existing pod that "
        "match the affinity rules, have the same score",
        "pod": sp(affinity=STAY_WITH_S1_IN_REGION),
        "pods": [sp("node1", S1)],
        "nodes": nodes3(RG_CHINA, RG_CHINA_AZ1, RG_INDIA),
        "want": [M, M, 0],
    },
    {
        "name": "Affinity: nodes in one region has more matching pods comparing to other region, so the region which "
        "has more matches will get high score",
        "pod": sp(labels=S1, affinity=STAY_WITH_S2_IN_REGION),
        "pods": [sp("node1", S2), sp("node1", S2), sp("node2", S2), sp("node3", S2), sp("node4", S2), sp("node5", S2)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
        "want": [M, 0, M, M, 0],
    },
    {
        "name": "Affinity: different Label operators and values for pod affinity scheduling preference, including some "
        "match failures ",
        "pod": sp(labels=S1, affinity=AFFINITY3),
        "pods": [sp("node1", S1), sp("node2", S2), sp("node3", S1)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1),
        "want": [20, M, 0],
    },
    {
        "name": "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod "
        "affinity "
        "symmetry",
        "pod": sp(labels=S2),
        "pods": [sp("node1", S1, STAY_WITH_S1_IN_REGION), sp("node2", S2, STAY_WITH_S2_IN_REGION)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1),
        "want": [0, M, 0],
    },
    {
        "name": "Affinity symmetry with namespace selector",
        "pod": sp(labels=S1, namespace="subteam1.team1"),
        "pods": [sp("node1", S1, AFFINITY_NAMESPACE_SELECTOR), sp("node2", S2, STAY_WITH_S2_IN_REGION)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1),
        "want": [M, 0, 0],
    },
    {
        "name": "AntiAffinity symmetry with namespace selector",
        "pod": sp(labels=S1, namespace="subteam1.team1"),
        "pods": [sp("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR), sp("node2", S2, STAY_WITH_S2_IN_REGION)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1),
        "want": [0, M, M],
    },
    {
        "name": "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        "pod": sp(labels=S1),
        "pods": [sp("node1", S1, HARD_AFFINITY), sp("node2", S2, HARD_AFFINITY)],
        "nodes": nodes3(RG_CHINA, RG_INDIA, AZ1),
        "want": [M, M, 0],
    },
    {
        "name": "Anti Affinity: pod that does not match existing pods in node will get high score ",
        "pod": sp(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        "pods": [sp("node1", S1), sp("node2", S2)],
        "nodes": nodes3(AZ1, RG_CHINA),
        "want": [0, M],
    },
    {
        "name": "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
        "pod": sp(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        "pods": [sp("node1", S1), sp("node2", S1)],
        "nodes": nodes3(AZ1, RG_CHINA),
        "want": [0, M],
    },
    {
        "name": "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
        "pod": sp(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
        "pods": [sp("node1", S1), sp("node1", S1), sp("node2", S2)],
        "nodes": nodes3(AZ1, RG_INDIA),
        "want": [0, M],
    },
    {
        "name": "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        "pod": sp(labels=S2),
        "pods": [sp("node1", S1, AWAY_FROM_S2_IN_AZ), sp("node2", S2, AWAY_FROM_S1_IN_AZ)],
        "nodes": nodes3(AZ1, AZ2),
        "want": [0, M],
    },
    {
        "name": "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both "
        "pod "
        "affinity & anti affinity",
        "pod": sp(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        "pods": [sp("node1", S1), sp("node2", S1)],
        "nodes": nodes3(RG_CHINA, AZ1),
        "want": [M, 0],
    },
    {
        "name": "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and "
        "existing pods have the same labels",
        "pod": sp(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        "pods": [
            sp("node1", S1), sp("node1", S1), sp("node2", S1), sp("node3", S1), sp("node3", S1), sp("node4", S1),
            sp("node5", S1),
        ],
        "nodes": nodes3(RG_CHINA_AZ1, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA),
        "want": [M, 0, M, M, 0],
    },
    {
        "name": "Affinity and Anti Affinity and symmetry: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution "
        "in both pod affinity & anti affinity & symmetry",
        "pod": sp(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        "pods": [
            sp("node1", S1), sp("node2", S2), sp("node3", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            sp("node4", affinity=AWAY_FROM_S1_IN_AZ),
        ],
        "nodes": nodes3(RG_CHINA, AZ1, RG_INDIA, AZ2),
        "want": [M, 0, M, 0],
    },
    {
        "name": "Avoid panic when partial nodes in a topology don't have pods with affinity",
        "pod": sp(labels=S1),
        "pods": [sp("node1", S1), sp("node2", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        "nodes": nodes3(RG_CHINA, RG_CHINA),
        "want": [0, 0],
    },
    {
        "name": "invalid Affinity fails PreScore",
        "pod": sp(affinity=INVALID_AFFINITY_LABELS), "pods": [], "nodes": nodes3(RG_CHINA, RG_CHINA),
        "status": Code.ERROR, "message": 'Invalid value: "{{.bad-value.}}"',
    },
    {
        "name": "invalid AntiAffinity fails PreScore",
        "pod": sp(affinity=INVALID_ANTI_AFFINITY_LABELS), "pods": [], "nodes": nodes3(RG_CHINA, RG_CHINA),
        "status": Code.ERROR, "message": 'Invalid value: "{{.bad-value.}}"',
    },
    {
        "name": "Affinity with pods matching NamespaceSelector",
        "pod": sp(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        "pods": [
            sp("node1", S1, namespace="subteam1.team1"), sp("node1", S1, namespace="subteam1.team1"),
            sp("node1", S1, namespace="subteam1.team2"), sp("node2", S1, namespace="subteam2.team1"),
        ],
        "nodes": nodes3(RG_CHINA, RG_INDIA),
        "want": [M, 0],
    },
    {
        "name": "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        "pod": sp(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        "pods": [
            sp("node1", S1, namespace="subteam1.team1"), sp("node1", S1, namespace="subteam1.team1"),
            sp("node1", S1, namespace="subteam2.team2"), sp("node2", S1, namespace="subteam2.team1"),
        ],
        "nodes": nodes3(RG_CHINA, RG_INDIA),
        "want": [M, 0],
    },
    {
        "name": "Anti-affinity with pods matching NamespaceSelector",
        "pod": sp(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        "pods": [
            sp("node1", S1, namespace="subteam1.team1"), sp("node1", S1, namespace="subteam1.team1"),
            sp("node1", S1, namespace="subteam1.team2"), sp("node2", S1, namespace="subteam2.team1"),
        ],
        "nodes": nodes3(RG_CHINA, RG_INDIA),
        "want": [0, M],
    },
    {
        "name": "Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
        "pod": sp(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
        "pods": [
            sp("node1", S1, namespace="subteam1.team1"), sp("node1", S1, namespace="subteam1.team1"),
            sp("node1", S1, namespace="subteam2.team2"), sp("node2", S1, namespace="subteam2.team1"),
        ],
        "nodes": nodes3(RG_CHINA, RG_INDIA),
        "want": [0, M],
    },
    {
        "name": "Ignore preferred terms of existing pods",
        "pod": sp(labels=S2),
        "pods": [sp("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), sp("node2", S2, STAY_WITH_S2_IN_REGION)],
        "nodes": nodes3(RG_CHINA, RG_INDIA),
        "ignore_preferred": True,
        "status": SKIP,
    },
    {
        "name": "Do not ignore preferred terms of existing pods",
        "pod": sp(labels=S2),
        "pods": [sp("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), sp("node2", S2, STAY_WITH_S2_IN_REGION)],
        "nodes": nodes3(RG_CHINA, RG_INDIA),
        "want": [0, M],
    },
    {"name": "No nodes to score", "pod": sp(labels=S2), "pods": [], "nodes": [], "status": SKIP},
]


def run_scoring(
    pl: InterPodAffinity, handle: ClientHandle, pod: PodInfo, nodes: list[dict[str, Any]]
) -> tuple[Status | None, list[int]]:
    state = CycleState()
    st = pl.pre_score(state, pod, handle.snapshot.list())
    if st is not None and not st.is_success():
        return st, []
    scores = []
    for n in nodes:
        ni = handle.snapshot.get(n["metadata"]["name"])
        assert ni is not None
        value, sst = pl.score(state, pod, ni)
        assert sst is None
        scores.append(NodeScore(n["metadata"]["name"], value))
    assert pl.normalize_score(state, pod, scores) is None
    return None, [s.score for s in scores]


@pytest.mark.parametrize("case", PREFERRED_CASES, ids=lambda c: c["name"][:80])
def test_preferred_affinity(case: dict[str, Any]) -> None:
    args = InterPodAffinityArgs(hard_pod_affinity_weight=1,
                                ignore_preferred_terms_of_existing_pods=case.get("ignore_preferred", False))
    pl, handle = new_plugin(case["pods"], case["nodes"], NAMESPACES, args)
    st, scores = run_scoring(pl, handle, PodInfo(case["pod"]), case["nodes"])
    if "status" in case:
        assert st is not None and st.code == case["status"]
        assert case.get("message", "") in st.message()
        return
    assert st is None
    assert scores == case["want"]


# ------------------------------------------------------------------------------------------------
# scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight
# ------------------------------------------------------------------------------------------------
# Upstream lists the namespace "" (the tests' empty namespace); PodInfo reads it as "default".
HARD_POD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term([expr("service", "In", ["S1"])], "region", namespaces=["default", "subteam2.team2"],
         namespace_selector=TEAM1_SEL),
]}}
SERVICE_S1 = {"service": "S1"}
HARD_WEIGHT_CASES: list[dict[str, Any]] = [
    {"name": "with default weight", "namespace": "", "weight": 1, "want": [M, M, 0]},
    {"name": "with zero weight", "namespace": "", "weight": 0, "status": SKIP},
    {"name": "with no matching namespace", "namespace": "subteam1.team2", "weight": 1, "status": SKIP},
    {"name": "with matching NamespaceSelector", "namespace": "subteam1.team1", "weight": 1, "want": [M, M, 0]},
    {"name": "with matching Namespaces", "namespace": "subteam2.team2", "weight": 1, "want": [M, M, 0]},
]


@pytest.mark.parametrize("case", HARD_WEIGHT_CASES, ids=lambda c: c["name"])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(case: dict[str, Any]) -> None:
    nodes = nodes3(RG_CHINA, RG_INDIA, AZ1)
    pods = [sp("node1", affinity=HARD_POD_AFFINITY), sp("node2", affinity=HARD_POD_AFFINITY)]
    pl, handle = new_plugin(pods, nodes, NAMESPACES, InterPodAffinityArgs(hard_pod_affinity_weight=case["weight"]))
    st, scores = run_scoring(pl, handle, PodInfo(sp(labels=SERVICE_S1, namespace=case["namespace"])), nodes)
    if "status" in case:
        assert st is not None and st.code == case["status"]
        return
    assert st is None
    assert scores == case["want"]


# ------------------------------------------------------------------------------------------------
# plugin_test.go Test_isSchedulableAfterPodChange / Test_isSchedulableAfterNodeChange
# ------------------------------------------------------------------------------------------------
Q, QS = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
AFF_P = P().uid("p").name("p").pod_affinity_in("service", "region", ["securityscan", "value2"])
ANTI_P = P().uid("p").name("p").pod_anti_affinity_in("service", "region", ["securityscan", "value2"])
MULTI_P = P().uid("p").name("p").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")


def other(*labels: tuple[str, str], node: str = "fake-node") -> dict[str, Any]:
    w = P().uid("other")
    if node:
        w.node(node)
    for k, v in labels:
        w.label(k, v)
    return w.obj()


POD_HINT_CASES: list[dict[str, Any]] = [
    {"name": "add a pod which matches the pod affinity", "pod": AFF_P.obj(),
     "new": other(("service", "securityscan")), "want": Q},
    {"name": "add an un-scheduled pod", "pod": AFF_P.obj(), "new": other(("service", "securityscan"), node=""),
     "want": QS},
    {"name": "add a pod which doesn't match the pod affinity", "pod": AFF_P.obj(), "new": other(("aaa", "a")),
     "want": QS},
    {"name": "update a pod from non-match to match pod affinity", "pod": AFF_P.obj(),
     "new": other(("service", "securityscan")), "old": other(("aaa", "a")), "want": Q},
    {"name": "the updating pod matches target pod's affinity both before and after label changes", "pod": AFF_P.obj(),
     "new": other(("service", "securityscan")), "old": other(("service", "value2")), "want": QS},
    {"name": "update an un-scheduled pod", "pod": AFF_P.obj(), "new": other(("service", "securityscan"), node=""),
     "old": other(("aaa", "a"), node=""), "want": QS},
    {"name": "update a pod from match to non-match the pod affinity", "pod": AFF_P.obj(), "new": other(("aaa", "a")),
     "old": other(("service", "securityscan")), "want": QS},
    {"name": "update a pod from match to non-match pod's affinity - multiple terms case", "pod": MULTI_P.obj(),
     "new": other(("service", "securityscan")), "old": other(("aaa", "a")), "want": QS},
    {"name": "update a pod from non-match to match pod's affinity - multiple terms case", "pod": MULTI_P.obj(),
     "new": other(("aaa", ""), ("bbb", "")), "old": other(("aaa", "a")), "want": Q},
    {"name": "updated pod is the target pod", "pod": P().uid("p").name("p").label("foo", "baz").obj(),
     "new": P().uid("p").name("p").label("foo", "baz").obj(), "old": P().uid("p").name("p").label("foo", "bar").obj(),
     "want": Q},
    {"name": "modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
     "pod": ANTI_P.obj(), "new": other(("service", "aaaa")), "old": other(("service", "securityscan")), "want": Q},
    {"name": "modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
     "pod": ANTI_P.obj(), "new": other(("service", "securityscan")), "old": other(("service", "bbb")), "want": QS},
    {"name": "delete a pod which doesn't match pod's anti-affinity", "pod": ANTI_P.obj(), "old": other(("aaa", "a")),
     "want": QS},
    {"name": "delete a pod which matches pod's anti-affinity", "pod": ANTI_P.obj(),
     "old": other(("service", "securityscan")), "want": Q},
    {"name": "delete a pod with anti-affinity that matches pending pod",
     "pod": P().name("p").label("service", "securityscan").obj(),
     "old": P().node("fake-node").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
     "want": Q},
    {"name": "delete a pod with anti-affinity that doesn't match pending pod",
     "pod": P().name("p").label("service", "foo").obj(),
     "old": P().node("fake-node").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
     "want": QS},
    {"name": "delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match "
     "pending pod",
     "pod": P().name("p").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).label("service", "foo")
     .obj(),
     "old": P().node("fake-node").pod_anti_affinity_in("service", "region", ["securityscan", "value2"])
     .label("service", "foo").obj(),
     "want": QS},
]


@pytest.mark.parametrize("case", POD_HINT_CASES, ids=lambda c: c["name"][:80])
def test_is_schedulable_after_pod_change(case: dict[str, Any]) -> None:
    assert is_schedulable_after_pod_change(case["pod"], case.get("old"), case.get("new")) == case["want"]


ZONE_AFF_P = P().name("p").pod_affinity_in("service", "zone", ["securityscan", "value2"]).obj()
REGION_AFF_P = P().name("p").pod_affinity_in("service", "region", ["securityscan", "value2"]).obj()
ZONE_ANTI_P = P().name("p").affinity({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}]}}).obj()


def node_a(**labels: str) -> dict[str, Any]:
    return N().name("node-a").labels(labels).obj()


NODE_HINT_CASES: list[dict[str, Any]] = [
    {"name": "add a new node with matched pod affinity topologyKey", "pod": ZONE_AFF_P, "new": node_a(zone="zone1"),
     "want": Q},
    {"name": "add a new node without matched topologyKey", "pod": REGION_AFF_P, "new": node_a(zone="zone1"),
     "want": QS},
    {"name": "update node label but not topologyKey", "pod": ZONE_AFF_P, "old": node_a(aaa="a"),
     "new": node_a(aaa="b"), "want": QS},
    {"name": "update node label that isn't related to the pod affinity", "pod": ZONE_AFF_P, "old": node_a(zone="zone1"),
     "new": node_a(zone="zone1", **{"unrelated-label": "unrelated"}), "want": QS},
    {"name": "update node with different affinity topologyKey value", "pod": ZONE_AFF_P, "old": node_a(zone="zone1"),
     "new": node_a(zone="zone2"), "want": Q},
    {"name": "update node to have the affinity topology label", "pod": ZONE_AFF_P, "old": node_a(aaa="a"),
     "new": node_a(zone="zone1"), "want": Q},
    {"name": "add a new node with matched pod anti-affinity topologyKey", "pod": ZONE_ANTI_P,
     "new": node_a(zone="zone1"), "want": Q},
    {"name": "add a new node without matched pod anti-affinity topologyKey", "pod": ZONE_ANTI_P, "new": node_a(),
     "want": Q},
    {"name": "update node label that isn't related to the pod anti-affinity", "pod": ZONE_ANTI_P,
     "old": node_a(zone="zone1"), "new": node_a(zone="zone1", **{"unrelated-label": "unrelated"}), "want": QS},
    {"name": "update node with different anti-affinity topologyKey value", "pod": ZONE_ANTI_P,
     "old": node_a(zone="zone1"), "new": node_a(zone="zone2"), "want": Q},
    {"name": "update node to have the anti-affinity topology label", "pod": ZONE_ANTI_P, "old": node_a(aaa="a"),
     "new": node_a(zone="zone1"), "want": QS},
    {"name": "update node label not to have anti-affinity topology label", "pod": ZONE_ANTI_P,
     "old": node_a(zone="zone1"), "new": node_a(aaa="a"), "want": Q},
]


@pytest.mark.parametrize("case", NODE_HINT_CASES, ids=lambda c: c["name"][:80])
def test_is_schedulable_after_node_change(case: dict[str, Any]) -> None:
    assert is_schedulable_after_node_change(case["pod"], case.get("old"), case["new"]) == case["want"]


# ------------------------------------------------------------------------------------------------
# Beyond the upstream tables
# ------------------------------------------------------------------------------------------------
def test_events_to_register() -> None:
    """plugin.go EventsToRegister with QueueingHints on: assigned-pod add/label/delete, node add/label."""
    pl, _ = new_plugin([], [])
    events = {str(e.event): e.hint for e in pl.events_to_register()}
    assert set(events) == {"PodChange", "NodeChange"}
    pod_event, node_event = (e.event for e in pl.events_to_register())
    assert pod_event.action == ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
    assert node_event.action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    assert all(h is not None for h in events.values())


def test_namespaces_listed_once_per_cycle_and_only_when_needed() -> None:
    """namespaceSelector terms are unrolled from one namespace list per cycle; plain terms need none."""
    nodes = [_n("node1", {"region": "r1"})]
    pods = [P().node("node1").namespace("subteam1.team1").labels(POD_LABEL).obj()]
    plain = P().labels(POD_LABEL2).pod_affinity_in("service", "region", ["securityscan"]).obj()
    pl, handle = new_plugin(pods, nodes, NAMESPACES)
    pl.pre_filter(CycleState(), PodInfo(plain), handle.snapshot.list())
    assert handle.client().list_calls == 0
    with_selector = pod_with_terms("", POD_LABEL2, [
        term([expr("service", "In", ["securityscan"])], "region", namespace_selector=TEAM1_SEL),
    ], None)
    with_selector["spec"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
        weighted(3, term([expr("service", "In", ["securityscan"])], "region", namespace_selector=TEAM1_SEL)),
    ]
    state, pod = CycleState(), PodInfo(with_selector)
    _, st = pl.pre_filter(state, pod, handle.snapshot.list())
    assert st is None
    assert pl.pre_score(state, pod, handle.snapshot.list()) is None
    assert handle.client().list_calls == 1


def test_parsed_terms_are_cached_on_the_pod_info() -> None:
    pod = PodInfo(AFF_P.obj())
    assert pod_affinity_terms(pod) is pod_affinity_terms(pod)


def test_apply_match_label_keys_is_the_api_server_mutation() -> None:
    """strategy.go applyMatchLabelKeysAndMismatchLabelKeys: In/NotIn per key the pod carries."""
    t = term([expr("app", "In", ["web"])], "zone")
    t["matchLabelKeys"] = ["pod-template-hash", "missing"]
    t["mismatchLabelKeys"] = ["tenant"]
    no_selector = {"topologyKey": "zone", "matchLabelKeys": ["pod-template-hash"]}
    pod = P().labels({"app": "web", "pod-template-hash": "abc", "tenant": "t1"}).affinity({
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [t, no_selector]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted(1, copy.deepcopy(t))]},
    }).obj()
    out = apply_match_label_keys(pod)
    want = [
        expr("app", "In", ["web"]), expr("pod-template-hash", "In", ["abc"]), expr("tenant", "NotIn", ["t1"]),
    ]
    req = out["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert req[0]["labelSelector"]["matchExpressions"] == want
    assert "labelSelector" not in req[1]
    pref = out["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert pref[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"] == want
    assert pod["spec"]["affinity"]["podAffinity"][REQUIRED][0]["labelSelector"]["matchExpressions"] == want[:1]


def test_through_the_framework_with_a_nominated_pod() -> None:
    """Runtime integration: PreFilter, Filter with a nominated pod added through AddPod, Score."""
    nodes = [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")]
    existing = [P().node("nodeA").labels({"app": "db"}).obj()]
    handle = ClientHandle(make_snapshot(nodes, existing), NAMESPACES)
    profile = Profile(plugins=Plugins(
        queue_sort=PluginSet([PluginRef("PrioritySort")]),
        bind=PluginSet([PluginRef("DefaultBinder")]),
        multi_point=PluginSet([PluginRef("InterPodAffinity", 2)]),
    ))
    fw = Framework(profile, in_tree_registry(), handle)
    pod = PodInfo(P().name("web").labels({"app": "web"}).pod_anti_affinity_in("app", "zone", ["cache"])
                  .pod_affinity_in("app", "region", ["db"]).obj())
    state = CycleState()
    _, st, _ = fw.run_pre_filter_plugins(state, pod, handle.snapshot.list())
    assert st.is_success()
    ni_a, ni_b = handle.snapshot.get("nodeA"), handle.snapshot.get("nodeB")
    assert ni_a is not None and ni_b is not None
    assert fw.run_filter_plugins_with_nominated_pods(state, pod, ni_a).is_success()
    nominated = PodInfo(P().name("cache").labels({"app": "cache"}).obj())
    st = fw.run_filter_plugins_with_nominated_pods(state, pod, ni_b, [nominated])
    assert (st.code, st.reasons, st.plugin) == (U, [ANTI], "InterPodAffinity")
    # The dry run with the nominated pod worked on a clone: the cycle's own state is untouched.
    assert fw.run_filter_plugins(state, pod, ni_b).is_success()


def test_memoised_counts_follow_node_changes_across_cycles() -> None:
    """Per-node term matches are reused across cycles only while the node is unchanged."""
    nodes = [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")]
    pl, handle = new_plugin([P().node("nodeA").labels({"app": "db"}).obj()], nodes)
    pod = PodInfo(P().pod_anti_affinity_in("app", "zone", ["db"]).pod_affinity_in("app", "region", ["db"]).obj())

    def counts() -> tuple[Any, Any]:
        state = CycleState()
        _, st = pl.pre_filter(state, pod, handle.snapshot.list())
        assert st is None
        s = state.read_as(PRE_FILTER_STATE_KEY, PreFilterState)
        return s.affinity_counts, s.anti_affinity_counts

    assert counts() == ({"region": {"r1": 1}}, {"zone": {"z1": 1}})
    ni_b = handle.snapshot.get("nodeB")
    assert ni_b is not None
    ni_b.add_pod(PodInfo(P().node("nodeB").labels({"app": "db"}).obj()))
    assert counts() == ({"region": {"r1": 2}}, {"zone": {"z1": 1, "z2": 1}})
