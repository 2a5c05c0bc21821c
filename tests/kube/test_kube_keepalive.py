"""The keep-alive path of KubeClient's unary requests (kube/keepalive.py), against servers that
misbehave: one connection for many requests, a connection the server dropped while idle (the
POST is sent once, on a new connection), a server that never answers, one that answers garbage,
an untrusted certificate, an error Status, and a proxy in the environment (httpx then)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubesched.kube.client import ApiError, KubeClient
from kubesched.kube.config import ConnectionConfig

OK = b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'


class Server:
    """A raw HTTP/1.1 server: ``answer(request_bytes) -> (bytes to send, close after)``."""

    def __init__(self, answer: Callable[[bytes], tuple[bytes, bool]], tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.tls = tls
        self.connections = 0
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.tls is not None:
                try:
                    c = self.tls.wrap_socket(c, server_side=True)
                except (ssl.SSLError, OSError):
                    c.close()
                    continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        buf = b""
        with c:
            while True:
                while b"\r\n\r\n" not in buf:
                    try:
                        d = c.recv(65536)
                    except OSError:
                        return
                    if not d:
                        return
                    buf += d
                head, _, rest = buf.partition(b"\r\n\r\n")
                n = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")), 0)
                while len(rest) < n:
                    rest += c.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + rest[:n])
                buf = rest[n:]
                out, close = self.answer(head)
                if out:
                    c.sendall(out)
                if close:
                    return

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._stop = True
        self.sock.close()


@contextmanager
def server(answer: Callable[[bytes], tuple[bytes, bool]], tls: ssl.SSLContext | None = None) -> Iterator[Server]:
    s = Server(answer, tls)
    try:
        yield s
    finally:
        s.close()


def client(url: str, *, verify: ssl.SSLContext | bool = True, timeout: float = 5.0) -> KubeClient:
    c = KubeClient(ConnectionConfig(server=url, verify=verify), qps=-1, timeout=timeout)
    assert c.keepalive is not None
    return c


def test_one_connection_carries_many_requests() -> None:
    with server(lambda head: (OK, False)) as s:
        c = client(s.url)
        for _ in range(20):
            assert c.post("/api/v1/namespaces/ns/pods/p/binding", {"x": 1}) == {"ok": True}
        assert s.connections == 1 and len(s.requests) == 20
        assert b'{"x": 1}' in s.requests[0] or b'{"x":1}' in s.requests[0]


def test_a_connection_the_server_dropped_while_idle_is_replaced_and_the_post_sent_once() -> None:
    # The server answers, then closes the connection without saying so (no Connection: close).
    with server(lambda head: (OK, True)) as s:
        c = client(s.url)
        for i in range(5):
            time.sleep(0.05)  # the server's close arrives before the next request
            assert c.post("/api/v1/namespaces/ns/events", {"i": i}) == {"ok": True}
        assert len(s.requests) == 5 and s.connections == 5


def test_a_server_that_never_answers_times_out() -> None:
    with server(lambda head: (b"", False)) as s:
        c = client(s.url, timeout=0.5)
        start = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            c.post("/api/v1/namespaces/ns/pods/p/binding", {})
        assert time.monotonic() - start < 3
        # The connection that timed out is not reused for the next request.
        with pytest.raises(httpx.ReadTimeout):
            c.get("/api/v1")
        assert s.connections == 2


def test_garbage_is_a_transport_error() -> None:
    with server(lambda head: (b"SMTP ready\r\n\r\n", True)) as s:
        c = client(s.url)
        with pytest.raises(httpx.TransportError):
            c.get("/api/v1")


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    c = client(f"http://127.0.0.1:{port}")
    with pytest.raises(httpx.ConnectError):
        c.get("/api/v1")


def test_an_error_status_is_an_api_error() -> None:
    body = b'{"kind":"Status","code":409,"reason":"Conflict","message":"pod p is already assigned to node n1"}'
    answer = (b"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    with server(lambda head: (answer, False)) as s:
        c = client(s.url)
        with pytest.raises(ApiError) as err:
            c.post("/api/v1/namespaces/ns/pods/p/binding", {})
        assert (err.value.code, err.value.reason, err.value.message) == (
            409, "Conflict", "pod p is already assigned to node n1")


def _certificate(tmp_path: Path) -> ssl.SSLContext:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "untrusted")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "c.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "k.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    return ctx


def test_an_untrusted_certificate_is_refused_and_a_trusted_one_works(tmp_path: Path) -> None:
    tls = _certificate(tmp_path)
    with server(lambda head: (OK, False), tls) as s:
        with pytest.raises(httpx.ConnectError):
            client(s.url).get("/api/v1")  # the system's CAs do not know it
        trusted = ssl.create_default_context(cafile=str(tmp_path / "c.pem"))
        assert client(s.url, verify=trusted).get("/api/v1") == {"ok": True}


def test_with_a_proxy_in_the_environment_httpx_sends_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    c = KubeClient(ConnectionConfig(server="https://api.example:6443"), qps=-1)
    assert c.keepalive is None
    monkeypatch.setenv("NO_PROXY", "api.example")
    assert KubeClient(ConnectionConfig(server="https://api.example:6443"), qps=-1).keepalive is not None


def test_json_decoding_accepts_what_the_standard_library_accepts() -> None:
    """The API server writes integers as int64 (apimachinery decodes larger ones to float64), which
    orjson reads exactly; what orjson refuses (a NaN) goes to the standard library."""
    import math

    from kubesched.kube.client import decode_json

    assert decode_json(b'{"n": 9223372036854775807, "m": -9223372036854775808}') == {
        "n": 9223372036854775807, "m": -9223372036854775808}
    assert decode_json('{"a": [1, 2.5, null, true]}') == {"a": [1, 2.5, None, True]}
    assert math.isnan(decode_json(b'{"x": NaN}')["x"])
    with pytest.raises(ValueError):
        decode_json(b'{"a": ')
