"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection`` does.

* **Acquire**: every ``retry_period`` (jittered by up to 1.2×), read the Lease; take it when it is
  free, ours, or not renewed for ``lease_duration`` *as observed on our own clock* (the time we
  last saw its record change, never the holder's ``renewTime``, so clock skew between replicas
  does not matter). Taking it from someone else increments ``leaseTransitions``.
* **Renew**: every ``retry_period``; the leader first tries an optimistic update with the Lease it
  holds (fast path), then falls back to read-and-update. As client-go's ``renew`` (a
  ``PollUntilContextTimeout`` with ``renew_deadline`` whose context bounds every request), each
  attempt's requests get only the time left to the renew deadline as their timeout. If no renewal
  succeeds by then, leadership is lost: ``on_stopped_leading`` runs at once.
* **Leading until**: a monotonic instant, ``retry_period + renew_deadline`` after the *start* of
  the last successful attempt (client-go counts from its end; counting from the start means a slow
  answer cannot push the deadline past the moment the standby saw the record change, so the
  deadline always comes ``lease_duration - renew_deadline - retry_period`` (3 s by default) before
  a standby may take over). :meth:`LeaderElector.is_leading` is false from that instant on, even
  while a request is still pending, and a watchdog thread fires at it and stops leading without
  waiting for the request. The scheduling loop and the binding path check ``is_leading``.
* Every write is a PUT carrying the ``resourceVersion`` we read, so two candidates can never both
  win: the loser gets 409 Conflict and retries.
* **Release** on clean shutdown: the holder writes an empty ``holderIdentity`` with a 1 s lease,
  so a standby takes over within one retry period instead of a whole lease duration.

Upstream defaults (kube-scheduler): 15 s lease, 10 s renew deadline, 2 s retry period, Lease
``kube-system/kube-scheduler``; identity ``<hostname>_<uuid>``.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from kubesched.framework.clock import Clock

from .client import ApiError, KubeClient
from .objects import micro_time

log = logging.getLogger("kubesched.kube.leaderelection")

LEASES_PATH = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
JITTER_FACTOR = 1.2


class LeaderElectionError(ValueError):
    """Durations that cannot work together (client-go ``NewLeaderElector``'s checks)."""


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaderElectionRecord:
    holder_identity: str
    lease_duration_seconds: int
    acquire_time: str
    renew_time: str
    leader_transitions: int

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> LeaderElectionRecord:
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )


class LeaseLock:
    """The Lease object, read and written with optimistic concurrency."""

    def __init__(self, client: KubeClient, namespace: str, name: str, identity: str) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease: dict[str, Any] | None = None

    @property
    def path(self) -> str:
        return LEASES_PATH.format(namespace=self.namespace)

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self, timeout: float | None = None) -> LeaderElectionRecord:
        """The current record; raises ApiError (404 when the Lease does not exist).

        ``timeout`` bounds the request (the time left to the renew deadline); None: the client's."""
        self.lease = self.client.request("GET", f"{self.path}/{self.name}", timeout=timeout)
        return LeaderElectionRecord.from_spec((self.lease or {}).get("spec") or {})

    def create(self, record: LeaderElectionRecord, timeout: float | None = None) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        self.lease = self.client.request("POST", self.path, body=body, timeout=timeout)

    def update(self, record: LeaderElectionRecord, timeout: float | None = None) -> None:
        """PUT with the resourceVersion last read: 409 Conflict if anyone wrote in between."""
        if self.lease is None:
            raise ApiError(409, "Conflict", "lease not read yet")
        body = {**self.lease, "spec": record.to_spec()}
        self.lease = self.client.request("PUT", f"{self.path}/{self.name}", body=body, timeout=timeout)


class _DeadlinePassed(Exception):
    """No time is left before the renew deadline: the attempt fails without a request."""


