"""Every extension point of the runtime, success and failure paths, with small fake plugins.

Behaviour and messages pinned against pkg/scheduler/framework/runtime/framework.go and its
framework_test.go (``TestRunPreFilterPlugins``, ``TestFilterPlugins``, ``TestPostFilterPlugins``,
``TestRunScorePlugins``, ``TestReservePlugins``, ``TestPermitPlugins``, ``TestPreBindPlugins``,
``TestBindPlugins``): Go's ``%q`` quotes plugin names with double quotes.
"""

from __future__ import annotations

from typing import Any

import pytest
from fw_fakes import config_for, fake, registry_with

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo, PostFilterResult, PreFilterResult
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NODES = ["n1", "n2", "n3"]


def tf(*plugins: Any, nodes: list[str] = NODES) -> TestFramework:
    return new_framework(list(plugins), nodes=[make_node(n).capacity(cpu="4").obj() for n in nodes])


def pod() -> dict[str, Any]:
    return make_pod("p").obj()


U = Code.UNSCHEDULABLE
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# ---------------------------------------------------------------------------------------------
# PreEnqueue
# ---------------------------------------------------------------------------------------------
def test_pre_enqueue_all_success() -> None:
    calls: list[str] = []
    a = fake("A", pre_enqueue=lambda p: calls.append("A"))
    b = fake("B", pre_enqueue=lambda p: calls.append("B"))
    assert tf(a, b).run_pre_enqueue(pod()).is_success()
    assert calls == ["A", "B"]


def test_pre_enqueue_first_rejection_stops_and_names_the_plugin() -> None:
    calls: list[str] = []
    a = fake("A", pre_enqueue=lambda p: Status(U, "gated by A"))
    b = fake("B", pre_enqueue=lambda p: calls.append("B"))
    s = tf(a, b).run_pre_enqueue(pod())
    assert (s.code, s.message(), s.plugin) == (U, "gated by A", "A")
    assert calls == []


def test_pre_enqueue_exception_is_an_error_naming_the_plugin() -> None:
    def boom(p: Any) -> None:
        raise RuntimeError("boom")

    s = tf(fake("A", pre_enqueue=boom)).run_pre_enqueue(pod())
    assert s.code == Code.ERROR
    assert s.plugin == "A"
    assert "boom" in s.message()


# ---------------------------------------------------------------------------------------------
# PreFilter
# ---------------------------------------------------------------------------------------------
def test_pre_filter_skip_skips_the_coupled_filter_only() -> None:
    filtered: list[str] = []
    a = fake("A", pre_filter=lambda s, p, n: (None, Status(Code.SKIP)),
             filter=lambda s, p, ni: Status(U, "A would reject"))
    b = fake("B", pre_filter=lambda s, p, n: (None, None),
             filter=lambda s, p, ni: filtered.append(ni.name))
    fw = tf(a, b)
    out = fw.run_pre_filter(pod())
    assert out.status.is_success()
    assert fw.state.skip_filter_plugins == frozenset({"A"})
    assert fw.run_filter(pod(), "n1").is_success()
    assert filtered == ["n1"]


def test_pre_filter_results_are_intersected() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (PreFilterResult({"n1", "n2"}), None))
    b = fake("B", pre_filter=lambda s, p, n: (PreFilterResult({"n2", "n3"}), None))
    c = fake("C", pre_filter=lambda s, p, n: (PreFilterResult(None), None))  # all nodes
    out = tf(a, b, c).run_pre_filter(pod())
    assert out.status.is_success()
    assert out.result is not None
    assert out.result.node_names == {"n2"}


def test_pre_filter_all_nodes_result_is_none() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (None, None))
    out = tf(a).run_pre_filter(pod())
    assert out.status.is_success()
    assert out.result is None or out.result.all_nodes()


