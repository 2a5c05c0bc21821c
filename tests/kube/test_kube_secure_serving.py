"""Secure serving of /metrics and the health checks, as kube-scheduler's (issue 13).

Upstream: k8s.io/apiserver/pkg/server/options/authentication.go and authorization.go (delegating
options: CacheTTL 10 s, AllowCacheTTL/DenyCacheTTL 10 s, AlwaysAllowPaths /healthz,/readyz,/livez,
AlwaysAllowGroups system:masters), pkg/authentication/request/bearertoken (a token that does not
authenticate is 401, "invalid bearer token"), pkg/endpoints/handlers/responsewriters (the 401/403
Status bodies), cmd/kube-scheduler/app/options (port 10259, pair name kube-scheduler).
The real API server's TokenReview and SubjectAccessReview: tests/e2e/test_kube_https_serving.py.
"""

from __future__ import annotations

import datetime
import json
import logging
import socket
import ssl
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from prometheus_client import CollectorRegistry, Counter

from kubesched.kube.delegated_auth import AuthFilter, DelegatedAuthenticator, DelegatedAuthorizer
from kubesched.kube.server import HealthServer
from kubesched.kube.serving import ServingCertError, server_ssl_context, serving_cert

GOOD = "good-token-0123456789"
BAD = "bad-token-9876543210"


