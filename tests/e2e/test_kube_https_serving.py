"""``kubesched run`` serves /metrics and health as kube-scheduler does, checked against the real
kube-apiserver's TokenReview and SubjectAccessReview (issue 13).

Upstream: cmd/kube-scheduler/app/options (secure port, delegated authentication and authorization,
--authorization-always-allow-paths /healthz,/readyz,/livez), k8s.io/apiserver/pkg/server/options
(AlwaysAllowGroups system:masters, the client CA read from kube-system/extension-apiserver-
authentication), pkg/endpoints/handlers/responsewriters (the 401 and 403 Status bodies).
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_kube_support import Api, InProcessScheduler, api, free_port, ns, scheduler_config, unique

from kubesched.kube.controlplane import ControlPlane
from kubesched.kube.serving import SecureServingOptions

pytestmark = pytest.mark.controlplane
__all__ = ["api", "ns"]  # fixtures


def _service_account_token(api: Api, namespace: str, name: str) -> str:
    api.ok(api.c.post(f"/api/v1/namespaces/{namespace}/serviceaccounts",
                      json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}))
    issued = api.ok(api.c.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    ))
    return str(issued["status"]["token"])


def _grant_metrics(api: Api, namespace: str, sa: str) -> None:
    role = unique("metrics-reader")
    api.ok(api.c.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", json={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }))
    api.ok(api.c.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
    }))


def test_metrics_need_an_identity_rbac_allows(control_plane: ControlPlane, api: Api, ns: str,
                                              tmp_path: Path) -> None:
    scraper = _service_account_token(api, ns, "scraper")
    nobody = _service_account_token(api, ns, "nobody")
    _grant_metrics(api, ns, "scraper")
    port = free_port()
    kubeconfig = control_plane.kubeconfig_path
    serving = SecureServingOptions(
        bind_address="127.0.0.1", secure_port=port, cert_dir=str(tmp_path / "serving"),
        authentication_kubeconfig=str(kubeconfig), authorization_kubeconfig=str(kubeconfig),
    )
    sched = InProcessScheduler(scheduler_config(unique("secure")), kubeconfig, serving=serving).start()
    ca = tmp_path / "serving" / "kube-scheduler.crt"
    url = f"https://127.0.0.1:{port}"

    def get(path: str, token: str | None = None, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)), timeout=30, **kw) as c:
            return c.get(url + path, headers=headers)

    try:
        # Health: no credentials needed (the always-allow paths), over TLS verified by our CA.
        assert (get("/healthz").status_code, get("/healthz").text) == (200, "ok")
        assert get("/readyz").status_code == 200
        # /metrics: anonymous is forbidden, a bad token unauthenticated, RBAC decides the rest.
        anon = get("/metrics")
        assert anon.status_code == 403
        assert anon.json()["message"].startswith('forbidden: User "system:anonymous" cannot get path "/metrics"')
        bad = get("/metrics", "not-a-token")
        assert bad.status_code == 401 and bad.json()["reason"] == "Unauthorized"
        denied = get("/metrics", nobody)
        assert denied.status_code == 403
        assert f'User "system:serviceaccount:{ns}:nobody" cannot get path "/metrics"' in denied.json()["message"]
        allowed = get("/metrics", scraper)
        assert allowed.status_code == 200 and "scheduler_schedule_attempts_total" in allowed.text
        # The API server's client CA, read from kube-system/extension-apiserver-authentication:
        # the admin's client certificate (system:masters) is always allowed.
        ctx = ssl.create_default_context(cafile=str(ca))
        ctx.load_cert_chain(str(control_plane.admin_cert_path), str(control_plane.admin_key_path))
        with httpx.Client(verify=ctx, timeout=30) as c:
            assert c.get(url + "/metrics").status_code == 200
        # Plain HTTP was not asked for: nothing answers it on the secure port.
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    finally:
        sched.stop()
