"""Build the HTTPS server of ``kubesched run`` from its flags: certificate, client CA, and the
TokenReview/SubjectAccessReview clients (kube-scheduler's ``Config()`` for secure serving).

The review clients come from ``--authentication-kubeconfig``/``--authorization-kubeconfig``, else
from the in-cluster ServiceAccount; outside a cluster without them the server still runs, with a
warning, and serves only the always-allowed paths (upstream's ``RemoteKubeConfigFileOptional``).
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from kubesched.kube.client import ApiError, KubeClient
from kubesched.kube.config import KubeConfigError, in_cluster_config, load_kubeconfig
from kubesched.kube.delegated_auth import AuthFilter, DelegatedAuthenticator, DelegatedAuthorizer
from kubesched.kube.server import HealthServer
from kubesched.kube.serving import SecureServingOptions, server_ssl_context, serving_cert

log = logging.getLogger("kubesched.kube.serving")

#: The ConfigMap the API server publishes its client CA in (extension-apiserver-authentication).
AUTH_CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
#: DelegatingAuthenticationOptions.ClientTimeout / DelegatingAuthorizationOptions.ClientTimeout.
REVIEW_TIMEOUT = 10.0


def _review_client(kubeconfig: str | None, what: str) -> KubeClient | None:
    try:
        conn = load_kubeconfig(kubeconfig) if kubeconfig else in_cluster_config()
    except KubeConfigError as err:
        if kubeconfig:
            raise
        log.warning("No %s-kubeconfig provided and not in a cluster (%s): %s won't work",
                    what, err, "TokenReview of bearer tokens" if what == "authentication"
                    else "SubjectAccessReview of requests")
        return None
    # High limits, as upstream's (QPS 200, burst 400): these limit the endpoints' responsiveness.
    return KubeClient(conn, qps=200.0, burst=400, timeout=REVIEW_TIMEOUT)


def _looked_up_client_ca(client: KubeClient, opts: SecureServingOptions) -> str | None:
    """The API server's client CA from its published ConfigMap, in a private file."""
    try:
        cm: Any = client.get(AUTH_CONFIGMAP)
    except (ApiError, OSError, ValueError) as err:
        msg = f"unable to get configmap/extension-apiserver-authentication in kube-system: {err}"
        if not opts.authentication_tolerate_lookup_failure:
            raise KubeConfigError(msg + " (set --authentication-skip-lookup, or grant get on it)") from None
        log.warning("%s; client certificate authentication won't work", msg)
        return None
    data = cm.get("data") if isinstance(cm, dict) else None
    pem = data.get("client-ca-file") if isinstance(data, dict) else None
    if not isinstance(pem, str) or not pem.strip():
        return None
    fd, path = tempfile.mkstemp(prefix="kubesched-client-ca-", suffix=".crt")
    with os.fdopen(fd, "w") as f:
        f.write(pem)
    return path


def build_secure_server(opts: SecureServingOptions, registry: CollectorRegistry) -> HealthServer:
    """The HTTPS server (not yet listening). Raises ServingCertError or KubeConfigError (one line)."""
    cert = serving_cert(tls_cert_file=opts.tls_cert_file, tls_private_key_file=opts.tls_private_key_file,
                        cert_dir=opts.cert_dir, bind_address=opts.bind_address)
    authn_client = _review_client(opts.authentication_kubeconfig, "authentication")
    authz_client = (
        _review_client(opts.authorization_kubeconfig, "authorization")
        if opts.authorization_kubeconfig != opts.authentication_kubeconfig or authn_client is None
        else authn_client
    )
    client_ca = opts.client_ca_file
    looked_up: str | None = None
    if client_ca is None and authn_client is not None and not opts.authentication_skip_lookup:
        looked_up = client_ca = _looked_up_client_ca(authn_client, opts)
    try:
        ctx = server_ssl_context(cert, client_ca)
    finally:
        if looked_up:
            Path(looked_up).unlink(missing_ok=True)
    authenticator = DelegatedAuthenticator(authn_client, cache_ttl=opts.token_cache_ttl)
    authorizer = DelegatedAuthorizer(authz_client, always_allow_paths=opts.always_allow_paths,
                                     allow_ttl=opts.authorized_cache_ttl, deny_ttl=opts.unauthorized_cache_ttl)
    log.info("serving certificate: %s", cert.origin)
    return HealthServer(
        opts.address, registry, ssl_context=ctx,
        middleware=lambda app: AuthFilter(app, authenticator, authorizer),
        hint="set --secure-port to another port or --bind-address to another address, or --secure-port=0 to disable",
    )
