"""The FailedScheduling message (``FitError.Error``).

Ported from pkg/scheduler/framework/types_test.go (``TestFitError_Error``), plus hand-computed
histograms for absent nodes and several reasons per node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework.status import Code, Status
from kubesched.framework.types import Diagnosis, FitError, PodInfo
from kubesched.testing import make_pod


@dataclass
class Case:
    name: str
    num_all_nodes: int
    node_to_status: dict[str, Status]
    want: str
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    absent: Status | None = field(default_factory=lambda: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))


def _u(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE, msg)


PF = "Node(s) failed PreFilter plugin FalsePreFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"
POST = "Error running PostFilter plugin FailedPostFilter"

UPSTREAM = [
    Case("nodes failed Prefilter plugin", 3, {n: _u(PF) for n in ("node1", "node2", "node3")},
         "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.", pre_filter_msg=PF),
    Case("nodes failed Prefilter plugin and the preemption also failed", 3,
         {n: _u(PF) for n in ("node1", "node2", "node3")},
         "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. "
         "Error running PostFilter plugin FailedPostFilter",
         pre_filter_msg=PF, post_filter_msg=POST),
    Case("nodes failed one Filter plugin with an empty PostFilterMsg", 3,
         {n: _u(F1) for n in ("node1", "node2", "node3")},
         "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1."),
    Case("nodes failed one Filter plugin with a non-empty PostFilterMsg", 3,
         {n: _u(F1) for n in ("node1", "node2", "node3")},
         "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. "
         "Error running PostFilter plugin FailedPostFilter",
         post_filter_msg=POST),
    Case("nodes failed two Filter plugins with an empty PostFilterMsg", 3,
         {"node1": _u(F1), "node2": _u(F1), "node3": _u(F2)},
         "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
         "2 Node(s) failed Filter plugin FalseFilter-1."),
    Case("nodes failed two Filter plugins with a non-empty PostFilterMsg", 3,
         {"node1": _u(F1), "node2": _u(F1), "node3": _u(F2)},
         "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
         "2 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin FailedPostFilter",
         post_filter_msg=POST),
    Case("failed to Permit on node", 1, {"node1": _u("Node failed Permit plugin Permit-1")},
         "0/1 nodes are available: 1 Node failed Permit plugin Permit-1."),
    Case("failed to Reserve on node", 1, {"node1": _u("Node failed Reserve plugin Reserve-1")},
         "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1."),
]

HAND = [
    # Upstream's headline example: every node short of cpu.
    Case("three nodes short of cpu", 3, {n: _u("Insufficient cpu") for n in ("a", "b", "c")},
         "0/3 nodes are available: 3 Insufficient cpu."),
    # Several reasons on one node each count once; the histogram is sorted as strings.
    Case("several reasons per node", 3,
         {"a": Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"),
          "b": _u("Insufficient memory"),
          "c": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {k: v}")},
         "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {k: v}, "
         "2 Insufficient memory."),
    # Sorting is lexicographic on the whole "<count> <reason>" string: "10 x" sorts before "2 y".
    Case("string sort of counts", 12,
         {**{f"n{i}": _u("x") for i in range(10)}, "m1": _u("y"), "m2": _u("y")},
         "0/12 nodes are available: 10 x, 2 y."),
    # Nodes absent from the map (filtered out by a PreFilter result) get the absent status.
    Case("absent nodes counted with the absent status", 3, {"a": _u("nope")},
         "0/3 nodes are available: 1 nope, 2 node(s) didn't satisfy plugin(s) [A].",
         absent=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [A]")),
    # Upstream only appends the histogram when it has entries.
    Case("no reasons at all", 2, {"a": Status(Code.UNSCHEDULABLE), "b": Status(Code.UNSCHEDULABLE)},
         "0/2 nodes are available:"),
    Case("no reasons, then a PostFilter message", 2,
         {"a": Status(Code.UNSCHEDULABLE), "b": Status(Code.UNSCHEDULABLE)},
         "0/2 nodes are available: preemption: not eligible", post_filter_msg="preemption: not eligible"),
]


@pytest.mark.parametrize("case", UPSTREAM + HAND, ids=lambda c: c.name)
def test_fit_error_message(case: Case) -> None:
    d = Diagnosis()
    d.node_to_status = dict(case.node_to_status)
    d.absent_status = case.absent
    d.pre_filter_msg = case.pre_filter_msg
    d.post_filter_msg = case.post_filter_msg
    err = FitError(PodInfo(make_pod("p").obj()), case.num_all_nodes, d)
    assert str(err) == case.want
