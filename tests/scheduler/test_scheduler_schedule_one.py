"""The scheduling and binding cycles end to end, on the simulated cluster with a virtual clock.

Pinned against pkg/scheduler/schedule_one.go and its schedule_one_test.go (``TestSchedulerScheduleOne``,
``TestSchedulerFailedSchedulingReasons``, ``TestSchedulerWithVolumeBinding`` failure paths,
``TestPreferNominatedNodeFilterCallCounts``): FailedScheduling events and PodScheduled conditions,
Reserve/Permit failures unreserving in reverse order and forgetting the assumed pod, PreBind/Bind
failures going back to the queue with backoff, exceptions never losing a pod or binding it twice.
"""

from __future__ import annotations

from typing import Any

import pytest
from sched_fakes import bound_at, condition, fake, node_of, notes, queued

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NominatingInfo, PodInfo, PostFilterResult, PreFilterResult
from kubesched.plugins.registry import default_registry
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

T0 = 1767225600.0
N3 = ("n1", "n2", "n3")
U = Code.UNSCHEDULABLE


def cluster(*plugins: Any, nodes: tuple[str, ...] = N3, cpu: str = "4") -> TestFramework:
    return new_framework(list(plugins), nodes=[make_node(n).capacity(cpu=cpu, memory="8Gi").obj() for n in nodes])


def add(fw: TestFramework, *names: str, **req: Any) -> None:
    for n in names:
        fw.add_pod((make_pod(n).req(**req) if req else make_pod(n)).obj())


def reserver(name: str, log: list[str], status: Status | None = None) -> type:
    return fake(
        name,
        reserve=lambda s, p, n: (log.append(f"reserve {name}"), status)[1],
        unreserve=lambda s, p, n: log.append(f"unreserve {name}"),
    )


def requested_cpu(fw: TestFramework) -> int:
    return sum(ni.requested.milli_cpu for ni in fw.nodes())


# ---------------------------------------------------------------------------------------------
# FailedScheduling messages
# ---------------------------------------------------------------------------------------------
def test_insufficient_cpu_on_every_node() -> None:
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node(n).capacity(cpu="1").obj() for n in N3])
    add(fw, "p", cpu="2")
    fw.schedule()
    want = "0/3 nodes are available: 3 Insufficient cpu."
    assert notes(fw, "p") == [want]
    assert condition(fw, "p") == {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                  "message": want}
    where = queued(fw, "p")
    assert where is not None
    assert (where[0], where[1].unschedulable_plugins) == ("unschedulable", {"NodeResourcesFit"})


def test_sorted_histogram_with_several_reasons() -> None:
    nodes = [
        make_node("n1").capacity(cpu="1", memory="8Gi").obj(),
        make_node("n2").capacity(cpu="4", memory="1Gi").obj(),
        make_node("n3").capacity(cpu="1", memory="1Gi").obj(),
    ]
    fw = new_framework(["NodeResourcesFit"], nodes=nodes)
    add(fw, "p", cpu="2", memory="2Gi")
    fw.schedule()
    assert notes(fw, "p") == ["0/3 nodes are available: 2 Insufficient cpu, 2 Insufficient memory."]


def test_pre_filter_rejection_message_form() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (None, Status(U, "pod is not ready")))
    fw = cluster(a)
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p") == ["0/3 nodes are available: pod is not ready."]
    where = queued(fw, "p")
    assert where is not None and where[1].unschedulable_plugins == {"A"}


def test_pre_filter_disjoint_results_reject_with_every_narrowing_plugin() -> None:
    zeta = fake("Zeta", pre_filter=lambda s, p, n: (PreFilterResult({"n1"}), None))
    alpha = fake("Alpha", pre_filter=lambda s, p, n: (PreFilterResult({"n2"}), None))
    fw = cluster(zeta, alpha)
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p") == [
        "0/3 nodes are available: node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously."
    ]
    where = queued(fw, "p")
    assert where is not None
    # Either plugin's events may help: upstream records every plugin that narrowed the nodes.
    assert where[1].unschedulable_plugins == {"Alpha", "Zeta"}


