"""InterPodAffinity's and PodTopologySpread's queueing hints, by release.

Ported from pkg/scheduler/framework/plugins/interpodaffinity/plugin_test.go
(Test_isSchedulableAfterPodChange of v1.35.4 and v1.36.3; Test_isSchedulableAfterAssignedPodChange
and Test_isSchedulableAfterTargetPodUpdateLabel of v1.37.2) and
podtopologyspread/plugin_test.go (Test_isSchedulableAfterPodChange of v1.35.4 and v1.36.3;
Test_isSchedulableAfterAssignedPodChange and Test_isSchedulableAfterTargetPodChange of v1.37.2).
The rows the releases share are the tables of test_interpodaffinity.py / test_podtopologyspread.py
(imported, not copied); the rows below are those a release added. Releases' changes:
HintsCountNominatedPods and InterPodAffinityHintTargetAndReverse (1.36), SplitPodEvents and
InterPodAffinityHintAnyTerm (1.37).
"""

from __future__ import annotations

from typing import Any

import pytest
from _builders import make_pod, make_snapshot
from test_interpodaffinity import ANTI_P
from test_interpodaffinity import POD_HINT_CASES as IPA_SHARED
from test_podtopologyspread import BAR, DNS, FOO, LIST_ARGS, TARGET, bound
from test_podtopologyspread import POD_HINT_CASES as PTS_SHARED

from kubesched.config.plugin_args import InterPodAffinityArgs
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.plugins.interpodaffinity.plugin import (
    InterPodAffinity,
    is_schedulable_after_assigned_pod_change,
    is_schedulable_after_pod_change,
    is_schedulable_after_target_pod_update_label,
)
from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread
from kubesched.testing import FakeHandle

P = make_pod
Q, QS = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def nominated(pod: dict[str, Any]) -> dict[str, Any]:
    return {**pod, "status": {"nominatedNodeName": "fake-node"}}


# -- InterPodAffinity ---------------------------------------------------------------------------
#: v1.36.3 rows v1.35.4's table lacks (kubernetes#135325, #135394, #135392).
IPA_ADDED_IN_136 = {
    "updated pod is the target pod",
    "delete a pod with anti-affinity that matches pending pod",
    "delete a pod with anti-affinity that doesn't match pending pod",
    "delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match "
    "pending pod",
}
IPA_NOMINATED = [
    {"name": "delete a nominated pod which doesn't match pod's anti-affinity", "pod": ANTI_P.obj(),
     "old": nominated(P().label("aaa", "a").obj()), "want": QS},
    {"name": "delete a nominated pod which matches pod's anti-affinity", "pod": ANTI_P.obj(),
     "old": nominated(P().label("service", "securityscan").obj()), "want": Q},
]
TWO_ANTI = (P().uid("p").name("p").pod_anti_affinity_in("service", "region", ["securityscan"])
            .pod_anti_affinity_in("app", "region", ["web"]).obj())


def _other(**labels: str) -> dict[str, Any]:
    return P().uid("other").node("fake-node").labels(labels).obj()


#: v1.37.2 rows (kubernetes#139161): one matching anti-affinity term is enough.
IPA_ANY_TERM = [
    {"name": "modify pod label to change it from matching only one of target pod's anti-affinity terms to "
     "matching none", "pod": TWO_ANTI, "new": _other(service="foo", app="bar"),
     "old": _other(service="securityscan", app="bar"), "want": Q, "v136": QS},
    {"name": "modify pod label but it still matches one of target pod's anti-affinity terms", "pod": TWO_ANTI,
     "new": _other(service="foo", app="web"), "old": _other(service="securityscan", app="bar"), "want": QS},
    {"name": "delete a pod which matches only one of target pod's anti-affinity terms", "pod": TWO_ANTI,
     "old": _other(service="securityscan"), "want": Q, "v136": QS},
    {"name": "delete a pod with anti-affinity that matches pending pod on only one term",
     "pod": P().name("p").label("service", "securityscan").obj(),
     "old": P().node("fake-node").uid("other").pod_anti_affinity_in("service", "region", ["securityscan"])
     .pod_anti_affinity_in("app", "region", ["web"]).obj(), "want": Q, "v136": QS},
]


def _ipa_cases(release: Release) -> list[tuple[dict[str, Any], QueueingHint]]:
    if release == V1_35:
        return [(c, c["want"]) for c in IPA_SHARED if c["name"] not in IPA_ADDED_IN_136]
    shared = [(c, c["want"]) for c in IPA_SHARED]
    if release == V1_36:
        return shared + [(c, c["want"]) for c in IPA_NOMINATED] + [(c, c["v136"]) for c in IPA_ANY_TERM
                                                                     if "v136" in c]
    # v1.37's AssignedPod table has no target-pod row: that is the TargetPod hint's.
    return ([(c, w) for c, w in shared if c["name"] != "updated pod is the target pod"]
            + [(c, c["want"]) for c in IPA_NOMINATED + IPA_ANY_TERM])


@pytest.mark.parametrize("release", [V1_35, V1_36, V1_37], ids=str)
def test_inter_pod_affinity_pod_hint(release: Release) -> None:
    hint = is_schedulable_after_assigned_pod_change if release == V1_37 else is_schedulable_after_pod_change
    got = {c["name"]: hint(c["pod"], c.get("old"), c.get("new"), release) for c, _ in _ipa_cases(release)}
    assert got == {c["name"]: want for c, want in _ipa_cases(release)}


