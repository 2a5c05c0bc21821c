"""Exec credential plugins in kubeconfigs, with a fake plugin script.

Ported from client-go's plugin/pkg/client/auth/exec/exec.go and exec_test.go (v1.35: the
ExecCredential input in KUBERNETES_EXEC_INFO, v1/v1beta1, caching until expirationTimestamp, the
401 refresh of the round tripper, the error messages of refreshCredsLocked and
wrapCmdRunErrorLocked) and tools/clientcmd/validation.go + api/v1/defaults.go (the exec stanza's
validation messages, interactiveMode defaulting). The timeout and output bounds are ours:
client-go has none.
"""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import json
import logging
import os
import signal
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from exec_plugin_fakes import V1, V1BETA1, FakePlugin, FixedClock, local_server, write_kubeconfig

from kubesched.kube import klog
from kubesched.kube.client import KubeClient
from kubesched.kube.config import KubeConfigError, load_kubeconfig
from kubesched.kube.exec_auth import (
    EXEC_INFO_ENV,
    INSTALL_HINT_HELP,
    MAX_STDERR_CHARS,
    ExecAuth,
    ExecCredentialError,
)

T0 = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.UTC)


def _exec(plugin: FakePlugin, **extra: Any) -> dict[str, Any]:
    return {"exec": {"apiVersion": V1, "command": str(plugin.path), "interactiveMode": "Never", **extra}}


def _auth(tmp_path: Path, plugin: FakePlugin, clock: FixedClock | None = None, **extra: Any) -> ExecAuth:
    kc = write_kubeconfig(tmp_path / "kc", server="http://127.0.0.1:1", user=_exec(plugin, **extra))
    conn = load_kubeconfig(kc, clock=clock)
    assert isinstance(conn.auth, ExecAuth)
    return conn.auth


def _header(auth: httpx.Auth) -> str:
    flow = auth.sync_auth_flow(httpx.Request("GET", "https://x/api"))
    return next(flow).headers.get("Authorization", "")


def test_v1_token_args_env_and_exec_info(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(status={"token": "tok-{n}"}, show_env=["REGION", "KUBERNETES_EXEC_INFO"])
    auth = _auth(tmp_path, plugin, args=["token", "--cluster", "prod"], env=[{"name": "REGION", "value": "eu-1"}])
    assert _header(auth) == "Bearer tok-1"
    assert _header(auth) == "Bearer tok-1"  # cached: no expirationTimestamp means no expiry
    (run,) = plugin.runs()
    assert run["argv"] == ["token", "--cluster", "prod"]
    assert run["env"]["REGION"] == "eu-1"
    # client-go encodes spec.interactive always and omits spec.cluster without provideClusterInfo.
    assert json.loads(run["info"]) == {"kind": "ExecCredential", "apiVersion": V1, "spec": {"interactive": False}}


def test_v1beta1_defaults_interactive_mode_and_provides_cluster_info(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(api_version=V1BETA1, status={"token": "beta"})
    ca = tmp_path / "ca.crt"
    ca.write_bytes(_ca()[0])
    kc = write_kubeconfig(
        tmp_path / "kc",
        server="https://10.0.0.1:6443",
        cluster_extra={
            "certificate-authority": "ca.crt",  # relative to the kubeconfig: passed on as data
            "tls-server-name": "api.internal",
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "prod"}}],
        },
        # no interactiveMode: v1beta1 defaults to IfAvailable (SetDefaults_ExecConfig)
        user={"exec": {"apiVersion": V1BETA1, "command": str(plugin.path), "provideClusterInfo": True}},
    )
    conn = load_kubeconfig(kc)
    assert isinstance(conn.auth, ExecAuth) and conn.auth.config.interactive_mode == "IfAvailable"
    assert _header(conn.auth) == "Bearer beta"
    info = json.loads(plugin.runs()[0]["info"])
    assert info == {
        "kind": "ExecCredential",
        "apiVersion": V1BETA1,
        "spec": {
            "interactive": False,  # IfAvailable without a terminal
            "cluster": {
                "server": "https://10.0.0.1:6443",
                "tls-server-name": "api.internal",
                "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode(),
                "config": {"audience": "prod"},
            },
        },
    }


