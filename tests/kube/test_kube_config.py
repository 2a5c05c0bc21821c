"""Connection settings from a kubeconfig or the in-cluster environment, following client-go's
clientcmd (current context, relative paths resolved against the kubeconfig's directory, inline
``*-data`` fields, token and tokenFile, insecure-skip-tls-verify) and rest.InClusterConfig
(KUBERNETES_SERVICE_HOST/PORT, the ServiceAccount token file re-read as it rotates)."""

from __future__ import annotations

import base64
import datetime
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubesched.kube.config import KubeConfigError, TokenFileAuth, in_cluster_config, load_kubeconfig


def _self_signed() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


def _kubeconfig(tmp_path: Path, cluster: dict[str, Any], user: dict[str, Any], name: str = "kc") -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [
            {"name": "ctx", "context": {"cluster": "c", "user": "u"}},
            {"name": "other", "context": {"cluster": "missing"}},
        ],
        "current-context": "ctx",
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def _auth_header(auth: httpx.Auth | None, headers: dict[str, str]) -> str:
    if auth is None:
        return headers.get("Authorization", "")
    req = httpx.Request("GET", "https://x")
    flow = auth.sync_auth_flow(req)
    return next(flow).headers.get("Authorization", "")


def test_token_and_inline_ca_and_client_certificate(tmp_path: Path) -> None:
    cert, key = _self_signed()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    path = _kubeconfig(
        tmp_path,
        {"server": "https://10.0.0.1:6443/", "certificate-authority-data": b64(cert)},
        {"client-certificate-data": b64(cert), "client-key-data": b64(key), "token": "abc"},
    )
    conn = load_kubeconfig(path)
    assert conn.server == "https://10.0.0.1:6443"
    assert isinstance(conn.verify, ssl.SSLContext)
    assert conn.verify.verify_mode == ssl.CERT_REQUIRED
    assert _auth_header(conn.auth, conn.headers) == "Bearer abc"
    assert conn.source == str(path)


def test_relative_token_file_and_ca_paths_resolve_against_the_kubeconfig(tmp_path: Path) -> None:
    cert, _ = _self_signed()
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "ca.crt").write_bytes(cert)
    (sub / "token").write_text("tok-1\n")
    path = _kubeconfig(sub, {"server": "https://h:6443", "certificate-authority": "ca.crt"}, {"tokenFile": "token"})
    conn = load_kubeconfig(path)
    assert isinstance(conn.auth, TokenFileAuth)
    assert conn.auth.path == sub / "token"
    assert _auth_header(conn.auth, conn.headers) == "Bearer tok-1"


def test_insecure_skip_tls_verify(tmp_path: Path) -> None:
    conn = load_kubeconfig(_kubeconfig(tmp_path, {"server": "https://h", "insecure-skip-tls-verify": True}, {}))
    assert isinstance(conn.verify, ssl.SSLContext) and conn.verify.verify_mode == ssl.CERT_NONE


@pytest.mark.parametrize(
    ("user", "context", "message"),
    [
        ({"exec": {"command": "aws"}}, None, "apiVersion must be specified for u to use exec authentication plugin"),
        ({"auth-provider": {"name": "gcp"}}, None, 'Please use the "gke-gcloud-auth-plugin"'),
        ({}, "nope", "no context named 'nope'"),
        ({}, "other", "no cluster named 'missing'"),
    ],
)
def test_unusable_kubeconfigs_say_why(tmp_path: Path, user: dict[str, Any], context: str | None, message: str) -> None:
    path = _kubeconfig(tmp_path, {"server": "https://h"}, user)
    with pytest.raises(KubeConfigError, match=message):
        load_kubeconfig(path, context)


def test_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError, match="cannot read kubeconfig"):
        load_kubeconfig(tmp_path / "absent")


def test_in_cluster_config(tmp_path: Path) -> None:
    cert, _ = _self_signed()
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_bytes(cert)
    conn = in_cluster_config({"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}, tmp_path)
    assert conn.server == "https://10.96.0.1:443"
    assert isinstance(conn.verify, ssl.SSLContext)
    assert _auth_header(conn.auth, conn.headers) == "Bearer sa-token"
    v6 = in_cluster_config({"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}, tmp_path)
    assert v6.server == "https://[fd00::1]:443"
    with pytest.raises(KubeConfigError, match="not running in a cluster"):
        in_cluster_config({}, tmp_path)


def test_token_file_is_re_read_after_the_refresh_period(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("one")
    auth = TokenFileAuth(token, refresh=0.0)
    assert auth.token() == "one"
    token.write_text("two")  # rotated by the kubelet
    assert auth.token() == "two"
    cached = TokenFileAuth(token, refresh=3600)
    assert cached.token() == "two"
    token.write_text("three")
    assert cached.token() == "two"