class FakeReviews:
    """TokenReview and SubjectAccessReview answers as the API server gives them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.allowed = {("alice", "get", "/metrics")}
        self.fail = False

    def post(self, path: str, body: Any) -> Any:
        self.calls.append((path, body))
        if self.fail:
            raise httpx.ConnectError("refused")
        if path.endswith("/tokenreviews"):
            if body["spec"]["token"] == GOOD:
                user = {"username": "alice", "uid": "u-1", "groups": ["team", "system:authenticated"]}
                return {"status": {"authenticated": True, "user": user}}
            return {"status": {"authenticated": False, "error": "invalid"}}
        spec = body["spec"]
        attrs = spec["nonResourceAttributes"]
        ok = (spec["user"], attrs["verb"], attrs["path"]) in self.allowed
        return {"status": {"allowed": ok, "reason": "" if ok else "no RBAC policy matched"}}


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _server(tmp_path: Path, reviews: FakeReviews | None, clock: Clock | None = None,
            client_ca: str | None = None, **authz: Any) -> HealthServer:
    reg = CollectorRegistry()
    Counter("scheduler_schedule_attempts", "x", ["result"], registry=reg).labels("scheduled").inc()
    cert = serving_cert(tls_cert_file=None, tls_private_key_file=None, cert_dir=str(tmp_path / "certs"),
                        bind_address="127.0.0.1")
    now = clock or time.monotonic
    authn = DelegatedAuthenticator(reviews, clock=now)
    authorizer = DelegatedAuthorizer(reviews, clock=now, **authz)
    server = HealthServer("127.0.0.1:0", reg, ssl_context=server_ssl_context(cert, client_ca),
                          middleware=lambda app: AuthFilter(app, authn, authorizer))
    server.start()
    return server


def _client(tmp_path: Path, **kw: Any) -> httpx.Client:
    return httpx.Client(verify=ssl.create_default_context(cafile=str(tmp_path / "certs" / "kube-scheduler.crt")),
                        timeout=10, **kw)


@pytest.fixture
def reviews() -> FakeReviews:
    return FakeReviews()


def test_health_is_served_over_verified_tls_without_credentials(tmp_path: Path, reviews: FakeReviews) -> None:
    s = _server(tmp_path, reviews)
    try:
        with _client(tmp_path) as c:
            # The self-signed certificate names 127.0.0.1 and localhost: hostname checks pass.
            for host in ("127.0.0.1", "localhost"):
                r = c.get(f"https://{host}:{s.port}/healthz")
                assert (r.status_code, r.text) == (200, "ok")
            assert c.get(f"https://127.0.0.1:{s.port}/readyz").status_code == 200
            assert c.get(f"https://127.0.0.1:{s.port}/livez?verbose").text.endswith("livez check passed\n")
        assert reviews.calls == []  # always-allow paths need no review
        with pytest.raises(httpx.RemoteProtocolError):  # plain HTTP to the secure port gets no answer
            httpx.get(f"http://127.0.0.1:{s.port}/healthz", timeout=10)
    finally:
        s.stop()


def test_metrics_need_an_authorized_identity(tmp_path: Path, reviews: FakeReviews) -> None:
    s = _server(tmp_path, reviews)
    url = f"https://127.0.0.1:{s.port}/metrics"
    try:
        with _client(tmp_path) as c:
            r = c.get(url)
            assert r.status_code == 403
            assert r.json() == {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": 'forbidden: User "system:anonymous" cannot get path "/metrics": no RBAC policy matched',
                "reason": "Forbidden", "details": {}, "code": 403,
            }
            r = c.get(url, headers={"Authorization": f"Bearer {BAD}"})
            assert r.status_code == 401
            assert r.json()["message"] == "Unauthorized" and r.json()["reason"] == "Unauthorized"
            r = c.get(url, headers={"Authorization": f"Bearer {GOOD}"})
            assert r.status_code == 200 and "scheduler_schedule_attempts_total" in r.text
            # alice may get /metrics only: another verb is asked about, and denied.
            r = c.post(url, headers={"Authorization": f"Bearer {GOOD}"})
            assert r.status_code == 403 and 'User "alice" cannot post path "/metrics"' in r.json()["message"]
        sar = [b for p, b in reviews.calls if p.endswith("subjectaccessreviews")]
        assert {"path": "/metrics", "verb": "get"} in [b["spec"]["nonResourceAttributes"] for b in sar]
        alice = next(b["spec"] for b in sar if b["spec"]["user"] == "alice")
        assert alice["groups"] == ["team", "system:authenticated"] and alice["uid"] == "u-1"
    finally:
        s.stop()


def test_reviews_are_cached_for_ten_seconds(tmp_path: Path, reviews: FakeReviews) -> None:
    clock = Clock()
    s = _server(tmp_path, reviews, clock)
    url = f"https://127.0.0.1:{s.port}/metrics"
    try:
        with _client(tmp_path) as c:
            for _ in range(3):
                assert c.get(url, headers={"Authorization": f"Bearer {GOOD}"}).status_code == 200
                assert c.get(url, headers={"Authorization": f"Bearer {BAD}"}).status_code == 401
            assert len(reviews.calls) == 3  # two TokenReviews and one SubjectAccessReview
            clock.t += 9.9
            assert c.get(url, headers={"Authorization": f"Bearer {GOOD}"}).status_code == 200
            assert len(reviews.calls) == 3
            clock.t += 0.2
            assert c.get(url, headers={"Authorization": f"Bearer {GOOD}"}).status_code == 200
            assert len(reviews.calls) == 5
    finally:
        s.stop()


def test_an_unreachable_api_server_fails_the_request_not_the_server(tmp_path: Path, reviews: FakeReviews) -> None:
    reviews.fail = True
    s = _server(tmp_path, reviews)
    try:
        with _client(tmp_path) as c:
            url = f"https://127.0.0.1:{s.port}"
            assert c.get(f"{url}/metrics", headers={"Authorization": f"Bearer {GOOD}"}).status_code == 401
            assert c.get(f"{url}/metrics").status_code == 403
            assert c.get(f"{url}/healthz").status_code == 200
    finally:
        s.stop()


def test_without_a_review_client_only_the_always_allowed_paths_are_served(tmp_path: Path) -> None:
    # Upstream without an authentication/authorization kubeconfig: no token authenticator (the
    # header is not looked at), and only the always-allow paths and groups are authorized.
    s = _server(tmp_path, None)
    try:
        with _client(tmp_path) as c:
            url = f"https://127.0.0.1:{s.port}"
            r = c.get(f"{url}/metrics", headers={"Authorization": f"Bearer {GOOD}"})
            assert r.status_code == 403 and 'User "system:anonymous"' in r.json()["message"]
            assert c.get(f"{url}/healthz").status_code == 200
    finally:
        s.stop()


def _client_cert(tmp_path: Path, cn: str, org: str) -> tuple[Path, tuple[str, str]]:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-client-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                         x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
            .serial_number(2).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1)).sign(ca_key, hashes.SHA256()))
    ca_file, cert_file, key_file = tmp_path / "client-ca.crt", tmp_path / "admin.crt", tmp_path / "admin.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return ca_file, (str(cert_file), str(key_file))


def test_a_client_certificate_of_system_masters_needs_no_review(tmp_path: Path, reviews: FakeReviews) -> None:
    ca_file, pair = _client_cert(tmp_path, "admin", "system:masters")
    s = _server(tmp_path, reviews, client_ca=str(ca_file))
    try:
        ctx = ssl.create_default_context(cafile=str(tmp_path / "certs" / "kube-scheduler.crt"))
        ctx.load_cert_chain(*pair)
        with httpx.Client(verify=ctx, timeout=10) as c:
            assert c.get(f"https://127.0.0.1:{s.port}/metrics").status_code == 200
        assert reviews.calls == []
        with _client(tmp_path) as c:  # no certificate: anonymous (requested, not required)
            assert c.get(f"https://127.0.0.1:{s.port}/metrics").status_code == 403
    finally:
        s.stop()


def test_a_stalled_or_garbage_client_does_not_block_others(tmp_path: Path, reviews: FakeReviews,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    s = _server(tmp_path, reviews)
    try:
        idle = socket.create_connection(("127.0.0.1", s.port))  # connects, never says hello
        junk = socket.create_connection(("127.0.0.1", s.port))
        junk.sendall(b"\x00" * 64 + b"GET / HTTP/1.1\r\n\r\n")
        with _client(tmp_path) as c:
            t0 = time.monotonic()
            assert c.get(f"https://127.0.0.1:{s.port}/healthz").status_code == 200
            assert time.monotonic() - t0 < 5  # not behind the idle client's 10 s handshake timeout
        idle.close()
        junk.close()
    finally:
        s.stop()


def test_tokens_are_never_logged(tmp_path: Path, reviews: FakeReviews, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    s = _server(tmp_path, reviews)
    try:
        with _client(tmp_path) as c:
            for token in (GOOD, BAD):
                c.get(f"https://127.0.0.1:{s.port}/metrics", headers={"Authorization": f"Bearer {token}"})
        reviews.fail = True
        with _client(tmp_path) as c:
            c.get(f"https://127.0.0.1:{s.port}/metrics", headers={"Authorization": "Bearer other-secret-token"})
    finally:
        s.stop()
    text = caplog.text + json.dumps([r.args for r in caplog.records], default=str)
    assert GOOD not in text and BAD not in text and "other-secret-token" not in text


def test_always_allow_paths_grammar() -> None:
    a = DelegatedAuthorizer(None, always_allow_paths=["healthz", "/debug/*", " "])
    anon = DelegatedAuthenticator(None).authenticate({})
    assert a.authorize(anon, "get", "/healthz")[0]
    assert a.authorize(anon, "get", "/debug/pprof/heap")[0]
    assert not a.authorize(anon, "get", "/metrics")[0]
    assert not a.authorize(anon, "get", "/healthz/extra")[0]
    with pytest.raises(ValueError, match=r"only trailing \* allowed"):
        DelegatedAuthorizer(None, always_allow_paths=["/a*b"])


def test_cert_dir_keeps_the_pair_and_bad_files_are_one_line(tmp_path: Path) -> None:
    first = serving_cert(tls_cert_file=None, tls_private_key_file=None, cert_dir=str(tmp_path), bind_address="::")
    again = serving_cert(tls_cert_file=None, tls_private_key_file=None, cert_dir=str(tmp_path), bind_address="::")
    assert (first.cert_file, first.key_file) == (again.cert_file, again.key_file)
    assert Path(first.cert_file).name == "kube-scheduler.crt"
    assert Path(first.key_file).stat().st_mode & 0o077 == 0  # the key is private
    with pytest.raises(ServingCertError, match="must be set together"):
        serving_cert(tls_cert_file="x.crt", tls_private_key_file=None, cert_dir=None, bind_address="0.0.0.0")
    bad = tmp_path / "bad.crt"
    bad.write_text("not a certificate")
    given = serving_cert(tls_cert_file=str(bad), tls_private_key_file=str(bad), cert_dir=None, bind_address="0.0.0.0")
    with pytest.raises(ServingCertError) as err:
        server_ssl_context(given)
    assert "\n" not in str(err.value) and str(bad) in str(err.value)
    memory = serving_cert(tls_cert_file=None, tls_private_key_file=None, cert_dir=None, bind_address="0.0.0.0")
    server_ssl_context(memory)
    assert not Path(memory.key_file).exists()  # loaded, then removed: the key lives in memory only


def test_without_cryptography_a_self_signed_certificate_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "cryptography", None)  # import cryptography raises ImportError
    with pytest.raises(ServingCertError) as err:
        serving_cert(tls_cert_file=None, tls_private_key_file=None, cert_dir=None, bind_address="0.0.0.0")
    assert "\n" not in str(err.value) and "--tls-cert-file" in str(err.value)
