"""WindowTransfer (issue 5): the window's arithmetic, args, PreEnqueue, PreFilter, Filter (and its
batch form), Score, Permit, queueing hints, events and metrics, one extension point at a time.

kubesched's own plugin, so there is no upstream table to port. Expectations are computed by hand:
window instants from the tz database's rules (Europe/Berlin is CET, +01:00, except CEST, +02:00,
from 2026-03-29T01:00Z to 2026-10-25T01:00Z; America/New_York is EDT, -04:00, in July;
Asia/Kolkata is +05:30), free bandwidth as allocatable minus the requests on the node, and
NormalizeScore as upstream's ``DefaultNormalizeScore``
(pkg/scheduler/framework/plugins/helper/normalize_score.go). Whole runs: tests/sim/test_window_transfer_sim.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cli import cli
from kubesched.config.errors import ConfigError
from kubesched.config.load import load_config, loads_config
from kubesched.framework.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.runtime import FrameworkError
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.registry import default_registry
from kubesched.plugins.windowtransfer import ERR_REASON_BANDWIDTH, WINDOW_OPENED, DailyWindow, WindowTransfer
from kubesched.plugins.windowtransfer.window import parse_hh_mm
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

PROFILE = "window-transfer-scheduler"
BW = "kubesched.io/bandwidth"
#: Issue 5's configuration, verbatim under the two header lines.
EXACT_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: window-transfer-scheduler
    plugins:
      filter: {enabled: [{name: WindowTransfer}]}
      score: {enabled: [{name: WindowTransfer, weight: 3}]}
      permit: {enabled: [{name: WindowTransfer}]}
    pluginConfig:
      - name: WindowTransfer
        args: {windowStart: "22:00", windowEnd: "06:00", bandwidthThreshold: 1000}
"""
NIGHT = {"windowStart": "22:00", "windowEnd": "06:00", "bandwidthThreshold": 1000}


