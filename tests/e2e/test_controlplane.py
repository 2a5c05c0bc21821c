"""The test control plane is a real, secured kube-apiserver backed by etcd.

Each expectation comes from Kubernetes itself, not from our code: status codes and reasons
(staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go), RBAC's bootstrap policy
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: system:basic-user may create
SelfSubjectReviews, system:kube-scheduler may bind pods), and the scheduler's Binding subresource.
"""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kubesched.config.releases import DEFAULT_RELEASE
from kubesched.kube.controlplane import ControlPlane, ControlPlaneError

pytestmark = pytest.mark.controlplane

WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
WHOAMI_BODY = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def _name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


def _eventually(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll for an asynchronous outcome (RBAC cache, scheduler binding); fail with ``what``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture
def admin(control_plane: ControlPlane) -> Iterator[httpx.Client]:
    with control_plane.admin_client(timeout=30.0) as client:
        yield client


@pytest.fixture
def namespace(admin: httpx.Client) -> str:
    name = _name("e2e")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    resp = admin.post("/api/v1/namespaces", json=body)
    assert resp.status_code == 201, resp.text
    return name


def _whoami(client: httpx.Client) -> dict[str, Any]:
    resp = client.post(WHOAMI, json=WHOAMI_BODY)
    assert resp.status_code == 201, resp.text
    user: dict[str, Any] = resp.json()["status"]["userInfo"]
    return user


def test_readyz_and_version(control_plane: ControlPlane, admin: httpx.Client) -> None:
    ready = admin.get("/readyz", params={"verbose": "1"})
    assert ready.status_code == 200
    assert "[+]etcd ok" in ready.text
    assert "[+]poststarthook/rbac/bootstrap-roles ok" in ready.text
    assert ready.text.rstrip().endswith("readyz check passed")

    version = admin.get("/version").json()
    # The default release's (scripts/controlplane.sh DEFAULT_K8S_VERSION, config/releases.py).
    assert (version["major"], version["minor"]) == ("1", str(DEFAULT_RELEASE.minor))
    assert version["gitVersion"] == DEFAULT_RELEASE.binary
    assert control_plane.url.startswith("https://127.0.0.1:")


def test_admin_kubeconfig_is_usable(control_plane: ControlPlane) -> None:
    config = yaml.safe_load(control_plane.kubeconfig_path.read_text())
    assert config["clusters"][0]["cluster"]["server"] == control_plane.url
    assert config["current-context"] == config["contexts"][0]["name"]
    assert "client-certificate-data" in config["users"][0]["user"]
    with control_plane.admin_client() as client:
        user = _whoami(client)
    assert "system:masters" in user["groups"]
    assert "system:authenticated" in user["groups"]


def test_create_namespace_and_node(admin: httpx.Client, namespace: str) -> None:
    got = admin.get(f"/api/v1/namespaces/{namespace}")
    assert got.status_code == 200
    assert got.json()["status"]["phase"] == "Active"

    node_name = _name("node")
    taints = [{"key": "example.com/e2e", "value": "x", "effect": "NoSchedule"}]
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": {"kubernetes.io/hostname": node_name}},
        "spec": {"taints": taints},
    }
    created = admin.post("/api/v1/nodes", json=node)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["uid"]

    read = admin.get(f"/api/v1/nodes/{node_name}").json()
    assert read["spec"]["taints"] == taints
    names = [n["metadata"]["name"] for n in admin.get("/api/v1/nodes").json()["items"]]
    assert node_name in names

    # A second create of the same name is a conflict, reported the Kubernetes way.
    again = admin.post("/api/v1/nodes", json=node)
    assert again.status_code == 409
    assert again.json()["reason"] == "AlreadyExists"

    assert admin.delete(f"/api/v1/nodes/{node_name}").status_code == 200
    assert admin.get(f"/api/v1/nodes/{node_name}").status_code == 404


