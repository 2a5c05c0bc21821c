"""Informers: a reflector (list, then watch) feeding a local store and event handlers.

Follows client-go's ``Reflector`` + ``SharedInformer`` for one resource:

* LIST (paginated, a consistent read), deliver the items, then WATCH from the list's
  resourceVersion with ``allowWatchBookmarks``; every event (bookmarks too) advances the
  resourceVersion the next watch resumes from.
* A watch that ends cleanly (the server's or our ``timeoutSeconds``) resumes at once.
* 410 Gone (in the reply or as an ERROR event), or "too large resource version" after an API
  server restart, re-lists and reconciles the store: objects gone get a synthetic delete,
  changed ones an update, new ones an add, so handlers never miss a transition.
* Any connection error resumes the watch (or retries the list) after an exponential backoff
  with jitter (client-go: 0.8 s doubling to 30 s).
* A watchdog for half-open connections: the stream's read timeout. Bookmarks arrive about every
  minute, so a stream silent for ``inactivity_timeout`` (90 s) is presumed dead and re-opened.

Objects are trimmed (``transform``) before they are stored or handed to handlers. Handlers of
all informers share one lock, so the scheduler sees one event at a time, as from one informer
goroutine per resource in upstream, but never two at once.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from .client import ApiError, KubeClient, ResourceType, WatchStream
from .objects import namespaced_key, resource_version

log = logging.getLogger("kubesched.kube.informer")

Obj = dict[str, Any]
Handler = Callable[..., None]

#: Bookmarks come about every 60 s from a cached watch; silence for longer means a dead stream.
DEFAULT_INACTIVITY_TIMEOUT = 90.0
#: client-go's reflector asks for ``timeoutSeconds`` between 5 and 10 minutes.
MIN_WATCH_TIMEOUT = 300


class Backoff:
    """Exponential backoff with jitter (client-go's reflector: 0.8 s → 30 s, factor 2, jitter 1)."""

    def __init__(self, initial: float = 0.8, cap: float = 30.0, rng: random.Random | None = None) -> None:
        self.initial = initial
        self.cap = cap
        self.rng = rng or random.Random()
        self._next = initial

    def reset(self) -> None:
        self._next = self.initial

    def next_delay(self) -> float:
        base = self._next
        self._next = min(self.cap, self._next * 2)
        return base * (1.0 + self.rng.random())


class Informer:
    """List + watch one resource into a store; call ``on_add(obj)``, ``on_update(old, new)``,
    ``on_delete(obj)`` for every change."""

    def __init__(
        self,
        client: KubeClient,
        resource: ResourceType,
        *,
        on_add: Handler | None = None,
        on_update: Handler | None = None,
        on_delete: Handler | None = None,
        transform: Callable[[Mapping[str, Any]], Obj] | None = None,
        field_selector: str = "",
        label_selector: str = "",
        handler_lock: threading.Lock | threading.RLock | None = None,
        inactivity_timeout: float = DEFAULT_INACTIVITY_TIMEOUT,
        watch_timeout: int | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.name = resource.plural if not resource.group else f"{resource.plural}.{resource.group}"
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self.transform = transform
        self.field_selector = field_selector
        self.label_selector = label_selector
        self.handler_lock = handler_lock or threading.Lock()
        self.inactivity_timeout = inactivity_timeout
        self.watch_timeout = watch_timeout
        self.backoff = backoff or Backoff()
        self.synced = threading.Event()
        self.resource_version = ""
        #: Counters, for logs, metrics and tests: lists done, watches opened, re-lists on 410.
        self.lists = 0
        self.watches = 0
        self.relists_gone = 0
        self._store: dict[str, Obj] = {}
        self._store_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._response_lock = threading.Lock()
        self._current: WatchStream | None = None

    # -- store -----------------------------------------------------------------------------------
    def get(self, key: str) -> Obj | None:
        with self._store_lock:
            return self._store.get(key)

    def list(self) -> list[Obj]:
        with self._store_lock:
            return list(self._store.values())

    def __len__(self) -> int:
        with self._store_lock:
            return len(self._store)

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name=f"informer-{self.name}", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._response_lock:
            if self._current is not None:
                try:
                    self._current.close()
                except Exception:  # closing a stream from another thread is best effort
                    log.debug("closing %s watch", self.name, exc_info=True)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list_and_reconcile()
                    need_list = False
                    self.backoff.reset()
                self._watch()
            except ApiError as err:
                if self._stop.is_set():
                    return
                if err.gone or err.too_large_resource_version:
                    log.info("%s: watch expired (%s); re-listing", self.name, err)
                    self.relists_gone += 1
                    need_list = True
                    continue
                self._sleep_backoff(f"{self.name}: API error: {err}")
            except httpx.ReadTimeout:
                if self._stop.is_set():
                    return
                log.info(
                    "%s: no data for %.0fs (not even a bookmark); re-opening the watch",
                    self.name,
                    self.inactivity_timeout,
                )
            except (httpx.TransportError, httpx.StreamError, ValueError) as err:
                if self._stop.is_set():
                    return
                self._sleep_backoff(f"{self.name}: {type(err).__name__}: {err}")
            except Exception:
                if self._stop.is_set():
                    return
                log.exception("%s: unexpected error in the reflector", self.name)
                self._sleep_backoff(f"{self.name}: unexpected error")

    def _sleep_backoff(self, why: str) -> None:
        delay = self.backoff.next_delay()
        log.warning("%s; retrying in %.1fs", why, delay)
        self._stop.wait(delay)

    # -- list ------------------------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        return params

    def _prepare(self, obj: Mapping[str, Any]) -> Obj:
        out = self.transform(obj) if self.transform is not None else dict(obj)
        # Items of a List carry no apiVersion/kind; give them their own, as a watch event does.
        out.setdefault("apiVersion", self.resource.api_version)
        out.setdefault("kind", self.resource.kind)
        return out

    def _list_and_reconcile(self) -> None:
        items, rv = self.client.list_all(self.resource.path(), self._params())
        self.lists += 1
        fresh: dict[str, Obj] = {}
        for raw in items:
            obj = self._prepare(raw)
            fresh[namespaced_key(obj)] = obj
        with self._store_lock:
            old = self._store
            self._store = dict(fresh)
        deleted = [o for k, o in old.items() if k not in fresh]
        updated = [
            (old[k], o) for k, o in fresh.items() if k in old and resource_version(old[k]) != resource_version(o)
        ]
        added = [o for k, o in fresh.items() if k not in old]
        if old:
            log.info(
                "%s: re-listed at resourceVersion %s: %d added, %d updated, %d deleted",
                self.name,
                rv,
                len(added),
                len(updated),
                len(deleted),
            )
        for o in deleted:
            self._dispatch(self.on_delete, o)
        for pair in updated:
            self._dispatch(self.on_update, *pair)
        for o in added:
            self._dispatch(self.on_add, o)
        self.resource_version = rv
        if not self.synced.is_set():
            log.info("%s: synced %d objects at resourceVersion %s", self.name, len(fresh), rv)
            self.synced.set()

    # -- watch -----------------------------------------------------------------------------------
    def _watch(self) -> None:
        params = self._params()
        params["allowWatchBookmarks"] = "true"
        params["resourceVersion"] = self.resource_version
        timeout = self.watch_timeout or int(MIN_WATCH_TIMEOUT * (1.0 + random.random()))
        params["timeoutSeconds"] = timeout
        read_timeout = min(self.inactivity_timeout, timeout + 30.0)
        self.watches += 1
        with self.client.watch(self.resource.path(), params, read_timeout=read_timeout) as stream:
            with self._response_lock:
                self._current = stream
            if self._stop.is_set():
                return
            try:
                for event in stream:
                    if self._stop.is_set():
                        return
                    self._handle_event(event)
                    self.backoff.reset()
            finally:
                with self._response_lock:
                    self._current = None

    def _handle_event(self, event: Mapping[str, Any]) -> None:
        if self._stop.is_set():
            return
        etype = event.get("type")
        raw = event.get("object") or {}
        rv = resource_version(raw)
        if etype == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        obj = self._prepare(raw)
        key = namespaced_key(obj)
        if etype in ("ADDED", "MODIFIED"):
            with self._store_lock:
                old = self._store.get(key)
                self._store[key] = obj
            if old is None:
                self._dispatch(self.on_add, obj)
            elif resource_version(old) != rv:
                self._dispatch(self.on_update, old, obj)
        elif etype == "DELETED":
            with self._store_lock:
                old = self._store.pop(key, None)
            if old is not None:
                self._dispatch(self.on_delete, obj)
        if rv:
            self.resource_version = rv

    def _dispatch(self, handler: Handler | None, *args: Any) -> None:
        if handler is None:
            return
        with self.handler_lock:
            try:
                handler(*args)
            except Exception:  # a failing handler must not stop the informer
                log.exception("%s: event handler %s failed", self.name, getattr(handler, "__name__", handler))


def wait_for_sync(informers: list[Informer], timeout: float | None = None, stop: threading.Event | None = None) -> bool:
    """Wait until every informer has delivered its first list (client-go ``WaitForCacheSync``)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for inf in informers:
        while not inf.synced.wait(0.1):
            if stop is not None and stop.is_set():
                return False
            if deadline is not None and time.monotonic() > deadline:
                return False
    return True