def test_inter_pod_affinity_v135_ignores_what_v136_added() -> None:
    """v1.35.4 isSchedulableAfterPodChange skips an unscheduled (or only nominated) pod, the pending
    pod itself included, and on delete checks only the pending pod's anti-affinity."""
    target = P().uid("p").name("p").label("foo", "baz").obj()
    relabelled = P().uid("p").name("p").label("foo", "bar").obj()
    assert is_schedulable_after_pod_change(target, relabelled, target, V1_35) == QS
    assert is_schedulable_after_pod_change(target, relabelled, target, V1_36) == Q
    deleted = nominated(P().label("service", "securityscan").obj())
    assert is_schedulable_after_pod_change(ANTI_P.obj(), deleted, None, V1_35) == QS


def test_inter_pod_affinity_target_pod_update_label() -> None:
    """v1.37.2 Test_isSchedulableAfterTargetPodUpdateLabel."""
    pod = P().uid("p").name("p").label("foo", "baz").obj()
    assert is_schedulable_after_target_pod_update_label(pod, pod, pod) == Q


@pytest.mark.parametrize(("release", "registered"), [
    (V1_35, [(EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE)]),
    (V1_37, [(EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
             (EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL)]),
], ids=str)
def test_inter_pod_affinity_events_to_register(release: Release, registered: list[tuple[EventResource, ActionType]]
                                               ) -> None:
    """plugin.go EventsToRegister: v1.37.2 registers AssignedPod and TargetPod instead of Pod."""
    pl = InterPodAffinity(InterPodAffinityArgs(), FakeHandle(make_snapshot([], []), release=release))
    events = [(e.event.resource, e.event.action) for e in pl.events_to_register()]
    assert events == [*registered, (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]


# -- PodTopologySpread --------------------------------------------------------------------------
PTS_NOMINATED = [
    {"name": "delete nominated pod with labels that don't match topologySpreadConstraints selector",
     "pod": TARGET, "old": nominated(bound("bar", node="")), "want": QS},
    {"name": "delete nominated pod with labels that match topologySpreadConstraints selector",
     "pod": TARGET, "old": nominated(bound("foo", node="")), "want": Q, "v135": QS},
]


def _pts(release: Release) -> PodTopologySpread:
    return PodTopologySpread(LIST_ARGS, FakeHandle(make_snapshot([], []), release=release))


@pytest.mark.parametrize("release", [V1_35, V1_36, V1_37], ids=str)
def test_pod_topology_spread_pod_hint(release: Release) -> None:
    pl = _pts(release)
    hint = pl.is_schedulable_after_assigned_pod_change if release == V1_37 else pl.is_schedulable_after_pod_change
    cases = [(c, c["want"]) for c in PTS_SHARED]
    cases += [(c, c.get("v135", c["want"]) if release == V1_35 else c["want"]) for c in PTS_NOMINATED]
    got = {c["name"]: hint(c["pod"], c.get("old"), c.get("new")) for c, _ in cases}
    assert got == {c["name"]: want for c, want in cases}


def _spread(policy: str) -> Any:
    return (P().uid("p").name("p").label("foo", "")
            .spread_constraint(1, "zone", DNS, FOO, node_taints_policy=policy).spread_constraint(1, "node", DNS, BAR))


PTS_TARGET = [
    ("the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
     _spread("Honor").obj(), P().uid("p").name("p").label("foo", "").obj(),
     P().uid("p").name("p").label("foo", "").toleration("node.kubernetes.io/unschedulable").obj(), Q),
    ("the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new toleration",
     _spread("Ignore").obj(), P().uid("p").name("p").label("foo", "").obj(),
     P().uid("p").name("p").label("foo", "").toleration("node.kubernetes.io/unschedulable").obj(), QS),
    ("the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the "
     "constraint", _spread("Ignore").obj(), P().uid("p").name("p").obj(),
     P().uid("p").name("p").label("foo", "").obj(), Q),
    ("the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label", _spread("Ignore").obj(),
     P().uid("p").name("p").obj(), P().uid("p").name("p").label("unrelated", "").obj(), QS),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "want"), PTS_TARGET, ids=[c[0][:70] for c in PTS_TARGET])
@pytest.mark.parametrize("release", [V1_35, V1_36, V1_37], ids=str)
def test_pod_topology_spread_target_pod_hint(
    release: Release, name: str, pod: dict[str, Any], old: dict[str, Any], new: dict[str, Any], want: QueueingHint,
) -> None:
    """The same rows in every release: v1.35.4/v1.36.3 in Test_isSchedulableAfterPodChange, v1.37.2 in
    Test_isSchedulableAfterTargetPodChange."""
    pl = _pts(release)
    hint = pl.is_schedulable_after_target_pod_change if release == V1_37 else pl.is_schedulable_after_pod_change
    assert hint(pod, old, new) == want


def test_pod_topology_spread_events_to_register() -> None:
    """plugin.go EventsToRegister (v1.37.2): AssignedPod Add|UpdatePodLabel|Delete, TargetPod
    UpdatePodToleration|UpdatePodLabel."""
    events = [(e.event.resource, e.event.action) for e in _pts(V1_37).events_to_register()][:2]
    assert events == [
        (EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL),
    ]