def test_token_without_rbac_is_forbidden(control_plane: ControlPlane) -> None:
    with control_plane.token_client(control_plane.unprivileged_token) as client:
        # Authentication succeeds: the static token maps to its user ...
        assert _whoami(client)["username"] == "kubesched:unprivileged"
        # ... but with no (Cluster)RoleBinding, RBAC denies everything else.
        resp = client.get("/api/v1/namespaces")
        assert resp.status_code == 403
        status = resp.json()
        assert status["reason"] == "Forbidden"
        assert 'User "kubesched:unprivileged" cannot list resource "namespaces"' in status["message"]
        assert client.get("/api/v1/nodes").status_code == 403

    with control_plane.token_client("not-a-known-token") as client:
        assert client.get("/api/v1/namespaces").status_code == 401


def test_service_account_token_and_rbac_grant(control_plane: ControlPlane, admin: httpx.Client, namespace: str) -> None:
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader"}}
    assert admin.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json=sa).status_code == 201
    issued = admin.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/reader/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    assert issued.status_code == 201, issued.text
    token = issued.json()["status"]["token"]

    kubeconfig = yaml.safe_load(control_plane.kubeconfig_for_token(token).read_text())
    assert kubeconfig["users"][0]["user"] == {"token": token}

    pods = f"/api/v1/namespaces/{namespace}/pods"
    with control_plane.token_client(token) as client:
        assert _whoami(client)["username"] == f"system:serviceaccount:{namespace}:reader"
        assert client.get(pods).status_code == 403

        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        }
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "reader-reads-pods"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
        }
        rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
        assert admin.post(f"{rbac}/roles", json=role).status_code == 201
        assert admin.post(f"{rbac}/rolebindings", json=binding).status_code == 201

        _eventually(lambda: client.get(pods).status_code == 200, "the RoleBinding to take effect")
        # The grant is exactly what the Role says: listing works, creating does not.
        assert client.post(pods, json={}).status_code == 403


def test_client_certificate_identity(control_plane: ControlPlane, namespace: str) -> None:
    path = control_plane.kubeconfig_for_user("system:kube-scheduler")
    user = yaml.safe_load(path.read_text())["users"][0]["user"]
    ctx_files = control_plane.workdir / "sched-client"
    ctx_files.mkdir(exist_ok=True)

    cert, key = ctx_files / "tls.crt", ctx_files / "tls.key"
    cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
    key.write_bytes(base64.b64decode(user["client-key-data"]))
    verify = control_plane.ssl_context(client_cert=(cert, key))
    with httpx.Client(base_url=control_plane.url, verify=verify) as client:
        assert _whoami(client)["username"] == "system:kube-scheduler"
        # Bootstrap RBAC lets the scheduler read pods and nodes but not write secrets.
        assert client.get("/api/v1/nodes").status_code == 200
        assert client.get(f"/api/v1/namespaces/{namespace}/secrets").status_code == 403


def test_startup_failure_reports_log_tail(control_plane: ControlPlane, tmp_path: Path) -> None:
    broken = ControlPlane(control_plane.binaries, extra_apiserver_args=["--no-such-flag"], workdir_parent=tmp_path)
    with pytest.raises(ControlPlaneError) as excinfo:
        broken.start()
    message = str(excinfo.value)
    assert "kube-apiserver failed to start (exited with code" in message
    assert "unknown flag: --no-such-flag" in message
    # stop() ran on failure: processes gone, temp dir removed.
    assert list(tmp_path.iterdir()) == []
    assert not broken.running