def test_pre_filter_disjoint_results_name_the_plugins_sorted() -> None:
    # Upstream formats sets.List(pluginsWithNodes): sorted names, whatever the plugin order.
    zeta = fake("Zeta", pre_filter=lambda s, p, n: (PreFilterResult({"n1"}), None))
    alpha = fake("Alpha", pre_filter=lambda s, p, n: (PreFilterResult({"n2"}), None))
    out = tf(zeta, alpha).run_pre_filter(pod())
    assert out.status.code == UAU
    assert out.status.message() == "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously"


def test_pre_filter_single_empty_result_message() -> None:
    a = fake("A", pre_filter=lambda s, p, n: (PreFilterResult(set()), None))
    out = tf(a).run_pre_filter(pod())
    assert out.status.code == UAU
    assert out.status.message() == "node(s) didn't satisfy plugin A"


def test_pre_filter_unschedulable_keeps_running_the_others() -> None:
    calls: list[str] = []
    a = fake("A", pre_filter=lambda s, p, n: (None, Status(U, "a says no")))
    b = fake("B", pre_filter=lambda s, p, n: (calls.append("B"), None))
    out = tf(a, b).run_pre_filter(pod())
    assert (out.status.code, out.status.message(), out.status.plugin) == (U, "a says no", "A")
    assert calls == ["B"]


def test_pre_filter_unresolvable_stops_at_once() -> None:
    calls: list[str] = []
    a = fake("A", pre_filter=lambda s, p, n: (None, Status(UAU, "never")))
    b = fake("B", pre_filter=lambda s, p, n: (calls.append("B"), None))
    out = tf(a, b).run_pre_filter(pod())
    assert (out.status.code, out.status.message(), out.status.plugin) == (UAU, "never", "A")
    assert calls == []


def test_pre_filter_error_stops_with_upstream_message() -> None:
    calls: list[str] = []
    a = fake("A", pre_filter=lambda s, p, n: (None, Status(Code.ERROR, "boom")))
    b = fake("B", pre_filter=lambda s, p, n: (calls.append("B"), None))
    out = tf(a, b).run_pre_filter(pod())
    assert out.status.code == Code.ERROR
    assert out.status.message() == 'running PreFilter plugin "A": boom'
    assert calls == []


def test_pre_filter_exception_is_an_error() -> None:
    def boom(s: Any, p: Any, n: Any) -> Any:
        raise KeyError("missing")

    out = tf(fake("A", pre_filter=boom)).run_pre_filter(pod())
    assert out.status.code == Code.ERROR
    assert out.status.message().startswith('running PreFilter plugin "A": ')


# ---------------------------------------------------------------------------------------------
# Filter
# ---------------------------------------------------------------------------------------------
def test_filter_stops_at_the_first_failing_plugin_per_node() -> None:
    seen: list[tuple[str, str]] = []

    def a_filter(s: Any, p: Any, ni: NodeInfo) -> Status | None:
        seen.append(("A", ni.name))
        return Status(U, "A rejects n1") if ni.name == "n1" else None

    b = fake("B", filter=lambda s, p, ni: seen.append(("B", ni.name)))
    fw = tf(fake("A", filter=a_filter), b)
    s1 = fw.run_filter(pod(), "n1")
    assert (s1.code, s1.message(), s1.plugin) == (U, "A rejects n1", "A")
    assert fw.run_filter(pod(), "n2").is_success()
    assert seen == [("A", "n1"), ("A", "n2"), ("B", "n2")]


def test_filter_unresolvable_and_pending_keep_their_code() -> None:
    a = fake("A", filter=lambda s, p, ni: Status(UAU, "never here"))
    assert tf(a).run_filter(pod(), "n1").code == UAU
    b = fake("B", filter=lambda s, p, ni: Status(Code.PENDING, "later"))
    s = tf(b).run_filter(pod(), "n1")
    assert (s.code, s.plugin) == (Code.PENDING, "B")


