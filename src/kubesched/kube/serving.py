"""HTTPS for the scheduler's endpoints: kube-scheduler's ``--secure-port`` (10259) on ``--bind-address``.

The serving certificate is ``--tls-cert-file``/``--tls-private-key-file`` when given; otherwise a
self-signed one, as kube-scheduler's ``MaybeDefaultWithSelfSignedCerts``: kept in
``--cert-dir`` as ``kube-scheduler.crt``/``.key`` when that is set (and reused on restart), else
made at start-up and held by the process only. Upstream's is an RSA 2048 leaf under its own CA;
ours is one self-signed P-256 certificate (generated in microseconds), with the same names
(``localhost``, the host name, ``127.0.0.1`` and the bind address).

``--client-ca-file`` turns on client certificates (requested, not required: token and anonymous
requests still work, as upstream). TLS 1.2 at least. The handshake runs in the request's own
thread with a timeout, so a client that connects and sends nothing holds one thread for
:data:`HANDSHAKE_TIMEOUT` seconds, never the accept loop.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: kube-scheduler's DefaultKubeSchedulerPort.
DEFAULT_SECURE_PORT = 10259
#: SecureServingOptions.ServerCert.PairName of kube-scheduler.
PAIR_NAME = "kube-scheduler"
HANDSHAKE_TIMEOUT = 10.0


class ServingCertError(ValueError):
    """The serving certificate or the client CA cannot be used (one line, exit 2)."""


@dataclass(frozen=True)
class ServingCert:
    cert_file: str
    key_file: str
    #: How it was obtained, for the start-up log line.
    origin: str
    #: Files made for this process only: removed once loaded, so the key lives in memory only.
    ephemeral: bool = False


def _names(bind_address: str) -> tuple[list[str], list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    dns = ["localhost"]
    host = socket.gethostname()
    if host and host not in dns:
        dns.append(host)
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [ipaddress.ip_address("127.0.0.1")]
    try:
        addr = ipaddress.ip_address(bind_address)
        if not addr.is_unspecified and addr not in ips:
            ips.append(addr)
    except ValueError:
        if bind_address and bind_address not in dns:
            dns.append(bind_address)
    return dns, ips


def self_signed_pem(bind_address: str) -> tuple[bytes, bytes]:
    """A self-signed serving certificate and its key (PEM), valid for a year from now."""
    try:  # a core dependency, imported only here, when a certificate is made
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise ServingCertError(
            "a self-signed serving certificate needs the cryptography package (pip install kubesched "
            "installs it); or set --tls-cert-file and --tls-private-key-file, or --secure-port=0"
        ) from None

    key = ec.generate_private_key(ec.SECP256R1())
    dns, ips = _names(bind_address)
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{dns[-1]}@{int(now.timestamp())}")])
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns] + [x509.IPAddress(i) for i in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def serving_cert(
    *, tls_cert_file: str | None, tls_private_key_file: str | None, cert_dir: str | None, bind_address: str
) -> ServingCert:
    if bool(tls_cert_file) != bool(tls_private_key_file):
        raise ServingCertError("--tls-cert-file and --tls-private-key-file must be set together")
    if tls_cert_file and tls_private_key_file:
        return ServingCert(tls_cert_file, tls_private_key_file, f"--tls-cert-file {tls_cert_file}")
    if cert_dir:
        d = Path(cert_dir)
        cert, key = d / f"{PAIR_NAME}.crt", d / f"{PAIR_NAME}.key"
        if cert.is_file() and key.is_file():
            return ServingCert(str(cert), str(key), f"{cert} (from --cert-dir)")
        try:
            d.mkdir(parents=True, exist_ok=True)
            cert_pem, key_pem = self_signed_pem(bind_address)
            _write_private(key, key_pem)
            cert.write_bytes(cert_pem)
        except OSError as err:
            raise ServingCertError(f"--cert-dir {cert_dir}: {err.strerror or err}") from None
        return ServingCert(str(cert), str(key), f"self-signed, written to {cert}")
    cert_pem, key_pem = self_signed_pem(bind_address)
    # ssl loads certificates from files only: a private directory that lives as long as the process.
    d = Path(tempfile.mkdtemp(prefix="kubesched-serving-"))
    _write_private(d / "tls.key", key_pem)
    (d / "tls.crt").write_bytes(cert_pem)
    return ServingCert(str(d / "tls.crt"), str(d / "tls.key"), "self-signed, in memory", ephemeral=True)


def server_ssl_context(cert: ServingCert, client_ca_file: str | None = None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert.cert_file, cert.key_file)
    except (OSError, ssl.SSLError) as err:
        raise ServingCertError(f"serving certificate {cert.origin}: {getattr(err, 'strerror', None) or err}") from None
    finally:
        if cert.ephemeral:
            for f in (cert.key_file, cert.cert_file):
                Path(f).unlink(missing_ok=True)
            Path(cert.cert_file).parent.rmdir()
    if client_ca_file:
        try:
            ctx.load_verify_locations(cafile=client_ca_file)
        except (OSError, ssl.SSLError) as err:
            reason = getattr(err, "strerror", None) or err
            raise ServingCertError(f"--client-ca-file {client_ca_file}: {reason}") from None
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


@dataclass
class SecureServingOptions:
    """kube-scheduler's secure serving and delegated auth flags (SecureServingOptions,
    DelegatingAuthenticationOptions, DelegatingAuthorizationOptions with kube-scheduler's defaults)."""

    bind_address: str = "0.0.0.0"
    #: 0 disables HTTPS serving.
    secure_port: int = DEFAULT_SECURE_PORT
    cert_dir: str | None = None
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    client_ca_file: str | None = None
    authentication_kubeconfig: str | None = None
    authorization_kubeconfig: str | None = None
    #: Do not read the client CA from kube-system/extension-apiserver-authentication.
    authentication_skip_lookup: bool = False
    #: kube-scheduler sets TolerateInClusterLookupFailure: a failed lookup is a warning.
    authentication_tolerate_lookup_failure: bool = True
    always_allow_paths: tuple[str, ...] = ("/healthz", "/readyz", "/livez")
    token_cache_ttl: float = 10.0
    authorized_cache_ttl: float = 10.0
    unauthorized_cache_ttl: float = 10.0

    @property
    def address(self) -> str:
        host = f"[{self.bind_address}]" if ":" in self.bind_address else self.bind_address
        return f"{host}:{self.secure_port}"
