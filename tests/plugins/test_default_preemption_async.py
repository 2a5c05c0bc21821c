"""Asynchronous preemption (``SchedulerAsyncPreemption``): the Evaluator's background path and
DefaultPreemption's PreEnqueue.

Ported from pkg/scheduler/framework/preemption/preemption_test.go (v1.33-v1.35):
``TestPrepareCandidate`` with async preemption on (the preemptor is marked as preempting as soon as
``prepareCandidateAsync`` returns, never after the job; the preemptor is activated when an API call
failed), ``TestPrepareCandidateAsyncSetsPreemptingSets`` (every victim but the last is preempted
while the preemptor is marked, the last one last) and ``TestAsyncPreemptionFailure`` (after a
failed victim the last one is not attempted); and from
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go ``PreEnqueue`` (its
message) and ``TestPreempt``'s async cases (the same nominated node and victims).

The background job runs as the backend's ``submit`` runs it: here a zero-delay event on the
virtual clock, or a recorded callable run by the test, so the state in between can be looked at.
Victims are preempted one after another (upstream: all but the last in parallel), so where
upstream's parallel calls could also touch a later victim after a failure, ours stop at the first.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from test_default_preemption import (
    FIT,
    HIGH,
    LOW,
    PREEMPT,
    PREPARE,
    ClientSwap,
    FakeClient,
    N,
    P,
    PreemptCase,
    PrepareCase,
    _victim,
    setup,
)

from kubesched.framework.clock import RealClock, VirtualClock
from kubesched.framework.events import QueueingHint
from kubesched.framework.preemption import Candidate, NodeToStatus
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.defaultpreemption.default_preemption import MSG_WAITING_FOR_PREEMPTION
from kubesched.testing import make_node, make_pod, new_framework

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


class AsyncSwap(ClientSwap):
    """The handle with a recording client whose ``submit`` keeps the job for the test to run,
    and an ``activate`` that records the pods it is given."""

    def __init__(self, handle: Any, client: FakeClient) -> None:
        super().__init__(handle, client)
        self.jobs: list[Callable[[], None]] = []
        self.activated: list[str] = []
        client.submit = self.jobs.append  # type: ignore[attr-defined]

    def activate(self, pods: Any) -> None:
        self.activated += [p["metadata"]["name"] for p in pods]

    def run_jobs(self) -> None:
        jobs, self.jobs[:] = list(self.jobs), []
        for job in jobs:
            job()


def async_env(victims_node: str = "node1") -> tuple[Any, AsyncSwap, FakeClient]:
    env = setup([], [N(victims_node)])
    client = FakeClient()
    handle = AsyncSwap(env.pl.handle, client)
    env.pl.evaluator.handle = handle
    env.pl.evaluator.async_preemption = True
    return env, handle, client


# ------------------------------------------------------------------------------------------------
# TestPrepareCandidate, async preemption on
# ------------------------------------------------------------------------------------------------
#: Upstream's expectedPreemptingMap: the preemptor is marked unless no API call is needed.
NOT_MARKED = {"no victims", "one victim, but victim is already being deleted"}


@pytest.mark.parametrize("case", PREPARE, ids=lambda c: c.name)
def test_prepare_candidate_async(case: PrepareCase) -> None:
    env, handle, client = async_env()
    preemptor = PodInfo(P("preemptor", prio=HIGH))
    ev = env.pl.evaluator
    ev.prepare_candidate_async(Candidate("node1", case.victims), preemptor)
    # Marked synchronously, and nothing has been called yet.
    assert ev.is_pod_running_preemption(preemptor.uid) == (case.name not in NOT_MARKED)
    assert (client.patched, client.deleted) == ([], [])
    handle.run_jobs()
    assert not ev.is_pod_running_preemption(preemptor.uid)
    assert client.patched == case.patched
    assert client.deleted == case.deleted
    # expectedActivatedPods: the preemptor, exactly when an API call failed.
    assert handle.activated == (["preemptor"] if case.want is not None else [])
    events = [e.note for e in env.tf.cluster.events if e.reason == "Preempted"]
    assert events == ["Preempted by pod preemptor on node node1" for _ in case.deleted]


# ------------------------------------------------------------------------------------------------
# TestPrepareCandidateAsyncSetsPreemptingSets
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
def test_every_victim_but_the_last_is_preempted_while_the_preemptor_is_marked(n: int) -> None:
    env, handle, client = async_env()
    ev = env.pl.evaluator
    preemptor = PodInfo(P("preemptor", prio=HIGH))
    victims = [PodInfo(P(f"victim{i + 1}", uid=f"victim{i + 1}", node="node1", prio=LOW)) for i in range(n)]
    calls: list[tuple[str, bool]] = []
    real: Callable[[Candidate, PodInfo, PodInfo], str | None] = ev.preempt_pod

    def spy(c: Candidate, p: PodInfo, v: PodInfo) -> str | None:
        calls.append((v.name, ev.is_pod_running_preemption(p.uid)))
        return real(c, p, v)

    ev.preempt_pod = spy
    assert not ev.is_pod_running_preemption(preemptor.uid)
    ev.prepare_candidate_async(Candidate("node1", victims), preemptor)
    handle.run_jobs()
    # Unmarked before the last victim's deletion, whose event must find the pod unmarked.
    assert calls == [(f"victim{i + 1}", i < n - 1) for i in range(n)]
    assert client.deleted == [f"victim{i + 1}" for i in range(n)]
    assert not ev.is_pod_running_preemption(preemptor.uid)


# ------------------------------------------------------------------------------------------------
# TestAsyncPreemptionFailure
# ------------------------------------------------------------------------------------------------
@dataclass
class FailureCase:
    name: str
    victims: list[str]
    successful: bool
    last_attempted: bool


FAILURES = [
    FailureCase("Failure with a single victim", ["fail-victim"], False, True),
    FailureCase("Success with a single victim", ["victim1"], True, True),
    FailureCase("Failure in first of three victims", ["fail-victim", "victim2", "victim3"], False, False),
    FailureCase("Failure in second of three victims", ["victim1", "fail-victim", "victim3"], False, False),
    FailureCase("Failure in first two of three victims", ["fail-victim", "fail-victim", "victim3"], False, False),
    FailureCase("Failure in third of three victims", ["victim1", "victim2", "fail-victim"], False, True),
    FailureCase("Success with three victims", ["victim1", "victim2", "victim3"], True, True),
]


@pytest.mark.parametrize("case", FAILURES, ids=lambda c: c.name)
def test_async_preemption_failure(case: FailureCase) -> None:
    env, handle, _ = async_env()
    ev = env.pl.evaluator
    preemptor = PodInfo(P("preemptor", prio=HIGH))
    victims = [PodInfo(P(name, uid=f"{name}-{i}", node="node1", prio=LOW)) for i, name in enumerate(case.victims)]
    attempted: list[str] = []
    real: Callable[[Candidate, PodInfo, PodInfo], str | None] = ev.preempt_pod

    def spy(c: Candidate, p: PodInfo, v: PodInfo) -> str | None:
        attempted.append(v.uid)
        return real(c, p, v)

    ev.preempt_pod = spy
    ev.prepare_candidate_async(Candidate("node1", victims), preemptor)
    handle.run_jobs()
    assert (victims[-1].uid in attempted) == case.last_attempted
    assert handle.activated == ([] if case.successful else ["preemptor"])
    assert not ev.is_pod_running_preemption(preemptor.uid)
    reg = env.tf.scheduler.metrics.registry
    result = "success" if case.successful else "error"
    assert reg.get_sample_value("scheduler_preemption_goroutines_execution_total", {"result": result}) == 1
    assert reg.get_sample_value("scheduler_preemption_goroutines_duration_seconds_count", {"result": result}) == 1


def test_an_exception_in_the_job_still_unmarks_and_activates() -> None:
    env, handle, _ = async_env()
    ev = env.pl.evaluator
    preemptor = PodInfo(P("preemptor", prio=HIGH))

    def boom(c: Candidate, p: PodInfo, v: PodInfo) -> str | None:
        raise RuntimeError("boom")

    ev.preempt_pod = boom
    ev.prepare_candidate_async(Candidate("node1", [_victim("victim1")]), preemptor)
    handle.run_jobs()
    assert not ev.is_pod_running_preemption(preemptor.uid)
    assert handle.activated == ["preemptor"]


# ------------------------------------------------------------------------------------------------
# TestPreempt, async preemption on
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", PREEMPT, ids=lambda c: c.name)
def test_preempt_async(case: PreemptCase) -> None:
    env = setup([case.plugin], [N(n) for n in case.node_names], case.pods, preemptor=case.pod)
    env.pl.evaluator.async_preemption = True
    state = env.pre_filter(case.pod)
    all_unschedulable = NodeToStatus({n.split("/")[0]: Status(U) for n in case.node_names})
    pi = env.tf.pod_info(case.pod)
    res, status = env.pl.evaluator.preempt(state, pi, all_unschedulable)
    assert res == case.want
    if case.want is not None:
        # PostFilter answers at once: the node is nominated, the victims are still there.
        assert status.is_success()
        assert env.deleted() == set()
        assert env.pl.pre_enqueue(pi) == Status(UU, MSG_WAITING_FOR_PREEMPTION)
    env.tf.clock.run_due()  # the zero-delay job submitted to the simulated backend
    assert sorted(env.deleted()) == sorted(case.expected_pods)
    assert env.pl.pre_enqueue(pi) is None


# ------------------------------------------------------------------------------------------------
# PreEnqueue, the queueing hint, the choice of path
# ------------------------------------------------------------------------------------------------
def test_pre_enqueue_and_hint_follow_the_preempting_set() -> None:
    env, handle, _ = async_env()
    pl = env.pl
    preemptor = P("preemptor", prio=HIGH)
    pi = PodInfo(preemptor)
    assert pl.pre_enqueue(pi) is None
    pl.evaluator.prepare_candidate_async(Candidate("node1", [_victim("victim1")]), pi)
    st = pl.pre_enqueue(pi)
    assert st is not None and (st.code, st.message()) == (UU, "waiting for the preemption for this pod to be finished")
    (ewh,) = pl.events_to_register()
    assert str(ewh.event) == "PodDelete"
    assert ewh.hint is not None
    assert ewh.hint(preemptor, _victim("victim1").pod, None) == QueueingHint.QUEUE_SKIP
    handle.run_jobs()
    assert pl.pre_enqueue(pi) is None
    assert ewh.hint(preemptor, _victim("victim1").pod, None) == QueueingHint.QUEUE


def test_the_virtual_clock_keeps_preemption_synchronous() -> None:
    env = setup([], [N("node1")])
    ev = env.pl.evaluator
    assert ev.async_preemption is None
    assert isinstance(env.tf.clock, VirtualClock)
    assert not ev.is_async()
    ev.handle = ClientSwap(env.pl.handle, FakeClient())
    real = RealClock()
    try:
        ev.handle.clock = real
        assert ev.is_async()
    finally:
        real.stop()
    ev.async_preemption = False
    assert not ev.is_async()


# ------------------------------------------------------------------------------------------------
# through the scheduler and its queue
# ------------------------------------------------------------------------------------------------
def _node(name: str) -> dict[str, Any]:
    return make_node(name).capacity(cpu="2", memory="8Gi").obj()


def _pod(name: str, prio: int, node: str = "") -> dict[str, Any]:
    w = make_pod(name).req(cpu="1").priority(prio)
    if node:
        w.node(node)
    return w.obj()


def test_scheduler_with_async_preemption_gates_the_preemptor_until_its_victims_are_gone() -> None:
    pods = [_pod("v1", LOW, "n1"), _pod("v2", LOW, "n1")]
    fw = new_framework([FIT, "DefaultPreemption"], nodes=[_node("n1")], pods=copy.deepcopy(pods))
    pl = fw.plugin("DefaultPreemption")
    pl.evaluator.async_preemption = True
    queue = fw.scheduler.queue
    hi = make_pod("hi").req(cpu="2").priority(HIGH).obj()
    fw.add_pod(hi)
    assert fw.scheduler.schedule_one()  # fails, preempts in the background, nominates n1
    uid = fw.cluster.pods["default/hi"]["metadata"]["uid"]
    assert pl.evaluator.is_pod_running_preemption(uid)
    assert fw.cluster.pods["default/hi"]["status"]["nominatedNodeName"] == "n1"
    assert {"default/v1", "default/v2"} <= set(fw.cluster.pods)
    # Forced back while its preemption runs: held at PreEnqueue by DefaultPreemption.
    queue.activate([fw.cluster.pods["default/hi"]])
    ((qpi, where),) = [(q, w) for q, w in queue.pending_pods() if q.pod_info.name == "hi"]
    assert (where, qpi.gating_plugin) == ("gated", "DefaultPreemption")
    fw.schedule()
    assert not pl.evaluator.is_pod_running_preemption(uid)
    assert {h["name"]: h["deletedReason"] for h in fw.cluster.history.values() if h["deletedReason"]} == {
        "v1": "Preempted",
        "v2": "Preempted",
    }
    assert fw.cluster.history["default/hi"]["node"] == "n1"
