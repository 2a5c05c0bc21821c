"""How many feasible nodes a cycle looks for, and where the search starts.

Ported from pkg/scheduler/schedule_one_test.go: ``TestNumFeasibleNodesToFind`` (table) and
``TestFairEvaluationForNodes`` (the start index rotates by the number of nodes processed, so every
node gets its turn). Profile-level percentageOfNodesToScore overriding the global one is
hand-computed from ``numFeasibleNodesToFind``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sched_fakes import fake

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.scheduler import num_feasible_nodes_to_find
from kubesched.scheduler.schedule_one import _first_feasible
from kubesched.testing import TestFramework, make_node, make_pod, new_framework


@pytest.mark.parametrize(("percentage", "num_all_nodes", "want"), [
    (0, 10, 10),        # not set, nodes not more than 50
    (40, 10, 10),       # set, nodes not more than 50
    (0, 1000, 420),     # not set, more than 50: 50 - 1000/125 = 42 %
    (40, 1000, 400),    # set, more than 50
    (0, 6000, 300),     # not set, more than 50*125: at least 5 %
    (40, 6000, 2400),   # set, more than 50*125
    # hand-computed edges
    (0, 99, 99),        # below minFeasibleNodesToFind: every node
    (0, 100, 100),      # 50 % of 100 = 50, but at least 100
    (1, 5000, 100),     # 1 % of 5000 = 50, but at least 100
    (100, 5000, 5000),
])
def test_num_feasible_nodes_to_find(percentage: int, num_all_nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(percentage, num_all_nodes) == want


def _cluster(n: int, *plugins: Any, **config: Any) -> TestFramework:
    fw = new_framework(list(plugins), nodes=[make_node(str(i)).capacity(cpu="4").obj() for i in range(n)])
    for k, v in config.items():
        setattr(fw.scheduler.config, k, v)
    fw.refresh()
    return fw


def _find(fw: TestFramework) -> list[str]:
    feasible, _ = fw.scheduler.find_nodes_that_fit_pod(fw.framework, CycleState(), fw.pod_info(make_pod("p").obj()))
    return [ni.name for ni in feasible]


TRUE_FILTER = fake("TrueFilter", filter=lambda s, p, ni: None)


@pytest.mark.parametrize("plugins", [
    [TRUE_FILTER],          # per-node Filter
    ["NodeResourcesFit"],   # batch Filter over the node table
    [],                     # no Filter plugin at all
], ids=["per-node", "batch", "no-filter"])
def test_fair_evaluation_for_nodes(plugins: list[Any]) -> None:
    n = 500
    fw = _cluster(n, *plugins, percentage_of_nodes_to_score=30)  # 500 % 150 != 0
    to_find = num_feasible_nodes_to_find(30, n)
    assert to_find == 150
    for i in range(2 * (n // to_find + 1)):  # more than twice round the node list
        start = i * to_find % n
        got = _find(fw)
        assert got == [str((start + k) % n) for k in range(to_find)]
        assert fw.scheduler.next_start_node_index == (i + 1) * to_find % n


def test_start_index_advances_by_processed_nodes_including_rejected_ones() -> None:
    odd_only = fake("OddOnly",
                    filter=lambda s, p, ni: None if int(ni.name) % 2 else Status(Code.UNSCHEDULABLE, "even"))
    fw = _cluster(500, odd_only, percentage_of_nodes_to_score=30)
    got = _find(fw)
    assert got == [str(k) for k in range(1, 300, 2)]  # 150 feasible nodes found among the first 300
    assert fw.scheduler.next_start_node_index == 300  # nodes 0..299: 150 rejected + 150 feasible


def test_small_clusters_evaluate_every_node() -> None:
    reject_3 = fake("Reject3", filter=lambda s, p, ni: Status(Code.UNSCHEDULABLE, "no") if ni.name == "3" else None)
    fw = _cluster(10, reject_3)
    assert _find(fw) == [str(k) for k in range(10) if k != 3]
    assert fw.scheduler.next_start_node_index == 0  # (0 + 10) % 10


def test_profile_percentage_overrides_the_global_one() -> None:
    fw = _cluster(1000, TRUE_FILTER, percentage_of_nodes_to_score=10)
    assert len(_find(fw)) == 100  # global 10 %: 100 nodes
    fw.framework.profile.percentage_of_nodes_to_score = 40
    assert len(_find(fw)) == 400
    fw.framework.profile.percentage_of_nodes_to_score = None
    fw.scheduler.config.percentage_of_nodes_to_score = 0
    assert len(_find(fw)) == 420  # adaptive: 50 - 1000/125 = 42 %


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_first_feasible_is_the_rotated_walk(data: st.DataObject) -> None:
    # The walk from the start index without rotating: the same rows, in the same order, and the
    # same count of positions examined as scanning the rotated mask (upstream's walk).
    n = data.draw(st.integers(1, 60))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.bool_)
    indices = np.array(data.draw(st.permutations(range(100, 100 + n))), dtype=np.intp)
    start = data.draw(st.integers(0, n - 1))
    to_find = data.draw(st.integers(1, n + 2))
    order, rotated = np.roll(indices, -start), np.roll(mask, -start)
    pos = np.flatnonzero(rotated)
    cut = n
    if len(pos) >= to_find:
        pos = pos[:to_find]
        cut = int(pos[-1]) + 1
    rows, examined = _first_feasible(indices, mask, start, to_find)
    assert rows.tolist() == order[pos].tolist()
    assert examined == cut


def _find_nominated(fw: TestFramework, nominated: str) -> tuple[list[str], Any]:
    pod = make_pod("p").nominated_node(nominated).obj()
    feasible, diagnosis = fw.scheduler.find_nodes_that_fit_pod(fw.framework, CycleState(), fw.pod_info(pod))
    return [ni.name for ni in feasible], diagnosis


REJECT_7 = fake("Reject7", filter=lambda s, p, ni: Status(Code.UNSCHEDULABLE, "seven") if ni.name == "7" else None)
REJECT_120 = fake("Reject120",
                  filter=lambda s, p, ni: Status(Code.UNSCHEDULABLE, "one twenty") if ni.name == "120" else None)


@pytest.mark.parametrize("plugins", [[REJECT_120], [REJECT_120, "NodeResourcesFit"]], ids=["per-node", "with-batch"])
def test_a_failed_nominated_node_outside_the_walk_counts_as_processed(plugins: list[Any]) -> None:
    """schedule_one.go (v1.35.4, v1.37.2): evaluateNominatedNode gets a copy of the Diagnosis whose
    NodeToStatus is a shared map, so the nominated node's failure stays in it: ``processedNodes =
    len(feasible) + NodeToStatus.Len()`` counts it although the walk (start 0, 100 of 150 nodes to
    find) never reached node 120. Hand-computed: 100 feasible + 1 = 101."""
    fw = _cluster(150, *plugins, percentage_of_nodes_to_score=50)
    assert num_feasible_nodes_to_find(50, 150) == 100
    got, diagnosis = _find_nominated(fw, "120")
    assert got == [str(k) for k in range(100)]
    assert fw.scheduler.next_start_node_index == 101
    assert diagnosis.node_to_status["120"].reasons == ["one twenty"]
    assert "Reject120" in diagnosis.unschedulable_plugins


@pytest.mark.parametrize("plugins", [[REJECT_7], [REJECT_7, "NodeResourcesFit"]], ids=["per-node", "with-batch"])
def test_a_failed_nominated_node_inside_the_walk_counts_once(plugins: list[Any]) -> None:
    """The walk rejects node 7 again and writes the same map entry: 100 feasible + 1 rejected = 101."""
    fw = _cluster(150, *plugins, percentage_of_nodes_to_score=50)
    got, _ = _find_nominated(fw, "7")
    assert got == [str(k) for k in range(101) if k != 7]
    assert fw.scheduler.next_start_node_index == 101


def test_a_failed_nominated_node_batch_rejected_in_the_walk_counts_once() -> None:
    """The same with the batch Filter as the rejecter (node 7 is too small): the fast walk's count
    of rejected positions already holds it."""
    nodes = [make_node(str(i)).capacity(cpu="1" if i == 7 else "4").obj() for i in range(150)]
    fw = new_framework(["NodeResourcesFit"], nodes=nodes)
    fw.scheduler.config.percentage_of_nodes_to_score = 50
    fw.refresh()
    pod = make_pod("p").req(cpu="2").nominated_node("7").obj()
    feasible, diagnosis = fw.scheduler.find_nodes_that_fit_pod(fw.framework, CycleState(), fw.pod_info(pod))
    assert [ni.name for ni in feasible] == [str(k) for k in range(101) if k != 7]
    assert fw.scheduler.next_start_node_index == 101
    assert diagnosis.node_to_status["7"].reasons == ["Insufficient cpu"]


def test_a_failed_nominated_node_left_out_by_prefilter_keeps_its_filter_status() -> None:
    """A PreFilter result without the nominated node: the walk never sees it, its Filter status
    stays in the diagnosis, and the others get the absent-nodes status (hand-computed: 10 nodes,
    PreFilter keeps 0..4, every kept node is rejected, the nominated node 8 by its own reason)."""
    from kubesched.framework.interfaces import PreFilterResult

    keep = fake("KeepLow", pre_filter=lambda s, p, nodes: (PreFilterResult({str(i) for i in range(5)}), None))
    reject_all = fake("RejectAll", filter=lambda s, p, ni: Status(Code.UNSCHEDULABLE, f"no {ni.name == '8'}"))
    fw = _cluster(10, keep, reject_all)
    got, diagnosis = _find_nominated(fw, "8")
    assert got == []
    assert set(diagnosis.node_to_status) == {"0", "1", "2", "3", "4", "8"}
    assert diagnosis.node_to_status["8"].reasons == ["no True"]
    assert fw.scheduler.next_start_node_index == 6  # 0 feasible + 6 statuses
