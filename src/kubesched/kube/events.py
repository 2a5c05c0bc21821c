"""An events.k8s.io/v1 recorder with client-go's series aggregation (``tools/events``).

``eventf`` never blocks the caller: events go through a bounded queue to one writer thread
(client-go's broadcaster drops events when its channel is full; so do we, with a log line).

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
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Mapping
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


@dataclass(order=True)
class _Retry:
    not_before: float
    seq: int
    tries: int = field(compare=False)
    entry: _Recorded = field(compare=False)


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
    ) -> None:
        self.client = client
        self.clock = clock
        self.hostname = hostname if hostname is not None else socket.gethostname()
        self.finish_after = finish_after
        self.refresh_every = refresh_every
        self.retry_after = retry_after
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(maxsize=queue_size)
        self._cache: dict[tuple[str, ...], _Recorded] = {}
        self._retries: list[_Retry] = []
        self._seq = 0
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._idle = threading.Condition()
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
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()
            self.dropped += 1
            log.error(
                "event queue full; dropping %s event for %s/%s",
                reason,
                regarding.get("metadata", {}).get("namespace"),
                regarding.get("metadata", {}).get("name"),
            )
        if self._thread is None:
            self.start()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued event is written (or given up on); then write pending series
        counts. True if everything was written in time."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        with self._idle:
            self._busy += 1
        self._queue.put(("refresh",))
        with self._idle:
            while self._busy > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        self.flush(timeout)
        self._stopping.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    # -- writer thread ---------------------------------------------------------------------------
    def _done(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()

    def _run(self) -> None:
        next_refresh = time.monotonic() + self.refresh_every
        while True:
            now = time.monotonic()
            wait = next_refresh - now
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
                elif item:
                    self._record(*item)
            except Exception:
                log.exception("recording an event failed")
            finally:
                if item:
                    self._done()
            now = time.monotonic()
            while self._retries and self._retries[0].not_before <= now:
                r = self._retries.pop(0)
                self._write(r.entry, r.tries)
            if now >= next_refresh:
                next_refresh = now + self.refresh_every
                self._refresh()

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
            if entry.count == 2 and entry.created:
                self._write(entry, 0)  # the first repeat opens the series at once (client-go)
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

    def _write(self, entry: _Recorded, tries: int) -> None:
        ns = entry.body["metadata"]["namespace"]
        path = EVENTS_PATH.format(namespace=ns)
        try:
            if not entry.created:
                self.client.post(path, entry.body)
                entry.created = True
                entry.written = int((entry.body.get("series") or {}).get("count", 1))
                self.created += 1
                if entry.count > entry.written:
                    self._write(entry, 0)
                return
            count = entry.count
            patch = {"series": {"count": count, "lastObservedTime": micro_time(entry.last_observed)}}
            try:
                self.client.patch(f"{path}/{entry.body['metadata']['name']}", patch, STRATEGIC_MERGE_PATCH)
            except ApiError as err:
                if not err.not_found:
                    raise
                # The event expired (events have a TTL): write it again, series and all.
                entry.created = False
                entry.body = {**entry.body, "series": patch["series"]}
                self._write(entry, tries)
                return
            entry.written = count
            self.patched += 1
        except ApiError as err:
            if err.code in (429,) or err.code >= 500:
                self._retry(entry, tries, str(err))
            else:
                log.error("event %s/%s rejected: %s", ns, entry.body["metadata"]["name"], err)
        except httpx.TransportError as err:
            self._retry(entry, tries, f"{type(err).__name__}: {err}")

    def _retry(self, entry: _Recorded, tries: int, why: str) -> None:
        if tries + 1 >= MAX_TRIES:
            log.error("giving up on event %s after %d tries: %s", entry.body["metadata"]["name"], tries + 1, why)
            return
        log.info("unable to write event %s (will retry): %s", entry.body["metadata"]["name"], why)
        self._seq += 1
        self._retries.append(_Retry(time.monotonic() + self.retry_after, self._seq, tries + 1, entry))
        self._retries.sort()