@pytest.mark.parametrize(("status", "want"), [
    (Status(Code.ERROR, "boom"), 'running "A" filter plugin: boom'),
    (Status(Code.SKIP, "odd"), 'running "A" filter plugin: '),
])
def test_filter_other_codes_become_errors(status: Status, want: str) -> None:
    s = tf(fake("A", filter=lambda st, p, ni: status)).run_filter(pod(), "n1")
    assert s.code == Code.ERROR
    assert s.plugin == "A"
    assert s.message().startswith(want)


def test_filter_exception_is_an_error() -> None:
    def boom(s: Any, p: Any, ni: Any) -> None:
        raise ZeroDivisionError("division by zero")

    s = tf(fake("A", filter=boom)).run_filter(pod(), "n1")
    assert s.code == Code.ERROR
    assert s.message() == 'running "A" filter plugin: division by zero'


# ---------------------------------------------------------------------------------------------
# PostFilter
# ---------------------------------------------------------------------------------------------
def _post(fw: TestFramework) -> tuple[PostFilterResult | None, Status]:
    return fw.framework.run_post_filter_plugins(CycleState(), fw.pod_info(pod()), {"n1": Status(U, "x")})


def test_post_filter_aggregates_rejections_in_order_naming_the_first() -> None:
    a = fake("A", post_filter=lambda s, p, m: (None, Status(U, "a1")))
    b = fake("B", post_filter=lambda s, p, m: (None, Status(U, "b1", "b2")))
    res, s = _post(tf(a, b))
    assert res is None
    assert (s.code, s.reasons, s.plugin) == (U, ["a1", "b1", "b2"], "A")


def test_post_filter_success_stops_and_returns_the_result() -> None:
    calls: list[str] = []
    res_a = PostFilterResult()
    a = fake("A", post_filter=lambda s, p, m: (res_a, None))
    b = fake("B", post_filter=lambda s, p, m: (calls.append("B"), Status(U)))
    res, s = _post(tf(a, b))
    assert s.is_success()
    assert res is res_a
    assert calls == []


def test_post_filter_unresolvable_stops() -> None:
    calls: list[str] = []
    a = fake("A", post_filter=lambda s, p, m: (None, Status(UAU, "hopeless")))
    b = fake("B", post_filter=lambda s, p, m: (calls.append("B"), None))
    _, s = _post(tf(a, b))
    assert (s.code, s.plugin, s.message()) == (UAU, "A", "hopeless")
    assert calls == []


def test_post_filter_error_stops_without_a_result() -> None:
    calls: list[str] = []
    a = fake("A", post_filter=lambda s, p, m: (PostFilterResult(), Status(Code.ERROR, "boom")))
    b = fake("B", post_filter=lambda s, p, m: (calls.append("B"), None))
    res, s = _post(tf(a, b))
    assert (s.code, s.plugin) == (Code.ERROR, "A")
    assert "boom" in s.message()
    assert res is None
    assert calls == []


# ---------------------------------------------------------------------------------------------
# PreScore / Score / NormalizeScore
# ---------------------------------------------------------------------------------------------
def _raw(scores: dict[str, int]) -> Any:
    return lambda s, p, ni: (scores[ni.name], None)


def test_pre_score_skip_skips_the_coupled_score() -> None:
    def never(s: Any, p: Any, ni: Any) -> Any:
        raise AssertionError("Score of a plugin whose PreScore said Skip must not run")

    a = fake("A", pre_score=lambda s, p, n: Status(Code.SKIP), score=never)
    b = fake("B", score=_raw({"n1": 10, "n2": 20, "n3": 30}))
    fw = tf(a, b)
    res = fw.run_score(pod())
    assert fw.state.skip_score_plugins == frozenset({"A"})
    assert set(res.normalized) == {"B"}
    assert res.total.tolist() == [10, 20, 30]


