"""Extended resources backed by DRA in the simulator (DRAExtendedResource, on in v1.37): a pod
asking for ``example.com/gpu`` on a node that does not advertise it gets the devices of the
DeviceClass naming it (upstream ``extendeddynamicresources.go``: the special claim, created in
PreBind with ``generateName`` ``<pod>-extended-resources-``, owned by the pod, annotated
``resource.kubernetes.io/extended-resource-claim``; ``status.extendedResourceClaimStatus``)."""

from __future__ import annotations

from typing import Any

from kubesched.config.load import load_config
from kubesched.config.releases import V1_35, Release
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.manifests import ClusterObjects
from kubesched.sim.runner import simulate

API = "resource.k8s.io/v1"


def _objects(gpus: int, *, extended_resource_name: bool = True, pod_ends: bool = False) -> ClusterObjects:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}
    if extended_resource_name:
        spec["extendedResourceName"] = "example.com/gpu"
    device_class = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"}, "spec": spec}
    resource_slice = {
        "apiVersion": API,
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.example.com"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(4)],
        },
    }
    annotations = {"sim.kubesched.io/duration": "60s"} if pod_ends else {}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "default", "uid": "trainer-uid", "annotations": annotations},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "trainer",
                    "resources": {
                        "requests": {"cpu": "1", "example.com/gpu": str(gpus)},
                        "limits": {"example.com/gpu": str(gpus)},
                    },
                }
            ]
        },
    }
    objs = ClusterObjects()
    objs.nodes.append(node)
    objs.pods.append(pod)
    objs.others.setdefault((API, "DeviceClass"), []).append(device_class)
    objs.others.setdefault((API, "ResourceSlice"), []).append(resource_slice)
    return objs


def _run(objs: ClusterObjects, release: Release | None = None) -> Any:
    config = load_config(None) if release is None else load_config(None, release=release)
    return simulate(objs, config, in_tree_registry(), seed=1)


def _claims(sim: Any) -> list[dict[str, Any]]:
    return [dict(c) for c in sim.cluster.list_objects(API, "ResourceClaim")]


def test_two_gpus_come_from_the_device_class() -> None:
    sim = _run(_objects(2))
    [pod] = sim.to_json()["pods"]
    assert pod["node"] == "node-1"
    [claim] = _claims(sim)
    md = claim["metadata"]
    assert md["name"].startswith("trainer-extended-resources-")
    assert md["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert md["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": "trainer-uid", "controller": True}
    ]
    assert "resource.kubernetes.io/delete-protection" in md["finalizers"]
    # One request per container resource: container-<index>-request-<index among its sorted requests>.
    assert claim["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2},
        }
    ]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["pool"], r["device"]) for r in results] == [
        ("container-0-request-1", "node-1", "gpu-0"),
        ("container-0-request-1", "node-1", "gpu-1"),
    ]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": "trainer-uid"}]
    stored = sim.cluster.pods["default/trainer"]
    assert stored["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [
            {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}
        ],
        "resourceClaimName": md["name"],
    }


def test_five_gpus_stay_pending() -> None:
    sim = _run(_objects(5))
    [pod] = sim.to_json()["pods"]
    assert pod["node"] is None
    assert pod["message"] == (
        "0/1 nodes are available: 1 cannot allocate all claims. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert _claims(sim) == []


def test_without_a_device_class_naming_it_the_node_lacks_the_resource() -> None:
    sim = _run(_objects(2, extended_resource_name=False))
    [pod] = sim.to_json()["pods"]
    assert pod["node"] is None
    assert pod["message"].startswith("0/1 nodes are available: 1 Insufficient example.com/gpu.")


def test_the_claim_goes_with_the_pod() -> None:
    """The garbage collector deletes the claim with its owner (the simulated claim controller)."""
    sim = _run(_objects(2, pod_ends=True))
    [pod] = sim.to_json()["pods"]
    assert pod["node"] == "node-1"
    assert "default/trainer" not in sim.cluster.pods
    assert _claims(sim) == []


def test_v1_35_has_the_gate_off() -> None:
    """DRAExtendedResource is alpha (off) in v1.35: the node simply lacks the resource."""
    sim = _run(_objects(2), V1_35)
    [pod] = sim.to_json()["pods"]
    assert pod["node"] is None
    assert pod["message"].startswith("0/1 nodes are available: 1 Insufficient example.com/gpu.")
    assert _claims(sim) == []
