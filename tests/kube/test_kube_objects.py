"""Trimmed informer copies keep everything scheduling reads.

The strong check: the scheduler's parsed views of a fully populated pod and node (requests,
host ports, images, affinity, tolerations, volumes, allocatable, image sizes) are identical
before and after trimming, while managedFields, env, probes and container states are gone.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.kube.objects import micro_time, namespaced_key, object_reference, parse_time, trim_node, trim_pod

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0",
        "namespace": "shop",
        "uid": "u",
        "resourceVersion": "9",
        "labels": {"app": "web"},
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...}", "keep": "me"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True}],
        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
    },
    "spec": {
        "schedulerName": "default-scheduler",
        "priority": 10,
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}}
                ]
            }
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
        "overhead": {"cpu": "10m"},
        "initContainers": [
            {
                "name": "init",
                "image": "busybox",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "50m"}},
                "command": ["sh"],
            }
        ],
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "A", "value": "x" * 500}],
                "livenessProbe": {"httpGet": {"path": "/", "port": 80}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }
        ],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
        ],
    },
    "status": {
        "phase": "Running",
        "startTime": "2026-01-01T00:00:00Z",
        "podIP": "10.0.0.1",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [
            {
                "name": "app",
                "ready": True,
                "state": {"running": {}},
                "allocatedResources": {"cpu": "250m"},
                "resources": {"requests": {"cpu": "250m"}},
            }
        ],
    },
}

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}, "managedFields": [{"manager": "kubelet"}]},
    "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
    "status": {
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "images": [{"names": ["nginx:1.27"], "sizeBytes": 50_000_000}],
        "nodeInfo": {"kubeletVersion": "v1.35.0", "machineID": "x"},
        "volumesAttached": [{"name": "v", "devicePath": "/dev/x"}],
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def test_trimmed_pod_parses_the_same() -> None:
    original = copy.deepcopy(POD)
    trimmed = trim_pod(POD)
    assert original == POD  # the input is not modified
    a, b = PodInfo(copy.deepcopy(POD)), PodInfo(trimmed)
    for attr in ("labels", "host_ports", "priority", "scheduler_name", "requests", "non_zero_requests", "tolerations"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert a.requests  # really parsed: 250m + 50m sidecar + 10m overhead of CPU, memory
    from kubesched.plugins.imagelocality.image_locality import pod_images

    assert pod_images(a) == pod_images(b)
    spec = trimmed["spec"]
    for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "overhead", "priority"):
        assert spec[key] == POD["spec"][key]
    app = spec["containers"][0]
    assert set(app) == {"name", "image", "resources", "ports"}
    assert spec["initContainers"][0]["restartPolicy"] == "Always"
    assert spec["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
        {"name": "token", "projected": {}},
    ]
    md = trimmed["metadata"]
    assert "managedFields" not in md
    assert md["annotations"] == {"keep": "me"}
    assert md["ownerReferences"] == POD["metadata"]["ownerReferences"]
    st = trimmed["status"]
    assert set(st) == {"phase", "startTime", "conditions", "containerStatuses"}
    assert st["containerStatuses"] == [
        {"name": "app", "allocatedResources": {"cpu": "250m"}, "resources": {"requests": {"cpu": "250m"}}}
    ]


def test_trimmed_node_parses_the_same() -> None:
    trimmed = trim_node(NODE)
    a, b = NodeInfo(), NodeInfo()
    a.set_node(copy.deepcopy(NODE))
    b.set_node(trimmed)
    assert a.allocatable == b.allocatable
    assert trimmed["status"]["images"] == NODE["status"]["images"]
    assert trimmed["spec"] == NODE["spec"]
    assert "nodeInfo" not in trimmed["status"] and "volumesAttached" not in trimmed["status"]
    assert "managedFields" not in trimmed["metadata"]


def test_keys_references_and_times() -> None:
    assert namespaced_key(POD) == "shop/web-0"
    assert namespaced_key(NODE) == "n1"
    assert object_reference(POD) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-0",
        "namespace": "shop",
        "uid": "u",
        "resourceVersion": "9",
    }
    assert micro_time(1767225600.123456) == "2026-01-01T00:00:00.123456Z"
    assert parse_time("2026-01-01T00:00:00.500000Z") == 1767225600.5