@pytest.mark.parametrize("status", [Status(U, "no"), Status(Code.ERROR, "no")])
def test_pre_score_failure_is_an_error(status: Status) -> None:
    a = fake("A", pre_score=lambda s, p, n: status)
    fw = tf(a)
    pi = fw.pod_info(pod())
    s = fw.framework.run_pre_score_plugins(CycleState(), pi, fw.nodes())
    assert s.code == Code.ERROR
    assert s.message() == 'running PreScore plugin "A": no'


def _normalize_to_100(s: Any, p: Any, scores: list[NodeScore]) -> None:
    top = max(ns.score for ns in scores)
    for ns in scores:
        ns.score = ns.score * 100 // top


def test_scores_are_normalized_then_weighted() -> None:
    a = fake("A", score=_raw({"n1": 10, "n2": 20, "n3": 30}), normalize_score=_normalize_to_100)
    b = fake("B", score=_raw({"n1": 50, "n2": 50, "n3": 0}))
    reg = registry_with(a, b)
    cfg = config_for(reg, [{
        "plugins": {
            "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                       {"name": "A"}, {"name": "B"}]},
            "score": {"enabled": [{"name": "A", "weight": 2}]},
        },
    }])
    fw = new_framework(cfg, nodes=[make_node(n).obj() for n in NODES], registry=reg)
    res = fw.run_score(pod())
    assert res.weights == {"A": 2, "B": 1}
    assert res.raw["A"].tolist() == [10, 20, 30]
    assert res.normalized["A"].tolist() == [33, 66, 100]
    # n1: 2*33 + 50, n2: 2*66 + 50, n3: 2*100 + 0
    assert res.total.tolist() == [116, 182, 200]


def test_raw_score_out_of_range_is_fine_when_normalized_into_range() -> None:
    a = fake("A", score=_raw({"n1": 1000, "n2": 2000, "n3": 4000}), normalize_score=_normalize_to_100)
    assert tf(a).run_score(pod()).normalized["A"].tolist() == [25, 50, 100]


@pytest.mark.parametrize("bad", [101, -1])
def test_out_of_range_score_after_normalizing_is_an_error(bad: int) -> None:
    a = fake("A", score=_raw({"n1": 5, "n2": bad, "n3": 5}))
    fw = tf(a)
    pi = fw.pod_info(pod())
    fw.run_pre_filter(pi)
    res = fw.framework.run_score_plugins(fw.state, pi, fw.nodes())
    assert isinstance(res, Status)
    assert res.code == Code.ERROR
    assert res.message() == (
        f'applying score defaultWeights on Score plugins: plugin "A" returns an invalid score {bad}, '
        "it should in the range of [0, 100] after normalizing"
    )


def test_score_failure_is_an_error_with_upstream_message() -> None:
    a = fake("A", score=lambda s, p, ni: (0, Status(Code.ERROR, "injected status")))
    fw = tf(a)
    pi = fw.pod_info(pod())
    res = fw.framework.run_score_plugins(CycleState(), pi, fw.nodes())
    assert isinstance(res, Status)
    assert res.code == Code.ERROR
    assert res.message() == 'running Score plugins: plugin "A" failed with: injected status'


def test_normalize_failure_is_an_error_with_upstream_message() -> None:
    a = fake("A", score=_raw({"n1": 1, "n2": 1, "n3": 1}),
             normalize_score=lambda s, p, scores: Status(Code.ERROR, "injected status"))
    fw = tf(a)
    pi = fw.pod_info(pod())
    res = fw.framework.run_score_plugins(CycleState(), pi, fw.nodes())
    assert isinstance(res, Status)
    assert res.message() == 'running Normalize on Score plugins: plugin "A" failed with: injected status'