def test_kube_scheduler_binds_a_pod(control_plane: ControlPlane, admin: httpx.Client, namespace: str) -> None:
    if control_plane.binaries.kube_scheduler is None:
        pytest.skip("kube-scheduler was not built")
    node_name = _name("worker")
    labels = {"kubernetes.io/hostname": node_name}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_name, "labels": labels}}
    assert admin.post("/api/v1/nodes", json=node).status_code == 201
    status = {
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        }
    }
    patched = admin.patch(
        f"/api/v1/nodes/{node_name}/status",
        json=status,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text

    scheduler_name = _name("e2e-scheduler")
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }
    config_path = control_plane.workdir / f"{scheduler_name}.yaml"
    config_path.write_text(yaml.safe_dump(config))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "schedulerName": scheduler_name,
            # Other tests sharing the session may add nodes; pin the outcome to ours.
            "nodeSelector": labels,
            "containers": [
                {"name": "c", "image": "registry.invalid/pause", "resources": {"requests": {"cpu": "100m"}}}
            ],
        },
    }
    proc = control_plane.start_kube_scheduler(config_path)
    try:
        created = admin.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
        assert created.status_code == 201, created.text

        def bound() -> bool:
            assert proc.poll() is None, "kube-scheduler exited"
            spec = admin.get(f"/api/v1/namespaces/{namespace}/pods/p").json()["spec"]
            return bool(spec.get("nodeName"))

        _eventually(bound, "kube-scheduler to bind the pod", timeout=120.0)
        read = admin.get(f"/api/v1/namespaces/{namespace}/pods/p").json()
        assert read["spec"]["nodeName"] == node_name
        scheduled = [c for c in read["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert [c["status"] for c in scheduled] == ["True"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        admin.delete(f"/api/v1/nodes/{node_name}")


def test_kwok_runs_bound_pods(control_plane: ControlPlane, admin: httpx.Client, namespace: str) -> None:
    if control_plane.binaries.kwok is None or control_plane.binaries.kwok_stages is None:
        pytest.skip("kwok not built (scripts/controlplane.sh --with-kwok)")
    node_name = _name("kwok-node")
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "annotations": {"kwok.x-k8s.io/node": "fake"}},
    }
    assert admin.post("/api/v1/nodes", json=node).status_code == 201
    proc = control_plane.start_kwok()
    try:

        def node_ready() -> bool:
            assert proc.poll() is None, "kwok exited"
            conditions = admin.get(f"/api/v1/nodes/{node_name}").json()["status"].get("conditions", [])
            return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

        _eventually(node_ready, "kwok to make the node Ready")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "on-kwok"},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "registry.invalid/pause"}]},
        }
        assert admin.post(f"/api/v1/namespaces/{namespace}/pods", json=pod).status_code == 201

        def running() -> bool:
            status = admin.get(f"/api/v1/namespaces/{namespace}/pods/on-kwok").json()["status"]
            return bool(status.get("phase") == "Running")

        _eventually(running, "kwok to run the pod")
        status = admin.get(f"/api/v1/namespaces/{namespace}/pods/on-kwok").json()["status"]
        assert status["podIP"]
        assert [c["ready"] for c in status["containerStatuses"]] == [True]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        admin.delete(f"/api/v1/nodes/{node_name}")


def test_restart_apiserver_keeps_data(control_plane: ControlPlane, namespace: str) -> None:
    value = secrets.token_hex(8)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "survivor"}, "data": {"v": value}}
    with control_plane.admin_client() as client:
        created = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=cm)
        assert created.status_code == 201, created.text
    uid = created.json()["metadata"]["uid"]
    pid_before, port_before = control_plane.apiserver_pid, control_plane.port

    control_plane.restart_apiserver()

    assert control_plane.apiserver_pid != pid_before
    assert control_plane.port == port_before
    with control_plane.admin_client() as client:
        assert client.get("/readyz").status_code == 200
        read = client.get(f"/api/v1/namespaces/{namespace}/configmaps/survivor").json()
    assert read["data"] == {"v": value}
    assert read["metadata"]["uid"] == uid
    # The static-token user still authenticates after the restart (same token file).
    with control_plane.token_client(control_plane.unprivileged_token) as client:
        assert client.get("/api/v1/namespaces").status_code == 403
