"""The simulated resourceclaim controller (sim/claim_controller.py; upstream
pkg/controller/resourceclaim/controller.go), hand-traced: a template's claim is created for a new
pod before the scheduler sees it, and the pod's end releases, deallocates and deletes as upstream."""

from __future__ import annotations

from typing import Any

from kubesched.framework.clock import VirtualClock
from kubesched.sim.claim_controller import FINALIZER, install
from kubesched.sim.cluster import SimCluster

API = "resource.k8s.io/v1"


class _Handlers:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _cluster() -> SimCluster:
    cluster = SimCluster(VirtualClock(0.0))
    cluster.add_event_handlers(_Handlers())  # type: ignore[arg-type]
    install(cluster)
    template = {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "ml", "labels": {"team": "a"}},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
    }
    cluster.create_object(API, "ResourceClaimTemplate", template)
    return cluster


def _pod(name: str, uid: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": uid},
        "spec": {"containers": [{"name": "c"}], "resourceClaims": claims},
        "status": {},
    }


def test_a_template_becomes_the_pods_own_claim() -> None:
    cluster = _cluster()
    pod = _pod("train", "u-1", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    cluster.create_pod(pod)
    [status] = cluster.pods["ml/train"]["status"]["resourceClaimStatuses"]
    assert status["name"] == "gpu"
    name = status["resourceClaimName"]
    assert name.startswith("train-gpu-") and len(name) == len("train-gpu-") + 5
    claim = cluster.get_object(API, "ResourceClaim", "ml", name)
    assert claim is not None
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert claim["metadata"]["labels"] == {"team": "a"}
    assert claim["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "train",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert claim["spec"] == {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}
    # The same pod UID and claim give the same name (runs repeat).
    again = _cluster()
    again.create_pod(_pod("train", "u-1", [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]))
    assert again.pods["ml/train"]["status"]["resourceClaimStatuses"][0]["resourceClaimName"] == name
    # The pod ends: its generated claim is deleted.
    cluster.delete_pod(cluster.pods["ml/train"])
    assert cluster.get_object(API, "ResourceClaim", "ml", name) is None


def test_a_shared_claim_is_released_then_deallocated() -> None:
    cluster = _cluster()
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "g0"}]}}
    shared = {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "ml", "finalizers": [FINALIZER, "other"]},
        "spec": {},
        "status": {
            "allocation": allocation,
            "reservedFor": [
                {"resource": "pods", "name": "a", "uid": "u-a"},
                {"resource": "pods", "name": "b", "uid": "u-b"},
            ],
        },
    }
    cluster.create_object(API, "ResourceClaim", shared)
    for name, uid in (("a", "u-a"), ("b", "u-b")):
        cluster.create_pod(_pod(name, uid, [{"name": "gpu", "resourceClaimName": "shared"}]))
    cluster.delete_pod(cluster.pods["ml/a"])
    claim = cluster.get_object(API, "ResourceClaim", "ml", "shared")
    assert claim["status"] == {
        "allocation": allocation,
        "reservedFor": [{"resource": "pods", "name": "b", "uid": "u-b"}],
    }
    cluster.delete_pod(cluster.pods["ml/b"])
    claim = cluster.get_object(API, "ResourceClaim", "ml", "shared")
    assert claim["status"] == {}
    assert claim["metadata"]["finalizers"] == ["other"]