def test_pre_filter_narrowing_gives_absent_nodes_their_message() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (PreFilterResult({"n1", "ghost"}), None))
    b = fake("B", filter=lambda s, p, ni: Status(U, "nope"))
    fw = cluster(a, b)
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p") == ["0/3 nodes are available: 1 nope, 2 node(s) didn't satisfy plugin(s) [A]."]
    where = queued(fw, "p")
    assert where is not None and where[1].unschedulable_plugins == {"A", "B"}


def test_pre_filter_result_narrows_the_candidates() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (PreFilterResult({"n1", "n3"}), None))
    b = fake("B", pre_filter=lambda s, p, n: (PreFilterResult({"n2", "n3"}), None))
    fw = cluster(a, b)
    add(fw, "p")
    fw.schedule()
    assert node_of(fw, "p") == "n3"


def test_no_nodes_at_all() -> None:
    fw = new_framework([], nodes=[])
    add(fw, "p")
    fw.schedule()
    # No rejecting plugin: retried with the error backoff (1, 2, 4, 8 s); the simulation stops
    # once the backoff is at its maximum and nothing in the cluster changed.
    assert notes(fw, "p") == ["no nodes available to schedule pods"] * 5
    assert [e.time - T0 for e in fw.cluster.events] == [0, 1, 3, 7, 15]
    assert fw.clock.now() == T0 + 15
    assert condition(fw, "p")["reason"] == "Unschedulable"
    # A node arriving lets the pod schedule once its backoff (10 s) is over.
    fw.add_node(make_node("n1").capacity(cpu="1").obj())
    fw.schedule()
    assert node_of(fw, "p") == "n1"
    assert bound_at(fw, "p") == T0 + 25


def test_pre_filter_error_is_a_scheduler_error_with_backoff() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (None, Status(Code.ERROR, "boom")))
    fw = cluster(a)
    add(fw, "p")
    fw.schedule(until=T0 + 0.5)
    assert notes(fw, "p") == ['running PreFilter plugin "A": boom']
    assert condition(fw, "p")["reason"] == "SchedulerError"
    where = queued(fw, "p")
    assert where is not None and where[0] == "backoff"
    assert where[1].unschedulable_plugins == set()


# ---------------------------------------------------------------------------------------------
# PostFilter
# ---------------------------------------------------------------------------------------------
def test_post_filter_runs_only_when_nothing_fits_and_its_message_is_appended() -> None:
    seen: list[dict[str, str]] = []

    def post_filter(s: Any, p: Any, statuses: Any) -> Any:
        seen.append({n: st.message() for n, st in statuses.items()})
        return None, Status(U, "preemption: 0/3 nodes are available: 3 No preemption victims found for "
                               "incoming pod.")

    f = fake("F", filter=lambda s, p, ni: Status(U, "nope") if p.name == "stuck" else None)
    fw = cluster(f, fake("PF", post_filter=post_filter))
    add(fw, "ok", "stuck")
    fw.schedule()
    assert node_of(fw, "ok") is not None
    assert seen == [{"n1": "nope", "n2": "nope", "n3": "nope"}]
    # upstream's double period comes from the nested preemption message.
    assert notes(fw, "stuck") == [
        "0/3 nodes are available: 3 nope. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    ]


def test_post_filter_nomination_is_recorded() -> None:
    f = fake("F", filter=lambda s, p, ni: Status(U, "full"))
    pf = fake("PF", post_filter=lambda s, p, m: (PostFilterResult(NominatingInfo("n2")), None))
    fw = cluster(f, pf)
    add(fw, "p")
    fw.schedule()
    assert fw.cluster.pods["default/p"]["status"]["nominatedNodeName"] == "n2"
    assert [p.name for p in fw.scheduler.queue.nominated_pods_for_node("n2")] == ["p"]


def _filter_calls(pod: dict[str, Any], failing: set[str]) -> list[str]:
    calls: list[str] = []

    def filt(s: Any, p: Any, ni: Any) -> Status | None:
        calls.append(ni.name)
        return Status(U, "no") if ni.name in failing else None

    fw = cluster(fake("F", filter=filt))
    fw.add_pod(pod)
    fw.schedule()
    return calls


@pytest.mark.parametrize(("pod", "failing", "want"), [
    (make_pod("p").nominated_node("n1").obj(), set(), ["n1"]),
    (make_pod("p").obj(), set(), ["n1", "n2", "n3"]),
    (make_pod("p").nominated_node("n1").obj(), {"n1"}, ["n1", "n1", "n2", "n3"]),
], ids=["nominated node passes: one call", "no nomination: every node", "nominated node fails: then all"])
def test_nominated_node_is_tried_first(pod: dict[str, Any], failing: set[str], want: list[str]) -> None:
    # Ported from TestPreferNominatedNodeFilterCallCounts (call counts 1, 3, 4).
    assert _filter_calls(pod, failing) == want


# ---------------------------------------------------------------------------------------------
# Score
# ---------------------------------------------------------------------------------------------
def test_highest_weighted_score_wins() -> None:
    a = fake("A", score=lambda s, p, ni: ({"n1": 10, "n2": 90, "n3": 50}[ni.name], None))
    fw = cluster(a)
    add(fw, "p")
    fw.schedule()
    assert node_of(fw, "p") == "n2"


def test_scoring_is_skipped_with_a_single_feasible_node() -> None:
    def never(*a: Any) -> Any:
        raise AssertionError("PreScore/Score must not run for a single feasible node")

    f = fake("F", filter=lambda s, p, ni: None if ni.name == "n3" else Status(U, "no"))
    fw = cluster(f, fake("S", pre_score=never, score=never))
    add(fw, "p")
    fw.schedule()
    assert node_of(fw, "p") == "n3"


# ---------------------------------------------------------------------------------------------
# Reserve / Permit
# ---------------------------------------------------------------------------------------------
def test_reserve_failure_unreserves_everything_in_reverse_and_forgets() -> None:
    log: list[str] = []
    fw = cluster(reserver("R1", log), reserver("R2", log, Status(U, "no room")), reserver("R3", log))
    add(fw, "p", cpu="1")
    fw.schedule()
    assert log == ["reserve R1", "reserve R2", "unreserve R3", "unreserve R2", "unreserve R1"]
    assert notes(fw, "p") == ["0/1 nodes are available: 1 no room."]
    assert fw.scheduler.cache.assumed_count() == 0
    assert requested_cpu(fw) == 0
    where = queued(fw, "p")
    assert where is not None and where[0] == "unschedulable" and where[1].unschedulable_plugins == {"R2"}


def test_reserve_error_goes_to_backoff() -> None:
    log: list[str] = []
    fw = cluster(reserver("R1", log, Status(Code.ERROR, "boom")))
    add(fw, "p")
    fw.schedule(until=T0 + 0.5)
    assert notes(fw, "p") == ['running Reserve plugin "R1": boom']
    assert log == ["reserve R1", "unreserve R1"]
    where = queued(fw, "p")
    assert where is not None and where[0] == "backoff"


def test_permit_wait_then_timeout() -> None:
    log: list[str] = []
    p = fake("P", permit=lambda s, pod, n: (Status(Code.WAIT), 10))
    fw = cluster(p, reserver("R", log))
    add(fw, "p", cpu="1")
    fw.schedule(until=T0 + 9)
    assert node_of(fw, "p") is None
    assert notes(fw, "p") == []
    assert fw.scheduler.cache.assumed_count() == 1  # the assumed pod holds its resources meanwhile
    assert requested_cpu(fw) == 1000
    fw.schedule()
    assert notes(fw, "p") == ["0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin P."]
    assert [e.time for e in fw.cluster.events if e.name == "p"] == [T0 + 10]
    assert log == ["reserve R", "unreserve R"]
    assert fw.scheduler.cache.assumed_count() == 0
    assert requested_cpu(fw) == 0
    where = queued(fw, "p")
    assert where is not None and where[1].unschedulable_plugins == {"P"}


class Gang:
    """Waits for a second pod; that pod's Permit allows the first through the handle."""

    name = "Gang"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
        waiting: list[Any] = []
        self.handle.iterate_over_waiting_pods(waiting.append)
        if not waiting:
            return Status(Code.WAIT), 30
        for wp in waiting:
            wp.allow(self.name)
        return None, 0


def test_permit_allowed_by_another_pod_through_the_handle() -> None:
    fw = cluster(Gang)
    add(fw, "a")
    fw.schedule(until=T0 + 5)
    assert node_of(fw, "a") is None
    add(fw, "b")
    fw.schedule()
    assert (bound_at(fw, "a"), bound_at(fw, "b")) == (T0 + 5, T0 + 5)
    assert notes(fw, "a") == []


def test_lone_gang_member_times_out() -> None:
    fw = cluster(Gang)
    add(fw, "a")
    fw.schedule()
    assert notes(fw, "a") == ["0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gang."]


def test_waiting_pod_rejected_through_the_handle() -> None:
    class Evict:
        name = "Evict"

        def __init__(self, args: Any, handle: Any) -> None:
            self.handle = handle

        def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
            if pod.name == "victim":
                return Status(Code.WAIT), 60
            wp = [w for w in _waiting(self.handle) if w.pod_info.name == "victim"]
            assert self.handle.reject_waiting_pod(wp[0].pod_info.uid)
            return None, 0

    fw = cluster(Evict)
    add(fw, "victim")
    fw.schedule(until=T0 + 1)
    add(fw, "killer")
    fw.schedule(until=T0 + 2)
    assert notes(fw, "victim") == ["0/1 nodes are available: 1 removed."]
    assert node_of(fw, "killer") is not None


def _waiting(handle: Any) -> list[Any]:
    out: list[Any] = []
    handle.iterate_over_waiting_pods(out.append)
    return out


def test_permit_rejection_and_error() -> None:
    log: list[str] = []
    fw = cluster(fake("P", permit=lambda s, p, n: (Status(U, "quota exceeded"), 0)), reserver("R", log))
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p") == ["0/1 nodes are available: 1 quota exceeded."]
    assert log == ["reserve R", "unreserve R"]
    fw = cluster(fake("P", permit=lambda s, p, n: (Status(Code.ERROR, "boom"), 0)))
    add(fw, "p")
    fw.schedule(until=T0 + 0.5)
    assert notes(fw, "p") == ['running Permit plugin "P": boom']


def test_pod_deleted_while_waiting_is_rejected_at_once_and_not_requeued() -> None:
    log: list[str] = []
    fw = cluster(fake("P", permit=lambda s, p, n: (Status(Code.WAIT), 60)), reserver("R", log))
    add(fw, "p", cpu="1")
    fw.schedule(until=T0 + 1)
    assert requested_cpu(fw) == 1000
    fw.cluster.delete_pod(fw.cluster.pods["default/p"])
    fw.schedule(until=T0 + 2)  # upstream rejects the waiting pod on delete: no 60 s wait
    assert log == ["reserve R", "unreserve R"]
    assert fw.framework.get_waiting_pod(fw.pod_info(make_pod("p").obj()).uid) is None
    assert queued(fw, "p") is None
    assert requested_cpu(fw) == 0
    assert fw.cluster.bind_count == {}


# ---------------------------------------------------------------------------------------------
# PreBind / Bind / PostBind
# ---------------------------------------------------------------------------------------------
def _once(result: Status, then: Status | None = None) -> Any:
    left = [result]
    return lambda *a: left.pop() if left else then


def test_pre_bind_error_unreserves_forgets_and_retries_after_backoff() -> None:
    log: list[str] = []
    fw = cluster(fake("PB", pre_bind=_once(Status(Code.ERROR, "boom"))), reserver("R", log))
    add(fw, "p", cpu="1")
    fw.schedule()
    assert notes(fw, "p") == ['running PreBind plugin "PB": boom']
    assert log == ["reserve R", "unreserve R", "reserve R"]
    assert bound_at(fw, "p") == T0 + 1
    assert fw.cluster.bind_count["default/p"] == 1
    assert requested_cpu(fw) == 1000


def test_pre_bind_rejection_is_retried_not_parked() -> None:
    fw = cluster(fake("PB", pre_bind=_once(Status(U, "volume not ready"))))
    add(fw, "p")
    fw.schedule()
    assert notes(fw, "p") == ["0/1 nodes are available: 1 volume not ready."]
    assert node_of(fw, "p") is not None


def test_bind_error_unreserves_forgets_and_retries_after_backoff() -> None:
    log: list[str] = []
    b = fake("B", bind=_once(Status(Code.ERROR, "conflict"), Status(Code.SKIP)))
    fw = cluster(b, reserver("R", log))
    add(fw, "p", cpu="1")
    fw.schedule()
    assert notes(fw, "p") == ['running Bind plugin "B": conflict']
    assert log == ["reserve R", "unreserve R", "reserve R"]
    assert bound_at(fw, "p") == T0 + 1
    assert fw.cluster.bind_count["default/p"] == 1


def test_bind_skip_falls_to_the_default_binder_and_post_bind_runs() -> None:
    post: list[tuple[str, str]] = []
    fw = cluster(fake("B", bind=lambda s, p, n: Status(Code.SKIP)),
                 fake("PB", post_bind=lambda s, p, n: post.append((p.name, n))))
    add(fw, "p")
    fw.schedule()
    node = node_of(fw, "p")
    assert node is not None
    assert post == [("p", node)]
    assert notes(fw, "p", "Scheduled") == [f"Successfully assigned default/p to {node}"]
    assert condition(fw, "p")["status"] == "True"


def test_post_bind_not_called_when_binding_fails() -> None:
    post: list[str] = []
    fw = cluster(fake("PB", pre_bind=lambda s, p, n: Status(Code.ERROR, "always")),
                 fake("Post", post_bind=lambda s, p, n: post.append(p.name)))
    add(fw, "p")
    fw.schedule(until=T0 + 5)
    assert post == []
    assert len(notes(fw, "p")) >= 2


# ---------------------------------------------------------------------------------------------
# exceptions, deletions, double binding
# ---------------------------------------------------------------------------------------------
def test_filter_exception_becomes_an_error_and_the_loop_goes_on() -> None:
    broken = {"on": True}

    def filt(s: Any, p: Any, ni: Any) -> None:
        if broken["on"] and p.name == "bad":
            raise ValueError("cannot parse annotation")

    fw = cluster(fake("Boom", filter=filt))
    add(fw, "bad", "good")
    fw.schedule(until=T0 + 0.5)
    assert node_of(fw, "good") is not None
    assert notes(fw, "bad") == ['running "Boom" filter plugin: cannot parse annotation']
    assert condition(fw, "bad")["reason"] == "SchedulerError"
    where = queued(fw, "bad")
    assert where is not None and where[0] == "backoff" and where[1].consecutive_errors == 1
    broken["on"] = False
    fw.schedule()
    assert bound_at(fw, "bad") == T0 + 1
    assert fw.cluster.bind_count == {"default/bad": 1, "default/good": 1}


@pytest.mark.parametrize("point", ["pre_score", "score", "score_extensions", "reserve", "permit", "pre_bind",
                                   "bind"])
def test_exception_at_any_point_never_loses_the_pod(point: str) -> None:
    broken = {"on": True}

    def boom(*a: Any) -> Any:
        if broken["on"]:
            raise RuntimeError(f"bug in {point}")
        return {"score": (1, None), "permit": (None, 0), "bind": Status(Code.SKIP),
                "score_extensions": None}.get(point)

    # PreScore and ScoreExtensions only run for a Score plugin.
    extra: dict[str, Any] = {"score": lambda *a: (1, None)} if point in ("pre_score", "score_extensions") else {}
    if point == "reserve":
        extra["unreserve"] = lambda *a: None
    fw = cluster(fake("X", **{point: boom}, **extra))
    add(fw, "p")
    fw.schedule(until=T0 + 0.5)
    assert node_of(fw, "p") is None
    assert len(notes(fw, "p")) == 1
    assert f"bug in {point}" in notes(fw, "p")[0]
    assert fw.scheduler.cache.assumed_count() == 0
    where = queued(fw, "p")
    assert where is not None and where[0] == "backoff"
    broken["on"] = False
    fw.schedule()
    assert node_of(fw, "p") is not None
    assert fw.cluster.bind_count == {"default/p": 1}


def test_pod_being_deleted_is_skipped() -> None:
    fw = cluster()
    fw.add_pod(make_pod("p").set("metadata.deletionTimestamp", "2026-01-01T00:00:00Z").obj())
    fw.schedule()
    assert node_of(fw, "p") is None
    assert notes(fw, "p") == ["skip schedule deleting pod: default/p"]


def test_pod_bound_by_someone_else_meanwhile_is_never_bound_twice() -> None:
    fw = cluster(fake("P", permit=lambda s, p, n: (Status(Code.WAIT), 30)))
    add(fw, "p", cpu="1")
    fw.schedule(until=T0 + 5)
    fw.cluster.bind(fw.cluster.pods["default/p"], "n2")  # another scheduler won the race
    wp = _waiting(fw.scheduler.handles["default-scheduler"])
    assert len(wp) == 1
    wp[0].allow("P")
    fw.schedule()
    assert node_of(fw, "p") == "n2"
    assert fw.cluster.bind_count == {"default/p": 1}
    assert queued(fw, "p") is None
    assert [ni.requested.milli_cpu for ni in fw.nodes()] == [0, 1000, 0]


def test_nothing_is_lost() -> None:
    """Every pod ends up bound or queued, whatever failed on the way."""
    fail = {"n": 0}

    def flaky(*a: Any) -> Status | None:
        fail["n"] += 1
        return Status(Code.ERROR, "flaky") if fail["n"] % 3 == 0 else None

    fw = new_framework([fake("F", pre_bind=flaky), "NodeResourcesFit"],
                       nodes=[make_node(n).capacity(cpu="2").obj() for n in N3])
    names = [f"p{i}" for i in range(10)]
    add(fw, *names, cpu="1")
    fw.schedule()
    bound = {n for n in names if node_of(fw, n) is not None}
    pending = {qpi.pod_info.name for qpi, _ in fw.scheduler.queue.pending_pods()}
    assert len(bound) == 6  # 3 nodes x 2 cpu
    assert bound | pending == set(names)
    assert not bound & pending
    assert all(v == 1 for v in fw.cluster.bind_count.values())


# ---------------------------------------------------------------------------------------------
# the queue seen from the cluster
# ---------------------------------------------------------------------------------------------
def test_gated_pod_schedules_once_its_gates_are_removed() -> None:
    fw = new_framework(["SchedulingGates"], nodes=[make_node("n1").obj()])
    fw.add_pod(make_pod("g").scheduling_gates("example.com/wait").obj())
    fw.schedule()
    assert node_of(fw, "g") is None
    assert notes(fw, "g") == []  # a gated pod is not attempted at all
    where = queued(fw, "g")
    assert where is not None and where[0] == "gated"
    old = fw.cluster.pods["default/g"]
    new = {**old, "spec": {**old["spec"], "schedulingGates": []}}
    fw.cluster.pods["default/g"] = new
    fw.scheduler.on_pod_update(old, new)
    fw.schedule()
    assert node_of(fw, "g") == "n1"


def test_custom_queue_sort_orders_the_attempts() -> None:
    class ByName:
        name = "ByName"

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        def less(self, a: Any, b: Any) -> bool:
            return bool(a.pod_info.name > b.pod_info.name)  # reverse alphabetical

    reg = default_registry(entry_points=False)
    reg.register("ByName", ByName)
    cfg = {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "ByName"}, {"name": "DefaultBinder"}],
                                                    "disabled": [{"name": "*"}]}}}]}
    fw = new_framework(cfg, nodes=[make_node("n1").obj()], registry=reg)
    for n in ("b", "c", "a"):
        fw.add_pod(make_pod(n).priority(100 if n == "a" else 0).obj())
    fw.schedule()
    order = [e.name for e in fw.cluster.events if e.reason == "Scheduled"]
    assert order == ["c", "b", "a"]  # priority plays no part: the profile's QueueSort decides


