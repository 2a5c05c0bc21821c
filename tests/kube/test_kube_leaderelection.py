"""Leader election on a Lease, against client-go's rules (staging/src/k8s.io/client-go/tools/
leaderelection/leaderelection.go and resourcelock/leaselock.go; leaderelection_test.go's
TestTryAcquireOrRenew cases, as data below): acquire a missing or expired Lease, never one held
and recently renewed by someone else, count transitions, keep acquireTime while renewing,
release with an empty holder and a 1 s duration. Expiry is judged on *our* clock from when we
last saw the record change, never from the holder's renewTime.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from kube_fakes import FakeApi, LeaseStore

from kubesched.framework.clock import Clock, VirtualClock
from kubesched.kube.client import ApiError
from kubesched.kube.leaderelection import LeaderElectionError, LeaderElectionRecord, LeaderElector, LeaseLock
from kubesched.kube.objects import micro_time

T0 = 1767225600.0


def _elector(api: FakeApi, clock: Clock, identity: str = "me", **kw: Any) -> LeaderElector:
    lock = LeaseLock(api.client(), "kube-system", "kube-scheduler", identity)
    return LeaderElector(lock, clock, **kw)


def test_acquires_a_missing_lease_with_upstream_fields() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    store = LeaseStore(api)
    le = _elector(api, clock)
    assert le.try_acquire_or_renew()
    spec = store.leases["kube-scheduler"]["spec"]
    assert spec == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-01T00:00:00.000000Z",
        "renewTime": "2026-01-01T00:00:00.000000Z",
        "leaseTransitions": 0,
    }
    assert le.is_leader()


@dataclass
class Case:
    """One TestTryAcquireOrRenew-style case: the Lease as found, time passed, the outcome."""

    name: str
    holder: str
    transitions: int
    #: seconds between our first sight of the record and the attempt
    elapsed: float
    acquired: bool
    want_transitions: int


CASES = [
    Case("held by another, fresh", "other", 3, 5.0, False, 3),
    Case("held by another, not yet expired on our clock", "other", 3, 14.9, False, 3),
    Case("held by another, expired on our clock", "other", 3, 15.1, True, 4),
    Case("released (empty holder)", "", 3, 0.0, True, 4),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_try_acquire_from_another_holder(case: Case) -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    store = LeaseStore(api)
    # The holder's renewTime is far in the future: it must not matter (clock skew).
    store.put_directly(
        "kube-scheduler",
        {
            "holderIdentity": case.holder,
            "leaseDurationSeconds": 15,
            "acquireTime": micro_time(T0 - 100),
            "renewTime": micro_time(T0 + 3600),
            "leaseTransitions": case.transitions,
        },
    )
    le = _elector(api, clock)
    first = le.try_acquire_or_renew()  # observes the record now
    if not first:
        clock.advance_to(T0 + case.elapsed)
        got = le.try_acquire_or_renew()
    else:
        got = first
    assert got is case.acquired
    spec = store.leases["kube-scheduler"]["spec"]
    assert spec["leaseTransitions"] == case.want_transitions
    if case.acquired:
        assert spec["holderIdentity"] == "me"
        assert spec["acquireTime"] == micro_time(clock.now())


def test_renewal_keeps_acquire_time_and_uses_the_fast_path() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    store = LeaseStore(api)
    le = _elector(api, clock)
    assert le.try_acquire_or_renew()
    gets = len(api.sent("GET"))
    clock.advance_to(T0 + 2)
    assert le.try_acquire_or_renew()
    spec = store.leases["kube-scheduler"]["spec"]
    assert spec["acquireTime"] == micro_time(T0)
    assert spec["renewTime"] == micro_time(T0 + 2)
    assert spec["leaseTransitions"] == 0
    assert len(api.sent("GET")) == gets  # the leader updates without reading first


def test_concurrent_candidates_cannot_both_win() -> None:
    """Both read the free Lease, both write: the second write carries a stale resourceVersion."""
    api, clock = FakeApi(), VirtualClock(T0)
    store = LeaseStore(api)
    store.put_directly("kube-scheduler", {"holderIdentity": "", "leaseDurationSeconds": 15, "leaseTransitions": 1})
    a, b = _elector(api, clock, "a"), _elector(api, clock, "b")
    seen_a, seen_b = a.lock.get(), b.lock.get()
    stamp = micro_time(T0)
    a.lock.update(LeaderElectionRecord("a", 15, stamp, stamp, seen_a.leader_transitions + 1))
    with pytest.raises(ApiError) as err:
        b.lock.update(LeaderElectionRecord("b", 15, stamp, stamp, seen_b.leader_transitions + 1))
    assert err.value.conflict
    assert store.leases["kube-scheduler"]["spec"]["holderIdentity"] == "a"
    assert not b.try_acquire_or_renew()  # a's fresh lease is respected


def test_release_writes_an_empty_holder_with_a_one_second_lease() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    store = LeaseStore(api)
    le = _elector(api, clock)
    assert le.try_acquire_or_renew()
    clock.advance_to(T0 + 1)
    assert le.release()
    spec = store.leases["kube-scheduler"]["spec"]
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    # A standby observing the released Lease takes it at once.
    other = _elector(api, clock, "other")
    assert other.try_acquire_or_renew()
    assert store.leases["kube-scheduler"]["spec"]["leaseTransitions"] == 1


def test_healthz_check_fails_only_for_a_leader_that_stopped_renewing() -> None:
    api, clock = FakeApi(), VirtualClock(T0)
    LeaseStore(api)
    le = _elector(api, clock)
    assert le.check() is None  # not leading: healthy
    assert le.try_acquire_or_renew()
    clock.advance_to(T0 + 15 + 20)
    assert le.check(20.0) is None
    clock.advance_to(T0 + 15 + 20.5)
    assert le.check(20.0) == "failed election to renew leadership on lease kube-system/kube-scheduler"


@pytest.mark.parametrize(
    ("durations", "message"),
    [
        ((10.0, 10.0, 2.0), "leaseDuration must be greater than renewDeadline"),
        ((15.0, 2.0, 2.0), "renewDeadline must be greater than retryPeriod*JitterFactor"),
    ],
)
def test_durations_are_validated_as_client_go(durations: tuple[float, float, float], message: str) -> None:
    api = FakeApi()
    with pytest.raises(LeaderElectionError, match=re.escape(message)):
        _elector(
            api, VirtualClock(T0), lease_duration=durations[0], renew_deadline=durations[1], retry_period=durations[2]
        )


def test_losing_the_lease_stops_leading() -> None:
    """Renewals failing past the renew deadline: leadership is lost (real time, short durations)."""
    from kubesched.framework.clock import RealClock

    api = FakeApi()
    store = LeaseStore(api)
    started, stopped = threading.Event(), threading.Event()
    le = _elector(
        api,
        RealClock(),
        lease_duration=2.0,
        renew_deadline=1.0,
        retry_period=0.1,
        on_started_leading=started.set,
        on_stopped_leading=stopped.set,
    )
    le.start()
    assert started.wait(10)
    assert le.leading.is_set()
    store.fail_with = 500
    assert stopped.wait(10)
    assert le.lost
    assert not le.leading.is_set()
    le.stop()


def test_stopping_releases_the_lease() -> None:
    from kubesched.framework.clock import RealClock

    api = FakeApi()
    store = LeaseStore(api)
    started, stopped = threading.Event(), threading.Event()
    le = _elector(
        api,
        RealClock(),
        lease_duration=2.0,
        renew_deadline=1.0,
        retry_period=0.1,
        on_started_leading=started.set,
        on_stopped_leading=stopped.set,
    )
    le.start()
    assert started.wait(10)
    le.stop()
    assert stopped.is_set()
    assert not le.lost
    assert store.leases["kube-scheduler"]["spec"]["holderIdentity"] == ""


def test_a_hanging_renewal_stops_leading_at_the_deadline() -> None:
    """client-go bounds every renewal by the renew deadline: a renewal that never answers must not
    keep us leading. The watchdog stops leading at ``leading_until`` while the PUT still hangs."""
    import time

    from kubesched.framework.clock import RealClock

    api = FakeApi()
    store = LeaseStore(api)
    hang = threading.Event()
    release = threading.Event()
    update = store._update

    def slow_update(request: Any) -> Any:
        if hang.is_set():
            release.wait(10)
        return update(request)

    api._routes = [r for r in api._routes if r[0] != "PUT"]
    api.route("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/([^/]+)", slow_update)
    started, stopped = threading.Event(), threading.Event()
    le = _elector(
        api,
        RealClock(),
        lease_duration=3.0,
        renew_deadline=1.0,
        retry_period=0.2,
        on_started_leading=started.set,
        on_stopped_leading=stopped.set,
    )
    le.start()
    try:
        assert started.wait(10)
        assert le.is_leading()
        eventually_renewed = le.leading_until()
        time.sleep(0.5)
        assert le.leading_until() > eventually_renewed  # renewals move the deadline on
        hang.set()
        until = le.leading_until()
        assert stopped.wait(10)
        t_stopped = time.monotonic()
        assert t_stopped >= until - 0.05
        assert t_stopped < until + 0.5  # at the deadline, not when the request gives up
        assert not le.is_leading()
        assert le.lost
    finally:
        release.set()
        le.stop()


def test_every_request_is_bounded_by_the_time_left() -> None:
    """Each request of an attempt gets a timeout no longer than what is left to the deadline."""
    import time

    api, clock = FakeApi(), VirtualClock(T0)
    LeaseStore(api)
    le = _elector(api, clock)
    deadline = time.monotonic() + 4.0
    assert le.try_acquire_or_renew(deadline)
    assert le.try_acquire_or_renew(deadline)  # the renewal (fast path)
    timeouts = [r.extensions["timeout"] for r in api.requests]
    assert len(timeouts) == 3  # GET (404), POST, PUT
    for t in timeouts:
        assert all(v is not None and 0 < v <= 4.0 for v in t.values()), t
    # No time left: the attempt fails without sending anything.
    n = len(api.requests)
    assert not le.try_acquire_or_renew(time.monotonic() - 1)
    assert len(api.requests) == n
