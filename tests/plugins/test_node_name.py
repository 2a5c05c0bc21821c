"""NodeName Filter (and its batch form), and its PreFilter from v1.37.

Ported from pkg/scheduler/framework/plugins/nodename/node_name_test.go (TestNodeName; v1.37.2's
TestNodeName_PreFilter). What the scheduler then reports for the nodes outside the PreFilterResult
follows pkg/scheduler/schedule_one.go (findNodesThatFitPod: ``diagnosis.NodeToStatus.SetAbsentNodesStatus``
with "node(s) didn't satisfy plugin(s) %v") and framework/types.go (FitError.Error), v1.37.2.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugin_builders import make_node, make_pod, node_info
from test_declared_protocols import PROTOCOLS, _defines, _members

from kubesched import testing
from kubesched.config import load_config
from kubesched.config.releases import RELEASES, V1_35, V1_36, V1_37, Release
from kubesched.framework import interfaces
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import FitError, PodInfo, PreFilterResult
from kubesched.plugins.nodename import NodeName
from kubesched.plugins.nodename.node_name import NodeNameWithPreFilter

CASES: list[dict[str, Any]] = [
    {"name": "no host specified", "pod_node": "", "node": ""},
    {"name": "host matches", "pod_node": "foo", "node": "foo"},
    {
        "name": "host doesn't match",
        "pod_node": "bar",
        "node": "foo",
        "want": ("UnschedulableAndUnresolvable", "node(s) didn't match the requested node name"),
    },
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_node_name(case: dict[str, Any]) -> None:
    status = NodeName().filter(
        CycleState(), PodInfo(make_pod("p", node=case["pod_node"])), node_info(make_node(case["node"]))
    )
    if "want" not in case:
        assert status is None
    else:
        assert status is not None and (status.code.upstream_name, status.message()) == case["want"]


@given(st.integers(1, 12), st.one_of(st.just(""), st.sampled_from([f"n{i}" for i in range(15)])))
def test_filter_batch_equals_filter(n: int, wanted: str) -> None:
    snap = Snapshot(node_info(make_node(f"n{i}")) for i in range(n))
    pod = PodInfo(make_pod("p", node=wanted))
    pl = NodeName()
    mask = pl.filter_batch(CycleState(), pod, snap, np.arange(n))
    assert mask.tolist() == [pl.filter(CycleState(), pod, ni) is None for ni in snap.list()]


# -- PreFilter (v1.37) -----------------------------------------------------------------------------

PRE_FILTER_CASES: list[dict[str, Any]] = [
    {
        "name": "assigned pod with nodeName set, prefilter restricts to assigned node",
        "pod_node": "foo",
        "want": PreFilterResult({"foo"}),
    },
    {"name": "unassigned pod without nodeName set, prefilter returns nil", "pod_node": "", "want": None},
]


def _plugin(release: Release) -> NodeName:
    return NodeName(None, testing.FakeHandle(release=release))


@pytest.mark.parametrize("case", PRE_FILTER_CASES, ids=lambda c: c["name"])
def test_node_name_pre_filter(case: dict[str, Any]) -> None:
    pl = _plugin(V1_37)
    assert isinstance(pl, interfaces.PreFilterPlugin)
    result, status = pl.pre_filter(CycleState(), PodInfo(make_pod("p", node=case["pod_node"])), [])
    assert status is None
    assert result == case["want"]
    assert pl.pre_filter_extensions() is None


@pytest.mark.parametrize("release", RELEASES, ids=str)
def test_pre_filter_only_from_v1_37(release: Release) -> None:
    """v1.35.4's and v1.36.3's NodeName has no PreFilter: the plugin must not look like one."""
    pl = _plugin(release)
    has = release >= V1_37
    assert isinstance(pl, interfaces.PreFilterPlugin) is has
    assert hasattr(pl, "pre_filter") is has
    assert type(pl) is (NodeNameWithPreFilter if has else NodeName)
    # The Filter is the same in every release.
    status = pl.filter(CycleState(), PodInfo(make_pod("p", node="bar")), node_info(make_node("foo")))
    assert status is not None and status.message() == "node(s) didn't match the requested node name"


def test_pre_filter_class_declares_what_it_implements() -> None:
    """The registry lists NodeName only (tests/plugins/test_declared_protocols.py), so check its
    v1.37 class here the same way."""
    cls = NodeNameWithPreFilter
    declared = {p.__name__ for p in PROTOCOLS if p in cls.__mro__}
    implemented = {p.__name__ for p in PROTOCOLS if all(_defines(cls, m) for m in _members(p))}
    assert declared == implemented
    assert "PreFilterPlugin" in declared


@pytest.mark.parametrize("release", RELEASES, ids=str)
def test_default_profile_pre_filter_plugins(release: Release) -> None:
    tf = testing.new_framework(load_config(None, release=release), nodes=[testing.make_node("n1").obj()])
    names = [p.name for p in tf.framework.points.pre_filter]
    if release >= V1_37:
        assert names[0] == "NodeName"  # first in v1.37's default order with a PreFilter
    else:
        assert "NodeName" not in names


def _fit_error(release: Release, node_name: str) -> tuple[str, int]:
    """One scheduling attempt (schedulePod) of a pod naming ``node_name``, on n1..n3 with n2
    cordoned: the FailedScheduling message, or "" and the number of nodes evaluated."""
    nodes = [testing.make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in ("n1", "n2", "n3")]
    nodes[1]["spec"]["unschedulable"] = True
    tf = testing.new_framework(load_config(None, release=release), nodes=nodes)
    pod = tf.pod_info(make_pod("p", node=node_name, requests=[{"cpu": "100m"}]))
    try:
        result = tf.scheduler.schedule_pod(tf.framework, CycleState(), pod)
    except FitError as err:
        return str(err), 0
    assert result.suggested_host == node_name
    return "", result.evaluated_nodes


@pytest.mark.parametrize(
    ("release", "want"),
    [
        # Every node is filtered: n2 fails NodeUnschedulable (before NodeName in v1.35/v1.36), the
        # others NodeName's Filter.
        (V1_35, "0/3 nodes are available: 1 node(s) were unschedulable, "
                "2 node(s) didn't match the requested node name."),
        (V1_36, "0/3 nodes are available: 1 node(s) were unschedulable, "
                "2 node(s) didn't match the requested node name."),
        # PreFilter keeps n2 only; the absent nodes read SetAbsentNodesStatus' reason.
        (V1_37, "0/3 nodes are available: 1 node(s) were unschedulable, "
                "2 node(s) didn't satisfy plugin(s) [NodeName]."),
    ],
    ids=str,
)
def test_fit_error_for_a_pod_naming_a_cordoned_node(release: Release, want: str) -> None:
    assert _fit_error(release, "n2") == (want, 0)


@pytest.mark.parametrize(("release", "evaluated"), [(V1_35, 3), (V1_36, 3), (V1_37, 1)], ids=str)
def test_a_pod_naming_a_node_is_evaluated_on_it_only_from_v1_37(release: Release, evaluated: int) -> None:
    # upstream's ScheduleResult.EvaluatedNodes = feasible + nodes that failed Filter.
    assert _fit_error(release, "n3") == ("", evaluated)