def test_parked_pod_retried_only_by_events_its_plugin_registered() -> None:
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node("small").capacity(cpu="1").obj()])
    add(fw, "big", cpu="2")
    fw.schedule()
    assert len(notes(fw, "big")) == 1
    # NodeResourcesFit registered Node/Add and Node/UpdateNodeAllocatable, not label updates.
    old = fw.cluster.nodes["small"]
    fw.cluster.update_node(make_node("small").capacity(cpu="1").label("tier", "gold").obj())
    fw.schedule()
    assert len(notes(fw, "big")) == 1
    assert fw.cluster.nodes["small"] is not old
    fw.cluster.add_node(make_node("large").capacity(cpu="4").obj())
    fw.schedule()
    assert node_of(fw, "big") == "large"
    assert len(notes(fw, "big")) == 1


# ---------------------------------------------------------------------------------------------
# nominated pods (RunFilterPluginsWithNominatedPods)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("nominated_priority", "want"), [(10, Code.UNSCHEDULABLE), (5, Code.UNSCHEDULABLE),
                                                          (4, Code.SUCCESS)])
def test_filters_account_for_nominated_pods_of_equal_or_higher_priority(nominated_priority: int,
                                                                       want: Code) -> None:
    added: list[str] = []

    class Ext:
        name = "Ext"

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        def pre_filter(self, state: Any, pod: Any, nodes: Any) -> tuple[None, None]:
            return None, None

        def pre_filter_extensions(self) -> Ext:
            return self

        def add_pod(self, state: Any, pod: Any, pod_to_add: Any, node_info: Any) -> None:
            added.append(pod_to_add.name)

        def remove_pod(self, state: Any, pod: Any, pod_to_remove: Any, node_info: Any) -> None:
            pass

    fw = new_framework([Ext, "NodeResourcesFit"], nodes=[make_node("n1").capacity(cpu="4").obj()])
    nominated = PodInfo(make_pod("hi").priority(nominated_priority).req(cpu="4").obj())
    fw.scheduler.queue.add_nominated_pod(nominated, "n1")
    pod = make_pod("lo").priority(5).req(cpu="1").obj()
    assert fw.run_pre_filter(pod).status.is_success()
    handle = fw.scheduler.handles["default-scheduler"]
    s = handle.run_filter_plugins_with_nominated_pods(fw.state, fw.pod_info(pod), fw.node_info("n1"))
    assert s.code == want
    assert added == (["hi"] if nominated_priority >= 5 else [])
    if want != Code.SUCCESS:
        assert s.message() == "Insufficient cpu"
    # The real NodeInfo is untouched: the nominated pod was added to a copy.
    assert fw.node_info("n1").requested.milli_cpu == 0


