"""Where the API server is and how to authenticate: kubeconfig files or the in-cluster config.

Follows client-go's ``clientcmd`` (tools/clientcmd/loader.go) for the parts a scheduler needs:
the loading order of :func:`connection_config`, ``$KUBECONFIG`` merging, current context, server,
CA, client certificates, bearer tokens and token files, basic auth, ``insecure-skip-tls-verify``,
relative paths resolved against the folder of the file that defined the entry, and exec
credential plugins (:mod:`kubesched.kube.exec_auth`); and ``rest.InClusterConfig``
(``KUBERNETES_SERVICE_HOST``/``_PORT``, the ServiceAccount token and CA). Token files are re-read
every minute, as client-go does, because projected ServiceAccount tokens rotate. The
``auth-provider`` plugins client-go removed (gcp, azure) are refused naming their replacement.
"""

from __future__ import annotations

import base64
import logging
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

from kubesched.api.yamlsafe import YAMLInputError, load_yaml_documents, read_text_file

from .exec_auth import Clock, ExecAuth, ExecConfig, cluster_info

log = logging.getLogger("kubesched.kube.config")

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


#: Largest kubeconfig read (a kubeconfig of a few hundred clusters is well under 1 MB).
MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024
#: What replaced the auth-provider plugins client-go removed (their stubs' messages).
AUTH_PROVIDER_REPLACEMENTS = {
    "gcp": 'The gcp auth plugin has been removed. Please use the "gke-gcloud-auth-plugin" '
    "kubectl/client-go credential plugin instead",
    "azure": "The azure auth plugin has been removed. Please use the https://github.com/Azure/kubelogin "
    "kubectl/client-go credential plugin instead",
}


@dataclass
class Named:
    """One cluster, user or context of a kubeconfig, with the file that defined it
    (clientcmd's ``LocationOfOrigin``: relative paths are resolved against its folder)."""

    body: Mapping[str, Any]
    origin: str

    @property
    def base(self) -> str:
        return os.path.dirname(os.path.abspath(self.origin))


@dataclass
class KubeConfig:
    """The merged view of one or more kubeconfig files."""

    sources: list[str] = field(default_factory=list)
    current_context: str = ""
    clusters: dict[str, Named] = field(default_factory=dict)
    users: dict[str, Named] = field(default_factory=dict)
    contexts: dict[str, Named] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """clientcmd's ``IsEmptyConfig``: nothing that could name a server."""
        return not (self.current_context or self.clusters or self.users or self.contexts)

    def merge(self, other: KubeConfig) -> None:
        """kubectl's rule: the first file to set a map key wins (a later file's entry of the same
        name is dropped whole), and ``current-context`` comes from the first file that sets it."""
        self.sources.extend(other.sources)
        self.current_context = self.current_context or other.current_context
        for mine, theirs in (
            (self.clusters, other.clusters),
            (self.users, other.users),
            (self.contexts, other.contexts),
        ):
            for name, item in theirs.items():
                mine.setdefault(name, item)


def read_kubeconfig(path: str) -> KubeConfig:
    """One kubeconfig file, read through api/yamlsafe (bounded; FIFOs and devices unopened).
    An empty file is an empty config, as clientcmd's ``Load``."""
    try:
        text = read_text_file(path, max_bytes=MAX_KUBECONFIG_BYTES)
        docs = load_yaml_documents(text)
    except YAMLInputError as err:
        raise KubeConfigError(f"{path}{err.problems[0].where()}: cannot read kubeconfig: {err}") from None
    docs = [d for d in docs if d is not None]
    if len(docs) > 1:
        raise KubeConfigError(f"{path}: a kubeconfig is one YAML document, found {len(docs)}")
    doc = docs[0] if docs else {}
    if not isinstance(doc, Mapping):
        raise KubeConfigError(f"{path}: not a kubeconfig (a mapping with clusters, users and contexts)")
    out = KubeConfig(sources=[path])
    cur = doc.get("current-context")
    if cur is not None and not isinstance(cur, str):
        raise KubeConfigError(f"{path}: current-context must be a string")
    out.current_context = cur or ""
    for key, what, target in (
        ("clusters", "cluster", out.clusters),
        ("users", "user", out.users),
        ("contexts", "context", out.contexts),
    ):
        items = doc.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise KubeConfigError(f"{path}: {key} must be a list")
        for i, item in enumerate(items):
            name = item.get("name") if isinstance(item, Mapping) else None
            if not isinstance(name, str) or not name:
                raise KubeConfigError(f"{path}: {key}[{i}].name must be a non-empty string")
            body = item.get(what)
            if body is not None and not isinstance(body, Mapping):
                raise KubeConfigError(f"{path}: {key}[{i}].{what} must be a mapping")
            if name in target:  # clientcmd's conversion refuses it (the list does not say which is meant)
                raise KubeConfigError(f'{path}: {key}[{i}]: duplicate name "{name}" in list')
            target[name] = Named(body or {}, path)
    return out


