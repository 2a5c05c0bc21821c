"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection`` does.

* **Acquire**: every ``retry_period`` (jittered by up to 1.2×), read the Lease; take it when it is
  free, ours, or not renewed for ``lease_duration`` *as observed on our own clock* (the time we
  last saw its record change, never the holder's ``renewTime``, so clock skew between replicas
  does not matter). Taking it from someone else increments ``leaseTransitions``.
* **Renew**: every ``retry_period``; the leader first tries an optimistic update with the Lease it
  holds (fast path), then falls back to read-and-update. If no renewal succeeds within
  ``renew_deadline``, leadership is lost: ``on_stopped_leading`` runs at once.
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

    def get(self) -> LeaderElectionRecord:
        """The current record; raises ApiError (404 when the Lease does not exist)."""
        self.lease = self.client.get(f"{self.path}/{self.name}")
        return LeaderElectionRecord.from_spec((self.lease or {}).get("spec") or {})

    def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        self.lease = self.client.post(self.path, body)

    def update(self, record: LeaderElectionRecord) -> None:
        """PUT with the resourceVersion last read: 409 Conflict if anyone wrote in between."""
        if self.lease is None:
            raise ApiError(409, "Conflict", "lease not read yet")
        body = {**self.lease, "spec": record.to_spec()}
        self.lease = self.client.put(f"{self.path}/{self.name}", body)


class LeaderElector:
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
    ) -> None:
        if lease_duration <= renew_deadline:
            raise LeaderElectionError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise LeaderElectionError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if lease_duration < 1 or renew_deadline < 1 or retry_period < 0.001:
            raise LeaderElectionError("leaseDuration and renewDeadline must be at least 1s")
        self.lock = lock
        self.clock = clock
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
        self._leading = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

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
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def run(self) -> None:
        log.info("attempting to acquire leader lease %s as %s", self.lock.describe(), self.identity)
        if not self._acquire():
            return
        log.info("successfully acquired lease %s", self.lock.describe())
        self._leading.set()
        if self.on_started_leading is not None:
            self.on_started_leading()
        self._renew()
        self._leading.clear()
        if self._stop.is_set() and not self.lost:
            if self.release_on_cancel:
                self.release()
        else:
            self.lost = True
            log.error(
                "leader election lost: lease %s not renewed within %.0fs", self.lock.describe(), self.renew_deadline
            )
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()

    def _acquire(self) -> bool:
        while not self._stop.is_set():
            if self.try_acquire_or_renew():
                return True
            self._stop.wait(self.retry_period * (1.0 + self.rng.random() * JITTER_FACTOR))
        return False

    def _renew(self) -> None:
        while not self._stop.is_set():
            deadline = self.clock.now() + self.renew_deadline
            renewed = False
            while not self._stop.is_set():
                if self.try_acquire_or_renew():
                    renewed = True
                    break
                if self.clock.now() + self.retry_period > deadline:
                    break
                self._stop.wait(self.retry_period)
            if self._stop.is_set():
                return
            if not renewed:
                self.lost = True
                return
            self._stop.wait(self.retry_period)

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

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards (client-go ``tryAcquireOrRenew``)."""
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
                    self.lock.update(fast)
                    self._observe(fast, now)
                    return True
                except ApiError as err:
                    log.info("failed to update lease optimistically (%s); falling back to slow path", err)
            try:
                old = self.lock.get()
            except ApiError as err:
                if not err.not_found:
                    log.error("error retrieving lease %s: %s", self.lock.describe(), err)
                    return False
                self.lock.create(record)
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
            self.lock.update(record)
            self._observe(record, now)
            return True
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
        """Give the lease up (empty holder, 1 s duration); True if written."""
        if not self.is_leader() or self.observed is None:
            return True
        stamp = micro_time(self.clock.now())
        record = LeaderElectionRecord("", 1, stamp, stamp, self.observed.leader_transitions)
        try:
            self.lock.update(record)
        except (ApiError, httpx.TransportError) as err:
            log.error("failed to release lease %s: %s", self.lock.describe(), err)
            return False
        with self._lock:
            self.observed = record
            self.observed_time = self.clock.now()
        log.info("released lease %s", self.lock.describe())
        return True