def at(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def exact_config(**args: Any) -> dict[str, Any]:
    """The issue's configuration, with some args changed (``None`` removes one)."""
    raw: dict[str, Any] = yaml.safe_load(EXACT_CONFIG)
    merged = {**raw["profiles"][0]["pluginConfig"][0]["args"], **args}
    raw["profiles"][0]["pluginConfig"][0]["args"] = {k: v for k, v in merged.items() if v is not None}
    return raw


def node(name: str, bandwidth: int | None) -> dict[str, Any]:
    n = make_node(name).capacity(cpu="16", memory="64Gi")
    return (n.res({BW: bandwidth}) if bandwidth is not None else n).obj()


def transfer(name: str, bandwidth: int = 0, *, on: str = "", priority: int = 0, **labels: str) -> dict[str, Any]:
    p = make_pod(name).scheduler_name(PROFILE).res({"cpu": "100m", BW: bandwidth}).priority(priority)
    for k, v in labels.items():
        p = p.label(k, v)
    return (p.node(on) if on else p).obj()


Objs = Sequence[dict[str, Any]]


def profile(start: str, nodes: Objs = (), pods: Objs = (), **args: Any) -> TestFramework:
    """The issue's profile (default plugins + WindowTransfer at filter/score/permit) at ``start``."""
    return new_framework(exact_config(**args), nodes=nodes, pods=pods, clock=VirtualClock(at(start)))


def alone(start: str, nodes: Objs = (), pods: Objs = (), **args: Any) -> TestFramework:
    """WindowTransfer alone, at every point it implements (multiPoint), scheduling every pod."""
    clock = VirtualClock(at(start))
    return new_framework([WindowTransfer], nodes, pods, args={"WindowTransfer": {**NIGHT, **args}}, clock=clock)


def plugin(fw: TestFramework) -> WindowTransfer:
    p = fw.plugin("WindowTransfer")
    assert isinstance(p, WindowTransfer)
    return p


# ---------------------------------------------------------------------------------------------
# the window


def window(start: str, end: str, zone: str = "UTC") -> DailyWindow:
    return DailyWindow(parse_hh_mm(start), parse_hh_mm(end), ZoneInfo(zone))


@pytest.mark.parametrize(
    ("start", "end", "now", "open_"),
    [
        # crossing midnight
        ("22:00", "06:00", "2026-01-01T21:59:59Z", False),
        ("22:00", "06:00", "2026-01-01T22:00:00Z", True),
        ("22:00", "06:00", "2026-01-02T00:00:00Z", True),
        ("22:00", "06:00", "2026-01-02T05:59:59Z", True),
        ("22:00", "06:00", "2026-01-02T06:00:00Z", False),
        ("22:00", "06:00", "2026-01-02T12:00:00Z", False),
        # within one day
        ("09:00", "17:30", "2026-01-01T08:59:59Z", False),
        ("09:00", "17:30", "2026-01-01T09:00:00Z", True),
        ("09:00", "17:30", "2026-01-01T17:29:59Z", True),
        ("09:00", "17:30", "2026-01-01T17:30:00Z", False),
        ("09:00", "17:30", "2026-01-01T23:00:00Z", False),
        # the whole day but a minute
        ("00:01", "00:00", "2026-01-01T00:00:30Z", False),
        ("00:01", "00:00", "2026-01-01T12:00:00Z", True),
    ],
)
def test_window_bounds_in_utc(start: str, end: str, now: str, open_: bool) -> None:
    assert window(start, end).is_open(at(now)) is open_


@pytest.mark.parametrize(
    ("zone", "start", "end", "now", "state"),
    [
        # Europe/Berlin in winter: 22:00-06:00 CET is 21:00Z-05:00Z.
        ("Europe/Berlin", "22:00", "06:00", "2026-01-15T20:59:59Z", (False, "2026-01-15T21:00:00Z")),
        ("Europe/Berlin", "22:00", "06:00", "2026-01-15T21:00:00Z", (True, "2026-01-16T05:00:00Z")),
        # The night clocks go forward: 22:00 CET to 06:00 CEST, 7 hours.
        ("Europe/Berlin", "22:00", "06:00", "2026-03-28T12:00:00Z", (False, "2026-03-28T21:00:00Z")),
        ("Europe/Berlin", "22:00", "06:00", "2026-03-29T03:59:59Z", (True, "2026-03-29T04:00:00Z")),
        ("Europe/Berlin", "22:00", "06:00", "2026-03-29T04:00:00Z", (False, "2026-03-29T20:00:00Z")),
        # The night clocks go back: 22:00 CEST to 06:00 CET, 9 hours.
        ("Europe/Berlin", "22:00", "06:00", "2026-10-24T19:59:59Z", (False, "2026-10-24T20:00:00Z")),
        ("Europe/Berlin", "22:00", "06:00", "2026-10-24T20:00:00Z", (True, "2026-10-25T05:00:00Z")),
        ("Europe/Berlin", "22:00", "06:00", "2026-10-25T05:00:00Z", (False, "2026-10-25T21:00:00Z")),
        # A start the clocks skip (02:30 on 2026-03-29) opens when they jump past it, 03:00 CEST.
        ("Europe/Berlin", "02:30", "04:00", "2026-03-28T12:00:00Z", (False, "2026-03-29T01:00:00Z")),
        ("Europe/Berlin", "02:30", "04:00", "2026-03-29T01:00:00Z", (True, "2026-03-29T02:00:00Z")),
        # A window the clocks skip entirely that night opens the next night (02:10 CEST).
        ("Europe/Berlin", "02:10", "02:50", "2026-03-28T12:00:00Z", (False, "2026-03-30T00:10:00Z")),
        # A wall time that occurs twice (2026-10-25) means its first occurrence: one opening a day.
        ("Europe/Berlin", "02:30", "02:45", "2026-10-25T00:30:00Z", (True, "2026-10-25T00:45:00Z")),
        ("Europe/Berlin", "02:30", "02:45", "2026-10-25T00:45:00Z", (False, "2026-10-26T01:30:00Z")),
        ("Europe/Berlin", "02:30", "02:45", "2026-10-25T01:35:00Z", (False, "2026-10-26T01:30:00Z")),
        # Other offsets: EDT (-04:00) and a half-hour zone (+05:30).
        ("America/New_York", "22:00", "06:00", "2026-07-01T12:00:00Z", (False, "2026-07-02T02:00:00Z")),
        ("Asia/Kolkata", "22:00", "06:00", "2026-07-01T16:30:00Z", (True, "2026-07-02T00:30:00Z")),
    ],
)
def test_window_state_in_time_zones(zone: str, start: str, end: str, now: str, state: tuple[bool, str]) -> None:
    """``state(now)``: (True, when it closes) inside the window, (False, when it next opens) outside."""
    w = window(start, end, zone)
    assert w.state(at(now)) == (state[0], at(state[1]))
    # The cached answer for an instant agrees with a fresh window's.
    assert window(start, end, zone).is_open(at(now)) is w.is_open(at(now))


def test_next_opening_is_strictly_after_now() -> None:
    w = window("22:00", "06:00")
    assert w.next_opening(at("2026-01-01T22:00:00Z")) == at("2026-01-02T22:00:00Z")
    assert w.next_opening(at("2026-01-02T03:00:00Z")) == at("2026-01-02T22:00:00Z")


def test_instants_print_in_the_window_time_zone() -> None:
    assert window("22:00", "06:00").format_instant(at("2026-01-01T22:00:00Z")) == "2026-01-01T22:00:00Z"
    berlin = window("22:00", "06:00", "Europe/Berlin")
    assert berlin.format_instant(at("2026-03-28T21:00:00Z")) == "2026-03-28T22:00:00+01:00"
    assert berlin.format_instant(at("2026-03-29T20:00:00Z")) == "2026-03-29T22:00:00+02:00"
    assert str(berlin) == "22:00-06:00 Europe/Berlin"


# ---------------------------------------------------------------------------------------------
# configuration


def test_the_exact_config_of_the_issue_loads_and_enables_the_gate() -> None:
    config = loads_config(EXACT_CONFIG, args_types=default_registry(entry_points=False).args_types())
    fw = new_framework(config, clock=VirtualClock(at("2026-01-01T21:00:00Z")))
    points = fw.framework.list_plugins()
    assert points["PreEnqueue"][-1] == "WindowTransfer"  # implied_pre_enqueue: see the module docstring
    assert points["Filter"][-1] == "WindowTransfer"
    assert points["Score"][-1] == "WindowTransfer(weight=3)"
    assert points["Permit"] == ["WindowTransfer"]
    assert "WindowTransfer" not in points["PreFilter"] and "WindowTransfer" not in points["PreScore"]
    p = plugin(fw)
    assert (str(p.window), p.resource, p.threshold, p.wait, p.args.preempt_in_window) == (
        "22:00-06:00 UTC",
        BW,
        1000,
        True,
        False,
    )
    assert p.selector.empty


def test_all_args_decode() -> None:
    fw = profile(
        "2026-01-01T00:00:00Z",
        timeZone="Europe/Berlin",
        bandwidthResource="example.com/net",
        outsideWindow="Reject",
        preemptInWindow=True,
        podSelector={"matchLabels": {"kind": "transfer"}},
    )
    p = plugin(fw)
    assert (str(p.window), p.resource, p.wait, p.args.preempt_in_window) == (
        "22:00-06:00 Europe/Berlin",
        "example.com/net",
        False,
        True,
    )
    assert p.selector.matches({"kind": "transfer"}) and not p.selector.matches({"kind": "web"})


ARGS = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        (
            {"windowStart": "24:00", "windowEnd": "6:00"},
            [
                f'{ARGS}.windowStart: must be a time "HH:MM" between 00:00 and 23:59, got "24:00"',
                f'{ARGS}.windowEnd: must be a time "HH:MM" between 00:00 and 23:59, got "6:00"',
            ],
        ),
        ({"windowEnd": "22:00"}, [f'{ARGS}.windowEnd: must differ from windowStart, got "22:00"']),
        (
            {"timeZone": "Mars/Olympus_Mons"},
            [f'{ARGS}.timeZone: must be an IANA time zone name such as "Europe/Berlin", got "Mars/Olympus_Mons"'],
        ),
        ({"timeZone": ""}, [f'{ARGS}.timeZone: must be an IANA time zone name such as "Europe/Berlin", got ""']),
        ({"bandwidthThreshold": -1}, [f"{ARGS}.bandwidthThreshold: must be greater than or equal to 0, got -1"]),
        ({"bandwidthThreshold": "1G"}, [f'{ARGS}.bandwidthThreshold: must be int, got "1G"']),
        ({"outsideWindow": "Later"}, [f'{ARGS}.outsideWindow: must be one of "Wait", "Reject", got "Later"']),
        ({"preemptInWindow": "yes"}, [f'{ARGS}.preemptInWindow: must be bool, got "yes"']),
        (
            {"bandwidthResource": "cpu"},
            [
                f"{ARGS}.bandwidthResource: must be an extended resource name "
                '(a domain-prefixed name outside kubernetes.io), got "cpu"'
            ],
        ),
        (
            {"podSelector": {"matchExpressions": [{"key": "kind", "operator": "Near"}]}},
            [f'{ARGS}.podSelector.matchExpressions[0].operator: "Near" is not a valid label selector operator'],
        ),
        ({"podSelector": {"matchLabel": {"kind": "transfer"}}}, [f"{ARGS}.podSelector.matchLabel: unknown field"]),
        ({"window": "night"}, [f"{ARGS}.window: unknown field"]),
        ({"windowStart": None}, [f"{ARGS}.windowStart: required field is missing"]),
    ],
)
def test_invalid_args_are_config_errors_naming_the_field(args: dict[str, Any], errors: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(exact_config(**args), args_types=default_registry(entry_points=False).args_types())
    assert [str(e) for e in err.value.errors] == errors


def test_invalid_args_exit_2_from_the_cli(tmp_path: Path) -> None:
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(yaml.safe_dump(exact_config(windowStart="25:00", bandwidthThreshold=-5)))
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump(node("n1", 10000)))
    result = CliRunner().invoke(cli, ["simulate", str(tmp_path), "--config", str(config)])
    assert result.exit_code == 2
    output = result.output.replace("\n", "")  # undo the console's wrapping
    assert f'{config}: {ARGS}.windowStart: must be a time "HH:MM" between 00:00 and 23:59, got "25:00"' in output
    assert f"{config}: {ARGS}.bandwidthThreshold: must be greater than or equal to 0, got -5" in output
    assert "Traceback" not in output


