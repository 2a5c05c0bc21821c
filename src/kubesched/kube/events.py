"""An events.k8s.io/v1 recorder with client-go's series aggregation (``tools/events``).

``eventf`` never blocks the caller: events go through a bounded queue to one dispatcher thread
(client-go's broadcaster drops events when its channel is full; so do we, with a log line), which
aggregates them and hands the writes to a small pool of writer threads (``workers``, 8 by
default). client-go writes each event from its own goroutine (``recordToSink``); a pool keeps the
same concurrency for a scheduler's bursts at a bounded cost, and the event client's own rate
limit (kube-scheduler's ``eventClient``, ``clientConnection.qps``/``burst``) still paces them.
Writes of one event (its POST, then its series PATCHes) never overlap.

Repeats are aggregated as client-go does: events with the same type, action, reason,
reportingController, reportingInstance, regarding and related references (``getKey``; the note
is not part of the key, the regarding reference includes the object's resourceVersion) are
*isomorphic*. The first one is created; the first repeat turns it into a series
(``series.count = 2``) with an immediate PATCH; later repeats only bump the count locally, and
the count is written by a periodic refresh and when the series finishes (no repeat for
``finish_after`` = 6 minutes, client-go's ``finishTime``). client-go refreshes every 30 minutes;
we refresh every minute by default, so ``kubectl events`` shows current counts at a cost of at
most one PATCH per repeating event per minute.

Failed writes (connection errors, 5xx, 429) are retried up to 12 times, 10 s apart (client-go's
``maxTriesPerEvent``/``sleepDuration``); an invalid event or a name collision is dropped.

**Flush on exit.** :meth:`EventRecorder.stop` (every exit path of ``kubesched run``: SIGTERM, a
lost Lease, an unreachable API server) waits up to a grace period (5 s) for queued writes, and
while it waits retries failed ones every 0.5 s instead of 10 s, each request bounded by the time
left. Upstream flushes nothing: a lost Lease ends kube-scheduler through ``klog.FlushAndExit``
(logs only), and ``Shutdown`` cancels the context the retries wait on, so events still queued or
waiting for a retry are lost.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

from kubesched.framework.clock import Clock

from .client import STRATEGIC_MERGE_PATCH, ApiError, KubeClient
from .objects import micro_time, object_reference

log = logging.getLogger("kubesched.kube.events")

EVENTS_PATH = "/apis/events.k8s.io/v1/namespaces/{namespace}/events"
#: events.k8s.io validation limits (``pkg/apis/core/validation/events.go``).
NOTE_LENGTH_LIMIT = 1024
REPORTING_INSTANCE_LENGTH_LIMIT = 128
FINISH_AFTER = 6 * 60.0
REFRESH_EVERY = 60.0
MAX_TRIES = 12
RETRY_AFTER = 10.0
QUEUE_SIZE = 1000
#: Writer threads (concurrent POST/PATCH of different events).
WORKERS = 8
#: How long ``stop`` waits for queued events (every exit path).
FLUSH_GRACE = 5.0
#: Retry interval while flushing: the process is about to exit, 10 s would lose the event.
FLUSH_RETRY_AFTER = 0.5
_WAKE = ("wake",)


def truncate_note(note: str) -> str:
    """At most 1024 *bytes* of UTF-8 (the API counts bytes), cut at a character boundary,
    ending in " ..." when cut (upstream ``truncateMessage``)."""
    raw = note.encode()
    if len(raw) <= NOTE_LENGTH_LIMIT:
        return note
    suffix = " ..."
    cut = raw[: NOTE_LENGTH_LIMIT - len(suffix)].decode("utf-8", "ignore")
    return cut + suffix


def reporting_instance(controller: str, hostname: str | None = None) -> str:
    """client-go ``NewRecorder``: ``<reportingController>-<hostname>``, at most 128 characters."""
    host = hostname if hostname is not None else socket.gethostname()
    return f"{controller}-{host}"[:REPORTING_INSTANCE_LENGTH_LIMIT]


def _freeze(ref: Mapping[str, Any] | None) -> str:
    return json.dumps(ref, sort_keys=True) if ref else ""


@dataclass
class _Recorded:
    """One event as written (or about to be), with its series state."""

    body: dict[str, Any]
    first_seen: float
    count: int = 1
    last_observed: float = 0.0
    #: The count the API server has; ``count > written`` means a PATCH is due.
    written: int = 0
    created: bool = False
    #: Serialises this event's writes (POST before PATCH, one PATCH at a time).
    write_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


@dataclass(order=True)
class _Retry:
    not_before: float
    seq: int
    tries: int = field(compare=False)
    entry: _Recorded = field(compare=False)
    snap: tuple[int, float] | None = field(compare=False, default=None)


class EventRecorder:
    """Writes events.k8s.io/v1 Events for every profile (``reportingController`` per call)."""

    def __init__(
        self,
        client: KubeClient,
        clock: Clock,
        *,
        hostname: str | None = None,
        finish_after: float = FINISH_AFTER,
        refresh_every: float = REFRESH_EVERY,
        retry_after: float = RETRY_AFTER,
        queue_size: int = QUEUE_SIZE,
        workers: int = WORKERS,
        flush_retry_after: float = FLUSH_RETRY_AFTER,
    ) -> None:
        self.client = client
        self.clock = clock
        self.hostname = hostname if hostname is not None else socket.gethostname()
        self.finish_after = finish_after
        self.refresh_every = refresh_every
        self.retry_after = retry_after
        self.flush_retry_after = flush_retry_after
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=queue_size)
        self._cache: dict[tuple[str, ...], _Recorded] = {}
        self._retries: list[_Retry] = []
        self._seq = 0
        self._thread: threading.Thread | None = None
        self._pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="event-writer")
        self._stopping = threading.Event()
        #: Set while ``flush`` waits: retries come sooner and requests get the time left.
        self._flush_deadline: float | None = None
        self._idle = threading.Condition()
        #: Queued items + writes in flight + writes waiting for a retry.
        self._busy = 0
        #: Counters for tests and logs.
        self.created = 0
        self.patched = 0
        self.dropped = 0

    # -- API -------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="event-recorder", daemon=True)
            self._thread.start()

    def eventf(
        self,
        regarding: Mapping[str, Any],
        related: Mapping[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
        reporting_controller: str,
    ) -> None:
        """Queue one event; never blocks (drops it, with a log line, when the queue is full)."""
        item = (
            object_reference(regarding),
            object_reference(related) if related else None,
            type_,
            reason,
            action,
            truncate_note(note),
            reporting_controller,
            self.clock.now(),
        )
        with self._idle:
            self._busy += 1
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self._done()
            self.dropped += 1
            log.error(
                "event queue full; dropping %s event for %s/%s",
                reason,
                regarding.get("metadata", {}).get("namespace"),
                regarding.get("metadata", {}).get("name"),
            )
        if self._thread is None:
            self.start()

    def _wait_idle(self, deadline: float) -> bool:
        with self._idle:
            while self._busy > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def flush(self, timeout: float = FLUSH_GRACE) -> bool:
        """Wait until every queued event is written (or given up on); then write pending series
        counts. True if everything was written in time. While waiting, failed writes are retried
        every ``flush_retry_after`` and each request gets only the time left."""
        deadline = time.monotonic() + timeout
        with self._idle:
            self._flush_deadline = deadline
        self._wake()
        try:
            if not self._wait_idle(deadline):
                return False
            with self._idle:
                self._busy += 1
            self._queue.put(("refresh",))
            return self._wait_idle(deadline)
        finally:
            with self._idle:
                self._flush_deadline = None
            if self._busy:
                log.warning("%d event writes unfinished after the %.1fs grace period", self._busy, timeout)

    def stop(self, timeout: float = FLUSH_GRACE) -> None:
        """Flush (bounded by ``timeout``), then stop the dispatcher and the writers."""
        self.flush(timeout)
        self._stopping.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- dispatcher thread -----------------------------------------------------------------------
    def _done(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()

    def _wake(self) -> None:
        """Make the dispatcher look at due retries now (not counted as work)."""
        with contextlib.suppress(queue.Full):  # when full, the dispatcher is awake anyway
            self._queue.put_nowait(_WAKE)

    def _run(self) -> None:
        next_refresh = time.monotonic() + self.refresh_every
        while True:
            now = time.monotonic()
            wait = next_refresh - now
            with self._idle:
                if self._retries:
                    wait = min(wait, self._retries[0].not_before - now)
            try:
                item = self._queue.get(timeout=max(0.0, wait))
            except queue.Empty:
                item = ()
            if item is None:
                return
            try:
                if item == ("refresh",):
                    self._refresh()
                elif item and item != _WAKE:
                    self._record(*item)
            except Exception:
                log.exception("recording an event failed")
            finally:
                if item and item != _WAKE:
                    self._done()
            now = time.monotonic()
            due: list[_Retry] = []
            with self._idle:
                flushing = self._flush_deadline is not None
                while self._retries and (flushing or self._retries[0].not_before <= now):
                    due.append(self._retries.pop(0))
            for r in due:
                self._dispatch(r.entry, r.tries, r.snap, counted=True)
            if now >= next_refresh:
                next_refresh = now + self.refresh_every
                self._refresh()

    def _write(self, entry: _Recorded, tries: int, snap: tuple[int, float] | None = None) -> None:
        """Hand one write to the pool (the dispatcher never waits for the API server). ``snap``
        (count, lastObservedTime) pins the series state to write, as client-go records a copy."""
        self._dispatch(entry, tries, snap, counted=False)

    def _dispatch(self, entry: _Recorded, tries: int, snap: tuple[int, float] | None, *, counted: bool) -> None:
        if not counted:
            with self._idle:
                self._busy += 1
        try:
            self._pool.submit(self._sync, entry, tries, snap)
        except RuntimeError:  # stopped
            self._done()

    def _record(
        self,
        regarding: dict[str, Any],
        related: dict[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
        controller: str,
        when: float,
    ) -> None:
        instance = reporting_instance(controller, self.hostname)
        key = (type_, action, reason, controller, instance, _freeze(regarding), _freeze(related))
        entry = self._cache.get(key)
        if entry is not None and when - entry.last_observed > self.finish_after:
            self._finish(key, entry)
            entry = None
        if entry is not None:
            entry.count += 1
            entry.last_observed = when
            if entry.count == 2:  # the first repeat opens the series at once (client-go)
                self._write(entry, 0, (entry.count, entry.last_observed))
            return
        name = f"{regarding.get('name', '')}.{int(when * 1e9):x}"
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": regarding.get("namespace") or "default"},
            "eventTime": micro_time(when),
            "reportingController": controller,
            "reportingInstance": instance,
            "action": action,
            "reason": reason,
            "regarding": regarding,
            "note": note,
            "type": type_,
        }
        if related:
            body["related"] = related
        entry = _Recorded(body, first_seen=when, last_observed=when)
        self._cache[key] = entry
        self._write(entry, 0)

    def _finish(self, key: tuple[str, ...], entry: _Recorded) -> None:
        """A series (or single event) with no repeat for ``finish_after`` is done: write its final
        count and forget it, so a later occurrence starts a new event."""
        if entry.created and entry.count > entry.written:
            self._write(entry, 0)
        del self._cache[key]

    def _refresh(self) -> None:
        """Finish old series, write the counts of ongoing ones."""
        now = self.clock.now()
        for key, entry in list(self._cache.items()):
            if now - entry.last_observed > self.finish_after:
                self._finish(key, entry)
            elif entry.created and entry.count > entry.written:
                self._write(entry, 0)

    # -- writer threads --------------------------------------------------------------------------
    def _timeout(self) -> float | None:
        """While flushing, a request may take only the time left (None: the client's timeout)."""
        with self._idle:
            deadline = self._flush_deadline
        return None if deadline is None else max(0.01, deadline - time.monotonic())

    def _sync(self, entry: _Recorded, tries: int, snap: tuple[int, float] | None) -> None:
        """Bring the API server's copy of ``entry`` up to date (POST, then PATCH of its count)."""
        retrying = False
        try:
            with entry.write_lock:
                retrying = self._sync_locked(entry, tries, snap)
        except Exception:
            log.exception("writing an event failed")
        finally:
            if not retrying:
                self._done()

    def _sync_locked(self, entry: _Recorded, tries: int, snap: tuple[int, float] | None) -> bool:
        """One write; True if it failed and a retry was scheduled (the work stays counted)."""
        ns = entry.body["metadata"]["namespace"]
        path = EVENTS_PATH.format(namespace=ns)
        try:
            if not entry.created:
                self.client.request("POST", path, body=entry.body, timeout=self._timeout())
                entry.created = True
                entry.written = int((entry.body.get("series") or {}).get("count", 1))
                self.created += 1
                if snap is None or snap[0] <= entry.written:
                    return False
            count, last = snap if snap is not None else (entry.count, entry.last_observed)
            if count <= entry.written:
                return False  # another write already sent this count
            patch = {"series": {"count": count, "lastObservedTime": micro_time(last)}}
            try:
                self.client.request(
                    "PATCH",
                    f"{path}/{entry.body['metadata']['name']}",
                    body=patch,
                    content_type=STRATEGIC_MERGE_PATCH,
                    timeout=self._timeout(),
                )
            except ApiError as err:
                if not err.not_found:
                    raise
                # The event expired (events have a TTL): write it again, series and all.
                entry.created = False
                entry.body = {**entry.body, "series": patch["series"]}
                return self._sync_locked(entry, tries, snap)
            entry.written = count
            self.patched += 1
            return False
        except ApiError as err:
            if err.code in (429,) or err.code >= 500:
                return self._retry(entry, tries, snap, str(err))
            log.error("event %s/%s rejected: %s", ns, entry.body["metadata"]["name"], err)
            return False
        except httpx.TransportError as err:
            return self._retry(entry, tries, snap, f"{type(err).__name__}: {err}")

    def _retry(self, entry: _Recorded, tries: int, snap: tuple[int, float] | None, why: str) -> bool:
        if tries + 1 >= MAX_TRIES or self._stopping.is_set():
            log.error("giving up on event %s after %d tries: %s", entry.body["metadata"]["name"], tries + 1, why)
            return False
        log.info("unable to write event %s (will retry): %s", entry.body["metadata"]["name"], why)
        with self._idle:
            flushing = self._flush_deadline is not None
            after = min(self.retry_after, self.flush_retry_after) if flushing else self.retry_after
            self._seq += 1
            self._retries.append(_Retry(time.monotonic() + after, self._seq, tries + 1, entry, snap))
            self._retries.sort()
        self._wake()
        return True