def test_score_extensions_exception_is_an_error_not_a_crash() -> None:
    def broken_ext() -> Any:
        raise RuntimeError("no extensions today")

    a = fake("A", score=_raw({"n1": 1, "n2": 1, "n3": 1}), score_extensions=broken_ext)
    fw = tf(a)
    res = fw.framework.run_score_plugins(CycleState(), fw.pod_info(pod()), fw.nodes())
    assert isinstance(res, Status)
    assert res.code == Code.ERROR


# ---------------------------------------------------------------------------------------------
# Reserve / Unreserve
# ---------------------------------------------------------------------------------------------
def _reserver(name: str, log: list[str], status: Status | None = None) -> type:
    return fake(
        name,
        reserve=lambda s, p, n: (log.append(f"reserve {name}"), status)[1],
        unreserve=lambda s, p, n: log.append(f"unreserve {name}"),
    )


def test_reserve_runs_in_order_and_stops_at_a_rejection() -> None:
    log: list[str] = []
    fw = tf(_reserver("R1", log), _reserver("R2", log, Status(U, "no room")), _reserver("R3", log))
    s = fw.run_reserve(pod(), "n1")
    assert (s.code, s.message(), s.plugin) == (U, "no room", "R2")
    assert log == ["reserve R1", "reserve R2"]


def test_reserve_error_has_upstream_message() -> None:
    log: list[str] = []
    s = tf(_reserver("R1", log, Status(Code.ERROR, "boom"))).run_reserve(pod(), "n1")
    assert s.code == Code.ERROR
    assert s.message() == 'running Reserve plugin "R1": boom'


def test_unreserve_runs_every_plugin_in_reverse_order_and_survives_exceptions() -> None:
    log: list[str] = []

    def explode(s: Any, p: Any, n: Any) -> None:
        log.append("unreserve R2")
        raise RuntimeError("boom")

    r2 = fake("R2", reserve=lambda s, p, n: None, unreserve=explode)
    fw = tf(_reserver("R1", log), r2, _reserver("R3", log))
    fw.run_unreserve(pod(), "n1")
    assert log == ["unreserve R3", "unreserve R2", "unreserve R1"]


# ---------------------------------------------------------------------------------------------
# Permit
# ---------------------------------------------------------------------------------------------
def test_permit_success_when_no_plugin_waits() -> None:
    a = fake("A", permit=lambda s, p, n: (None, 0))
    assert tf(a).run_permit(pod(), "n1").is_success()


def test_permit_rejection_stops() -> None:
    calls: list[str] = []
    a = fake("A", permit=lambda s, p, n: (Status(U, "not now"), 0))
    b = fake("B", permit=lambda s, p, n: (calls.append("B"), (None, 0))[1])
    s = tf(a, b).run_permit(pod(), "n1")
    assert (s.code, s.message(), s.plugin) == (U, "not now", "A")
    assert calls == []


def test_permit_error_has_upstream_message() -> None:
    s = tf(fake("A", permit=lambda st, p, n: (Status(Code.ERROR, "boom"), 0))).run_permit(pod(), "n1")
    assert s.code == Code.ERROR
    assert s.message() == 'running Permit plugin "A": boom'


def test_permit_wait_registers_a_waiting_pod_with_upstream_message() -> None:
    a = fake("A", permit=lambda s, p, n: (Status(Code.WAIT), 10))
    b = fake("B", permit=lambda s, p, n: (Status(Code.WAIT), 20))
    fw = tf(a, b)
    pi = fw.pod_info(pod())
    s = fw.run_permit(pi, "n1")
    assert s.code == Code.WAIT
    assert s.message() == 'one or more plugins asked to wait and no plugin rejected pod "p"'
    wp = fw.framework.get_waiting_pod(pi.uid)
    assert wp is not None
    assert wp.get_pending_plugins() == ["A", "B"]


def _outcome(fw: TestFramework, uid: str) -> list[Status]:
    got: list[Status] = []
    wp = fw.framework.get_waiting_pod(uid)
    assert wp is not None
    wp.on_done(got.append)
    return got