def test_enabled_without_args_is_a_framework_error() -> None:
    with pytest.raises(FrameworkError, match="args windowStart and windowEnd are required"):
        new_framework([WindowTransfer])


# ---------------------------------------------------------------------------------------------
# PreEnqueue


def test_wait_gates_pods_outside_the_window_naming_the_next_opening() -> None:
    fw = profile("2026-01-01T21:00:00Z")
    status = fw.run_pre_enqueue(transfer("t", 100))
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "WindowTransfer")
    assert status.message() == "waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z"
    fw.clock.advance_to(at("2026-01-01T22:00:00Z"))
    assert fw.run_pre_enqueue(transfer("t", 100)).is_success()


def test_the_gate_names_the_opening_in_the_window_time_zone() -> None:
    fw = profile("2026-03-29T12:00:00Z", timeZone="Europe/Berlin")
    assert fw.run_pre_enqueue(transfer("t")).message().endswith("which opens at 2026-03-29T22:00:00+02:00")


def test_reject_does_not_gate() -> None:
    fw = profile("2026-01-01T21:00:00Z", outsideWindow="Reject")
    assert fw.run_pre_enqueue(transfer("t", 100)).is_success()


def test_pods_the_selector_leaves_out_are_never_held() -> None:
    fw = profile("2026-01-01T12:00:00Z", nodes=[node("n1", None)], podSelector={"matchLabels": {"kind": "transfer"}})
    web = transfer("web", 0, kind="web")
    assert fw.run_pre_enqueue(web).is_success()
    p, pi = plugin(fw), fw.pod_info(web)
    assert p.filter(CycleState(), pi, fw.node_info("n1")) is None
    assert p.score(CycleState(), pi, fw.node_info("n1")) == (0, None)
    assert p.permit(CycleState(), pi, "n1") == (None, 0.0)
    assert not fw.run_pre_enqueue(transfer("t", 0, kind="transfer")).is_success()


