"""Storage objects in the simulator and the volume plugins in a whole scheduler (issue 15).

Manifests: the seven storage kinds at their served versions, refused field by field (exit 2, one
line per problem) or admitted with the API server's defaults (pkg/apis/core/v1/defaults.go,
pkg/apis/storage/v1/defaults.go). Scheduling: VolumeRestrictions' disk conflicts and
ReadWriteOncePod claims, VolumeZone's zones and NodeVolumeLimits' attach limits through the
default profile (the PVC rejection of VolumeBinding's stand-in is kept until that plugin lands, so
the cases with claims use a profile without it), the PVC event that requeues a pod, and its metric
label. FailedScheduling texts are upstream's ``FitError.Error()``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.config import load_config
from kubesched.sim.manifests import load_manifests
from kubesched.testing import new_framework

STORAGE = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers: [{name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 25}}]
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap, namespace: kube-system}
storageClassName: local
capacity: 100Gi
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv1}}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


def test_storage_manifests_get_the_api_servers_defaults(tmp_path: Path) -> None:
    objs = load_manifests([write(tmp_path, "s.yaml", STORAGE)])
    by_kind = {kind: items for (_, kind), items in objs.others.items()}
    [sc] = by_kind["StorageClass"]
    assert (sc["volumeBindingMode"], sc["reclaimPolicy"]) == ("Immediate", "Delete")
    [pv] = by_kind["PersistentVolume"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and pv["spec"]["volumeMode"] == "Filesystem"
    assert pv["status"] == {"phase": "Pending"} and "namespace" not in pv["metadata"]
    [claim] = by_kind["PersistentVolumeClaim"]
    assert claim["metadata"]["namespace"] == "default" and claim["status"] == {"phase": "Pending"}
    assert claim["spec"]["volumeMode"] == "Filesystem"
    [driver] = by_kind["CSIDriver"]
    assert driver["spec"] == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                              "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                              "volumeLifecycleModes": ["Persistent"]}
    assert by_kind["CSIStorageCapacity"][0]["metadata"]["namespace"] == "kube-system"
    assert objs.warnings == []


def test_bad_storage_manifests_exit_2_with_one_line_per_problem(tmp_path: Path) -> None:
    f = write(tmp_path, "bad.yaml", """\
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: data}
        spec:
          accessModes: [ReadWriteSometimes]
          resources: {requests: {storage: lots}}
        ---
        apiVersion: storage.k8s.io/v1beta1
        kind: CSIStorageCapacity
        metadata: {name: cap}
        storageClassName: local
        ---
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: fast}
        provisioner: x
        volumeBindingMode: Eventually
        """)
    r = CliRunner().invoke(cli, ["simulate", str(f)])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f'error: {f}:5: document 1 (PersistentVolumeClaim default/data): spec.accessModes[0]: Unsupported value: '
        '"ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        f"error: {f}:6: document 1 (PersistentVolumeClaim default/data): spec.resources.requests[storage]: "
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        f'error: {f}:8: document 2 (CSIStorageCapacity default/cap): apiVersion: no matches for kind '
        '"CSIStorageCapacity" in version "storage.k8s.io/v1beta1" (served: storage.k8s.io/v1)',
        f'error: {f}:17: document 3 (StorageClass fast): volumeBindingMode: Unsupported value: "Eventually": '
        'supported values: "Immediate", "WaitForFirstConsumer"',
    ]


def test_sim_cluster_looks_objects_up_by_name(tmp_path: Path) -> None:
    objs = load_manifests([write(tmp_path, "s.yaml", STORAGE)])
    fw = new_framework(load_config(None), objects=[o for items in objs.others.values() for o in items])
    c = fw.cluster
    assert c.get_object("v1", "PersistentVolumeClaim", "default", "data") is not None
    assert c.get_object("v1", "PersistentVolumeClaim", "other", "data") is None
    assert c.get_object("storage.k8s.io/v1", "StorageClass", "", "local") is not None
    assert c.get_object("storage.k8s.io/v1", "CSIStorageCapacity", "kube-system", "cap") is not None
    assert c.get_object("v1", "PersistentVolume", "", "missing") is None


# -- scheduling ------------------------------------------------------------------------------------


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def pod(name: str, *volumes: dict[str, Any], node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}], "volumes": list(volumes)}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def claim_volume(claim: str) -> dict[str, Any]:
    return {"name": claim, "persistentVolumeClaim": {"claimName": claim}}


GCE = {"name": "disk", "gcePersistentDisk": {"pdName": "shared"}}


def condition(fw: Any, name: str) -> str:
    p = fw.cluster.pods[f"default/{name}"]
    [cond] = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"]
    return str(cond["message"])


def test_disk_conflict_through_the_default_profile() -> None:
    fw = new_framework(load_config(None), nodes=[node("n1"), node("n2")],
                       pods=[pod("holder", GCE, node_name="n1"), pod("web", GCE)])
    fw.schedule(until=fw.clock.now() + 1)
    assert fw.cluster.pods["default/web"]["spec"]["nodeName"] == "n2"

    fw = new_framework(load_config(None), nodes=[node("n1")], pods=[pod("holder", GCE, node_name="n1"),
                                                                     pod("web", GCE)])
    fw.schedule(until=fw.clock.now() + 1)
    assert condition(fw, "web") == ("0/1 nodes are available: 1 node(s) had no available disk. preemption: 0/1 "
                                    "nodes are available: 1 No preemption victims found for incoming pod.")


#: The default profile without VolumeBinding's stand-in, which still rejects every pod with a claim.
WITHOUT_STAND_INS = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [
        {"name": "VolumeBinding"}]}}}],
}


def rwop_claim(name: str) -> list[dict[str, Any]]:
    """A claim and the volume it is bound to (VolumeZone looks the volume up)."""
    return [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOncePod"], "volumeName": f"pv-{name}"}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
         "spec": {"accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Gi"}}},
    ]


def test_read_write_once_pod_claim_in_use_anywhere() -> None:
    fw = new_framework(WITHOUT_STAND_INS, nodes=[node("n1"), node("n2")], objects=rwop_claim("db"),
                       pods=[pod("holder", claim_volume("db"), node_name="n1"), pod("second", claim_volume("db"))])
    fw.schedule(until=fw.clock.now() + 1)
    assert condition(fw, "second") == (
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
        "mode already in-use by another pod. preemption: 0/2 nodes are available: 2 No preemption victims found "
        "for incoming pod.")
    # The holder goes: the snapshot's claim count drops and the second pod is placed.
    fw.cluster.delete_pod(fw.cluster.pods["default/holder"])
    fw.schedule(until=fw.clock.now() + 30)
    assert fw.cluster.pods["default/second"]["spec"].get("nodeName") in ("n1", "n2")


def zone_objects() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "PersistentVolume",
         "metadata": {"name": "pv-data", "labels": {"topology.kubernetes.io/zone": "a"}},
         "spec": {"capacity": {"storage": "1Gi"}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
         "spec": {"volumeName": "pv-data"}},
    ]


def test_volume_zone_picks_the_volumes_zone() -> None:
    nodes = [node("n1", **{"topology.kubernetes.io/zone": "b"}), node("n2", **{"topology.kubernetes.io/zone": "a"})]
    fw = new_framework(WITHOUT_STAND_INS, nodes=nodes, objects=zone_objects(), pods=[pod("web", claim_volume("data"))])
    fw.schedule(until=fw.clock.now() + 1)
    assert fw.cluster.pods["default/web"]["spec"]["nodeName"] == "n2"


def test_a_missing_claim_is_waited_for_and_its_creation_requeues_the_pod() -> None:
    fw = new_framework(WITHOUT_STAND_INS, nodes=[node("n1")], pods=[pod("web", claim_volume("data"))])
    fw.schedule(until=fw.clock.now() + 1)
    assert condition(fw, "web") == ('0/1 nodes are available: persistentvolumeclaim "data" not found. preemption: '
                                    "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    for o in zone_objects():
        fw.cluster.create_object(o["apiVersion"], o["kind"], o)
    fw.schedule(until=fw.clock.now() + 2)  # well before the 5-minute flush: the PVC event did it
    assert fw.cluster.pods["default/web"]["spec"]["nodeName"] == "n1"
    text = fw.scheduler.metrics.registry.get_sample_value(
        "scheduler_event_handling_duration_seconds_count", {"event": "PersistentVolumeClaimAdd"})
    assert text == 1


def csi_node(name: str, ebs_limit: int) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": ebs_limit}}]}}


def ebs(volume_id: str) -> dict[str, Any]:
    return {"name": volume_id, "awsElasticBlockStore": {"volumeID": volume_id}}


def test_attach_limits_of_inline_volumes_migrated_to_csi() -> None:
    """Inline AWS EBS volumes count against the node's ebs.csi.aws.com limit (migration is on)."""
    nodes = [node("n1"), node("n2")]
    objects = [csi_node("n1", 1), csi_node("n2", 2)]
    fw = new_framework(load_config(None), nodes=nodes, objects=objects,
                       pods=[pod("a", ebs("vol-a"), node_name="n1"), pod("b", ebs("vol-b"), node_name="n2"),
                             pod("c", ebs("vol-c"))])
    fw.schedule(until=fw.clock.now() + 1)
    assert fw.cluster.pods["default/c"]["spec"]["nodeName"] == "n2"
    fw.cluster.create_pod(pod("d", ebs("vol-d")))
    fw.schedule(until=fw.clock.now() + 1)
    assert condition(fw, "d") == ("0/2 nodes are available: 2 node(s) exceed max volume count. preemption: 0/2 "
                                  "nodes are available: 2 No preemption victims found for incoming pod.")
    # vol-a is attached to n1 already, so it would not count there; but an EBS volume cannot be
    # shared (VolumeRestrictions, which runs first).
    fw.cluster.create_pod(pod("e", ebs("vol-a")))
    fw.schedule(until=fw.clock.now() + 1)
    assert condition(fw, "e").startswith("0/2 nodes are available: 1 node(s) exceed max volume count, 1 node(s) "
                                         "had no available disk.")


@pytest.mark.parametrize("with_stand_ins", [True, False])
def test_pods_without_volumes_are_untouched(with_stand_ins: bool) -> None:
    config = load_config(None) if with_stand_ins else WITHOUT_STAND_INS
    fw = new_framework(config, nodes=[node("n1")], pods=[pod("plain")])
    fw.schedule(until=fw.clock.now() + 1)
    assert fw.cluster.pods["default/plain"]["spec"]["nodeName"] == "n1"