def test_permit_timeout_rejects_with_upstream_message_on_the_virtual_clock() -> None:
    fw = tf(fake("A", permit=lambda s, p, n: (Status(Code.WAIT), 10)))
    pi = fw.pod_info(pod())
    fw.run_permit(pi, "n1")
    got = _outcome(fw, pi.uid)
    fw.clock.step(9.999)
    assert got == []
    fw.clock.step(0.001)
    assert len(got) == 1
    assert (got[0].code, got[0].plugin) == (U, "A")
    assert got[0].message() == "rejected due to timeout after waiting 10s at plugin A"


def test_permit_timeout_is_capped_at_15_minutes() -> None:
    fw = tf(fake("A", permit=lambda s, p, n: (Status(Code.WAIT), 3600)))
    pi = fw.pod_info(pod())
    fw.run_permit(pi, "n1")
    got = _outcome(fw, pi.uid)
    fw.clock.step(899)
    assert got == []
    fw.clock.step(1)
    assert [s.message() for s in got] == ["rejected due to timeout after waiting 15m0s at plugin A"]


def test_permit_allow_by_every_waiting_plugin_succeeds() -> None:
    a = fake("A", permit=lambda s, p, n: (Status(Code.WAIT), 10))
    b = fake("B", permit=lambda s, p, n: (Status(Code.WAIT), 10))
    fw = tf(a, b)
    pi = fw.pod_info(pod())
    fw.run_permit(pi, "n1")
    got = _outcome(fw, pi.uid)
    wp = fw.framework.get_waiting_pod(pi.uid)
    assert wp is not None
    wp.allow("A")
    assert got == []
    assert wp.get_pending_plugins() == ["B"]
    wp.allow("B")
    assert [s.code for s in got] == [Code.SUCCESS]
    fw.clock.step(60)  # the timers were stopped: no late rejection
    assert len(got) == 1


def test_permit_allowed_plugin_timer_is_stopped() -> None:
    # A allows early; A's (shorter) timeout must not reject the pod while B still waits.
    a = fake("A", permit=lambda s, p, n: (Status(Code.WAIT), 5))
    b = fake("B", permit=lambda s, p, n: (Status(Code.WAIT), 20))
    fw = tf(a, b)
    pi = fw.pod_info(pod())
    fw.run_permit(pi, "n1")
    got = _outcome(fw, pi.uid)
    wp = fw.framework.get_waiting_pod(pi.uid)
    assert wp is not None
    wp.allow("A")
    fw.clock.step(10)
    assert got == []
    fw.clock.step(10)
    assert [s.message() for s in got] == ["rejected due to timeout after waiting 20s at plugin B"]


def test_permit_reject_through_the_handle() -> None:
    fw = tf(fake("A", permit=lambda s, p, n: (Status(Code.WAIT), 10)))
    pi = fw.pod_info(pod())
    fw.run_permit(pi, "n1")
    got = _outcome(fw, pi.uid)
    handle = fw.scheduler.handles["default-scheduler"]
    assert handle.reject_waiting_pod(pi.uid) is True
    assert handle.reject_waiting_pod("no-such-uid") is False
    assert [(s.code, s.message()) for s in got] == [(U, "removed")]


# ---------------------------------------------------------------------------------------------
# PreBind / Bind / PostBind
# ---------------------------------------------------------------------------------------------
def test_pre_bind_success_and_failures() -> None:
    calls: list[str] = []
    ok = fake("A", pre_bind=lambda s, p, n: calls.append("A"))
    assert tf(ok).run_pre_bind(pod(), "n1").is_success()
    assert calls == ["A"]
    err = tf(fake("A", pre_bind=lambda s, p, n: Status(Code.ERROR, "boom"))).run_pre_bind(pod(), "n1")
    assert (err.code, err.message()) == (Code.ERROR, 'running PreBind plugin "A": boom')
    rej = tf(fake("A", pre_bind=lambda s, p, n: Status(U, "volume gone"))).run_pre_bind(pod(), "n1")
    assert (rej.code, rej.message(), rej.plugin) == (U, "volume gone", "A")