# ---------------------------------------------------------------------------------------------
# PreFilter (when enabled) and Filter


def test_prefilter_rejects_once_outside_the_window_and_skips_unselected_pods() -> None:
    fw = alone("2026-01-01T07:00:00Z", nodes=[node("n1", 10000)], podSelector={"matchLabels": {"kind": "transfer"}})
    out = fw.run_pre_filter(transfer("t", 100, kind="transfer"))
    assert out.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert out.status.message() == "outside the transfer window 22:00-06:00 UTC (next opening 2026-01-01T22:00:00Z)"
    assert fw.run_pre_filter(transfer("web", kind="web")).status.is_success()
    assert "WindowTransfer" in fw.state.skip_filter_plugins


def test_filter_rejects_every_node_outside_the_window() -> None:
    fw = profile("2026-01-02T06:00:00Z", nodes=[node("n1", 10000)])
    status = plugin(fw).filter(CycleState(), fw.pod_info(transfer("t", 100)), fw.node_info("n1"))
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == "outside the transfer window 22:00-06:00 UTC (next opening 2026-01-02T22:00:00Z)"


@pytest.mark.parametrize(
    ("allocatable", "used", "wanted", "threshold", "preempt", "code"),
    [
        # free after placement = allocatable - used - request, which must stay >= threshold
        (10000, [], 4000, 1000, False, Code.SUCCESS),  # 6000 left
        (10000, [2000, 3000], 4000, 1000, False, Code.SUCCESS),  # exactly 1000 left
        (10000, [5500], 4000, 1000, False, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),  # 500 left
        (10000, [5500], 4000, 1000, True, Code.UNSCHEDULABLE),  # evicting the 5500 would leave 6000
        (4500, [], 4000, 1000, True, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),  # even empty: 500 left
        (10000, [8000], 4000, 0, True, Code.UNSCHEDULABLE),  # the request itself does not fit
        (10000, [7000, 7000], 0, 0, True, Code.UNSCHEDULABLE),  # over-committed by pods bound elsewhere
        (None, [], 0, 0, False, Code.SUCCESS),  # no bandwidth, none needed
        (None, [], 0, 1000, True, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),  # no bandwidth to keep free
    ],
)
def test_filter_keeps_the_threshold_free(
    allocatable: int | None, used: list[int], wanted: int, threshold: int, preempt: bool, code: Code
) -> None:
    placed = [transfer(f"p{i}", u, on="n1") for i, u in enumerate(used)]
    fw = profile(
        "2026-01-01T23:00:00Z",
        nodes=[node("n1", allocatable)],
        pods=placed,
        bandwidthThreshold=threshold,
        preemptInWindow=preempt,
    )
    status = plugin(fw).filter(CycleState(), fw.pod_info(transfer("t", wanted)), fw.node_info("n1"))
    if code == Code.SUCCESS:
        assert status is None
    else:
        assert status is not None and (status.code, status.reasons) == (code, [ERR_REASON_BANDWIDTH])