@pytest.mark.parametrize(
    ("exec_", "message"),
    [
        (
            {"apiVersion": V1, "command": "p"},
            "interactiveMode must be specified for u to use exec authentication plugin",
        ),
        (
            {"apiVersion": V1, "command": "p", "interactiveMode": "Sometimes"},
            'invalid interactiveMode for u: "Sometimes"',
        ),
        (
            {"apiVersion": V1, "command": "p", "interactiveMode": "Always"},
            "exec plugin cannot support interactive mode: standard input is not a terminal",
        ),
        (
            {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "p", "interactiveMode": "Never"},
            'exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1"',
        ),
        ({"apiVersion": V1, "interactiveMode": "Never"}, "command must be specified for u to use exec authentication"),
        (
            {"apiVersion": V1, "command": "p", "interactiveMode": "Never", "env": [{"value": "x"}]},
            "env variable name must be specified for u to use exec authentication plugin",
        ),
    ],
)
def test_exec_stanza_validation(tmp_path: Path, exec_: dict[str, Any], message: str) -> None:
    kc = write_kubeconfig(tmp_path / "kc", user={"exec": exec_})
    with pytest.raises(KubeConfigError, match=message):
        load_kubeconfig(kc)


def test_missing_command_names_the_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    hint = "aws-iam-authenticator is needed.\nInstall it from https://example.invalid/aws"
    kc = write_kubeconfig(
        tmp_path / "kc",
        user={"exec": {"apiVersion": V1, "command": "aws-iam-authenticator", "interactiveMode": "Never",
                       "installHint": hint}},
    )
    with pytest.raises(KubeConfigError) as err:
        load_kubeconfig(kc)
    msg = str(err.value)
    assert "\n" not in msg
    assert "exec: executable aws-iam-authenticator not found" in msg
    assert INSTALL_HINT_HELP in msg  # client-go's installHintVerboseHelp
    assert "aws-iam-authenticator is needed. Install it from https://example.invalid/aws" in msg


def test_command_on_path_and_relative_to_the_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = FakePlugin(tmp_path / "conf" / "bin", name="my-plugin")
    monkeypatch.chdir(tmp_path)  # a relative command is resolved against the kubeconfig's folder, not the cwd
    kc = write_kubeconfig(
        tmp_path / "conf" / "kc",
        server="http://h",
        user={"exec": {"apiVersion": V1, "command": "./bin/my-plugin", "interactiveMode": "Never"}},
    )
    conn = load_kubeconfig(kc)
    assert isinstance(conn.auth, ExecAuth) and conn.auth.config.command == str(plugin.path)
    assert _header(conn.auth) == "Bearer tok-1"
    monkeypatch.setenv("PATH", f"{tmp_path / 'nothing'}{os.pathsep}{plugin.folder}")
    kc2 = write_kubeconfig(
        tmp_path / "elsewhere" / "kc",
        server="http://h",
        user={"exec": {"apiVersion": V1, "command": "my-plugin", "interactiveMode": "Never"}},
    )
    conn2 = load_kubeconfig(kc2)
    assert conn2.auth is not None and _header(conn2.auth) == "Bearer tok-2"


