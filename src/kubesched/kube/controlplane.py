"""A real etcd + kube-apiserver (and kube-scheduler on demand) for tests and benchmarks.

The binaries come from ``scripts/controlplane.sh``, which builds them from the Go module proxy;
nothing here downloads anything. ``ControlPlane`` runs them on 127.0.0.1 with random free ports,
a private temp directory, freshly generated certificates and the real authorizers (Node, RBAC), so
tests see the same admission, validation and authorization a cluster would apply.

Identities offered to tests:

* an admin client certificate (``O=system:masters``), in the kubeconfig at ``.kubeconfig_path``;
* client certificates for any user and groups (``kubeconfig_for_user``), e.g.
  ``system:kube-scheduler``, which RBAC's bootstrap policy already grants what kube-scheduler needs;
* static bearer tokens (``--token-auth-file``), including one user with no RBAC bindings at all;
* ServiceAccount tokens via the TokenRequest API (the apiserver has a service-account signing key).

By default no kube-controller-manager runs: namespaces never finish deleting, no default
ServiceAccounts appear and nodes keep the conditions and taints they were created with. The
admission plugins that presuppose a controller-manager are therefore off
(``DEFAULT_DISABLED_ADMISSION_PLUGINS``; envtest disables ServiceAccount for the same reason).
A test that needs the PV controller starts kube-controller-manager on request
(``start_controller_manager``, built with ``scripts/controlplane.sh --with-kcm``) with only the
controllers it names (``PV_CONTROLLERS`` by default), so those plugins stay off even then: the
ServiceAccount, namespace and node lifecycle controllers still do not run.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import datetime
import ipaddress
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import yaml

#: What to install for this harness: its certificates need ``cryptography``, which a plain
#: ``pip install kubesched`` does not bring.
INSTALL_HINT = "pip install 'kubesched[controlplane]'"

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError as _err:
    # ``name`` lets a caller tell the missing extra from any other import failure.
    raise ImportError(
        f"kubesched.kube.controlplane needs the controlplane extra ({_err}): {INSTALL_HINT}", name="cryptography"
    ) from _err

__all__ = [
    "BIN_ENV",
    "CACHE_ENV",
    "DEFAULT_DISABLED_ADMISSION_PLUGINS",
    "INSTALL_HINT",
    "K8S_MINOR",
    "KUBE_CONTROLLER_MANAGER_USER",
    "KWOK_NODE_ANNOTATION",
    "NOT_BUILT_MESSAGE",
    "PV_CONTROLLERS",
    "Binaries",
    "ControlPlane",
    "ControlPlaneError",
    "ControlPlaneNotBuiltError",
    "StaticToken",
    "controlplane_fixture",
    "default_cache_dir",
    "find_binaries",
    "require_binaries",
    "start_kube_scheduler",
]

BIN_ENV = "KUBESCHED_CONTROLPLANE_BIN"
CACHE_ENV = "KUBESCHED_CONTROLPLANE_CACHE"
#: The release scripts/controlplane.sh builds by default (it pins one v1.37.x patch, kubesched's
#: default release); any v1.37 build in the cache is acceptable. Other releases are built with
#: ``--k8s-version`` into sibling directories, found by ``find_binaries(release)``.
K8S_MINOR = "v1.37"
NOT_BUILT_MESSAGE = (
    "control plane not built: run scripts/controlplane.sh (needs Go >= 1.26 and access to the Go module proxy)"
)

ADMIN_USER = "kubesched:admin"
#: The user RBAC's bootstrap ClusterRoleBinding ``system:kube-controller-manager`` names.
KUBE_CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
UNPRIVILEGED_USER = "kubesched:unprivileged"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
_LOG_TAIL_LINES = 40
_PORT_ATTEMPTS = 3
#: The annotation kwok's docs use to mark the Nodes it should play kubelet for.
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node=fake"
#: Admission plugins that only make sense next to a kube-controller-manager, which we do not run:
#: ``ServiceAccount`` rejects pods until the (never created) ``default`` ServiceAccount exists, and
#: ``TaintNodesByCondition`` puts ``node.kubernetes.io/not-ready:NoSchedule`` on every new Node,
#: which only the node lifecycle controller would remove, so nothing could ever be scheduled.
DEFAULT_DISABLED_ADMISSION_PLUGINS: tuple[str, ...] = ("ServiceAccount", "TaintNodesByCondition")


#: kube-controller-manager's controllers the volume tests need: the PV binder (binds claims to
#: volumes, completes WaitForFirstConsumer bindings after kube-scheduler's PreBind) and the ephemeral
#: volume controller (creates generic ephemeral volumes' claims). The names are those of
#: cmd/kube-controller-manager/names/controller_names.go, identical in v1.35.4 and v1.37.2; both also
#: accept the old alias ``persistentvolume-binder`` (app/core.go).
PV_CONTROLLERS = ("persistentvolume-binder-controller", "ephemeral-volume-controller")


class ControlPlaneError(RuntimeError):
    """etcd or kube-apiserver failed to start or to become ready."""


class ControlPlaneNotBuiltError(FileNotFoundError):
    """The binaries from scripts/controlplane.sh are not where we look for them."""


# --------------------------------------------------------------------------------------------
# Finding the binaries
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Binaries:
    """Paths of the built control-plane binaries; optional ones are None when not built."""

    directory: Path
    etcd: Path
    kube_apiserver: Path
    kube_scheduler: Path | None
    kwok: Path | None
    #: kwok's default Stage objects (``--config``), written next to kwok by the build script.
    kwok_stages: Path | None = None
    #: Built with ``scripts/controlplane.sh --with-kcm``.
    kube_controller_manager: Path | None = None


def default_cache_dir() -> Path:
    """The cache root used by scripts/controlplane.sh (``$KUBESCHED_CONTROLPLANE_CACHE`` wins)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return Path.home() / ".cache" / "kubesched" / "controlplane"


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))