def test_failed_scheduling_message_counts_the_bandwidth_reason() -> None:
    fw = profile("2026-01-01T23:00:00Z", nodes=[node("n1", 4500), node("n2", 4500), node("n3", 20000)])
    status = fw.run_filter(transfer("t", 4000), "n1")
    assert (status.plugin, status.reasons) == ("WindowTransfer", [ERR_REASON_BANDWIDTH])
    assert fw.run_filter(transfer("t", 4000), "n3").is_success()


@st.composite
def bandwidth_clusters(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 8))
    nodes = [draw(st.one_of(st.none(), st.integers(0, 50_000))) for _ in range(n)]
    pods = [(i, draw(st.integers(0, 20_000))) for i in range(n) for _ in range(draw(st.integers(0, 3)))]
    return {
        "nodes": nodes,
        "pods": pods,
        "request": draw(st.integers(0, 20_000)),
        "threshold": draw(st.integers(0, 10_000)),
        "open": draw(st.booleans()),
        "selected": draw(st.booleans()),
    }


@settings(max_examples=60, deadline=None)
@given(bandwidth_clusters())
def test_batch_forms_equal_the_per_node_ones(c: dict[str, Any]) -> None:
    nodes = [node(f"n{i}", a) for i, a in enumerate(c["nodes"])]
    placed = [transfer(f"p{j}", bw, on=f"n{i}") for j, (i, bw) in enumerate(c["pods"])]
    fw = profile(
        "2026-01-01T23:00:00Z" if c["open"] else "2026-01-01T12:00:00Z",
        nodes=nodes,
        pods=placed,
        bandwidthThreshold=c["threshold"],
        podSelector={"matchLabels": {"kind": "transfer"}},
    )
    p = plugin(fw)
    pod = fw.pod_info(transfer("t", c["request"], kind="transfer" if c["selected"] else "web"))
    infos = fw.nodes()
    snap = fw.scheduler.snapshot
    idx = np.arange(len(infos), dtype=np.intp)[::-1].copy()  # any order of positions
    state = CycleState()
    mask = p.filter_batch(state, pod, snap, idx)
    assert mask.tolist() == [p.filter(state, pod, infos[i]) is None for i in idx]
    assert p.score_batch(state, pod, snap, idx).tolist() == [p.score(state, pod, infos[i])[0] for i in idx]


