"""Where the API server is and how to authenticate: a kubeconfig file or the in-cluster config.

Follows client-go's ``clientcmd`` for the parts a scheduler needs (current context, server, CA,
client certificates, bearer tokens and token files, basic auth, ``insecure-skip-tls-verify``)
and ``rest.InClusterConfig`` (``KUBERNETES_SERVICE_HOST``/``_PORT``, the ServiceAccount token and
CA). Token files are re-read every minute, as client-go does, because projected ServiceAccount
tokens rotate. Exec and auth-provider plugins are refused with a clear error.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
#: client-go's ``NewCachedFileTokenSource`` period.
TOKEN_FILE_REFRESH_SECONDS = 60.0


class KubeConfigError(ValueError):
    """The kubeconfig or in-cluster environment cannot be used; the message says why."""


class TokenFileAuth(httpx.Auth):
    """Bearer token read from a file, cached for a minute (rotated ServiceAccount tokens)."""

    def __init__(self, path: str | os.PathLike[str], refresh: float = TOKEN_FILE_REFRESH_SECONDS) -> None:
        self.path = Path(path)
        self.refresh = refresh
        self._token = ""
        self._read_at = float("-inf")
        self._lock = threading.Lock()

    def token(self) -> str:
        with self._lock:
            now = time.monotonic()
            if now - self._read_at >= self.refresh or not self._token:
                try:
                    self._token = self.path.read_text().strip()
                    self._read_at = now
                except OSError as err:
                    if not self._token:
                        raise KubeConfigError(f"cannot read token file {self.path}: {err.strerror or err}") from err
            return self._token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token()}"
        yield request


@dataclass
class ConnectionConfig:
    """Everything an ``httpx.Client`` needs to reach and authenticate to the API server."""

    server: str
    verify: ssl.SSLContext | bool = True
    auth: httpx.Auth | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Where the config came from (for logs): a kubeconfig path or "in-cluster".
    source: str = ""


def _b64decode(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=False)
    except (ValueError, TypeError) as err:
        raise KubeConfigError(f"{what}: not valid base64") from err


def _resolve(base: Path, value: str) -> str:
    """Relative paths in a kubeconfig are relative to the kubeconfig's directory (clientcmd)."""
    p = Path(os.path.expanduser(value))
    return str(p if p.is_absolute() else base / p)


def _ssl_context(
    *,
    ca_file: str | None,
    ca_data: bytes | None,
    cert: tuple[str | None, bytes | None],
    key: tuple[str | None, bytes | None],
) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=ca_file, cadata=ca_data.decode() if ca_data else None)
    cert_file, cert_data = cert
    key_file, key_data = key
    if not (cert_file or cert_data):
        return ctx
    if not (key_file or key_data):
        raise KubeConfigError("client certificate given without a client key")
    # ``load_cert_chain`` only reads files: write inline data to private temp files, load, delete.
    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as tmp:
        if cert_data is not None:
            cert_file = os.path.join(tmp, "tls.crt")
            Path(cert_file).write_bytes(cert_data)
        if key_data is not None:
            key_file = os.path.join(tmp, "tls.key")
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(key_data)
        assert cert_file is not None and key_file is not None
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except (OSError, ssl.SSLError) as err:
            raise KubeConfigError(f"cannot load client certificate: {err}") from err
    return ctx


def _named(items: Any, name: str, what: str, path: str) -> Mapping[str, Any]:
    for item in items or []:
        if isinstance(item, Mapping) and item.get("name") == name:
            body = item.get(what)
            return body if isinstance(body, Mapping) else {}
    raise KubeConfigError(f"{path}: no {what} named {name!r}")


def load_kubeconfig(path: str | os.PathLike[str], context: str | None = None) -> ConnectionConfig:
    """The connection described by ``path``'s current context (or ``context``)."""
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text())
    except OSError as err:
        raise KubeConfigError(f"{path}: cannot read kubeconfig: {err.strerror or err}") from err
    except yaml.YAMLError as err:
        raise KubeConfigError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(doc, Mapping):
        raise KubeConfigError(f"{path}: not a kubeconfig")
    ctx_name = context or doc.get("current-context")
    if not ctx_name:
        raise KubeConfigError(f"{path}: no current-context")
    ctx = _named(doc.get("contexts"), str(ctx_name), "context", str(path))
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster", "")), "cluster", str(path))
    user = _named(doc.get("users"), str(ctx.get("user", "")), "user", str(path)) if ctx.get("user") else {}
    server = str(cluster.get("server") or "")
    if not server:
        raise KubeConfigError(f"{path}: cluster {ctx.get('cluster')!r} has no server")
    base = p.resolve().parent
    for unsupported in ("exec", "auth-provider"):
        if user.get(unsupported):
            raise KubeConfigError(
                f"{path}: user {ctx.get('user')!r}: {unsupported} credential plugins are not supported; "
                "use a token, a token file or a client certificate"
            )

    def file_or_data(key: str) -> tuple[str | None, bytes | None]:
        src = cluster if key == "certificate-authority" else user
        data = src.get(f"{key}-data")
        if data:
            return None, _b64decode(str(data), f"{path}: {key}-data")
        f = src.get(key)
        return (_resolve(base, str(f)) if f else None), None

    verify: ssl.SSLContext | bool = True
    if server.startswith("https://"):
        insecure = bool(cluster.get("insecure-skip-tls-verify"))
        ca_file, ca_data = (None, None) if insecure else file_or_data("certificate-authority")
        tls = _ssl_context(
            ca_file=ca_file,
            ca_data=ca_data,
            cert=file_or_data("client-certificate"),
            key=file_or_data("client-key"),
        )
        if insecure:
            tls.check_hostname = False
            tls.verify_mode = ssl.CERT_NONE
        verify = tls

    auth: httpx.Auth | None = None
    headers: dict[str, str] = {}
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    elif user.get("tokenFile"):
        auth = TokenFileAuth(_resolve(base, str(user["tokenFile"])))
    elif user.get("username"):
        auth = httpx.BasicAuth(str(user["username"]), str(user.get("password", "")))
    return ConnectionConfig(server.rstrip("/"), verify, auth, headers, source=str(path))


def in_cluster_config(
    environ: Mapping[str, str] | None = None, sa_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR
) -> ConnectionConfig:
    """``rest.InClusterConfig``: the ServiceAccount mounted into the pod."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise KubeConfigError(
            "not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset); "
            "pass --kubeconfig or set clientConnection.kubeconfig"
        )
    sa = Path(sa_dir)
    token, ca = sa / "token", sa / "ca.crt"
    if not token.is_file():
        raise KubeConfigError(f"in-cluster config: no ServiceAccount token at {token}")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(ca)) if ca.is_file() else True
    return ConnectionConfig(f"https://{host}:{port}", verify, TokenFileAuth(token), source="in-cluster")


def connection_config(kubeconfig: str | None) -> ConnectionConfig:
    """A kubeconfig when one is named, otherwise the in-cluster config (kube-scheduler's rule)."""
    if kubeconfig:
        return load_kubeconfig(kubeconfig)
    return in_cluster_config()