def _binaries_in(directory: Path) -> Binaries | None:
    def exe(name: str) -> Path | None:
        path = directory / name
        return path if path.is_file() and os.access(path, os.X_OK) else None

    etcd, apiserver = exe("etcd"), exe("kube-apiserver")
    if etcd is None or apiserver is None:
        return None
    stages = directory / "kwok-stages.yaml"
    return Binaries(
        directory,
        etcd,
        apiserver,
        exe("kube-scheduler"),
        exe("kwok"),
        stages if stages.is_file() else None,
        exe("kube-controller-manager"),
    )


def _minor(release: str) -> str:
    """``"v1.37"`` or ``"1.37"`` as the ``v1.37`` prefix of the release's directories."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)", release.strip())
    if match is None:
        raise ValueError(f"release must be a minor version such as v1.37 or 1.37, not {release!r}")
    return f"v{match[1]}.{match[2]}"


def _newest_complete(roots: Sequence[Path], minor: str) -> Binaries | None:
    """The complete directory of ``minor`` with the highest patch, across ``roots``."""
    candidates = sorted(
        {d for root in roots for d in root.glob(f"{minor}.*") if d.is_dir()},
        key=lambda d: _version_key(d.name),
        reverse=True,
    )
    for directory in candidates:
        found = _binaries_in(directory)
        if found is not None:
            return found
    return None


def find_binaries(release: str | None = None) -> Binaries:
    """Locate etcd and kube-apiserver (kube-scheduler and kwok if present).

    Without ``release``: ``$KUBESCHED_CONTROLPLANE_BIN`` names the directory outright; otherwise
    the newest complete directory of the default release (:data:`K8S_MINOR`) under the cache root
    is used, so bumping the patch in the build script does not strand older checkouts.

    With ``release`` (a minor: ``"v1.37"`` or ``"1.37"``): the newest complete directory of that
    minor, as ``scripts/controlplane.sh --k8s-version`` builds them. ``$KUBESCHED_CONTROLPLANE_BIN``
    is used when its directory is of that minor, and its siblings are searched before the cache
    root, since CI points it into the cache the other releases were built into.

    Raises ControlPlaneNotBuiltError with the build hint (ValueError for a malformed release).
    """
    explicit = os.environ.get(BIN_ENV)
    if release is None:
        if explicit:
            found = _binaries_in(Path(explicit))
            if found is None:
                raise ControlPlaneNotBuiltError(
                    f"{BIN_ENV}={explicit} does not contain executable etcd and kube-apiserver; " + NOT_BUILT_MESSAGE
                )
            return found
        root = default_cache_dir()
        found = _newest_complete([root], K8S_MINOR)
        if found is None:
            raise ControlPlaneNotBuiltError(f"{NOT_BUILT_MESSAGE} (looked in {root}/{K8S_MINOR}.*)")
        return found
    minor = _minor(release)
    roots: list[Path] = []
    if explicit:
        explicit_dir = Path(explicit)
        if explicit_dir.name.startswith(f"{minor}.") and (found := _binaries_in(explicit_dir)) is not None:
            return found
        roots.append(explicit_dir.parent)
    roots.append(default_cache_dir())
    found = _newest_complete(roots, minor)
    if found is None:
        where = ", ".join(f"{root}/{minor}.*" for root in dict.fromkeys(roots))
        raise ControlPlaneNotBuiltError(
            f"control plane {minor} not built: run scripts/controlplane.sh --k8s-version {minor}.<patch> "
            f"(--list-versions names the supported releases; needs Go and the Go module proxy) (looked in {where})"
        )
    return found


def require_binaries(release: str | None = None) -> Binaries:
    """``find_binaries(release)`` for a pytest fixture: missing binaries skip the test locally but
    fail it when ``$CI`` is set, so CI can never go green by silently not testing a release."""
    import pytest  # test-only dependency; keeps this module importable without it

    try:
        return find_binaries(release)
    except ControlPlaneNotBuiltError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc), pytrace=False)
        pytest.skip(str(exc) if release is not None else NOT_BUILT_MESSAGE)


# --------------------------------------------------------------------------------------------
# Certificates and kubeconfigs
# --------------------------------------------------------------------------------------------


def _now() -> datetime.datetime:
    # Certificate validity is about the real world, not the scheduler's clock.
    return datetime.datetime.now(datetime.UTC)


def _new_key() -> ec.EllipticCurvePrivateKey:
    # P-256 keys are generated in microseconds (RSA takes noticeable time on a busy 2-core box).
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class _CA:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(cls, common_name: str) -> _CA:
        key = _new_key()
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = _now()
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(key, cert)

    def issue(
        self,
        common_name: str,
        *,
        organizations: Sequence[str] = (),
        server_names: Sequence[str] = (),
        server_ips: Sequence[str] = (),
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        """Sign a leaf: a serving cert when names/IPs are given, else a client cert."""
        key = _new_key()
        attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        serving = bool(server_names or server_ips)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if serving else ExtendedKeyUsageOID.CLIENT_AUTH
        now = _now()
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(attrs))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
        )
        if serving:
            sans: list[x509.GeneralName] = [x509.DNSName(n) for n in server_names]
            sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in server_ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(self.key, hashes.SHA256())


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _write(path: Path, data: bytes | str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    path.chmod(mode)
    return path


def _kubeconfig(server: str, ca_pem: bytes, user_name: str, user: Mapping[str, str]) -> str:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kubesched",
                "cluster": {"server": server, "certificate-authority-data": _b64(ca_pem)},
            }
        ],
        "users": [{"name": user_name, "user": dict(user)}],
        "contexts": [{"name": user_name, "context": {"cluster": "kubesched", "user": user_name}}],
        "current-context": user_name,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


# --------------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------------


def _free_ports(count: int) -> list[int]:
    """Ask the kernel for distinct free loopback ports (held open together so they differ)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _log_tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 64 * 1024))
            text = fh.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"<no log at {path}: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def _terminate(proc: subprocess.Popen[bytes] | None, timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL if the process has not exited within ``timeout`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait(timeout=timeout)