def test_bind_skip_falls_to_the_next_binder() -> None:
    calls: list[str] = []
    b1 = fake("B1", bind=lambda s, p, n: (calls.append("B1"), Status(Code.SKIP))[1])
    b2 = fake("B2", bind=lambda s, p, n: calls.append("B2"))
    b3 = fake("B3", bind=lambda s, p, n: calls.append("B3"))
    fw = tf(b1, b2, b3)
    assert [p.name for p in fw.framework.points["bind"]] == ["B1", "B2", "B3", "DefaultBinder"]
    assert fw.run_bind(pod(), "n1").is_success()
    assert calls == ["B1", "B2"]


def test_bind_error_has_upstream_message() -> None:
    b = fake("B1", bind=lambda s, p, n: Status(Code.ERROR, "boom"))
    s = tf(b).run_bind(pod(), "n1")
    assert (s.code, s.message()) == (Code.ERROR, 'running Bind plugin "B1": boom')


def test_plugin_returning_a_non_status_is_an_error() -> None:
    s = tf(fake("A", filter=lambda st, p, ni: "yes")).run_filter(pod(), "n1")
    assert s.code == Code.ERROR


def test_pod_info_is_passed_to_plugins() -> None:
    seen: list[Any] = []
    a = fake("A", filter=lambda s, p, ni: seen.append(p))
    tf(a).run_filter(make_pod("web").obj(), "n1")
    assert isinstance(seen[0], PodInfo)
    assert seen[0].name == "web"


# ---------------------------------------------------------------------------------------------
# Filter with nominated pods, and the per-cycle plugin lists it reads
# ---------------------------------------------------------------------------------------------
def test_nominated_pods_without_add_pod_extensions_read_the_state_itself() -> None:
    # NodeResourcesFit has no AddPod: the copy of the CycleState upstream makes for the nominated
    # pods would only be read, so the state itself is (the verdicts are the same either way), and
    # the cycle's state is left as it was.
    fw = new_framework(["NodeResourcesFit"], nodes=[make_node("n1").capacity(cpu="4", pods="10").obj()])
    incoming = fw.pod_info(make_pod("p").req(cpu="3").priority(5).obj())
    nominated = fw.pod_info(make_pod("q").req(cpu="2").priority(5).obj())
    lower = fw.pod_info(make_pod("r").req(cpu="2").priority(1).obj())
    assert fw.run_pre_filter(incoming).status.is_success()
    ni = fw.node_info("n1")
    assert not fw.framework.has_pre_filter_extensions(fw.state)
    before = dict(fw.state._data)
    st = fw.framework.run_filter_plugins_with_nominated_pods(fw.state, incoming, ni, [nominated])
    assert (st.code, st.reasons, st.plugin) == (U, ["Insufficient cpu"], "NodeResourcesFit")
    assert fw.framework.run_filter_plugins_with_nominated_pods(fw.state, incoming, ni, [lower]).is_success()
    assert fw.framework.run_filter_plugins_with_nominated_pods(fw.state, incoming, ni).is_success()
    assert fw.state._data == before and len(ni.pods) == 0


def test_active_filter_plugins_leave_out_the_skipped() -> None:
    skip_me = fake("SkipMe", pre_filter=lambda state, pod, nodes: (None, Status(Code.SKIP)),
                   filter=lambda state, pod, ni: Status(U, "never"))
    keep = fake("Keep", filter=lambda state, pod, ni: None)
    fw = tf(skip_me, keep)
    assert fw.run_pre_filter(pod()).status.is_success()
    assert [p.name for p in fw.framework.active_filter_plugins(fw.state)] == ["Keep"]
    assert fw.run_filter(pod(), "n1", pre_filter=False).is_success()
