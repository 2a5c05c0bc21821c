"""kube-controller-manager on the test control plane (``ControlPlane.start_controller_manager``): the
real PV controller binds claims, for the e2e tests of the volume plugins. v1.35.4 and v1.37.2, each
with a control plane of its own (the session one stays without a controller-manager).

Upstream behaviour the expectations come from (read, not run):

- pkg/controller/volume/persistentvolume/pv_controller.go ``syncUnboundClaim``: an Immediate claim
  gets the best matching Available volume; the claim's ``spec.volumeName`` is set with the
  annotations ``pv.kubernetes.io/bind-completed`` and ``pv.kubernetes.io/bound-by-controller``
  (both ``"yes"``), the volume's ``claimRef`` names the claim (with its uid), both phases ``Bound``.
  A WaitForFirstConsumer claim with no volume pre-bound to it is left ``Pending`` with the event
  ``WaitForFirstConsumer`` / ``waiting for first consumer to be created before binding``.
- component-helpers storage/volume/pv_helpers.go ``FindMatchingVolume``: a volume pre-bound to the
  claim (``claimRef`` with its namespace, name and uid) wins; otherwise, without a node and in
  delayed binding mode, nothing matches; otherwise the smallest volume of the claim's class with
  at least the requested capacity and the claim's access modes.
- pkg/scheduler/framework/plugins/volumebinding/binder.go ``bindAPIUpdate`` (VolumeBinding's
  PreBind): the volume's ``claimRef`` is written (``GetBindVolumeToClaim`` adds
  ``pv.kubernetes.io/bound-by-controller``), then, for claims to provision, the claim's
  ``volume.kubernetes.io/selected-node``; the PV controller completes the binding. The second case
  writes both, volume first as PreBind does.
- pkg/registry/core/persistentvolume/strategy.go: a new volume is ``Pending``; the PV controller makes
  it ``Available`` once it has it in its cache, so the tests wait for that before making a claim
  (the volume and claim informers are separate watches: a claim seen first would be matched
  without the newest volumes).
- plugin/pkg/auth/authorizer/rbac/bootstrappolicy: ``system:kube-controller-manager`` may create
  ServiceAccounts and their tokens but not write volumes; each controller's own
  ``system:controller:*`` role (bound to its ServiceAccount in kube-system) may.
- cmd/kube-controller-manager/names/controller_names.go: ``persistentvolume-binder-controller``,
  ``ephemeral-volume-controller`` (the same in both releases).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from test_kube_support import MERGE, Api, eventually, unique

from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.kube.controlplane import PV_CONTROLLERS, ControlPlane, require_binaries

pytestmark = pytest.mark.controlplane

HOSTNAME = "kubernetes.io/hostname"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: The timeout of every wait; the binder resyncs every second (``--pvclaimbinder-sync-period=1s``).
BIND_TIMEOUT = 60.0


@pytest.fixture(scope="module", params=[V1_35, V1_37], ids=str)
def plane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """A control plane of the release with kube-controller-manager running the default
    ``PV_CONTROLLERS``; a missing kube-controller-manager skips locally and fails under CI."""
    release: Release = request.param
    binaries = require_binaries(f"v{release}")
    if binaries.kube_controller_manager is None:
        message = f"kube-controller-manager not built in {binaries.directory}: run scripts/controlplane.sh --with-kcm"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with ControlPlane(binaries) as cp:
        cp.start_controller_manager()
        yield cp


@pytest.fixture
def api(plane: ControlPlane) -> Iterator[Api]:
    with plane.admin_client(timeout=30.0) as client:
        yield Api(client)


@pytest.fixture
def ns(api: Api) -> str:
    return api.namespace()


def _storage_class(api: Api, mode: str) -> str:
    name = unique("sc")
    api.ok(
        api.c.post(
            "/apis/storage.k8s.io/v1/storageclasses",
            json={
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": NO_PROVISIONER,
                "volumeBindingMode": mode,
            },
        )
    )
    return name


def _pv(api: Api, cls: str, size: str, *, node: str | None = None) -> str:
    """A Retain volume of ``cls``: a local one pinned to ``node``, else a hostPath one."""
    name = unique("pv")
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": cls,
        "persistentVolumeReclaimPolicy": "Retain",
    }
    if node is None:
        spec["hostPath"] = {"path": f"/tmp/{name}"}
    else:
        spec["local"] = {"path": f"/mnt/{name}"}
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}]
            }
        }
    api.ok(
        api.c.post(
            "/api/v1/persistentvolumes",
            json={"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec},
        )
    )
    return name


def _pvc(api: Api, ns: str, cls: str, size: str = "1Gi") -> dict[str, Any]:
    return dict(
        api.ok(
            api.c.post(
                f"/api/v1/namespaces/{ns}/persistentvolumeclaims",
                json={
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": unique("claim")},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": cls,
                        "resources": {"requests": {"storage": size}},
                    },
                },
            )
        )
    )


def _get_pvc(api: Api, ns: str, name: str) -> dict[str, Any]:
    return dict(api.ok(api.c.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")))


def _get_pv(api: Api, name: str) -> dict[str, Any]:
    return dict(api.ok(api.c.get(f"/api/v1/persistentvolumes/{name}")))


def _bound(api: Api, ns: str, claim: str) -> dict[str, Any] | None:
    pvc = _get_pvc(api, ns, claim)
    return pvc if pvc.get("status", {}).get("phase") == "Bound" else None


def _assert_bound(api: Api, ns: str, claim: dict[str, Any], pv: str) -> None:
    """The binding is complete on both sides, as syncUnboundClaim/bind leave it."""
    name = claim["metadata"]["name"]
    pvc = eventually(lambda: _bound(api, ns, name), f"claim {ns}/{name} Bound", timeout=BIND_TIMEOUT)
    assert pvc["spec"]["volumeName"] == pv
    annotations = pvc["metadata"].get("annotations", {})
    assert annotations.get(BIND_COMPLETED) == "yes", annotations
    assert annotations.get(BOUND_BY_CONTROLLER) == "yes", annotations
    volume = eventually(
        lambda: (v := _get_pv(api, pv))["status"].get("phase") == "Bound" and v,
        f"volume {pv} Bound",
        timeout=BIND_TIMEOUT,
    )
    ref = volume["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["uid"]) == (ns, name, claim["metadata"]["uid"])


def _synced(api: Api, *pvs: str) -> None:
    """Wait until the controller has synced each new volume: the API server creates a volume
    ``Pending`` and only the PV controller makes it ``Available`` (syncVolume), from its own cache.
    A claim made before that could be matched against a cache without these volumes."""

    def available() -> bool:
        return all(_get_pv(api, name)["status"].get("phase") == "Available" for name in pvs)

    eventually(available, f"volumes {', '.join(pvs)} Available", timeout=BIND_TIMEOUT)


def _assert_available(api: Api, *pvs: str) -> None:
    for name in pvs:
        pv = _get_pv(api, name)
        assert (pv["status"].get("phase"), pv["spec"].get("claimRef")) == ("Available", None), (name, pv)


def test_immediate_claim_bound_to_the_smallest_matching_volume(api: Api, ns: str) -> None:
    cls, other_cls = _storage_class(api, "Immediate"), _storage_class(api, "Immediate")
    # Decoys: the right size in another class, too small, bigger than needed.
    other_class = _pv(api, other_cls, "1Gi")
    too_small = _pv(api, cls, "512Mi")
    bigger = _pv(api, cls, "5Gi")
    exact = _pv(api, cls, "1Gi")
    _synced(api, other_class, too_small, bigger, exact)
    claim = _pvc(api, ns, cls)
    _assert_bound(api, ns, claim, exact)
    _assert_available(api, other_class, too_small, bigger)


def test_wait_for_first_consumer_completed_after_prebind(api: Api, ns: str) -> None:
    for node in ("n-1", "n-2"):
        api.node(node)
    cls = _storage_class(api, "WaitForFirstConsumer")
    chosen, other = _pv(api, cls, "1Gi", node="n-1"), _pv(api, cls, "1Gi", node="n-2")
    _synced(api, chosen, other)
    claim = _pvc(api, ns, cls)
    name = claim["metadata"]["name"]

    # The controller has seen the claim and decided to wait: the event, and nothing bound.
    event = eventually(
        lambda: api.events(ns, reason="WaitForFirstConsumer", regarding=name),
        f"the WaitForFirstConsumer event of {name}",
        timeout=BIND_TIMEOUT,
    )[0]
    assert event["note"] == "waiting for first consumer to be created before binding"
    pvc = _get_pvc(api, ns, name)
    assert (pvc["status"].get("phase"), pvc["spec"].get("volumeName")) == ("Pending", None)
    _assert_available(api, chosen, other)

    # What VolumeBinding's PreBind writes for node n-1: the volume's claimRef (as
    # GetBindVolumeToClaim makes it), then the claim's selected node.
    ref = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": ns,
        "name": name,
        "uid": pvc["metadata"]["uid"],
        "resourceVersion": pvc["metadata"]["resourceVersion"],
    }
    api.ok(
        api.c.patch(
            f"/api/v1/persistentvolumes/{chosen}",
            headers=MERGE,
            json={"metadata": {"annotations": {BOUND_BY_CONTROLLER: "yes"}}, "spec": {"claimRef": ref}},
        )
    )
    api.ok(
        api.c.patch(
            f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}",
            headers=MERGE,
            json={"metadata": {"annotations": {SELECTED_NODE: "n-1"}}},
        )
    )

    _assert_bound(api, ns, claim, chosen)
    assert _get_pvc(api, ns, name)["metadata"]["annotations"][SELECTED_NODE] == "n-1"
    _assert_available(api, other)


def test_controllers_run_as_their_service_accounts(api: Api, plane: ControlPlane) -> None:
    """``--use-service-account-credentials``: kube-controller-manager made each controller's
    ServiceAccount in kube-system (it got the tokens for them by TokenRequest)."""
    for sa in ("persistent-volume-binder", "ephemeral-volume-controller"):
        api.ok(api.c.get(f"/api/v1/namespaces/kube-system/serviceaccounts/{sa}"))


def test_serving_with_delegated_authn_and_authz(plane: ControlPlane) -> None:
    """HTTPS with a certificate from the cluster's CA; /healthz open to everyone, /metrics only to
    whom the API server authorizes (TokenReview, then SubjectAccessReview)."""
    url = plane.controller_manager_url
    assert url is not None
    with httpx.Client(base_url=url, verify=plane.ssl_context(), timeout=10.0) as anonymous:
        health = anonymous.get("/healthz", params={"verbose": "1"})
        assert health.status_code == 200, health.text
        for controller in PV_CONTROLLERS:
            assert f"[+]{controller} ok" in health.text
        assert anonymous.get("/metrics").status_code == 403
    with httpx.Client(
        base_url=url,
        verify=plane.ssl_context(),
        timeout=10.0,
        headers={"Authorization": f"Bearer {plane.unprivileged_token}"},
    ) as unprivileged:
        assert unprivileged.get("/metrics").status_code == 403
    with httpx.Client(
        base_url=url, verify=plane.ssl_context(client_cert=(plane.admin_cert_path, plane.admin_key_path)), timeout=10.0
    ) as admin:
        metrics = admin.get("/metrics")
        assert metrics.status_code == 200, metrics.text
        assert "workqueue_adds_total" in metrics.text
