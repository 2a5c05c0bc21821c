"""The scheduler's HTTP endpoints: ``/metrics`` (Prometheus text), ``/healthz``, ``/livez``, ``/readyz``.

Health checks follow the apiserver/kube-scheduler conventions: each check has a name; a plain GET
answers ``ok`` (200) or lists the failures (500); ``?verbose`` lists every check as
``[+]name ok`` / ``[-]name failed: reason`` followed by ``healthz check passed``. ``/healthz``
and ``/livez`` run the liveness checks (``ping``, ``leaderElection``); ``/readyz`` adds the
readiness checks (``sched-handler-sync``: every informer has listed once, ``shutdown``).

Plain HTTP, on ``--metrics-bind-address`` (kube-scheduler serves these on ``--secure-port`` with
delegated authentication, which this project does not implement; see docs/running.md).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

log = logging.getLogger("kubesched.kube.server")

#: A health check: None when healthy, else the reason.
Check = Callable[[], str | None]
StartResponse = Callable[..., Any]


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` or ``[::1]:PORT`` too) to a (host, port) pair; host defaults to all."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"invalid address {address!r}: expected HOST:PORT with a port from 0 to 65535")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


class ServeError(ValueError):
    """The health and metrics address cannot be served (in use, not permitted, no such address)."""


class HealthServer:
    def __init__(self, address: str, registry: CollectorRegistry) -> None:
        self.host, self.port = parse_address(address)
        self.registry = registry
        self.liveness: dict[str, Check] = {"ping": lambda: None}
        self.readiness: dict[str, Check] = {}
        self._metrics_app = make_wsgi_app(registry)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def add_liveness(self, name: str, check: Check) -> None:
        self.liveness[name] = check

    def add_readiness(self, name: str, check: Check) -> None:
        self.readiness[name] = check

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def bind(self) -> None:
        """Listen now, so a port already in use is one clear error at start-up (two replicas on one
        host with the default address), not a traceback once the informers run."""
        if self._server is not None:
            return
        try:
            self._server = make_server(
                self.host, self.port, self.app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
            )
        except OSError as err:
            reason = (err.strerror or str(err)).lower()
            raise ServeError(f"cannot serve /metrics and health on {self.address}: {reason} "
                             "(set --metrics-bind-address to another HOST:PORT, or 0 to disable)") from None
        self.port = self._server.server_port  # port 0 picks a free port

    def start(self) -> None:
        self.bind()
        assert self._server is not None
        self._thread = threading.Thread(target=self._server.serve_forever, name="http-server", daemon=True)
        self._thread.start()
        log.info("serving /metrics, /healthz, /livez and /readyz on http://%s", self.address)

    def stop(self) -> None:
        if self._server is not None:
            if self._thread is not None:  # shutdown() waits for serve_forever: only when it runs
                self._server.shutdown()
                self._thread = None
            self._server.server_close()
            self._server = None

    # -- WSGI ------------------------------------------------------------------------------------
    def app(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            return self._metrics_app(environ, start_response)  # type: ignore[no-any-return]
        checks: dict[str, Check] | None = None
        if path in ("/healthz", "/livez"):
            checks = self.liveness
        elif path == "/readyz":
            checks = {**self.liveness, **self.readiness}
        else:
            for prefix, group in (("/healthz/", self.liveness), ("/livez/", self.liveness), ("/readyz/", None)):
                if path.startswith(prefix):
                    name = path[len(prefix) :]
                    pool = group if group is not None else {**self.liveness, **self.readiness}
                    if name in pool:
                        checks = {name: pool[name]}
        if checks is None:
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"404 page not found\n"]
        verbose = "verbose" in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        return self._health(path.strip("/").split("/")[0], checks, verbose, start_response)

    def _health(self, kind: str, checks: dict[str, Check], verbose: bool, start_response: StartResponse) -> list[bytes]:
        lines: list[str] = []
        failed: list[str] = []
        for name, check in checks.items():
            try:
                reason = check()
            except Exception as err:  # a broken check is a failed check
                reason = f"{type(err).__name__}: {err}"
            if reason is None:
                lines.append(f"[+]{name} ok")
            else:
                lines.append(f"[-]{name} failed: {reason}")
                failed.append(name)
        if failed:
            body = "\n".join(lines) + f"\n{kind} check failed\n"
            log.info("%s check failed: %s", kind, ", ".join(failed))
            start_response("500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8")])
            return [body.encode()]
        body = "\n".join(lines) + f"\n{kind} check passed\n" if verbose else "ok"
        start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
        return [body.encode()]