def test_pod_avoids_the_node_a_higher_priority_pod_is_nominated_to() -> None:
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node(n).capacity(cpu="4").obj() for n in ("n1", "n2")])
    fw.scheduler.queue.add_nominated_pod(PodInfo(make_pod("hi").priority(10).req(cpu="4").obj()), "n1")
    for i in range(4):
        fw.add_pod(make_pod(f"lo{i}").req(cpu="1").obj())
    fw.schedule()
    assert {node_of(fw, f"lo{i}") for i in range(4)} == {"n2"}


def test_malformed_plugin_result_after_assume_is_an_error_and_the_pod_is_forgotten() -> None:
    log: list[str] = []
    broken = {"on": True}

    def permit(s: Any, p: Any, n: Any) -> tuple[Status | None, Any]:
        return (Status(Code.WAIT), "ten seconds") if broken["on"] else (None, 0)

    fw = cluster(fake("P", permit=permit), reserver("R", log))
    add(fw, "p", cpu="1")
    fw.schedule(until=T0 + 0.5)
    assert log == ["reserve R", "unreserve R"]
    assert fw.scheduler.cache.assumed_count() == 0
    assert requested_cpu(fw) == 0
    assert condition(fw, "p")["reason"] == "SchedulerError"
    where = queued(fw, "p")
    assert where is not None and where[0] == "backoff"
    broken["on"] = False
    fw.schedule()
    assert node_of(fw, "p") is not None


def test_unexpected_failure_inside_the_cycle_never_loses_the_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: a bug in the runtime itself (after assume) is an Error, not a crash."""
    log: list[str] = []
    fw = cluster(reserver("R", log))
    real = fw.framework.run_permit_plugins
    calls = {"n": 0}

    def flaky_runtime(*a: Any, **kw: Any) -> Status:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("runtime bug")
        return real(*a, **kw)

    monkeypatch.setattr(fw.framework, "run_permit_plugins", flaky_runtime)
    add(fw, "p", cpu="1")
    fw.schedule()
    assert notes(fw, "p") == ["runtime bug"]
    assert log == ["reserve R", "unreserve R", "reserve R"]
    assert bound_at(fw, "p") == T0 + 1
    assert fw.cluster.bind_count == {"default/p": 1}