# ---------------------------------------------------------------------------------------------
# Score and NormalizeScore


def test_score_prefers_the_most_free_bandwidth_after_placement() -> None:
    nodes = [node("a", 10000), node("b", 20000), node("c", 8000), node("d", None)]
    placed = [transfer("pa", 2000, on="a"), transfer("pb", 4000, on="b")]
    fw = alone("2026-01-01T23:00:00Z", nodes=nodes, pods=placed, bandwidthThreshold=0)
    res = fw.run_score(transfer("t", 3000))
    # left after placement: a 10000-2000-3000 = 5000, b 13000, c 5000, d nothing (0).
    assert res.raw["WindowTransfer"].tolist() == [5000, 13000, 5000, 0]
    # DefaultNormalizeScore: 100 * score // max.
    assert res.normalized["WindowTransfer"].tolist() == [38, 100, 38, 0]


def test_score_weight_comes_from_the_config() -> None:
    fw = profile("2026-01-01T23:00:00Z", nodes=[node("a", 10000), node("b", 20000)])
    res = fw.run_score(transfer("t", 3000))
    assert res.weights["WindowTransfer"] == 3
    assert res.normalized["WindowTransfer"].tolist() == [41, 100]  # 7000 and 17000 left


# ---------------------------------------------------------------------------------------------
# Permit


def test_permit_lets_pods_through_only_while_the_window_is_open() -> None:
    fw = profile("2026-01-02T05:59:59Z", nodes=[node("n1", 10000)])
    pod = transfer("t", 100)
    assert fw.run_permit(pod, "n1").is_success()
    fw.clock.advance_to(at("2026-01-02T06:00:00Z"))
    status = fw.run_permit(pod, "n1")
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE, "WindowTransfer")
    assert status.message() == (
        "the transfer window 22:00-06:00 UTC closed during the scheduling cycle (next opening 2026-01-02T22:00:00Z)"
    )


# ---------------------------------------------------------------------------------------------
# waiting: events, metrics, the timer


def samples(fw: TestFramework) -> tuple[float | None, float | None]:
    reg = fw.scheduler.metrics.registry
    labels = {"profile": PROFILE}
    return (
        reg.get_sample_value("kubesched_window_transfer_waiting_pods", labels),
        reg.get_sample_value("kubesched_window_transfer_window_openings_total", labels),
    )


def test_events_and_metrics_of_a_wait() -> None:
    fw = profile("2026-01-01T21:00:00Z")
    assert samples(fw) == (0.0, 0.0)
    a, b = transfer("a"), transfer("b")
    for _ in range(3):  # gated again and again: one event per pod and opening
        fw.run_pre_enqueue(a)
    fw.run_pre_enqueue(b)
    assert samples(fw) == (2.0, 0.0)
    note = "Waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z"
    assert [(e.name, e.type, e.reason, e.note) for e in fw.cluster.events] == [
        (n, "Normal", "WaitingForTransferWindow", note) for n in ("a", "b")
    ]
    fw.clock.advance_to(at("2026-01-01T22:00:00Z"))
    assert samples(fw) == (0.0, 0.0)  # nobody waits for an opening still to come
    fw.run_pre_enqueue(a)
    assert [(e.name, e.reason, e.note) for e in fw.cluster.events[2:]] == [
        ("a", "TransferWindowOpened", "The transfer window 22:00-06:00 UTC opened at 2026-01-01T22:00:00Z")
    ]


def test_one_timer_per_opening_raises_the_window_event() -> None:
    fw = profile("2026-01-01T21:00:00Z")
    raised: list[ClusterEvent] = []
    fw.scheduler.handles[PROFILE].move_pods_on_event = lambda ev, old=None, new=None: raised.append(ev)  # type: ignore[method-assign]
    for name in ("a", "b", "c"):
        fw.run_pre_enqueue(transfer(name))
    fw.clock.step(3599)
    assert raised == []
    fw.clock.step(1)  # 22:00:00
    assert raised == [WINDOW_OPENED]
    assert samples(fw)[1] == 1.0
    fw.clock.step(7 * 24 * 3600)
    assert raised == [WINDOW_OPENED]  # no polling: no pod waits, no timer


