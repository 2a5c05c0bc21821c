"""The volume plugins on the real API server, next to the kube-scheduler v1.37.2 binary in the
same cluster with the same configuration.

kubesched reads PersistentVolumes and PersistentVolumeClaims from its informers (src/kubesched/kube/
cluster.py ``STORAGE_KINDS``). VolumeBinding is still a stand-in that rejects every pod with a claim
at PreFilter (issue 15), so this profile disables it, as a user may: then VolumeZone
(framework/plugins/volumezone/volume_zone.go) and VolumeRestrictions
(framework/plugins/volumerestrictions/volume_restrictions.go) decide. Hand-traced:

- claim ``in-a`` is bound to a PV labelled zone-a: its pod goes to node ``a`` (zone-a), not ``b``;
- claim ``in-c`` is bound to a PV in zone-c, where no node is: ``0/2 nodes are available:
  2 node(s) had no available volume zone.``;
- claim ``rwop`` (ReadWriteOncePod) is used by a pod already on ``a``; a second pod using it is
  rejected at PreFilter on every node, and preemption finds no victim (the holder has the same
  priority): ``0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with
  ReadWriteOncePod access mode already in-use by another pod. preemption: ...``.

Both schedulers must write the same node, or the same FailedScheduling message.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_kube_support import Api, InProcessScheduler, eventually, free_port, healthy, outcome, unique

from kubesched.kube.controlplane import ControlPlane, require_binaries, start_kube_scheduler

pytestmark = pytest.mark.controlplane

ZONE = "topology.kubernetes.io/zone"


def _config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": name,
                      "plugins": {"multiPoint": {"disabled": [{"name": "VolumeBinding"}]}}}],
    }


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    with ControlPlane(require_binaries("v1.37")) as plane:
        yield plane


def _pv(api: Api, name: str, zone: str, mode: str = "ReadWriteOnce") -> None:
    body = {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {ZONE: zone}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": [mode], "storageClassName": "",
                     "hostPath": {"path": f"/tmp/{name}"}, "persistentVolumeReclaimPolicy": "Retain"}}
    api.ok(api.c.post("/api/v1/persistentvolumes", json=body))


def _pvc(api: Api, ns: str, name: str, pv: str, mode: str = "ReadWriteOnce") -> None:
    body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": [mode], "storageClassName": "", "volumeName": pv,
                     "resources": {"requests": {"storage": "1Gi"}}}}
    api.ok(api.c.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=body))


def _claiming(claim: str) -> dict[str, Any]:
    return {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}


def _scenario(api: Api, scheduler: str) -> dict[str, str]:
    ns = api.namespace()
    tag = ns.rsplit("-", 1)[-1]
    _pv(api, f"pv-a-{tag}", "zone-a")
    _pv(api, f"pv-c-{tag}", "zone-c")
    _pv(api, f"pv-rwop-{tag}", "zone-a", "ReadWriteOncePod")
    _pvc(api, ns, "in-a", f"pv-a-{tag}")
    _pvc(api, ns, "in-c", f"pv-c-{tag}")
    _pvc(api, ns, "rwop", f"pv-rwop-{tag}", "ReadWriteOncePod")
    # The claim's first user, already running on node a.
    api.pod(ns, "holder", scheduler=scheduler, node_name="a", extra_spec=_claiming("rwop"))
    time.sleep(1.0)  # the informers have the claims and the holder
    out: dict[str, str] = {}
    for pod, claim in (("zone-a", "in-a"), ("zone-c", "in-c"), ("rwop-second", "rwop")):
        api.pod(ns, pod, scheduler=scheduler, extra_spec=_claiming(claim))
        out[pod] = outcome(api, ns, pod)
    return out


def test_volume_zone_and_read_write_once_pod_as_kube_scheduler(cp: ControlPlane, tmp_path: Path) -> None:
    with cp.admin_client(timeout=30.0) as client:
        api = Api(client)
        api.delete_all_nodes()
        api.node("a", labels={ZONE: "zone-a"})
        api.node("b", labels={ZONE: "zone-b"})
        time.sleep(1.0)

        ks_name = unique("ks")
        cfg = tmp_path / "ks.yaml"
        cfg.write_text(yaml.safe_dump(_config(ks_name)))
        port = free_port()
        proc = start_kube_scheduler(cfg, cp.kubeconfig_path, binary=cp.binaries.kube_scheduler, secure_port=port,
                                    log_path=tmp_path / "ks.log")
        try:
            eventually(lambda: healthy(port), "kube-scheduler serving", timeout=60)
            theirs = _scenario(api, ks_name)
        finally:
            proc.terminate()
            proc.wait(30)

        ours_name = unique("kubesched")
        sched = InProcessScheduler(_config(ours_name), cp.kubeconfig_path).start()
        try:
            ours = _scenario(api, ours_name)
        finally:
            sched.stop()

    assert theirs == {
        "zone-a": "node a",
        "zone-c": "0/2 nodes are available: 2 node(s) had no available volume zone. "
                  "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        "rwop-second": "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with "
                       "ReadWriteOncePod access mode already in-use by another pod. preemption: 0/2 nodes are "
                       "available: 2 No preemption victims found for incoming pod.",
    }, theirs
    assert ours == theirs
