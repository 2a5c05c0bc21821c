"""WindowTransfer (issue 5) in whole runs: the queue, both cycles, binding, preemption, on the virtual clock.

Every time and placement below is worked out by hand from the scenario (window instants, free
bandwidth = allocatable minus the requests on the node, the 1000 Mbit/s threshold); FailedScheduling
messages follow upstream's FitError format (pkg/scheduler/framework/types.go ``FitError.Error``) and
DefaultPreemption's ``preemption: ...`` suffix (pkg/scheduler/framework/preemption/preemption.go).
The unit-level tests are in tests/plugins/test_window_transfer.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.framework.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.registry import default_registry
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "window-transfer"
PROFILE = "window-transfer-scheduler"
BW = "kubesched.io/bandwidth"
NIGHT = {"windowStart": "22:00", "windowEnd": "06:00", "bandwidthThreshold": 1000}


def at(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def config(**args: Any) -> dict[str, Any]:
    """The configuration of issue 5 (examples/window-transfer/scheduler-config.yaml), args changed."""
    raw: dict[str, Any] = yaml.safe_load((EXAMPLE / "scheduler-config.yaml").read_text())
    raw["profiles"][0]["pluginConfig"][0]["args"].update(args)
    return raw


def node(name: str, bandwidth: int | None) -> dict[str, Any]:
    n = make_node(name).capacity(cpu="16", memory="64Gi")
    return (n.res({BW: bandwidth}) if bandwidth is not None else n).obj()


def transfer(name: str, bandwidth: int, *, priority: int = 0, on: str = "") -> dict[str, Any]:
    p = make_pod(name).scheduler_name(PROFILE).res({"cpu": "500m", BW: bandwidth}).priority(priority)
    return (p.node(on) if on else p).obj()


def run(
    start: str,
    nodes: Sequence[dict[str, Any]],
    pods: Sequence[dict[str, Any]] = (),
    *,
    raw: dict[str, Any] | None = None,
    registry: Any = None,
    **args: Any,
) -> TestFramework:
    return new_framework(
        raw or config(**args), nodes=nodes, pods=pods, clock=VirtualClock(at(start)), registry=registry
    )


def bound(fw: TestFramework, pod: dict[str, Any]) -> tuple[str | None, float | None]:
    """(node, when) of a pod, from the simulated cluster's record (it outlives the pod)."""
    md = pod["metadata"]
    h = fw.cluster.history[f"{md['namespace']}/{md['name']}"]
    return h["node"], h["boundAt"]


def failures(fw: TestFramework, name: str) -> list[tuple[str, str]]:
    return [(when, note) for when, reason, note in events(fw, name) if reason == "FailedScheduling"]


def arrive(fw: TestFramework, when: str, pod: dict[str, Any]) -> None:
    fw.clock.call_at(at(when), lambda: fw.add_pod(pod))


def events(fw: TestFramework, name: str) -> list[tuple[str, str, str]]:
    return [(datetime.fromtimestamp(e.time, UTC).strftime("%H:%M:%S"), e.reason, e.note) for e in fw.cluster.events
            if e.name == name]


def waiting_gauge(fw: TestFramework) -> float | None:
    return fw.scheduler.metrics.registry.get_sample_value(
        "kubesched_window_transfer_waiting_pods", {"profile": PROFILE}
    )


def openings(fw: TestFramework) -> float | None:
    return fw.scheduler.metrics.registry.get_sample_value(
        "kubesched_window_transfer_window_openings_total", {"profile": PROFILE}
    )


# ---------------------------------------------------------------------------------------------
# Wait


