"""client-go's client-side rate limit: a token bucket of ``burst`` tokens refilled at ``qps``.

Same semantics as ``flowcontrol.NewTokenBucketRateLimiter`` (golang.org/x/time/rate): a request
takes a token, waiting for one when the bucket is empty; waiters reserve tokens in arrival
order, so the long-run rate is ``qps`` and at most ``burst`` requests go out back to back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: client-go's ``DefaultQPS``/``DefaultBurst``, used when the config leaves them at 0.
DEFAULT_QPS = 5.0
DEFAULT_BURST = 10


class TokenBucket:
    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``qps < 0`` disables limiting (client-go); ``qps == 0``/``burst == 0`` take the defaults."""
        self.unlimited = qps < 0
        self.qps = float(qps) if qps > 0 else DEFAULT_QPS
        self.burst = int(burst) if burst > 0 else DEFAULT_BURST
        self._now = now
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(self.burst)
        self._last = now()

    def reserve(self) -> float:
        """Take a token now; return how long the caller must wait before using it."""
        if self.unlimited:
            return 0.0
        with self._lock:
            now = self._now()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def acquire(self) -> float:
        """Block until a token is available; return the seconds waited."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait
