"""The client-side rate limit behaves as client-go's token bucket (flowcontrol.
NewTokenBucketRateLimiter over golang.org/x/time/rate): ``burst`` requests at once, then one
every ``1/qps`` seconds; idle time refills up to ``burst``; ``qps < 0`` disables limiting."""

from __future__ import annotations

from kubesched.kube.ratelimit import DEFAULT_BURST, DEFAULT_QPS, TokenBucket


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def test_burst_then_one_per_interval() -> None:
    t = FakeTime()
    b = TokenBucket(qps=10, burst=3, now=t, sleep=t.sleep)
    waits = [b.acquire() for _ in range(6)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    # Each waiter reserves the next token: 0.1 s apart at 10 qps.
    assert [round(w, 6) for w in waits[3:]] == [0.1, 0.1, 0.1]


def test_reservations_queue_up_when_taken_together() -> None:
    t = FakeTime()
    b = TokenBucket(qps=2, burst=1, now=t, sleep=t.sleep)
    assert [round(b.reserve(), 6) for _ in range(4)] == [0.0, 0.5, 1.0, 1.5]


def test_idle_time_refills_up_to_burst() -> None:
    t = FakeTime()
    b = TokenBucket(qps=10, burst=2, now=t, sleep=t.sleep)
    b.acquire()
    b.acquire()
    t.now += 60  # long idle: at most burst tokens
    assert [b.reserve() for _ in range(2)] == [0.0, 0.0]
    assert round(b.reserve(), 6) == 0.1


def test_negative_qps_disables_and_zero_takes_client_go_defaults() -> None:
    t = FakeTime()
    off = TokenBucket(qps=-1, burst=0, now=t, sleep=t.sleep)
    assert all(off.reserve() == 0.0 for _ in range(1000))
    d = TokenBucket(qps=0, burst=0, now=t, sleep=t.sleep)
    assert (d.qps, d.burst) == (DEFAULT_QPS, DEFAULT_BURST) == (5.0, 10)