@dataclass(frozen=True)
class StaticToken:
    """One line of kube-apiserver's ``--token-auth-file``."""

    token: str
    user: str
    groups: tuple[str, ...] = ()
    uid: str = ""

    def csv_line(self) -> str:
        groups = ",".join(self.groups)
        return f'{self.token},{self.user},{self.uid or self.user},"{groups}"'


@dataclass
class _Proc:
    name: str
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None
    log_file: IO[bytes] | None = field(default=None, repr=False)

    def start(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.log_file = self.log_path.open("ab")
        self.log_file.write(f"\n==== kubesched: starting {' '.join(argv)}\n".encode())
        self.log_file.flush()
        self.popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            # Own process group: a Ctrl-C aimed at pytest must not kill etcd before the apiserver.
            start_new_session=True,
        )

    def stop(self, timeout: float) -> None:
        try:
            _terminate(self.popen, timeout)
        finally:
            if self.log_file is not None:
                self.log_file.close()
                self.log_file = None

    def failure(self, what: str) -> ControlPlaneError:
        code = self.popen.poll() if self.popen is not None else None
        state = f"exited with code {code}" if code is not None else "is still running"
        return ControlPlaneError(
            f"{self.name} {what} ({state}); last lines of {self.log_path}:\n{_log_tail(self.log_path)}"
        )


