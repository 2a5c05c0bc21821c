"""The scheduler's unary requests (bindings, events, status patches) over ``http.client``
keep-alive connections, one per thread.

Why: a scheduler writes twice per pod (the binding and the Scheduled event), and on two shared
cores the client's CPU per request is what limits it next to kube-scheduler. Measured here for a
small POST with its JSON answer against a local server (``/tmp``-style micro-benchmark, 3000
requests, client CPU only): ``httpx.Client`` 350 µs, ``httpx.HTTPTransport`` alone 234 µs,
``http.client`` 80 µs. Everything else stays with httpx: watches (streaming), and any request when
a proxy applies (httpx honours ``HTTPS_PROXY``/``NO_PROXY``; this path does not know proxies).

The rules are httpx's, so callers see no difference: the connection's TLS context is the
client's (server verification, client certificates, rotated exec-plugin certificates for new
connections), authentication runs the same ``httpx.Auth`` flow (a bearer token file, an exec
plugin and its refresh after a 401), timeouts and connection failures raise the same
``httpx.TransportError`` subclasses. A kept-alive connection the server closed while it was idle
is noticed before a request is written on it, never retried after (a POST is not repeated).
"""

from __future__ import annotations

import http.client
import logging
import select
import ssl
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit
from urllib.request import getproxies, proxy_bypass

import httpx

#: httpx's request log (``HTTP Request: GET <url> "HTTP/1.1 200 OK"``), kept for this path so that
#: high verbosities show every request as before; klog's setup decides when it is on.
request_log = logging.getLogger("httpx")

#: What the server may send at most in one answer (a LIST page of 500 big objects fits easily).
MAX_RESPONSE_BYTES = 512 * 1024 * 1024


def proxy_applies(server: str) -> bool:
    """Whether httpx (trust_env) would send requests to ``server`` through a proxy."""
    parts = urlsplit(server)
    proxies = getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not proxy_bypass(parts.hostname or "")


class KeepAlive:
    """Per-thread ``http.client`` connections to one API server."""

    def __init__(
        self,
        server: str,
        *,
        verify: ssl.SSLContext | bool,
        auth: httpx.Auth | None,
        headers: Mapping[str, str],
        timeout: float,
    ) -> None:
        parts = urlsplit(server)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if self.https else 80)
        self.base = parts.path.rstrip("/")
        self.server = server
        self.auth = auth
        self.headers = dict(headers)
        self.timeout = timeout
        if isinstance(verify, ssl.SSLContext):
            self.context: ssl.SSLContext | None = verify
        elif self.https:
            self.context = ssl.create_default_context()
            if not verify:
                self.context.check_hostname = False
                self.context.verify_mode = ssl.CERT_NONE
        else:
            self.context = None
        self._local = threading.local()
        #: Bumped to drop every thread's connection (a rotated client certificate).
        self._generation = 0

    def reset(self) -> None:
        """New connections from now on (each thread closes its old one when it next sends)."""
        self._generation += 1

    # -- connections -------------------------------------------------------------------------------
    def _connection(self) -> http.client.HTTPConnection:
        local = self._local
        conn: http.client.HTTPConnection | None = getattr(local, "conn", None)
        if conn is not None and (local.generation != self._generation or _dropped(conn)):
            conn.close()
            conn = None
        if conn is None:
            if self.https:
                conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=self.context)
            else:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            local.conn, local.generation = conn, self._generation
        return conn

    def _discard(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- requests ----------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None,
        content: bytes | None,
        headers: Mapping[str, str] | None,
        timeout: float | None,
    ) -> httpx.Response:
        """One request, through the client's auth flow; the answer as an ``httpx.Response``."""
        target = self.base + path + ("?" + urlencode(params, doseq=True) if params else "")
        all_headers = {**self.headers, **(headers or {})}
        if content is not None:
            all_headers["Content-Length"] = str(len(content))
        request = httpx.Request(method, self.server + target, headers=all_headers, content=content)
        if self.auth is None:
            return self._send(request, target, timeout)
        flow = self.auth.sync_auth_flow(request)
        request = next(flow)
        while True:
            response = self._send(request, target, timeout)
            try:
                request = flow.send(response)
            except StopIteration:
                return response

    def _send(self, request: httpx.Request, target: str, timeout: float | None) -> httpx.Response:
        conn = self._connection()
        if timeout is not None:
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
        try:
            conn.request(request.method, target, body=request.content or None, headers=dict(request.headers))
            resp = conn.getresponse()
            data = resp.read(MAX_RESPONSE_BYTES + 1)
        except TimeoutError as err:
            self._discard()
            raise httpx.ReadTimeout(f"timed out talking to {self.server}: {err}", request=request) from None
        except ssl.SSLError as err:
            self._discard()
            raise httpx.ConnectError(f"TLS with {self.server}: {err}", request=request) from None
        except (ConnectionError, http.client.HTTPException, OSError) as err:
            self._discard()
            kind = httpx.RemoteProtocolError if isinstance(err, http.client.HTTPException) else httpx.ConnectError
            raise kind(f"{type(err).__name__} talking to {self.server}: {err}", request=request) from None
        finally:
            if timeout is not None and conn.sock is not None:
                conn.sock.settimeout(self.timeout)
                conn.timeout = self.timeout
        if len(data) > MAX_RESPONSE_BYTES:
            self._discard()
            raise httpx.RemoteProtocolError(f"answer from {self.server} larger than {MAX_RESPONSE_BYTES} bytes",
                                            request=request)
        if resp.will_close:
            self._discard()
        if request_log.isEnabledFor(logging.INFO):
            request_log.info(
                'HTTP Request: %s %s "HTTP/1.1 %d %s"', request.method, request.url, resp.status, resp.reason
            )
        return httpx.Response(resp.status, headers=resp.getheaders(), content=data, request=request)


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle kept-alive connection was closed by the server (readable with nothing to
    read, or an error): then it must not carry the next request."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