# ---------------------------------------------------------------------------------------------
# queueing hints


def hint(fw: TestFramework, resource: EventResource, pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    for ewh in plugin(fw).events_to_register():
        if ewh.event.resource == resource:
            assert ewh.hint is not None
            return ewh.hint(pod, old, new)
    raise AssertionError(f"no event registered for {resource}")


def test_registered_events() -> None:
    events = [e.event for e in plugin(profile("2026-01-01T23:00:00Z")).events_to_register()]
    assert events == [
        WINDOW_OPENED,
        ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
    ]


def test_window_hint_queues_only_when_the_window_is_open() -> None:
    fw = profile("2026-01-01T21:59:59Z")
    assert hint(fw, EventResource.TIMER, transfer("t"), None, None) == QueueingHint.QUEUE_SKIP
    fw.clock.advance_to(at("2026-01-01T22:00:00Z"))
    assert hint(fw, EventResource.TIMER, transfer("t"), None, None) == QueueingHint.QUEUE


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (transfer("x", 3000, on="n1"), None, QueueingHint.QUEUE),  # a placed pod holding bandwidth left
        (transfer("x", 0, on="n1"), None, QueueingHint.QUEUE_SKIP),  # it held none
        (transfer("x", 3000), None, QueueingHint.QUEUE_SKIP),  # never placed
        (make_pod("x").res({BW: 3000}).nominated_node("n1").obj(), None, QueueingHint.QUEUE),  # nominated there
        (transfer("x", 3000, on="n1"), transfer("x", 1000, on="n1"), QueueingHint.QUEUE),  # scaled down
        (transfer("x", 3000, on="n1"), transfer("x", 3000, on="n1"), QueueingHint.QUEUE_SKIP),
    ],
)
def test_pod_hint(old: dict[str, Any], new: dict[str, Any] | None, expected: QueueingHint) -> None:
    fw = profile("2026-01-01T23:00:00Z")
    assert hint(fw, EventResource.POD, transfer("t", 500), old, new) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, 6000, QueueingHint.QUEUE),  # a new node with room for 5000 + the 1000 threshold
        (None, 5999, QueueingHint.QUEUE_SKIP),  # not even empty
        (4000, 8000, QueueingHint.QUEUE),  # bandwidth grew
        (8000, 8000, QueueingHint.QUEUE_SKIP),  # another change
    ],
)
def test_node_hint(old: int | None, new: int, expected: QueueingHint) -> None:
    fw = profile("2026-01-01T23:00:00Z")
    before = node("n", old) if old is not None else None
    assert hint(fw, EventResource.NODE, transfer("t", 5000), before, node("n", new)) == expected


def test_pods_waiting_for_an_opening_ignore_bandwidth_events() -> None:
    fw = profile("2026-01-01T21:00:00Z")
    waiting = transfer("t", 500)
    fw.run_pre_enqueue(waiting)
    assert hint(fw, EventResource.POD, waiting, transfer("x", 3000, on="n1"), None) == QueueingHint.QUEUE_SKIP
    assert hint(fw, EventResource.NODE, waiting, None, node("n", 60000)) == QueueingHint.QUEUE_SKIP


def test_label_hint_queues_a_pod_the_selector_no_longer_holds() -> None:
    fw = profile("2026-01-01T12:00:00Z", podSelector={"matchLabels": {"kind": "transfer"}})
    before = transfer("t", 500, kind="transfer")
    after = transfer("t", 500, kind="web")
    assert hint(fw, EventResource.UNSCHEDULED_POD, before, before, after) == QueueingHint.QUEUE
    assert hint(fw, EventResource.UNSCHEDULED_POD, before, after, before) == QueueingHint.QUEUE_SKIP
    other = transfer("u", 500, kind="web")
    assert hint(fw, EventResource.UNSCHEDULED_POD, before, other, other) == QueueingHint.QUEUE_SKIP


def test_pod_info_parse_is_memoised_per_pod() -> None:
    fw = profile("2026-01-01T23:00:00Z", nodes=[node("n1", 10000)])
    pi = PodInfo(transfer("t", 700))
    plugin(fw).filter(CycleState(), pi, fw.node_info("n1"))
    assert pi.cache["WindowTransfer"].request == 700
