"""The scheduler's HTTP endpoints: ``/metrics`` (Prometheus text), ``/healthz``, ``/livez``, ``/readyz``.

Health checks follow the apiserver/kube-scheduler conventions: each check has a name; a plain GET
answers ``ok`` (200) or lists the failures (500); ``?verbose`` lists every check as
``[+]name ok`` / ``[-]name failed: reason`` followed by ``healthz check passed``. ``/healthz``
and ``/livez`` run the liveness checks (``ping``, ``leaderElection``); ``/readyz`` adds the
readiness checks (``sched-handler-sync``: every informer has listed once, ``shutdown``).

Served as kube-scheduler serves them: HTTPS on ``--secure-port`` with delegated authentication
and authorization (``serving.py``, ``delegated_auth.py``); plain HTTP only on an explicit
``--metrics-bind-address``.
"""

from __future__ import annotations

import logging
import ssl
import sys
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, disable_created_metrics, make_wsgi_app

log = logging.getLogger("kubesched.kube.server")

#: A health check: None when healthy, else the reason.
Check = Callable[[], str | None]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    #: Set for HTTPS: the listening socket is wrapped, the handshake done by each request's thread.
    ssl_context: ssl.SSLContext | None = None

    def server_bind(self) -> None:
        super().server_bind()
        if self.ssl_context is not None:
            self.socket = self.ssl_context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that fails the handshake, stalls or hangs up is its own problem: one debug
        line, never socketserver's traceback on stderr."""
        err = sys.exc_info()[1]
        if isinstance(err, OSError):  # ssl.SSLError, TimeoutError and ConnectionError are OSErrors
            log.debug("%s: connection dropped: %s", client_address, type(err).__name__)
        else:
            log.error("%s: request failed", client_address, exc_info=err)


class _QuietHandler(WSGIRequestHandler):
    #: Per read and for the TLS handshake: an idle or stalled client gives its thread back.
    timeout = 10.0

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(self.timeout)
            self.request.do_handshake()  # a failure is handle_error's, below: one debug line
        super().setup()

    def get_environ(self) -> dict[str, Any]:
        env: dict[str, Any] = super().get_environ()
        if isinstance(self.connection, ssl.SSLSocket):
            env["wsgi.url_scheme"] = "https"
            peer = self.connection.getpeercert()
            if peer:
                env["kubesched.peercert"] = peer
        return env


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
    def __init__(
        self,
        address: str,
        registry: CollectorRegistry,
        *,
        ssl_context: ssl.SSLContext | None = None,
        middleware: Callable[[WSGIApp], WSGIApp] | None = None,
        hint: str = "set --metrics-bind-address to another HOST:PORT, or 0 to disable",
    ) -> None:
        """``ssl_context`` serves HTTPS; ``middleware`` wraps the app (authentication and
        authorization); ``hint`` ends the error when the address cannot be served."""
        self.host, self.port = parse_address(address)
        # kube-scheduler's output has no *_created samples (prometheus_client's, process-wide).
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.ssl_context = ssl_context
        self.hint = hint
        self._app: WSGIApp = middleware(self.app) if middleware is not None else self.app
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
        server_class = type("_Server", (_ThreadingWSGIServer,), {"ssl_context": self.ssl_context})
        try:
            self._server = make_server(
                self.host, self.port, self._app, server_class=server_class, handler_class=_QuietHandler
            )
        except OSError as err:
            reason = (err.strerror or str(err)).lower()
            raise ServeError(f"cannot serve /metrics and health on {self.address}: {reason} "
                             f"({self.hint})") from None
        self.port = self._server.server_port  # port 0 picks a free port

    def start(self) -> None:
        self.bind()
        assert self._server is not None
        self._thread = threading.Thread(target=self._server.serve_forever, name="http-server", daemon=True)
        self._thread.start()
        scheme = "https" if self.ssl_context is not None else "http"
        log.info("serving /metrics, /healthz, /livez and /readyz on %s://%s", scheme, self.address)

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