def kubeconfig_env_paths(value: str) -> list[str]:
    """``$KUBECONFIG`` split on the OS path-list separator, empties dropped, duplicates removed
    (clientcmd's ``NewDefaultClientConfigLoadingRules``)."""
    seen: list[str] = []
    for p in value.split(os.pathsep):
        if p and p not in seen:
            seen.append(p)
    return seen


def load_merged(paths: list[str]) -> tuple[KubeConfig, list[str]]:
    """The files of ``$KUBECONFIG`` merged in order, and the ones that do not exist (skipped,
    as clientcmd does; any other problem with a file is an error)."""
    merged = KubeConfig()
    missing: list[str] = []
    for p in paths:
        if not os.path.lexists(p):
            missing.append(p)
            continue
        merged.merge(read_kubeconfig(p))
    return merged, missing


def load_kubeconfig(
    path: str | os.PathLike[str] | KubeConfig,
    context: str | None = None,
    *,
    clock: Clock | None = None,
) -> ConnectionConfig:
    """The connection described by a kubeconfig's current context (or ``context``); ``path``
    is one file or an already merged :class:`KubeConfig`. ``clock`` is the exec plugin's
    clock for credential expiry (tests inject one)."""
    kc = path if isinstance(path, KubeConfig) else read_kubeconfig(os.fspath(path))
    where = os.pathsep.join(kc.sources) or "kubeconfig"
    ctx_name = context or kc.current_context
    if not ctx_name:
        raise KubeConfigError(f"{where}: no current-context")
    ctx = kc.contexts.get(ctx_name)
    if ctx is None:
        raise KubeConfigError(f"{where}: no context named {ctx_name!r}")
    cluster_name, user_name = str(ctx.body.get("cluster") or ""), str(ctx.body.get("user") or "")
    cluster_item = kc.clusters.get(cluster_name)
    if cluster_item is None:
        raise KubeConfigError(f"{ctx.origin}: context {ctx_name!r}: no cluster named {cluster_name!r}")
    cluster = cluster_item.body
    user_item: Named | None = None
    if user_name:
        user_item = kc.users.get(user_name)
        if user_item is None:
            raise KubeConfigError(f"{ctx.origin}: context {ctx_name!r}: no user named {user_name!r}")
    user: Mapping[str, Any] = user_item.body if user_item is not None else {}
    server = str(cluster.get("server") or "")
    if not server:
        raise KubeConfigError(f"{cluster_item.origin}: cluster {cluster_name!r} has no server")
    user_where = f"{user_item.origin if user_item else ctx.origin}: user {user_name!r}"
    provider = user.get("auth-provider")
    if provider:
        if user.get("exec"):
            raise KubeConfigError(f"{user_where}: authProvider cannot be provided in combination with an exec plugin")
        name = str(provider.get("name", "")) if isinstance(provider, Mapping) else ""
        replacement = AUTH_PROVIDER_REPLACEMENTS.get(
            name,
            f"auth-provider {name!r} is not supported; use an exec credential plugin instead "
            "(for OIDC, e.g. https://github.com/int128/kubelogin)",
        )
        raise KubeConfigError(f"{user_where}: {replacement}")

    def file_or_data(item: Named, key: str) -> tuple[str | None, bytes | None]:
        data = item.body.get(f"{key}-data")
        if data:
            return None, _b64decode(str(data), f"{item.origin}: {key}-data")
        f = item.body.get(key)
        return (_resolve(Path(item.base), str(f)) if f else None), None

    no_file: tuple[str | None, bytes | None] = (None, None)
    verify: ssl.SSLContext | bool = True
    tls: ssl.SSLContext | None = None
    ca_file, ca_data = file_or_data(cluster_item, "certificate-authority")
    if server.startswith("https://"):
        insecure = bool(cluster.get("insecure-skip-tls-verify"))
        tls = _ssl_context(
            ca_file=None if insecure else ca_file,
            ca_data=None if insecure else ca_data,
            cert=file_or_data(user_item, "client-certificate") if user_item else no_file,
            key=file_or_data(user_item, "client-key") if user_item else no_file,
        )
        if insecure:
            tls.check_hostname = False
            tls.verify_mode = ssl.CERT_NONE
        verify = tls

    auth: httpx.Auth | None = None
    headers: dict[str, str] = {}
    if user.get("exec"):
        assert user_item is not None
        try:
            exec_config = ExecConfig.parse(user["exec"], user_name, user_item.base)
        except ValueError as err:
            raise KubeConfigError(f"{user_where}: {err}") from None
        if exec_config.resolve_command(os.environ.get("PATH")) is None:
            raise KubeConfigError(f"{user_where}: {exec_config.not_found()}")
        info = None
        if exec_config.provide_cluster_info:
            if ca_file and not ca_data:
                try:
                    ca_data = Path(ca_file).read_bytes()
                except OSError as err:
                    msg = err.strerror or str(err)
                    raise KubeConfigError(f"{cluster_item.origin}: certificate-authority: {msg}") from None
            info = cluster_info(cluster, ca_data)
        auth = ExecAuth(exec_config, cluster=info, tls=tls, clock=clock)
    elif user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    elif user.get("tokenFile"):
        assert user_item is not None
        auth = TokenFileAuth(_resolve(Path(user_item.base), str(user["tokenFile"])))
    elif user.get("username"):
        auth = httpx.BasicAuth(str(user["username"]), str(user.get("password", "")))
    return ConnectionConfig(server.rstrip("/"), verify, auth, headers, source=where)


