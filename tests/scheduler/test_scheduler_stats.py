"""``SchedulerStats`` (issue 12): ``bound_at`` keeps only the latest ``RECENT_BINDINGS`` bindings, so a
long-running ``kubesched run`` does not grow by one entry per pod it ever bound, and the counters the
binding threads update lose no update."""

from __future__ import annotations

import threading

import pytest

import kubesched.scheduler.stats as scheduler_module
from kubesched.scheduler import RECENT_BINDINGS, SchedulerStats
from kubesched.testing import make_node, make_pod, new_framework


def test_bound_at_holds_the_latest_bindings_only() -> None:
    stats = SchedulerStats()
    for i in range(10_000):
        stats.bound(f"uid-{i}", float(i))
    assert RECENT_BINDINGS == 1000
    assert stats.scheduled == 10_000
    assert len(stats.bound_at) == 1000
    assert stats.bound_at == {f"uid-{i}": float(i) for i in range(9000, 10_000)}


def test_a_pod_bound_again_is_the_newest() -> None:
    stats = SchedulerStats()
    stats.bound("a", 1.0)
    for i in range(RECENT_BINDINGS - 1):
        stats.bound(f"uid-{i}", 2.0)
    stats.bound("a", 3.0)  # bound again (deleted and recreated with its UID, as in a test)
    stats.bound("b", 4.0)  # one over the bound: the oldest goes, which is no longer "a"
    assert len(stats.bound_at) == RECENT_BINDINGS
    assert stats.bound_at["a"] == 3.0 and "uid-0" not in stats.bound_at
    assert stats.scheduled == RECENT_BINDINGS + 2


def test_counters_lose_no_update_across_threads() -> None:
    stats = SchedulerStats()
    threads, per_thread = 8, 5000
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        start.wait()
        for i in range(per_thread):
            stats.bound(f"{t}-{i}", 0.0)
            stats.failed(rejected=i % 2 == 0)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert stats.scheduled == threads * per_thread
    assert stats.unschedulable == stats.errors == threads * per_thread // 2
    assert len(stats.bound_at) == RECENT_BINDINGS


def test_the_scheduler_records_bindings_through_the_bounded_structure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler_module, "RECENT_BINDINGS", 5)
    node = make_node("n1").capacity(cpu="64", memory="64Gi", pods="110").obj()
    fw = new_framework(["NodeResourcesFit"], nodes=[node])
    uids = []
    for i in range(30):
        pod = make_pod(f"p{i}").req(cpu="100m").obj()
        uids.append(pod["metadata"]["uid"])
        fw.add_pod(pod)
    fw.add_pod(make_pod("huge").req(cpu="100").obj())  # never fits: one Unschedulable attempt
    fw.schedule()
    stats = fw.scheduler.stats
    assert stats.scheduled == 30
    assert stats.unschedulable >= 1 and stats.errors == 0
    assert len(stats.bound_at) == 5
    assert set(stats.bound_at) <= set(uids)