def test_cached_until_expiration_then_run_again(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(status={"token": "tok-{n}", "expirationTimestamp": "2026-01-01T12:10:00Z"})
    clock = FixedClock(T0)
    auth = _auth(tmp_path, plugin, clock)
    assert _header(auth) == "Bearer tok-1"
    clock.now = datetime.datetime(2026, 1, 1, 12, 10, tzinfo=datetime.UTC)  # at the expiry: not after it yet
    assert _header(auth) == "Bearer tok-1"
    assert len(plugin.runs()) == 1
    plugin.spec(status={"token": "tok-{n}", "expirationTimestamp": "2026-01-01T12:20:00Z"})
    clock.now = datetime.datetime(2026, 1, 1, 12, 10, 1, tzinfo=datetime.UTC)
    assert _header(auth) == "Bearer tok-2"
    assert _header(auth) == "Bearer tok-2"
    assert len(plugin.runs()) == 2


def test_401_reruns_the_plugin_once_and_returns_the_401(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    auth = _auth(tmp_path, plugin)
    seen: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization", ""))
        ok = request.headers.get("Authorization") == "Bearer tok-2"
        return httpx.Response(200 if ok else 401, json={})

    with httpx.Client(auth=auth, transport=httpx.MockTransport(api)) as http:
        assert http.get("https://api/x").status_code == 401  # client-go does not resend
        assert len(plugin.runs()) == 2  # the 401 ran the plugin again, once
        assert http.get("https://api/x").status_code == 200
        assert seen == ["Bearer tok-1", "Bearer tok-2"]
        assert len(plugin.runs()) == 2
    # A 401 for a credential another request has already replaced does not run it again.
    stale = auth.credential()
    auth.refresh_after_401(stale)
    assert len(plugin.runs()) == 3
    auth.refresh_after_401(stale)
    assert len(plugin.runs()) == 3


def test_a_request_with_its_own_authorization_is_left_alone(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    auth = _auth(tmp_path, plugin)
    flow = auth.sync_auth_flow(httpx.Request("GET", "https://x", headers={"Authorization": "Bearer mine"}))
    assert next(flow).headers["Authorization"] == "Bearer mine"
    assert plugin.runs() == []


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs, giving a SIGKILLed process a moment to be torn down."""
    for _ in range(100):
        if not _running(pid):
            return False
        time.sleep(0.05)
    return True


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (our own child, reaped by wait) counts as dead
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_a_hanging_plugin_is_killed_at_the_bound(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(mode="hang")
    auth = _auth(tmp_path, plugin)
    auth.timeout = 1.0
    with pytest.raises(ExecCredentialError, match=r"did not finish within 1s; killed"):
        auth.credential()
    pid, child = map(int, (plugin.folder / "pids").read_text().split())
    assert not _alive(pid)
    assert not _alive(child)  # what the plugin started is killed with it (its own session)


def test_a_background_child_holding_the_pipes_does_not_hold_the_credential(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(mode="daemon", status={"token": "tok-{n}"})
    auth = _auth(tmp_path, plugin)
    auth.timeout = 5.0
    try:
        assert _header(auth) == "Bearer tok-1"  # not "did not finish within 5s"
    finally:
        os.kill(int((plugin.folder / "daemon.pid").read_text()), signal.SIGKILL)


def test_nonzero_exit_quotes_stderr_bounded_on_one_line(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(mode="fail", code=3, stderr="error: SSO session expired\nrun aws sso login\n" + "y" * 10_000)
    auth = _auth(tmp_path, plugin)
    with pytest.raises(ExecCredentialError) as err:
        auth.credential()
    msg = str(err.value)
    assert msg.startswith(
        f"getting credentials: exec: executable {plugin.path} failed with exit code 3: "
        "error: SSO session expired run aws sso login yyy"
    )
    assert "\n" not in msg and msg.endswith("...")
    assert len(msg) < MAX_STDERR_CHARS + 200


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        ("secret-token-123 {", "decoding stdout: not an ExecCredential in JSON"),
        ('["secret-token-123"]', "decoding stdout: not an ExecCredential in JSON"),
        (
            json.dumps({"apiVersion": V1BETA1, "kind": "ExecCredential", "status": {"token": "secret-token-123"}}),
            f"exec plugin is configured to use API version {V1}, plugin returned version {V1BETA1}",
        ),
        (json.dumps({"apiVersion": V1, "kind": "ExecCredential"}), "exec plugin didn't return a status field"),
        (json.dumps({"apiVersion": V1, "kind": "ExecCredential", "status": {}}),
         "exec plugin didn't return a token or cert/key pair"),
        (json.dumps({"apiVersion": V1, "kind": "ExecCredential", "status": {"clientKeyData": "secret-token-123"}}),
         "exec plugin returned only certificate or key, not both"),
        (json.dumps({"apiVersion": V1, "kind": "ExecCredential",
                     "status": {"token": "secret-token-123", "expirationTimestamp": "tomorrow"}}),
         "expirationTimestamp 'tomorrow' is not an RFC 3339 time"),
    ],
)
def test_bad_output_is_refused_without_quoting_it(tmp_path: Path, stdout: str, message: str) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(mode="raw", stdout=stdout)
    auth = _auth(tmp_path, plugin)
    with pytest.raises(ExecCredentialError, match=message) as err:
        auth.credential()
    assert "secret-token-123" not in str(err.value)


def test_endless_output_is_cut_off(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(mode="flood")
    with pytest.raises(ExecCredentialError, match="wrote more than 1048576 bytes to stdout; killed"):
        _auth(tmp_path, plugin).credential()


def test_plugin_removed_after_start_is_a_transport_error(tmp_path: Path) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    kc = write_kubeconfig(tmp_path / "kc", server="http://127.0.0.1:1", user=_exec(plugin))
    client = KubeClient(load_kubeconfig(kc), qps=-1, transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    plugin.path.unlink()
    # A transport error: the informers and the scheduler retry it as a lost connection.
    with pytest.raises(httpx.TransportError, match=f"exec: executable {plugin.path} not found"):
        client.get("/api/v1/pods")


# -- client certificates over real TLS -------------------------------------------------------------
def _ca() -> tuple[bytes, Any, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), key, cert


def _leaf(ca_key: Any, ca_cert: x509.Certificate, cn: str, server: bool) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    b = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
        .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        # What a conforming CA writes, and what Python 3.13's strict verification asks for.
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    )
    if server:
        b = b.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
    cert = b.sign(ca_key, hashes.SHA256())
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, bytes, Any, x509.Certificate]]:
    """An HTTPS server that requires a client certificate from the CA and answers with its CN."""
    ca_pem, ca_key, ca_cert = _ca()
    crt, key = _leaf(ca_key, ca_cert, "apiserver", server=True)
    (tmp_path / "srv.crt").write_bytes(crt)
    (tmp_path / "srv.key").write_bytes(key)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "srv.crt", tmp_path / "srv.key")
    ctx.load_verify_locations(cadata=ca_pem.decode())
    ctx.verify_mode = ssl.CERT_REQUIRED

    def respond(h: http.server.BaseHTTPRequestHandler) -> tuple[int, dict[str, Any]]:
        peer = h.connection.getpeercert()  # type: ignore[attr-defined]
        cn = dict(x[0] for x in peer["subject"])["commonName"]
        return 200, {"user": cn}

    with local_server(respond, ctx) as url:
        yield url, ca_pem, ca_key, ca_cert


def test_client_certificate_from_the_plugin_over_verified_tls(
    tmp_path: Path, tls_server: tuple[str, bytes, Any, x509.Certificate]
) -> None:
    url, ca_pem, ca_key, ca_cert = tls_server
    crt, key = _leaf(ca_key, ca_cert, "system:kube-scheduler", server=False)
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(status={"clientCertificateData": crt.decode(), "clientKeyData": key.decode()})
    kc = write_kubeconfig(
        tmp_path / "kc", server=url, user=_exec(plugin),
        cluster_extra={"certificate-authority-data": base64.b64encode(ca_pem).decode()},
    )
    client = KubeClient(load_kubeconfig(kc), qps=-1)
    try:
        assert client.get("/api") == {"user": "system:kube-scheduler"}
    finally:
        client.close()
    # Verification stays on: the same server with a CA that did not sign it is refused.
    other_ca = _ca()[0]
    kc_bad = write_kubeconfig(
        tmp_path / "kc-bad", server=url, user=_exec(plugin),
        cluster_extra={"certificate-authority-data": base64.b64encode(other_ca).decode()},
    )
    bad = KubeClient(load_kubeconfig(kc_bad), qps=-1)
    try:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            bad.get("/api")
    finally:
        bad.close()


def test_a_rotated_client_certificate_is_used_on_new_connections(
    tmp_path: Path, tls_server: tuple[str, bytes, Any, x509.Certificate]
) -> None:
    """TLS presents a client certificate only in the handshake: after the plugin returned a new
    one, requests must leave the kept-alive connections made with the old one (client-go's
    connTracker.CloseAll on rotation)."""
    url, ca_pem, ca_key, ca_cert = tls_server
    plugin = FakePlugin(tmp_path / "bin")

    def issue(cn: str, expires: str) -> None:
        crt, key = _leaf(ca_key, ca_cert, cn, server=False)
        plugin.spec(status={"clientCertificateData": crt.decode(), "clientKeyData": key.decode(),
                            "expirationTimestamp": expires})

    issue("first", "2026-01-01T12:10:00Z")
    kc = write_kubeconfig(
        tmp_path / "kc", server=url, user=_exec(plugin),
        cluster_extra={"certificate-authority-data": base64.b64encode(ca_pem).decode()},
    )
    clock = FixedClock(T0)
    client = KubeClient(load_kubeconfig(kc, clock=clock), qps=-1)
    client.rotation_grace = 0.0
    try:
        assert client.get("/api") == {"user": "first"}
        assert client.get("/api") == {"user": "first"}
        old_http = client.http
        issue("second", "2026-01-01T12:30:00Z")
        clock.now = datetime.datetime(2026, 1, 1, 12, 11, tzinfo=datetime.UTC)
        client.get("/api")  # the expiry runs the plugin; this request may still use the old connection
        assert client.get("/api") == {"user": "second"}
        assert client.http is not old_http
        for _ in range(100):  # the old pool is closed after the grace period (0 here)
            if old_http.is_closed:
                break
            time.sleep(0.05)
        assert old_http.is_closed
        assert len(plugin.runs()) == 2
    finally:
        client.close()


# -- nothing secret in the logs at -v=10 ---------------------------------------------------------
@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    levels = {n: logging.getLogger(n).level for n in ("httpx", "httpcore")}
    yield
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    for n, lvl in levels.items():
        logging.getLogger(n).setLevel(lvl)


def test_no_token_in_klog_output_at_v10(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    plugin = FakePlugin(tmp_path / "bin")
    plugin.spec(status={"token": "s3cr3t-{n}"})

    def respond(h: http.server.BaseHTTPRequestHandler) -> tuple[int, dict[str, Any]]:
        ok = h.headers.get("Authorization") == "Bearer s3cr3t-2"
        return (200, {"kind": "APIResourceList"}) if ok else (401, {"kind": "Status", "code": 401})

    with local_server(respond) as url:
        kc = write_kubeconfig(tmp_path / "kc", server=url, user=_exec(plugin))
        klog.setup(10)
        client = KubeClient(load_kubeconfig(kc), qps=-1)
        try:
            with pytest.raises(Exception, match="401"):
                client.get("/api/v1")
            assert client.get("/api/v1") == {"kind": "APIResourceList"}
            plugin.spec(mode="raw", stdout='{"token": "s3cr3t-garbage"')
            client.conn.auth.refresh_after_401(client.conn.auth.credential())  # type: ignore[union-attr]
        except ExecCredentialError as err:
            logging.getLogger("test").error("%s", err)
        finally:
            client.close()
    out = capfd.readouterr()
    assert "GET" in out.err  # the requests were logged at this verbosity
    assert "s3cr3t" not in out.err + out.out
    assert EXEC_INFO_ENV not in out.err
