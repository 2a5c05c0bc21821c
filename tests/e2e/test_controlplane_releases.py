"""The control plane of each further Kubernetes release kubesched supports works on its own.

``scripts/controlplane.sh --k8s-version v1.37.2`` builds etcd, kube-apiserver and kube-scheduler
v1.37.2 next to the default release; this starts them as a control plane separate from the
session's one and checks what the release itself says: ``/version`` (the apiserver's
version.Info, stamped by the build as upstream's hack/lib/version.sh does) and a pod bound by
v1.37's own kube-scheduler (the Binding subresource, PodScheduled=True). Under ``CI`` a release
that was not built fails the test instead of skipping it (scripts/ci-controlplane.sh builds it).
"""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
import yaml

from kubesched.kube.controlplane import Binaries, ControlPlane, require_binaries

pytestmark = pytest.mark.controlplane

RELEASE = "v1.37"


@pytest.fixture(scope="module")
def binaries() -> Binaries:
    return require_binaries(RELEASE)


@pytest.fixture(scope="module")
def plane(binaries: Binaries) -> Iterator[ControlPlane]:
    with ControlPlane(binaries) as cp:
        yield cp


@pytest.fixture
def admin(plane: ControlPlane) -> Iterator[httpx.Client]:
    with plane.admin_client(timeout=30.0) as client:
        yield client


def test_the_release_directory_is_the_one_asked_for(binaries: Binaries) -> None:
    assert binaries.directory.name.startswith(f"{RELEASE}.")
    assert binaries.kube_scheduler is not None, "controlplane.sh builds kube-scheduler with kube-apiserver"
    for binary in (binaries.kube_apiserver, binaries.kube_scheduler):
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True, timeout=60)
        assert out.stdout.strip() == f"Kubernetes {binaries.directory.name}"


def test_version_is_the_release(plane: ControlPlane, admin: httpx.Client) -> None:
    assert plane.binaries.directory.name == "v1.37.2"  # the patch scripts/controlplane.sh pins
    version = admin.get("/version").json()
    assert (version["major"], version["minor"]) == ("1", "37")
    assert version["gitVersion"] == "v1.37.2"
    assert version["gitTreeState"] == "clean"


def test_its_kube_scheduler_binds_a_pod(plane: ControlPlane, admin: httpx.Client) -> None:
    namespace = f"e2e-{secrets.token_hex(4)}"
    assert admin.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
    node_name = f"worker-{secrets.token_hex(4)}"
    labels = {"kubernetes.io/hostname": node_name}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_name, "labels": labels}}
    assert admin.post("/api/v1/nodes", json=node).status_code == 201
    resources = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    status = {
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        }
    }
    patched = admin.patch(
        f"/api/v1/nodes/{node_name}/status", json=status, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert patched.status_code == 200, patched.text

    scheduler_name = f"e2e-scheduler-{secrets.token_hex(4)}"
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }
    config_path = plane.workdir / f"{scheduler_name}.yaml"
    config_path.write_text(yaml.safe_dump(config))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "schedulerName": scheduler_name,
            "nodeSelector": labels,
            "containers": [
                {"name": "c", "image": "registry.invalid/pause", "resources": {"requests": {"cpu": "100m"}}}
            ],
        },
    }
    proc = plane.start_kube_scheduler(config_path)  # the release's own kube-scheduler binary
    try:
        created = admin.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 120.0
        while not admin.get(f"/api/v1/namespaces/{namespace}/pods/p").json()["spec"].get("nodeName"):
            assert proc.poll() is None, "kube-scheduler exited"
            if time.monotonic() > deadline:
                pytest.fail("timed out waiting for kube-scheduler v1.37 to bind the pod")
            time.sleep(0.2)
        read = admin.get(f"/api/v1/namespaces/{namespace}/pods/p").json()
        assert read["spec"]["nodeName"] == node_name
        scheduled = [c for c in read["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert [c["status"] for c in scheduled] == ["True"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