def in_cluster_config(
    environ: Mapping[str, str] | None = None, sa_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR
) -> ConnectionConfig:
    """``rest.InClusterConfig``: the ServiceAccount mounted into the pod."""
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise KubeConfigError(
            "not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset); "
            "pass --kubeconfig, set clientConnection.kubeconfig or export KUBECONFIG"
        )
    sa = Path(sa_dir)
    token, ca = sa / "token", sa / "ca.crt"
    if not token.is_file():
        raise KubeConfigError(f"in-cluster config: no ServiceAccount token at {token}")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(ca)) if ca.is_file() else True
    return ConnectionConfig(f"https://{host}:{port}", verify, TokenFileAuth(token), source="in-cluster")


def connection_config(
    kubeconfig: str | None,
    environ: Mapping[str, str] | None = None,
    sa_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
    master: str | None = None,
) -> ConnectionConfig:
    """Where to connect, in this order (client-go's ``clientcmd`` loading rules):

    1. ``kubeconfig``: the ``--kubeconfig`` flag, else ``clientConnection.kubeconfig`` (the
       caller passes whichever is set); the file must exist and is used alone;
    2. ``$KUBECONFIG``: several paths joined by the OS path-list separator, merged as kubectl
       merges them (see :meth:`KubeConfig.merge`), missing files skipped;
    3. the in-cluster ServiceAccount (``rest.InClusterConfig``).

    kube-scheduler itself (cmd/kube-scheduler/app/options/options.go, v1.35) differs in two ways
    we do not copy: it applies ``--kubeconfig`` only when no ``--config`` is given (with a config
    file the flag is silently ignored), and ``clientcmd.BuildConfigFromFlags`` with no path tries
    only the in-cluster config, never ``$KUBECONFIG``. Here the flag always wins, and
    ``$KUBECONFIG`` is honoured before the in-cluster config, as for kubectl: an operator who
    exports it means it. ``~/.kube/config`` is never read implicitly.

    ``master`` (``--master``) is the API server's address: it replaces the server of whichever
    config is used, keeping its CA and credentials (``clientcmd.BuildConfigFromFlags(master,
    kubeconfig)``'s ``ConfigOverrides``); with none of the three it is used alone, without
    credentials (a warning says so). An address without a scheme gets ``https://`` when the
    config has TLS settings and ``http://`` otherwise, as client-go's ``DefaultServerURL``.
    Unlike upstream, which with ``--master`` and no kubeconfig never tries the in-cluster
    config, the ServiceAccount's credentials are sent to ``master`` in a pod.
    """
    env = os.environ if environ is None else environ
    if master is not None and not master.strip():
        master = None

    def with_master(kc: KubeConfig) -> KubeConfig:
        """The current context's cluster with its server replaced by ``master``."""
        if master is None:
            return kc
        ctx = kc.contexts.get(kc.current_context)
        name = str(ctx.body.get("cluster") or "") if ctx is not None else ""
        item = kc.clusters.get(name)
        if item is None:  # load_kubeconfig names the problem
            return kc
        user = kc.users.get(str(ctx.body.get("user") or "")) if ctx is not None else None
        tls = any(item.body.get(k) for k in ("certificate-authority", "certificate-authority-data",
                                               "insecure-skip-tls-verify")) or any(
            (user.body if user else {}).get(k) for k in ("client-certificate", "client-certificate-data"))
        clusters = dict(kc.clusters)
        clusters[name] = Named({**item.body, "server": master_url(master, tls=tls)}, item.origin)
        return KubeConfig(kc.sources, kc.current_context, clusters, kc.users, kc.contexts)

    if kubeconfig:
        if not os.path.lexists(kubeconfig):
            raise KubeConfigError(f"{kubeconfig}: cannot read kubeconfig: no such file")
        return load_kubeconfig(with_master(read_kubeconfig(kubeconfig)))
    env_value = env.get("KUBECONFIG", "")
    missing: list[str] = []
    if env_value:
        merged, missing = load_merged(kubeconfig_env_paths(env_value))
        if not merged.empty:
            for p in missing:
                log.info("KUBECONFIG: %s does not exist; skipped", p)
            return load_kubeconfig(with_master(merged))
        log.warning("Config not found: %s", ", ".join(missing))
    try:
        conn = in_cluster_config(env, sa_dir)
    except KubeConfigError as err:
        if master is not None:
            log.warning("No kubeconfig and no in-cluster config (%s): connecting to --master %s without "
                        "credentials", err, master)
            return ConnectionConfig(master_url(master, tls=False).rstrip("/"), source="--master")
        if env_value:
            raise KubeConfigError(
                f"no kubeconfig found: KUBECONFIG names only missing or empty files "
                f"({', '.join(missing) or env_value}), and {err}"
            ) from None
        raise
    if master is not None:
        conn.server = master_url(master, tls=True).rstrip("/")
    return conn


def master_url(master: str, *, tls: bool) -> str:
    """``--master`` as a URL: client-go's ``DefaultServerURL`` adds ``https://`` to an address
    without a scheme when TLS is configured, else ``http://``; anything else is refused."""
    from urllib.parse import urlsplit

    url = master.strip()
    if "://" not in url:
        url = ("https://" if tls else "http://") + url
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as err:
        raise KubeConfigError(f"--master {master!r}: not a URL: {err}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise KubeConfigError(f"--master {master!r}: expected a URL such as https://10.0.0.1:6443")
    return url
