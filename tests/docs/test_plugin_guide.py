"""The TransferWindow example of docs/plugin-guide.md, tested with the plugin test kit.

The guide quotes these tests; expectations are hand-computed from the window's definition (start
inclusive, end exclusive, UTC) and upstream's FailedScheduling format
(``FitError.Error()`` in ``pkg/scheduler/framework/types.go``).
"""

from collections.abc import Callable
from datetime import datetime

import pytest
from transfer_window import TransferWindow

from kubesched.framework import Code, ConfigError, FrameworkError, VirtualClock
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NIGHT = {"TransferWindow": {"windowStart": "22:00", "windowEnd": "06:00"}}


def at(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_filter_passes_inside_the_window_and_rejects_outside() -> None:
    clock = VirtualClock(at("2026-01-01T23:00:00Z"))
    fw = new_framework([TransferWindow], nodes=[make_node("n1").obj()], args=NIGHT, clock=clock)
    pod = make_pod("backup").obj()

    assert fw.run_filter(pod, "n1").is_success()

    clock.advance_to(at("2026-01-02T06:00:00Z"))
    status = fw.run_filter(pod, "n1")
    assert status.code == Code.UNSCHEDULABLE
    assert status.message() == "outside the data-transfer window 22:00-06:00 UTC"
    assert status.plugin == "TransferWindow"


@pytest.mark.parametrize(
    ("start", "end", "now", "open_"),
    [
        ("22:00", "06:00", "21:59", False),
        ("22:00", "06:00", "22:00", True),
        ("22:00", "06:00", "00:00", True),
        ("22:00", "06:00", "05:59", True),
        ("22:00", "06:00", "06:00", False),
        ("09:00", "17:30", "08:59", False),
        ("09:00", "17:30", "09:00", True),
        ("09:00", "17:30", "17:29", True),
        ("09:00", "17:30", "17:30", False),
    ],
)
def test_window_bounds(
    make_framework: Callable[..., TestFramework],
    virtual_clock: VirtualClock,
    start: str,
    end: str,
    now: str,
    open_: bool,
) -> None:
    fw = make_framework(
        [TransferWindow],
        nodes=[make_node("n1").obj()],
        args={"TransferWindow": {"windowStart": start, "windowEnd": end}},
    )
    virtual_clock.advance_to(at(f"2026-01-01T{now}:00Z"))

    status = fw.run_filter(make_pod("backup").obj(), "n1")
    assert status.code == (Code.SUCCESS if open_ else Code.UNSCHEDULABLE)


def test_args_are_validated() -> None:
    with pytest.raises(ConfigError) as err:
        new_framework([TransferWindow], args={"TransferWindow": {"windowStart": "24:00", "windowEnd": "6:00"}})
    assert [str(e) for e in err.value.errors] == [
        'profiles[0].pluginConfig[0].args.windowStart: must be a time "HH:MM" (UTC), got "24:00"',
        'profiles[0].pluginConfig[0].args.windowEnd: must be a time "HH:MM" (UTC), got "6:00"',
    ]
    with pytest.raises(FrameworkError, match="args windowStart and windowEnd are required"):
        new_framework([TransferWindow])


def test_rejected_pod_waits_for_the_window_to_open() -> None:
    # An odd second, so the unschedulable pool's 5-minute safety-net retries never land on 22:00:
    # only the plugin's TransferWindowOpened event can bind the pod exactly then.
    clock = VirtualClock(at("2026-01-01T12:00:07Z"))
    fw = new_framework([TransferWindow], nodes=[make_node("n1").obj()], args=NIGHT, clock=clock)
    pod = make_pod("backup").obj()
    fw.add_pod(pod)

    fw.schedule(until=at("2026-01-01T12:01:00Z"))
    assert fw.scheduler.queue.counts()["unschedulable"] == 1
    fw.add_node(make_node("n2").obj())  # an event TransferWindow did not register: the pod stays
    assert fw.scheduler.queue.counts()["unschedulable"] == 1

    fw.schedule()
    assert fw.scheduler.stats.bound_at[pod["metadata"]["uid"]] == at("2026-01-01T22:00:00Z")
    first = next(e for e in fw.cluster.events if e.reason == "FailedScheduling")
    assert first.note == "0/1 nodes are available: 1 outside the data-transfer window 22:00-06:00 UTC."