class ControlPlane:
    """etcd + kube-apiserver on loopback, for one test session or one benchmark run.

    Use as a context manager, or call ``start()``/``stop()``. Everything lives in one temp
    directory (data, certificates, kubeconfigs, logs ``etcd.log``/``kube-apiserver.log``), removed
    on ``stop()`` unless ``keep_dir`` is set (or ``KUBESCHED_CONTROLPLANE_KEEP=1``).
    """

    def __init__(
        self,
        binaries: Binaries | None = None,
        *,
        static_tokens: Sequence[StaticToken] = (),
        disable_admission_plugins: Sequence[str] = DEFAULT_DISABLED_ADMISSION_PLUGINS,
        extra_apiserver_args: Sequence[str] = (),
        startup_timeout: float = 120.0,
        stop_timeout: float = 15.0,
        keep_dir: bool | None = None,
        workdir_parent: str | os.PathLike[str] | None = None,
    ) -> None:
        self.binaries = binaries if binaries is not None else find_binaries()
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.keep_dir = (
            keep_dir if keep_dir is not None else os.environ.get("KUBESCHED_CONTROLPLANE_KEEP", "") not in ("", "0")
        )
        self._disabled_admission = list(disable_admission_plugins)
        self._extra_apiserver_args = list(extra_apiserver_args)
        self._workdir_parent = workdir_parent
        self.unprivileged_token = secrets.token_urlsafe(24)
        self.static_tokens: tuple[StaticToken, ...] = (
            StaticToken(self.unprivileged_token, UNPRIVILEGED_USER),
            *static_tokens,
        )
        self._dir: Path | None = None
        self._etcd: _Proc | None = None
        self._apiserver: _Proc | None = None
        self._ca: _CA | None = None
        self._apiserver_argv: list[str] = []
        self._children: list[subprocess.Popen[bytes]] = []
        #: ``https://127.0.0.1:<port>`` of the last kube-controller-manager started, if any.
        self.controller_manager_url: str | None = None
        self._atexit_registered = False
        self.etcd_port = 0
        self.etcd_peer_port = 0
        self.port = 0

    # ---- public read-only state ------------------------------------------------------------

    @property
    def workdir(self) -> Path:
        if self._dir is None:
            raise ControlPlaneError("control plane not started")
        return self._dir

    @property
    def url(self) -> str:
        """The apiserver's base URL, e.g. ``https://127.0.0.1:43125``."""
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def pki_dir(self) -> Path:
        return self.workdir / "pki"

    @property
    def ca_path(self) -> Path:
        """PEM of the CA that signed the serving cert and every client cert."""
        return self.pki_dir / "ca.crt"

    @property
    def admin_cert_path(self) -> Path:
        return self.pki_dir / "admin.crt"

    @property
    def admin_key_path(self) -> Path:
        return self.pki_dir / "admin.key"

    @property
    def kubeconfig_path(self) -> Path:
        """Kubeconfig of the ``system:masters`` admin (client certificate)."""
        return self.workdir / "admin.kubeconfig"

    @property
    def etcd_log_path(self) -> Path:
        return self.workdir / "etcd.log"

    @property
    def apiserver_log_path(self) -> Path:
        return self.workdir / "kube-apiserver.log"

    @property
    def apiserver_pid(self) -> int | None:
        """PID of the current kube-apiserver process (changes on ``restart_apiserver``)."""
        if self._apiserver is None or self._apiserver.popen is None:
            return None
        return self._apiserver.popen.pid

    @property
    def running(self) -> bool:
        return (
            self._apiserver is not None and self._apiserver.popen is not None and self._apiserver.popen.poll() is None
        )

    # ---- lifecycle --------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        """Generate certificates, start etcd, start kube-apiserver, wait for ``/readyz``.

        Free ports are picked before the servers bind them, so another process on a shared
        machine can win the race; such a start is retried on fresh ports a few times.
        """
        if self._dir is not None:
            raise ControlPlaneError("control plane already started")
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            try:
                self._start_once()
                return self
            except ControlPlaneError as exc:
                if attempt == _PORT_ATTEMPTS or "address already in use" not in str(exc):
                    raise
        raise AssertionError("unreachable")

    def _start_once(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="kubesched-cp-", dir=self._workdir_parent))
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True
        try:
            self.etcd_port, self.etcd_peer_port, self.port = _free_ports(3)
            self._write_pki()
            self._start_etcd()
            self._apiserver_argv = self._apiserver_args()
            self._start_apiserver()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd (terminate, then kill); remove the temp dir. Idempotent."""
        try:
            # Clients first (a kube-scheduler or kwok the caller forgot), then the servers.
            for child in self._children:
                _terminate(child, self.stop_timeout)
            for proc in (self._apiserver, self._etcd):
                if proc is not None:
                    proc.stop(self.stop_timeout)
        finally:
            self._children.clear()
            self.controller_manager_url = None
            self._apiserver = self._etcd = None
            if self._dir is not None and not self.keep_dir:
                shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
            if self._atexit_registered:
                atexit.unregister(self.stop)
                self._atexit_registered = False

    def restart_apiserver(self) -> None:
        """Stop kube-apiserver and start it again on the same port, etcd, certificates and flags.

        Whatever was written through the API survives (it lives in etcd); watches and
        connections are cut, which is what an e2e test of reconnection wants.
        """
        if self._apiserver is None or self._etcd is None:
            raise ControlPlaneError("control plane not started")
        self._apiserver.stop(self.stop_timeout)
        try:
            self._start_apiserver()
        except BaseException:
            self.stop()
            raise

    # ---- clients and kubeconfigs -------------------------------------------------------------

    def ssl_context(self, *, client_cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
        """Trusts our CA; presents ``client_cert`` (cert, key) if given."""
        ctx = ssl.create_default_context(cafile=str(self.ca_path))
        if client_cert is not None:
            ctx.load_cert_chain(str(client_cert[0]), str(client_cert[1]))
        return ctx

    def admin_client(self, **kwargs: Any) -> httpx.Client:
        """An httpx client authenticated as the ``system:masters`` admin."""
        ctx = self.ssl_context(client_cert=(self.admin_cert_path, self.admin_key_path))
        return httpx.Client(base_url=self.url, verify=ctx, **kwargs)

    def token_client(self, token: str, **kwargs: Any) -> httpx.Client:
        """An httpx client that authenticates with a bearer token (static or ServiceAccount)."""
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        return httpx.Client(base_url=self.url, verify=self.ssl_context(), headers=headers, **kwargs)

    def kubeconfig_for_token(self, token: str, path: str | os.PathLike[str] | None = None) -> Path:
        """Write a kubeconfig whose user authenticates with ``token``; returns its path."""
        target = Path(path) if path is not None else self.workdir / f"token-{secrets.token_hex(4)}.kubeconfig"
        text = _kubeconfig(self.url, _cert_pem(self._require_ca().cert), "token-user", {"token": token})
        return _write(target, text)

    def kubeconfig_for_user(
        self,
        user: str,
        groups: Sequence[str] = (),
        path: str | os.PathLike[str] | None = None,
    ) -> Path:
        """Issue a client certificate (CN=user, O=groups) and write a kubeconfig using it.

        ``kubeconfig_for_user("system:kube-scheduler")`` gives exactly the identity that RBAC's
        bootstrap ClusterRole ``system:kube-scheduler`` is bound to.
        """
        ca = self._require_ca()
        key, cert = ca.issue(user, organizations=groups)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", user)
        target = Path(path) if path is not None else self.workdir / f"{safe}.kubeconfig"
        creds = {
            "client-certificate-data": _b64(_cert_pem(cert)),
            "client-key-data": _b64(_key_pem(key)),
        }
        return _write(target, _kubeconfig(self.url, _cert_pem(ca.cert), user, creds))

    def start_kube_scheduler(
        self,
        config_path: str | os.PathLike[str] | None = None,
        kubeconfig: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> subprocess.Popen[bytes]:
        """Run the real kube-scheduler against this apiserver (as ``system:kube-scheduler`` by default).

        The process is also terminated by ``stop()`` if the caller has not done so.
        """
        if kubeconfig is None:
            kubeconfig = self.kubeconfig_for_user("system:kube-scheduler")
        kwargs.setdefault("log_path", self.workdir / f"kube-scheduler-{secrets.token_hex(3)}.log")
        kwargs.setdefault("binary", self.binaries.kube_scheduler)
        proc = start_kube_scheduler(config_path, kubeconfig, **kwargs)
        self._children.append(proc)
        return proc

    def start_controller_manager(
        self,
        controllers: Sequence[str] = PV_CONTROLLERS,
        *,
        use_service_account_credentials: bool = True,
        kubeconfig: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
    ) -> subprocess.Popen[bytes]:
        """Run the real kube-controller-manager (``scripts/controlplane.sh --with-kcm``) with only
        ``controllers`` (by default the PV binder and the ephemeral volume controller, for the volume
        tests) and wait until it serves ``/healthz`` with a check for each of them, i.e. has built them.

        Identity as in a kubeadm cluster: a client certificate for ``system:kube-controller-manager``
        (what RBAC's bootstrap ClusterRole of that name is bound to) and, by default,
        ``--use-service-account-credentials``, so each controller acts as its own ServiceAccount in
        kube-system (tokens by TokenRequest) with its bootstrap ``system:controller:*`` role. With
        ``use_service_account_credentials=False`` every controller uses the root client, which
        ``system:kube-controller-manager`` does not allow to write volumes, so the admin kubeconfig
        is used unless ``kubeconfig`` says otherwise. No leader election; HTTPS on a free loopback
        port with a certificate from our CA, delegated authentication and authorization.

        The caller may stop the returned process; ``stop()`` does otherwise. Raises
        ControlPlaneNotBuiltError when it was not built, ControlPlaneError when it does not come up.
        """
        binary = self.binaries.kube_controller_manager
        if binary is None:
            raise ControlPlaneNotBuiltError(
                f"kube-controller-manager not built in {self.binaries.directory}: "
                "run scripts/controlplane.sh --with-kcm"
            )
        tag = secrets.token_hex(3)
        if kubeconfig is None:
            kubeconfig = (
                self.kubeconfig_for_user(
                    KUBE_CONTROLLER_MANAGER_USER, path=self.workdir / f"kube-controller-manager-{tag}.kubeconfig"
                )
                if use_service_account_credentials
                else self.kubeconfig_path
            )
        serving_key, serving = self._require_ca().issue("kube-controller-manager", server_ips=("127.0.0.1",))
        cert = _write(self.pki_dir / f"kube-controller-manager-{tag}.crt", _cert_pem(serving))
        key = _write(self.pki_dir / f"kube-controller-manager-{tag}.key", _key_pem(serving_key))
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            port = _free_ports(1)[0]
            argv = [
                str(binary),
                f"--kubeconfig={kubeconfig}",
                f"--controllers={','.join(controllers)}",
                f"--use-service-account-credentials={str(use_service_account_credentials).lower()}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--tls-cert-file={cert}",
                f"--tls-private-key-file={key}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                # The PV binder resyncs every 15 s by default; react as fast as the informers allow.
                "--pvclaimbinder-sync-period=1s",
                *extra_args,
            ]
            proc = _Proc("kube-controller-manager", self.workdir / f"kube-controller-manager-{tag}.log")
            proc.start(argv)
            assert proc.popen is not None and proc.log_file is not None
            self._children.append(proc.popen)
            proc.log_file.close()  # the child has its own descriptor
            proc.log_file = None
            try:
                self._wait_controllers(proc, f"https://127.0.0.1:{port}/healthz?verbose", controllers)
            except ControlPlaneError as exc:
                _terminate(proc.popen, self.stop_timeout)
                if attempt == _PORT_ATTEMPTS or "address already in use" not in str(exc):
                    raise
                continue
            self.controller_manager_url = f"https://127.0.0.1:{port}"
            return proc.popen
        raise AssertionError("unreachable")

    def _wait_controllers(self, proc: _Proc, url: str, controllers: Sequence[str]) -> None:
        """Poll kube-controller-manager's verbose ``/healthz`` until it is 200 and lists a check for
        every controller (one is registered per controller it built), or it dies, or time runs out."""
        deadline = time.monotonic() + self.startup_timeout
        last = "no answer yet"
        want = [f"[+]{name} ok" for name in controllers]
        with httpx.Client(verify=self.ssl_context(), timeout=5.0) as client:
            while True:
                if proc.popen is None or proc.popen.poll() is not None:
                    raise proc.failure("failed to start")
                try:
                    resp = client.get(url)
                    if resp.status_code == 200 and all(line in resp.text for line in want):
                        return
                    last = f"HTTP {resp.status_code}: {resp.text[-500:]}"
                except httpx.HTTPError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                if time.monotonic() > deadline:
                    raise proc.failure(
                        f"did not report {', '.join(controllers)} healthy after {self.startup_timeout:.0f}s "
                        f"at {url} ({last})"
                    )
                time.sleep(0.25)

    def start_kwok(
        self,
        *,
        node_selector: str | None = KWOK_NODE_ANNOTATION,
        extra_args: Sequence[str] = (),
    ) -> subprocess.Popen[bytes]:
        """Run kwok as fake kubelets (built with ``scripts/controlplane.sh --with-kwok``).

        kwok keeps the Nodes it manages Ready (heartbeats) and turns pods bound to them Running.
        By default it manages only Nodes annotated ``kwok.x-k8s.io/node=fake``; pass
        ``node_selector=None`` to manage every Node. The caller may stop it; ``stop()`` does otherwise.
        """
        kwok, stages = self.binaries.kwok, self.binaries.kwok_stages
        if kwok is None or stages is None:
            raise ControlPlaneNotBuiltError("kwok not built: run scripts/controlplane.sh --with-kwok")
        manage = (
            ["--manage-all-nodes=true"]
            if node_selector is None
            else ["--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={node_selector}"]
        )
        argv = [
            str(kwok),
            f"--kubeconfig={self.kubeconfig_path}",
            f"--config={stages}",
            *manage,
            # Heartbeats by status update (the node-heartbeat stage) rather than by Lease.
            "--node-lease-duration-seconds=0",
            *extra_args,
        ]
        with (self.workdir / f"kwok-{secrets.token_hex(3)}.log").open("ab") as log:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._children.append(proc)
        return proc

    # ---- internals ----------------------------------------------------------------------------

    def _require_ca(self) -> _CA:
        if self._ca is None:
            raise ControlPlaneError("control plane not started")
        return self._ca

    def _write_pki(self) -> None:
        pki = self.pki_dir
        ca = self._ca = _CA.create("kubesched-test-ca")
        _write(self.ca_path, _cert_pem(ca.cert), 0o644)
        serving_key, serving = ca.issue(
            "kube-apiserver",
            server_names=("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
            server_ips=("127.0.0.1", "10.0.0.1"),
        )
        _write(pki / "apiserver.crt", _cert_pem(serving))
        _write(pki / "apiserver.key", _key_pem(serving_key))
        admin_key, admin = ca.issue(ADMIN_USER, organizations=("system:masters",))
        _write(self.admin_cert_path, _cert_pem(admin))
        _write(self.admin_key_path, _key_pem(admin_key))
        sa_key = _new_key()
        _write(pki / "sa.key", _key_pem(sa_key))
        _write(
            pki / "sa.pub",
            sa_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
        )
        _write(pki / "tokens.csv", "".join(t.csv_line() + "\n" for t in self.static_tokens))
        creds = {
            "client-certificate-data": _b64(_cert_pem(admin)),
            "client-key-data": _b64(_key_pem(admin_key)),
        }
        _write(self.kubeconfig_path, _kubeconfig(self.url, _cert_pem(ca.cert), "admin", creds))

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        argv = [
            str(self.binaries.etcd),
            "--name=kubesched",
            f"--data-dir={self.workdir / 'etcd-data'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=kubesched={peer}",
            "--initial-cluster-state=new",
            # Test data is disposable: skip fsync, which dominates etcd latency on shared disks.
            "--unsafe-no-fsync=true",
            # kube-apiserver's watch cache expects progress notifications about every 5 s.
            "--watch-progress-notify-interval=5s",
            "--log-level=warn",
        ]
        self._etcd = _Proc("etcd", self.etcd_log_path)
        self._etcd.start(argv)
        self._wait_ready(self._etcd, f"{self.etcd_url}/health", verify=False)

    def _apiserver_args(self) -> list[str]:
        pki = self.pki_dir
        return [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # The default lease reconciler cannot publish a loopback address as the endpoints of the
            # `kubernetes` Service: v1.35 failed to sync it every 10 s ("may not be in the loopback
            # range"), v1.37 refuses to start (pkg/controlplane/instance.go: "cannot use public IP").
            "--endpoint-reconciler-type=none",
            f"--secure-port={self.port}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={self.ca_path}",
            f"--token-auth-file={pki / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-issuer={self.url}",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--allow-privileged=true",
            f"--disable-admission-plugins={','.join(self._disabled_admission)}",
            # Only so the extension-apiserver-authentication ConfigMap is complete: without it every
            # delegating client (kube-scheduler) logs "missing content for CA bundle" forever.
            f"--requestheader-client-ca-file={self.ca_path}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--profiling=false",
            *self._extra_apiserver_args,
        ]

    def _start_apiserver(self) -> None:
        self._apiserver = _Proc("kube-apiserver", self.apiserver_log_path)
        self._apiserver.start(self._apiserver_argv)
        self._wait_ready(
            self._apiserver,
            f"{self.url}/readyz",
            verify=self.ssl_context(client_cert=(self.admin_cert_path, self.admin_key_path)),
        )

    def _wait_ready(self, proc: _Proc, url: str, *, verify: ssl.SSLContext | bool) -> None:
        """Poll ``url`` until it answers 200, the process dies, or the startup timeout passes."""
        deadline = time.monotonic() + self.startup_timeout
        last = "no answer yet"
        with httpx.Client(verify=verify, timeout=5.0) as client:
            while True:
                if proc.popen is None or proc.popen.poll() is not None:
                    raise proc.failure("failed to start")
                try:
                    resp = client.get(url)
                    if resp.status_code == 200:
                        return
                    last = f"HTTP {resp.status_code}: {resp.text[-500:]}"
                except httpx.HTTPError as exc:
                    last = f"{type(exc).__name__}: {exc}"
                if time.monotonic() > deadline:
                    raise proc.failure(f"not ready after {self.startup_timeout:.0f}s at {url} ({last})")
                time.sleep(0.25)


# --------------------------------------------------------------------------------------------
# kube-scheduler for benchmarks
# --------------------------------------------------------------------------------------------


def start_kube_scheduler(
    config_path: str | os.PathLike[str] | None,
    kubeconfig: str | os.PathLike[str],
    *,
    binary: str | os.PathLike[str] | None = None,
    secure_port: int | None = None,
    log_path: str | os.PathLike[str] | None = None,
    extra_args: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """Start upstream kube-scheduler; the caller owns the returned process (terminate it).

    kube-scheduler ignores ``--kubeconfig`` when ``--config`` is given (the flag is only
    applied without a config file), so the kubeconfig is written into a copy of the config as
    ``clientConnection.kubeconfig``. ``/metrics`` is opened to anonymous readers on
    ``secure_port`` (a free port when None; see ``proc.args``) so benchmarks can scrape it.
    """
    if binary is None:
        found = find_binaries().kube_scheduler
        if found is None:
            raise ControlPlaneNotBuiltError(f"kube-scheduler not built; {NOT_BUILT_MESSAGE}")
        binary = found
    port = secure_port if secure_port is not None else _free_ports(1)[0]
    argv = [
        str(binary),
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
    ]
    if config_path is not None:
        config = yaml.safe_load(Path(config_path).read_text()) or {}
        config.setdefault("clientConnection", {})["kubeconfig"] = str(kubeconfig)
        where = Path(log_path).parent if log_path is not None else None
        fd, effective = tempfile.mkstemp(prefix="kube-scheduler-", suffix=".yaml", dir=where)
        with os.fdopen(fd, "w") as fh:
            yaml.safe_dump(config, fh, sort_keys=False)
        argv.append(f"--config={effective}")
    else:
        argv.append(f"--kubeconfig={kubeconfig}")
    argv += list(extra_args)
    out: IO[bytes] | int = subprocess.DEVNULL
    if log_path is not None:
        out = Path(log_path).open("ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    finally:
        if not isinstance(out, int):
            out.close()


# --------------------------------------------------------------------------------------------
# pytest
# --------------------------------------------------------------------------------------------


def controlplane_fixture() -> Iterator[ControlPlane]:
    """Body of a session-scoped pytest fixture: one control plane for the whole run.

    Missing binaries skip the test locally, but fail it when ``$CI`` is set, so CI can never go
    green by silently not testing against the real apiserver.
    """
    with ControlPlane(require_binaries()) as cp:
        yield cp