class LeaderElector:
    """client-go's ``LeaderElector`` on a Lease (see the module docstring)."""

    def __init__(
        self,
        lock: LeaseLock,
        clock: Clock,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        release_on_cancel: bool = True,
        rng: random.Random | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``monotonic`` measures the renew deadline (never the wall clock, which may jump)."""
        if lease_duration <= renew_deadline:
            raise LeaderElectionError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise LeaderElectionError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if lease_duration < 1 or renew_deadline < 1 or retry_period < 0.001:
            raise LeaderElectionError("leaseDuration and renewDeadline must be at least 1s")
        self.lock = lock
        self.clock = clock
        self.monotonic = monotonic
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.release_on_cancel = release_on_cancel
        self.rng = rng or random.Random()
        self.observed: LeaderElectionRecord | None = None
        self.observed_time = 0.0
        self.reported_leader = ""
        #: True once leadership was lost (not released on request).
        self.lost = False
        self._lock = threading.Lock()
        #: Wakes the watchdog when the deadline moves or leading ends.
        self._deadline_cond = threading.Condition(self._lock)
        self._leading_until = 0.0
        self._stopped_leading = False
        self._leading = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None

    @property
    def identity(self) -> str:
        return self.lock.identity

    # -- state -----------------------------------------------------------------------------------
    def is_leader(self) -> bool:
        with self._lock:
            return self.observed is not None and self.observed.holder_identity == self.identity

    def leader(self) -> str:
        with self._lock:
            return self.observed.holder_identity if self.observed is not None else ""

    @property
    def leading(self) -> threading.Event:
        """Set while we lead and have not lost the lease."""
        return self._leading

    def leading_until(self) -> float:
        """The monotonic instant our leadership ends unless renewed (0 before we lead)."""
        with self._lock:
            return self._leading_until

    def is_leading(self) -> bool:
        """True only while we lead and the renew deadline has not passed: what the scheduling
        loop and the binding path ask, so they stop at the deadline even if a renewal hangs."""
        return self._leading.is_set() and self.monotonic() < self.leading_until() and self.is_leader()

    def check(self, max_tolerable_expired_lease: float = 20.0) -> str | None:
        """client-go ``Check`` (the ``leaderElection`` healthz check): unhealthy only when we
        believe we lead but have not renewed for longer than the lease plus the tolerance."""
        if not self.is_leader():
            return None
        with self._lock:
            since = self.clock.now() - self.observed_time
        if since > self.lease_duration + max_tolerable_expired_lease:
            return f"failed election to renew leadership on lease {self.lock.describe()}"
        return None

    # -- running ---------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="leader-election", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop campaigning; the leader releases the lease (if ``release_on_cancel``)."""
        self._stop.set()
        with self._deadline_cond:
            self._deadline_cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def run(self) -> None:
        log.info("attempting to acquire leader lease %s as %s", self.lock.describe(), self.identity)
        if not self._acquire():
            return
        log.info("successfully acquired lease %s", self.lock.describe())
        self._leading.set()
        self._watchdog = threading.Thread(target=self._watch_deadline, name="leader-election-watchdog", daemon=True)
        self._watchdog.start()
        if self.on_started_leading is not None:
            self.on_started_leading()
        self._renew()
        if self._stop.is_set() and not self.lost:
            self._leading.clear()
            if self.release_on_cancel:
                self.release()
            self._finish_leading(lost=False)
        else:
            self._finish_leading(lost=True)

    def _finish_leading(self, *, lost: bool) -> None:
        """Stop leading exactly once (from the renew loop or the watchdog, whichever is first)."""
        with self._deadline_cond:
            if self._stopped_leading:
                return
            self._stopped_leading = True
            if lost:
                self.lost = True
            self._leading.clear()
            self._leading_until = min(self._leading_until, self.monotonic())
            self._deadline_cond.notify_all()
        if lost:
            log.error(
                "stopped leading: lease %s not renewed within the renew deadline (%.0fs); "
                "leader election lost (monotonic=%.6f wallTime=%.6f)",
                self.lock.describe(),
                self.renew_deadline,
                self.monotonic(),
                time.time(),
            )
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()

    def _watch_deadline(self) -> None:
        """Fire at the renew deadline, even while a renewal request is still pending."""
        with self._deadline_cond:
            while not self._stopped_leading:
                left = self._leading_until - self.monotonic()
                if left <= 0:
                    break
                if self._stop.is_set():
                    return  # a clean stop: the renew loop releases and finishes
                self._deadline_cond.wait(left)
            else:
                return
        self._finish_leading(lost=True)

    def _extend(self, attempt_start: float) -> None:
        """A successful attempt begun at ``attempt_start`` moves the deadline on."""
        with self._deadline_cond:
            if self._stopped_leading:
                return
            self._leading_until = max(self._leading_until, attempt_start + self.retry_period + self.renew_deadline)
            self._deadline_cond.notify_all()

    def _attempt(self, deadline: float) -> bool:
        """One ``try_acquire_or_renew`` bounded by ``deadline``; True only if it succeeded in time."""
        start = self.monotonic()
        if start >= deadline:
            return False
        if self.try_acquire_or_renew(deadline) and self.monotonic() < deadline:
            self._extend(start)
            return True
        return False

    def _acquire(self) -> bool:
        while not self._stop.is_set():
            if self._attempt(self.monotonic() + self.renew_deadline):
                return True
            self._stop.wait(self.retry_period * (1.0 + self.rng.random() * JITTER_FACTOR))
        return False

    def _renew(self) -> None:
        """Renew every ``retry_period`` after the last success began; give up at the deadline."""
        while not self._stop.is_set():
            deadline = self.leading_until()
            self._stop.wait(max(0.0, deadline - self.renew_deadline - self.monotonic()))
            while True:
                if self._stop.is_set() or self._stopped_leading:
                    return
                if self._attempt(deadline):
                    break
                left = deadline - self.monotonic()
                if left <= 0:
                    return  # lost
                self._stop.wait(min(self.retry_period, left))

    def _time_left(self, deadline: float | None) -> float | None:
        """The timeout for the next request: what is left before ``deadline``."""
        if deadline is None:
            return None
        left = deadline - self.monotonic()
        if left <= 0:
            raise _DeadlinePassed
        return left

    def _observe(self, record: LeaderElectionRecord, now: float) -> None:
        with self._lock:
            if self.observed != record:
                self.observed = record
                self.observed_time = now
        if record.holder_identity != self.reported_leader:
            self.reported_leader = record.holder_identity
            if record.holder_identity:
                log.info("new leader elected: %s", record.holder_identity)
            if self.on_new_leader is not None:
                self.on_new_leader(record.holder_identity)

    def try_acquire_or_renew(self, deadline: float | None = None) -> bool:
        """One attempt; True when we hold the lease afterwards (client-go ``tryAcquireOrRenew``).

        ``deadline`` (monotonic) bounds every request of the attempt, as client-go's context."""
        now = self.clock.now()
        stamp = micro_time(now)
        record = LeaderElectionRecord(self.identity, int(self.lease_duration), stamp, stamp, 0)
        try:
            # Fast path: the leader updates the Lease it holds without reading it first.
            if self.is_leader() and self._lease_valid(now) and self.observed is not None:
                fast = LeaderElectionRecord(
                    self.identity,
                    record.lease_duration_seconds,
                    self.observed.acquire_time,
                    stamp,
                    self.observed.leader_transitions,
                )
                try:
                    self.lock.update(fast, self._time_left(deadline))
                    self._observe(fast, now)
                    return True
                except ApiError as err:
                    log.info("failed to update lease optimistically (%s); falling back to slow path", err)
            try:
                old = self.lock.get(self._time_left(deadline))
            except ApiError as err:
                if not err.not_found:
                    log.error("error retrieving lease %s: %s", self.lock.describe(), err)
                    return False
                self.lock.create(record, self._time_left(deadline))
                self._observe(record, now)
                return True
            self._observe(old, now)
            if old.holder_identity and self._lease_valid(now) and not self.is_leader():
                return False
            if self.is_leader():
                record = LeaderElectionRecord(
                    self.identity, record.lease_duration_seconds, old.acquire_time, stamp, old.leader_transitions
                )
            else:
                record = LeaderElectionRecord(
                    self.identity, record.lease_duration_seconds, stamp, stamp, old.leader_transitions + 1
                )
            self.lock.update(record, self._time_left(deadline))
            self._observe(record, now)
            return True
        except _DeadlinePassed:
            log.info("renew deadline passed before a request on lease %s could be sent", self.lock.describe())
            return False
        except ApiError as err:
            log.info("failed to acquire or renew lease %s: %s", self.lock.describe(), err)
            return False
        except httpx.TransportError as err:
            log.warning(
                "failed to reach the API server for lease %s: %s: %s", self.lock.describe(), type(err).__name__, err
            )
            return False

    def _lease_valid(self, now: float) -> bool:
        with self._lock:
            if self.observed is None:
                return False
            duration = self.observed.lease_duration_seconds
        return self.observed_time + duration > now

    def release(self) -> bool:
        """Give the lease up (empty holder, 1 s duration); True if written.

        Bounded by ``renew_deadline``, as client-go's ``release``."""
        if not self.is_leader() or self.observed is None:
            return True
        stamp = micro_time(self.clock.now())
        record = LeaderElectionRecord("", 1, stamp, stamp, self.observed.leader_transitions)
        try:
            self.lock.update(record, self.renew_deadline)
        except (ApiError, httpx.TransportError) as err:
            log.error("failed to release lease %s: %s", self.lock.describe(), err)
            return False
        with self._lock:
            self.observed = record
            self.observed_time = self.clock.now()
        log.info("released lease %s", self.lock.describe())
        return True