def test_wait_holds_pods_without_cycles_and_binds_them_exactly_at_the_opening() -> None:
    fw = run("2026-01-01T21:00:00Z", [node("n1", 10000), node("n2", 7000)])
    a, b = transfer("a", 4000), transfer("b", 4000)
    fw.add_pod(a)
    arrive(fw, "2026-01-01T21:30:00Z", b)

    fw.schedule(until=at("2026-01-01T21:59:59Z"))
    assert fw.scheduler.stats.attempts == 0  # gated: not a single scheduling cycle
    assert fw.scheduler.queue.counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 2}
    assert {q.last_failure for q, _ in fw.scheduler.queue.pending_pods()} == {
        "waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z"
    }
    assert (waiting_gauge(fw), openings(fw)) == (2.0, 0.0)

    fw.schedule()
    # a (queued first) takes n1, leaving 6000 there against 3000 on n2; b then leaves 2000 on n1, 3000 on n2.
    assert bound(fw, a) == ("n1", at("2026-01-01T22:00:00Z"))
    assert bound(fw, b) == ("n2", at("2026-01-01T22:00:00Z"))
    assert fw.scheduler.stats.attempts == 2
    assert (waiting_gauge(fw), openings(fw)) == (0.0, 1.0)
    assert events(fw, "b") == [
        ("21:30:00", "WaitingForTransferWindow",
         "Waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z"),
        ("22:00:00", "TransferWindowOpened", "The transfer window 22:00-06:00 UTC opened at 2026-01-01T22:00:00Z"),
        ("22:00:00", "Scheduled", "Successfully assigned default/b to n2"),
    ]


def test_pods_arriving_inside_the_window_and_just_before_it_closes() -> None:
    fw = run("2026-01-01T23:00:00Z", [node("n1", 10000)])
    inside = transfer("inside", 3000)
    last_second = transfer("last-second", 2000)
    too_late = transfer("too-late", 2000)
    fw.add_pod(inside)
    arrive(fw, "2026-01-02T05:59:59Z", last_second)
    arrive(fw, "2026-01-02T06:00:00Z", too_late)
    fw.schedule()
    assert bound(fw, inside) == ("n1", at("2026-01-01T23:00:00Z"))
    assert bound(fw, last_second) == ("n1", at("2026-01-02T05:59:59Z"))
    assert bound(fw, too_late) == ("n1", at("2026-01-02T22:00:00Z"))  # the window closes at 06:00:00 sharp


