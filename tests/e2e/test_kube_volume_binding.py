"""Pods with claims on the real API server with kube-controller-manager's PV controller, scheduled by
kube-scheduler and by kubesched in turn (v1.35.4 and v1.37.2, each with its own control plane and
kubesched at that ``--emulated-version``), each with the default profile (all four volume
plugins): the same node, or the same FailedScheduling message. Upstream:
framework/plugins/volumebinding/{volume_binding,binder}.go, volumezone/volume_zone.go,
volumerestrictions/volume_restrictions.go, nodevolumelimits/csi.go. Hand-traced:

- ``static``: a WaitForFirstConsumer claim of a local class whose one PV lives on node ``b``: the pod
  goes to ``b``; the scheduler writes the PV's claimRef at PreBind and the PV controller completes
  the binding (claim ``Bound`` to that PV).
- ``provisioned``: a WaitForFirstConsumer claim of a class whose ``allowedTopologies`` admit only
  zone-b: ``volume.kubernetes.io/selected-node: b``; the test plays the external provisioner
  (creates the PV for the selected node), the PV controller binds it, the pod is bound to ``b``.
- ``zone``: a claim bound to a PV in zone-c, where no node is: ``2 node(s) had no available volume
  zone``.
- ``rwop``: a ReadWriteOncePod claim already used by a pod on ``a``.
- ``limit``: every node's CSINode allows one volume of the driver and each already has one
  attached: ``2 node(s) exceed max volume count``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_kube_support import Api, InProcessScheduler, eventually, free_port, healthy, outcome, unique

from kubesched.config.releases import NO_DRA_DEALLOCATE_REASON, V1_35, V1_37, Release
from kubesched.kube.controlplane import ControlPlane, require_binaries, start_kube_scheduler

pytestmark = pytest.mark.controlplane

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
DRIVER = "ebs.csi.aws.com"
NOT_HELPFUL = "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
NO_VICTIMS = "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."


def _config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": name}],
    }


@pytest.fixture(scope="module", params=[V1_35, V1_37], ids=str)
def cp(request: pytest.FixtureRequest) -> Iterator[tuple[Release, ControlPlane]]:
    release: Release = request.param
    with ControlPlane(require_binaries(f"v{release}")) as plane:
        plane.start_controller_manager()
        yield release, plane


def _class(api: Api, name: str, provisioner: str, topology_zone: str | None = None) -> None:
    body: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
        "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer",
    }
    if topology_zone:
        body["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": [topology_zone]}]}]
    api.ok(api.c.post("/apis/storage.k8s.io/v1/storageclasses", json=body))


def _pv(api: Api, name: str, *, cls: str = "", node: str | None = None, zone: str | None = None,
        mode: str = "ReadWriteOnce", csi: bool = False, claim: tuple[str, str] | None = None) -> None:
    spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": [mode], "storageClassName": cls,
                            "persistentVolumeReclaimPolicy": "Retain"}
    if csi:
        spec["csi"] = {"driver": DRIVER, "volumeHandle": name}
    elif node:
        spec["local"] = {"path": f"/mnt/{name}"}
    else:
        spec["hostPath"] = {"path": f"/tmp/{name}"}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}
    if claim:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    labels = {ZONE: zone} if zone else {}
    api.ok(api.c.post("/api/v1/persistentvolumes", json={
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels}, "spec": spec}))


def _pvc(api: Api, ns: str, name: str, *, cls: str = "", pv: str | None = None, mode: str = "ReadWriteOnce") -> None:
    spec: dict[str, Any] = {"accessModes": [mode], "storageClassName": cls,
                            "resources": {"requests": {"storage": "1Gi"}}}
    if pv:
        spec["volumeName"] = pv
    api.ok(api.c.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims",
                      json={"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                            "spec": spec}))


def _claim(api: Api, ns: str, name: str) -> dict[str, Any]:
    return dict(api.ok(api.c.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")))


def _bound(api: Api, ns: str, name: str) -> bool:
    pvc = _claim(api, ns, name)
    return pvc.get("status", {}).get("phase") == "Bound"


def _claiming(claim: str) -> dict[str, Any]:
    return {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}


def _provision_when_selected(api: Api, ns: str, claim: str, pv: str, zone: str, stop: threading.Event) -> None:
    """The external provisioner's part: once the scheduler selects a node for the claim, create a
    PV for it there, pre-bound to the claim (the PV controller then binds both)."""
    while not stop.is_set():
        try:
            pvc = _claim(api, ns, claim)
        except (httpx.HTTPError, AssertionError):
            time.sleep(0.2)
            continue
        node = (pvc.get("metadata", {}).get("annotations") or {}).get("volume.kubernetes.io/selected-node")
        if node:
            _pv(api, pv, cls=pvc["spec"]["storageClassName"], node=node, zone=zone, claim=(ns, claim))
            return
        time.sleep(0.2)


def _csi_node(api: Api, node: str) -> None:
    body = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": f"i-{node}", "allocatable": {"count": 1}}]}}
    api.ok(api.c.post("/apis/storage.k8s.io/v1/csinodes", json=body))


def _scenario(api: Api, scheduler: str) -> tuple[dict[str, str], dict[str, str]]:
    ns = api.namespace()
    tag = ns.rsplit("-", 1)[-1]
    local, zonal = f"local-{tag}", f"zonal-{tag}"
    _class(api, local, "kubernetes.io/no-provisioner")
    _class(api, zonal, "example.com/fake-provisioner", topology_zone="zone-b")
    # static: the only local PV of the class is on node b.
    _pv(api, f"local-b-{tag}", cls=local, node="b")
    _pvc(api, ns, "data-static", cls=local)
    # provisioned: zone-b only.
    _pvc(api, ns, "data-provisioned", cls=zonal)
    # zone: bound to a PV in zone-c.
    _pv(api, f"pv-c-{tag}", zone="zone-c")
    _pvc(api, ns, "in-c", pv=f"pv-c-{tag}")
    # rwop: held by a pod on a.
    _pv(api, f"pv-rwop-{tag}", zone="zone-a", mode="ReadWriteOncePod")
    _pvc(api, ns, "rwop", pv=f"pv-rwop-{tag}", mode="ReadWriteOncePod")
    # limit: each node already has one volume of the driver, the limit is one.
    for node in ("a", "b"):
        _pv(api, f"csi-{node}-{tag}", csi=True)
        _pvc(api, ns, f"csi-{node}", pv=f"csi-{node}-{tag}")
    _pv(api, f"csi-new-{tag}", csi=True)
    _pvc(api, ns, "csi-new", pv=f"csi-new-{tag}")
    for claim in ("in-c", "rwop", "csi-a", "csi-b", "csi-new"):
        eventually(lambda claim=claim: _bound(api, ns, claim), f"the PV controller binds {claim}", timeout=60)
    api.pod(ns, "holder", scheduler=scheduler, node_name="a", extra_spec=_claiming("rwop"))
    for node in ("a", "b"):
        api.pod(ns, f"csi-holder-{node}", scheduler=scheduler, node_name=node, extra_spec=_claiming(f"csi-{node}"))
    time.sleep(1.0)  # the informers have the claims and the holders

    stop = threading.Event()
    provisioner = threading.Thread(
        target=_provision_when_selected, args=(api, ns, "data-provisioned", f"prov-{tag}", "zone-b", stop), daemon=True
    )
    provisioner.start()
    out: dict[str, str] = {}
    try:
        for pod, claim in (("static", "data-static"), ("provisioned", "data-provisioned"), ("zone", "in-c"),
                           ("rwop-second", "rwop"), ("limit", "csi-new")):
            api.pod(ns, pod, scheduler=scheduler, extra_spec=_claiming(claim))
            out[pod] = outcome(api, ns, pod, timeout=90)
    finally:
        stop.set()
    volumes: dict[str, str] = {}
    for claim in ("data-static", "data-provisioned"):
        eventually(lambda claim=claim: _bound(api, ns, claim), f"{claim} bound", timeout=60)
        pvc = _claim(api, ns, claim)
        volumes[claim] = pvc["spec"]["volumeName"].replace(tag, "TAG")
        selected = (pvc["metadata"].get("annotations") or {}).get("volume.kubernetes.io/selected-node")
        volumes[f"{claim} selected-node"] = str(selected)
    return out, volumes


def test_pods_with_claims_as_kube_scheduler(cp: tuple[Release, ControlPlane], tmp_path: Path) -> None:
    release, plane = cp
    with plane.admin_client(timeout=30.0) as client:
        api = Api(client)
        api.delete_all_nodes()
        api.node("a", labels={ZONE: "zone-a"})
        api.node("b", labels={ZONE: "zone-b"})
        for node in ("a", "b"):
            _csi_node(api, node)
        time.sleep(1.0)

        ks_name = unique("ks")
        cfg = tmp_path / "ks.yaml"
        cfg.write_text(yaml.safe_dump(_config(ks_name)))
        port = free_port()
        proc = start_kube_scheduler(cfg, plane.kubeconfig_path, binary=plane.binaries.kube_scheduler, secure_port=port,
                                    log_path=tmp_path / "ks.log")
        try:
            eventually(lambda: healthy(port), "kube-scheduler serving", timeout=60)
            theirs = _scenario(api, ks_name)
        finally:
            proc.terminate()
            proc.wait(30)

        ours_name = unique("kubesched")
        sched = InProcessScheduler(_config(ours_name), plane.kubeconfig_path, release=release).start()
        try:
            ours = _scenario(api, ours_name)
        finally:
            sched.stop()

    outcomes, volumes = theirs
    # v1.35's DynamicResources PostFilter adds its reason to every message (gone in v1.37).
    dra = "" if release.has(NO_DRA_DEALLOCATE_REASON) else "no new claims to deallocate, "
    assert outcomes == {
        "static": "node b",
        "provisioned": "node b",
        "zone": f"0/2 nodes are available: 2 node(s) had no available volume zone. {dra}{NOT_HELPFUL}",
        "rwop-second": "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with "
                       f"ReadWriteOncePod access mode already in-use by another pod. {dra}{NO_VICTIMS}",
        "limit": f"0/2 nodes are available: 2 node(s) exceed max volume count. {dra}{NO_VICTIMS}",
    }, outcomes
    assert volumes == {
        "data-static": "local-b-TAG",
        "data-static selected-node": "None",
        "data-provisioned": "prov-TAG",
        "data-provisioned selected-node": "b",
    }, volumes
    assert ours == theirs