def test_a_pod_that_misses_the_window_for_bandwidth_waits_for_the_next_night() -> None:
    """It arrives at 05:59:59 while a 2000 Mbit/s transfer holds n1: 10000 - 2000 - 7500 < 1000."""
    fw = run("2026-01-02T05:59:00Z", [node("n1", 10000), node("n2", 7000), node("n3", None)])
    holder = transfer("holder", 2000)
    holder["metadata"]["annotations"] = {"sim.kubesched.io/duration": "30m"}
    late = transfer("late", 7500)
    fw.add_pod(holder)
    arrive(fw, "2026-01-02T05:59:59Z", late)
    fw.schedule(until=at("2026-01-02T12:00:00Z"))
    assert bound(fw, holder) == ("n1", at("2026-01-02T05:59:00Z"))
    assert bound(fw, late) == (None, None)
    assert failures(fw, "late")[0][1] == (
        "0/3 nodes are available: 1 node(s) had insufficient free bandwidth, 2 Insufficient kubesched.io/bandwidth. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    # The holder left at 06:29:00, outside the window: the pod is gated for the next opening.
    assert fw.scheduler.queue.counts()["gated"] == 1
    fw.schedule()
    assert bound(fw, late) == ("n1", at("2026-01-02T22:00:00Z"))


def test_europe_berlin_window_follows_daylight_saving_time() -> None:
    """22:00 in Berlin is 21:00Z on 2026-03-28 (CET) and 20:00Z on 2026-03-29 (CEST)."""
    fw = run("2026-03-28T12:00:00Z", [node("n1", 10000)], timeZone="Europe/Berlin")
    saturday, sunday = transfer("saturday", 1000), transfer("sunday", 1000)
    fw.add_pod(saturday)
    arrive(fw, "2026-03-29T03:59:59Z", transfer("before-six-cest", 1000))  # 05:59:59 CEST: open
    arrive(fw, "2026-03-29T12:00:00Z", sunday)
    fw.schedule()
    assert bound(fw, saturday)[1] == at("2026-03-28T21:00:00Z")
    assert bound(fw, transfer("before-six-cest", 0))[1] == at("2026-03-29T03:59:59Z")
    assert bound(fw, sunday)[1] == at("2026-03-29T20:00:00Z")
    assert events(fw, "sunday")[0][2] == (
        "Waiting for the transfer window 22:00-06:00 Europe/Berlin, which opens at 2026-03-29T22:00:00+02:00"
    )


# ---------------------------------------------------------------------------------------------
# Reject


def test_reject_fails_the_cycle_and_retries_when_the_window_opens() -> None:
    # An odd second, so the pool's 5-minute safety net never lands on 22:00:00: only the
    # plugin's WindowTransferOpened event can bind the pod exactly then.
    fw = run("2026-01-01T21:00:07Z", [node("n1", 10000), node("n2", 10000)], outsideWindow="Reject")
    pod = transfer("t", 4000)
    fw.add_pod(pod)
    fw.schedule(until=at("2026-01-01T21:00:30Z"))
    assert fw.scheduler.queue.counts()["unschedulable"] == 1
    assert events(fw, "t")[0] == (
        "21:00:07",
        "WaitingForTransferWindow",
        "Waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z",
    )
    assert failures(fw, "t")[0] == (
        "21:00:07",
        "0/2 nodes are available: 2 outside the transfer window 22:00-06:00 UTC "
        "(next opening 2026-01-01T22:00:00Z). "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    )
    fw.schedule()
    assert bound(fw, pod)[1] == at("2026-01-01T22:00:00Z")
    assert openings(fw) == 1.0


# ---------------------------------------------------------------------------------------------
# Permit at the end of a cycle that outlives the window


class SlowFilter:
    """A Filter that takes two seconds of (virtual) time on its first call: the cycle ends after 06:00."""

    name = "SlowFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        self.clock = handle.clock
        self.calls = 0

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        if self.calls == 1:
            self.clock.advance_to(self.clock.now() + 2)
        return None


def test_permit_rejects_when_the_window_closed_during_the_cycle() -> None:
    reg = default_registry(entry_points=False)
    reg.register("SlowFilter", SlowFilter)
    raw = config()
    raw["profiles"][0]["plugins"]["filter"]["enabled"].append({"name": "SlowFilter"})
    fw = run("2026-01-02T05:59:59Z", [node("n1", 10000)], raw=raw, registry=reg)
    pod = transfer("t", 1000)
    fw.add_pod(pod)
    fw.schedule(until=at("2026-01-02T06:00:30Z"))
    assert bound(fw, pod) == (None, None)
    assert failures(fw, "t") == [(
        "06:00:01",
        "0/1 nodes are available: 1 the transfer window 22:00-06:00 UTC closed during the scheduling cycle "
        "(next opening 2026-01-02T22:00:00Z).",
    )]
    fw.schedule()
    assert bound(fw, pod) == ("n1", at("2026-01-02T22:00:00Z"))


# ---------------------------------------------------------------------------------------------
# preemption in the window


def crowded_node() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """n1 (10000) holds 5500 in two low-priority pods; n2 (10000) holds 5500 in one pod of priority 50.

    A 4000 transfer fits both by NodeResourcesFit (4500 free) but would leave 500 < 1000.
    """
    nodes = [node("n1", 10000), node("n2", 10000)]
    pods = [
        transfer("low-1", 3500, priority=1, on="n1"),
        transfer("low-2", 2000, priority=2, on="n1"),
        transfer("mid", 5500, priority=50, on="n2"),
    ]
    return nodes, pods


def test_preempt_in_window_evicts_the_fewest_lowest_priority_pods() -> None:
    nodes, pods = crowded_node()
    fw = run("2026-01-01T23:00:00Z", nodes, pods, preemptInWindow=True)
    t = transfer("t", 4000, priority=100)
    fw.add_pod(t)
    fw.schedule()
    # On n1 evicting low-1 alone leaves 10000 - 2000 - 4000 = 4000; low-2 is reprieved. n2 would
    # need the priority-50 pod: n1's highest victim (1) is lower, so n1 is chosen.
    assert bound(fw, t)[0] == "n1"
    assert sorted(fw.cluster.pods) == ["default/low-2", "default/mid", "default/t"]
    assert [(e.name, e.note) for e in fw.cluster.events if e.reason == "Preempted"] == [
        ("low-1", f"Preempted by pod {t['metadata']['uid']} on node n1")
    ]


def test_without_preempt_in_window_the_transfer_does_not_preempt() -> None:
    nodes, pods = crowded_node()
    fw = run("2026-01-01T23:00:00Z", nodes, pods)
    t = transfer("t", 4000, priority=100)
    fw.add_pod(t)
    fw.schedule(until=at("2026-01-01T23:10:00Z"))
    assert bound(fw, t) == (None, None)
    assert len(fw.cluster.pods) == 4
    assert failures(fw, "t")[0][1] == (
        "0/2 nodes are available: 2 node(s) had insufficient free bandwidth. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_no_preemption_outside_the_window() -> None:
    nodes, pods = crowded_node()
    fw = run("2026-01-01T12:00:03Z", nodes, pods, preemptInWindow=True, outsideWindow="Reject")
    t = transfer("t", 4000, priority=100)
    fw.add_pod(t)
    fw.schedule(until=at("2026-01-01T12:01:00Z"))
    assert len(fw.cluster.pods) == 4
    assert failures(fw, "t")[0][1] == (
        "0/2 nodes are available: 2 outside the transfer window 22:00-06:00 UTC (next opening 2026-01-01T22:00:00Z). "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


# ---------------------------------------------------------------------------------------------
# the example, through the command line


@pytest.fixture(scope="module")
def example_run() -> dict[str, Any]:
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            str(EXAMPLE),
            "--config",
            str(EXAMPLE / "scheduler-config.yaml"),
            "--start",
            "2026-01-01T21:00:00Z",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_the_example_night(example_run: dict[str, Any]) -> None:
    """examples/window-transfer: gw-10g (10000), gw-7g (7000), compute-1 (none); threshold 1000."""
    pods = {p["name"]: (p["node"], p["boundAt"]) for p in example_run["pods"]}
    assert pods == {
        # 21:00 and 21:30 arrivals wait for 22:00:00; db leaves 6000 on gw-10g, logs then 3000 on gw-7g.
        "backup-db": ("gw-10g", "2026-01-01T22:00:00Z"),
        "backup-logs": ("gw-7g", "2026-01-01T22:00:00Z"),
        # 23:00: gw-10g has 6000 free (3000 left after), gw-7g 3000 (0 left).
        "sync-media": ("gw-10g", "2026-01-01T23:00:00Z"),
        # 05:59:30, everything above completed at 00:00: gw-10g leaves 8000, gw-7g 5000.
        "late-report": ("gw-10g", "2026-01-02T05:59:30Z"),
        # 05:59:59: 7500 leaves 500 on gw-10g, does not fit gw-7g: it waits for the next night.
        "late-archive": ("gw-10g", "2026-01-02T22:00:00Z"),
    }
    # Every transfer has a duration and the run goes on until the last one ends: all five completed.
    assert example_run["summary"] == {"pods": 5, "bound": 0, "pending": 0, "preempted": 0, "completed": 5, "deleted": 0}


def test_the_example_shows_gated_pods_as_pending_with_the_next_opening() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            str(EXAMPLE),
            "--config",
            str(EXAMPLE / "scheduler-config.yaml"),
            "--start",
            "2026-01-01T21:00:00Z",
            "--until",
            "45m",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    pending = {p["name"]: p["message"] for p in json.loads(result.stdout)["pods"]}
    assert pending == dict.fromkeys(
        ("backup-db", "backup-logs"),
        "waiting for the transfer window 22:00-06:00 UTC, which opens at 2026-01-01T22:00:00Z",
    )
