"""NodeVolumeLimits: CSI attach limits, migrated in-tree volumes, VolumeAttachments, the driver
check of v1.37 and the queueing hints.

Ported from pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go (v1.37.2): TestCSILimits
(run with and without VolumeLimitScaling: its rows have no CSIDriver objects, so both agree),
TestCSILimitsQHint, TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint,
TestCSILimitsAfterCSINodeUpdatedQHint, TestVolumeLimitScalingGate (v1.36's form: a CSIDriver
matters only with preventPodSchedulingIfMissing; gate on = release 1.37, off = 1.36). Not ported:
TestCSILimits_DeferredResizeSkipped (alpha gate off).

One deliberate difference: the "ephemeral volume missing" rows expect
``persistentvolumeclaims "abc-xyz" not found``, the text of the test's fake lister
(testing/framework/fake_listers.go); kube-scheduler's informer lister says
``persistentvolumeclaim "abc-xyz" not found`` (client-go listers/core/v1), as kubesched does.
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_builders import make_node
from storage_builders import handle, pod, pv, pvc

from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.nodevolumelimits import NodeVolumeLimits
from kubesched.plugins.nodevolumelimits.csi import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    is_schedulable_after_assigned_pod_deleted,
    is_schedulable_after_csi_node_updated,
    is_schedulable_after_pvc_added,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
EXCEEDED = ("Unschedulable", ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
Q, QS = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def status_of(status: Status | None) -> tuple[str, str] | None:
    return None if status is None else (status.code.upstream_name, status.message())


def claims_pod(*claims: str, **kw: Any) -> dict[str, Any]:
    """``st.MakePod().PVC(c)...`` (namespace "default": kubesched reads an absent namespace so)."""
    return pod(claims=claims, **kw)


def volumes_pod(*volumes: dict[str, Any], name: str = "", namespace: str = "default",
                uid: str = "") -> dict[str, Any]:
    p = pod(name, namespace, volumes=volumes)
    if uid:
        p["metadata"]["uid"] = uid
    return p


RUNNING = claims_pod("csi-ebs.csi.aws.com-3")
PENDING_VOLUME = claims_pod("csi-4")
UNBOUND_PVC_POD_2 = claims_pod("csi-4")
MISSING_PV = claims_pod("csi-6")
NO_SC_PVC = claims_pod("csi-5")
GCE_TWO = claims_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE = claims_pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO = claims_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
CSI_EBS_ONE = claims_pod("csi-ebs.csi.aws.com-0")
CSI_EBS_TWO = claims_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
IN_TREE_NON_MIGRATABLE = claims_pod("csi-kubernetes.io/hostpath-0")
EPHEMERAL = volumes_pod({"name": "xyz", "ephemeral": {}}, name="abc", namespace="test", uid="12345")
EPHEMERAL_TWO = volumes_pod({"name": "x", "ephemeral": {}}, {"name": "y", "ephemeral": {}}, name="abc",
                            namespace="test", uid="12345II")
AWS_INLINE = {"name": "", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}
IN_TREE_INLINE = volumes_pod(AWS_INLINE)
IN_TREE_INLINE_SAME_ID = volumes_pod({"name": "", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}})
CONFIG_MAP, SECRET = {"name": "", "configMap": {}}, {"name": "", "secret": {}}
ONLY_CONFIG_MAP_AND_SECRET = volumes_pod(CONFIG_MAP, SECRET)
PVC_WITH_CONFIG_MAP_AND_SECRET = volumes_pod(CONFIG_MAP, SECRET, {
    "name": "", "persistentVolumeClaim": {"claimName": "csi-ebs.csi.aws.com-0"}})
EPHEMERAL_WITH_CONFIG_MAP_AND_SECRET = volumes_pod(CONFIG_MAP, SECRET, {"name": "xyz", "ephemeral": {}},
                                                   name="abc", namespace="test")
INLINE_MIGRATABLE_WITH_CONFIG_MAP_AND_SECRET = volumes_pod(CONFIG_MAP, SECRET, AWS_INLINE)


def owned_claim(name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    c = pvc(name, "test", storage_class=SC_NAME)
    if owner is not None:
        c["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": owner["metadata"]["name"],
                                             "uid": owner["metadata"]["uid"], "controller": True}]
    return c


EPHEMERAL_CLAIM = owned_claim("abc-xyz", EPHEMERAL)
CONFLICTING_CLAIM = owned_claim("abc-xyz", None)
EPHEMERAL_CLAIM_X = owned_claim("abc-x", EPHEMERAL_TWO)
EPHEMERAL_CLAIM_Y = owned_claim("abc-y", EPHEMERAL_TWO)
MISSING_EPHEMERAL = ("UnschedulableAndUnresolvable",
                     'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')


# -- upstream's fixtures -----------------------------------------------------------------------------


def fake_pvs(drivers: list[str]) -> list[dict[str, Any]]:
    """``getFakeCSIPVLister("csi", drivers...)``."""
    out = []
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": name}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": name}}
            out.append(pv(name, **source))
    return out


def fake_pvcs(drivers: list[str]) -> list[dict[str, Any]]:
    """``getFakeCSIPVCLister("csi", scName, drivers...)``."""
    out = [pvc(f"csi-{driver}-{j}", volume_name=f"csi-{driver}-{j}") for driver in drivers for j in range(4)]
    out.append(pvc("csi-4", storage_class=SC_NAME))
    out.append(pvc("csi-5"))
    out.append(pvc("csi-6", storage_class=SC_NAME, volume_name="missing-in-action"))
    return out


def fake_storage_class(provisioner: str) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": SC_NAME},
            "provisioner": provisioner}


def fake_volume_attachments(count: int, drivers: list[str]) -> list[dict[str, Any]]:
    """``buildFakeClientWithVALister(count, drivers...)``."""
    return [
        {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": f"va-{driver}-{j}"},
         "spec": {"nodeName": NODE_NAME, "attacher": driver, "source": {"persistentVolumeName": f"csi-{driver}-{j}"}}}
        for driver in drivers for j in range(count)
    ]


def csi_node(limit_source: str, limit: int, drivers: list[str]) -> dict[str, Any] | None:
    """The CSINode of ``getNodeWithPodAndVolumeLimits``, with ``enableMigrationOnNode`` for AWS EBS."""
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    entries = []
    if limit_source != "no-csi-driver":
        for driver in drivers:
            entry: dict[str, Any] = {"name": driver, "nodeID": NODE_NAME}
            if limit_source == "csinode":
                entry["allocatable"] = {"count": limit}
            entries.append(entry)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": NODE_NAME, "annotations": {
                "storage.alpha.kubernetes.io/migrated-plugins": AWS_IN_TREE}},
            "spec": {"drivers": entries}}


def node_with_pods(pods: list[dict[str, Any]]) -> NodeInfo:
    return NodeInfo(make_node(NODE_NAME), [PodInfo(p) for p in pods])


def csi_driver(name: str, prevent: bool) -> dict[str, Any]:
    spec = {"preventPodSchedulingIfMissing": True} if prevent else {}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}


# -- TestCSILimits ---------------------------------------------------------------------------------------
P = pytest.param
CASES = [
    P(CSI_EBS_ONE, [], 2, [EBS], 2, "csinode", [], EXCEEDED,
      id="should count VolumeAttachments towards volume limit when no pods exist"),
    P(CSI_EBS_ONE, [], 2, [EBS], 1, "csinode", [], None,
      id="should schedule pod when VolumeAttachments count does not exceed limit"),
    P(CSI_EBS_ONE, [RUNNING, CSI_EBS_TWO], 4, [EBS], 0, "csinode", [], None,
      id="fits when node volume limit >= new pods CSI volume"),
    P(CSI_EBS_ONE, [RUNNING, CSI_EBS_TWO], 2, [EBS], 0, "csinode", [], EXCEEDED,
      id="doesn't when node volume limit <= pods CSI volume"),
    P(CSI_EBS_ONE, [RUNNING, CSI_EBS_TWO], 2, [EBS], 0, "csinode-with-no-limit", [], None,
      id="should when driver does not support volume limits"),
    P(CSI_EBS_ONE, [PENDING_VOLUME, CSI_EBS_TWO], 2, [EBS], 0, "csinode", [], EXCEEDED,
      id="count pending PVCs towards volume limit <= pods CSI volume"),
    P(CSI_EBS_ONE, [PENDING_VOLUME, UNBOUND_PVC_POD_2, CSI_EBS_TWO], 4, [EBS], 0, "csinode", [], None,
      id="count multiple pending pvcs towards volume limit >= pods CSI volume"),
    P(CSI_EBS_ONE, [MISSING_PV, CSI_EBS_TWO], 2, [EBS], 0, "csinode", [], EXCEEDED,
      id="should count PVCs with invalid PV name but valid SC"),
    P(CSI_EBS_ONE, [RUNNING, NO_SC_PVC], 2, [EBS], 0, "csinode", [], None,
      id="don't count pvcs with missing SC towards volume limit"),
    P(CSI_EBS_ONE, [GCE_TWO, CSI_EBS_TWO], 2, [EBS, GCE], 0, "csinode", [], EXCEEDED,
      id="count pvcs with the same type towards volume limit"),
    P(GCE_TWO, [CSI_EBS_TWO, RUNNING], 2, [EBS, GCE], 0, "csinode", [], None,
      id="don't count pvcs with different type towards volume limit"),
    P(IN_TREE_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="should count in-tree volumes if migration is enabled"),
    P(IN_TREE_INLINE, [IN_TREE_TWO], 0, [AWS_IN_TREE, EBS], 0, "", [], None, id="nil csi node"),
    P(PENDING_VOLUME, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="should count unbound in-tree volumes if migration is enabled"),
    P(IN_TREE_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode-with-no-limit", [], None,
      id="should not limit pod if volume used does not report limits"),
    P(IN_TREE_NON_MIGRATABLE, [CSI_EBS_TWO], 2, [HOSTPATH_IN_TREE, EBS], 0, "csinode", [], None,
      id="should not count non-migratable in-tree volumes"),
    P(IN_TREE_INLINE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="should count in-tree inline volumes if migration is enabled"),
    P(IN_TREE_ONE, [CSI_EBS_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)"),
    P(IN_TREE_INLINE, [CSI_EBS_TWO, IN_TREE_ONE], 3, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)"),
    P(IN_TREE_INLINE_SAME_ID, [CSI_EBS_TWO, IN_TREE_ONE], 3, [AWS_IN_TREE, EBS], 0, "csinode", [], None,
      id="should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree "
         "volumes)"),
    P(CSI_EBS_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)"),
    P(EPHEMERAL, [], 0, [EBS], 0, "csinode-with-no-limit", [], MISSING_EPHEMERAL, id="ephemeral volume missing"),
    P(EPHEMERAL, [], 0, [EBS], 0, "csinode-with-no-limit", [CONFLICTING_CLAIM],
      ("Error", "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"),
      id="ephemeral volume not owned"),
    P(EPHEMERAL, [], 0, [EBS], 0, "csinode-with-no-limit", [EPHEMERAL_CLAIM], None, id="ephemeral volume unbound"),
    P(EPHEMERAL, [RUNNING, CSI_EBS_TWO], 2, [EBS], 0, "csinode", [EPHEMERAL_CLAIM], EXCEEDED,
      id="ephemeral doesn't when node volume limit <= pods CSI volume"),
    P(CSI_EBS_ONE, [RUNNING, EPHEMERAL_TWO], 2, [EBS], 0, "csinode", [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y],
      EXCEEDED, id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume"),
    # Upstream's "ephemeral disabled" row is the same as the next one since the gate went GA.
    P(CSI_EBS_ONE, [RUNNING, EPHEMERAL, CSI_EBS_TWO], 3, [EBS], 0, "csinode", [EPHEMERAL_CLAIM], EXCEEDED,
      id="persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume"),
    P(CSI_EBS_ONE, [RUNNING, EPHEMERAL, CSI_EBS_TWO], 5, [EBS], 0, "csinode", [EPHEMERAL_CLAIM], None,
      id="persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume"),
    P(ONLY_CONFIG_MAP_AND_SECRET, [], 2, [EBS], 0, "csinode", [], "skip",
      id="skip Filter when the pod only uses secrets and configmaps"),
    P(PVC_WITH_CONFIG_MAP_AND_SECRET, [], 2, [EBS], 0, "csinode", [], None,
      id="don't skip Filter when the pod has pvcs"),
    P(EPHEMERAL_WITH_CONFIG_MAP_AND_SECRET, [], 0, [EBS], 0, "csinode-with-no-limit", [], MISSING_EPHEMERAL,
      id="don't skip Filter when the pod has ephemeral volumes"),
    P(INLINE_MIGRATABLE_WITH_CONFIG_MAP_AND_SECRET, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], 0, "csinode", [], EXCEEDED,
      id="don't skip Filter when the pod has inline migratable volumes"),
]


@pytest.mark.parametrize("release", [V1_36, V1_37], ids=["VolumeLimitScaling-off", "VolumeLimitScaling-on"])
@pytest.mark.parametrize(("new_pod", "existing", "max_vols", "drivers", "va_count", "limit_source", "extra_claims",
                          "want"), CASES)
def test_csi_limits(release: Release, new_pod: dict[str, Any], existing: list[dict[str, Any]], max_vols: int,
                    drivers: list[str], va_count: int, limit_source: str, extra_claims: list[dict[str, Any]],
                    want: Any) -> None:
    node = csi_node(limit_source, max_vols, drivers)
    objects = [*fake_pvs(drivers), *fake_pvcs(drivers), *extra_claims, fake_storage_class(drivers[0]),
               *fake_volume_attachments(va_count, drivers), *([node] if node else [])]
    pl = NodeVolumeLimits(None, handle(objects, release=release))
    pi = PodInfo(new_pod)
    _, pre = pl.pre_filter(CycleState(), pi, [])
    if want == "skip":
        assert status_of(pre) == ("Skip", "")
        return
    assert pre is None
    assert status_of(pl.filter(CycleState(), pi, node_with_pods(existing))) == want


# -- TestVolumeLimitScalingGate ------------------------------------------------------------------------
NOT_INSTALLED = ("Unschedulable", f"{EBS} CSI driver is not installed on the node")


@pytest.mark.parametrize(("release", "limit_source", "limit", "driver", "want"), [
    P(V1_37, "no-csi-driver", 0, csi_driver(EBS, False), None,
      id="gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set"),
    P(V1_37, "no-csi-driver", 0, csi_driver(EBS, True), NOT_INSTALLED,
      id="gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true"),
    P(V1_36, "no-csi-driver", 0, csi_driver(EBS, True), None,
      id="gate disabled - skip driver presence check (regardless of CSIDriver presence)"),
    P(V1_37, "csinode", 2, csi_driver(EBS, True), None, id="gate enabled - driver installed within limit"),
    P(V1_37, "no-csi-driver", 0, None, None, id="gate enabled - allow scheduling when CSIDriver object missing"),
    # Not in upstream's table: no CSINode at all counts as the driver missing.
    P(V1_37, "", 0, csi_driver(EBS, True), NOT_INSTALLED, id="gate enabled - no CSINode"),
])
def test_volume_limit_scaling(release: Release, limit_source: str, limit: int, driver: dict[str, Any] | None,
                              want: tuple[str, str] | None) -> None:
    node = csi_node(limit_source, limit, [EBS])
    objects = [*fake_pvs([EBS]), *fake_pvcs([EBS]), fake_storage_class(EBS), *([node] if node else []),
               *([driver] if driver else [])]
    pl = NodeVolumeLimits(None, handle(objects, release=release))
    pi = PodInfo(claims_pod("csi-ebs.csi.aws.com-0"))
    _, pre = pl.pre_filter(CycleState(), pi, [])
    assert pre is None
    assert status_of(pl.filter(CycleState(), pi, node_with_pods([]))) == want


def test_portworx_migration_by_release() -> None:
    """isCSIMigrationOn for Portworx: v1.35 wants the CSINode's migrated-plugins annotation to name
    it (gate CSIMigrationPortworx), v1.36 does not."""
    portworx = volumes_pod({"name": "px", "portworxVolume": {"volumeID": "v1"}})
    node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": NODE_NAME},
            "spec": {"drivers": [{"name": "pxd.portworx.com", "allocatable": {"count": 0}}]}}
    for release, want in [(V1_35, None), (V1_36, EXCEEDED), (V1_37, EXCEEDED)]:
        pl = NodeVolumeLimits(None, handle([node], release=release))
        assert status_of(pl.filter(CycleState(), PodInfo(portworx), node_with_pods([]))) == want, release
    annotated = {**node, "metadata": {"name": NODE_NAME, "annotations": {
        "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/portworx-volume"}}}
    pl = NodeVolumeLimits(None, handle([annotated], release=V1_35))
    assert status_of(pl.filter(CycleState(), PodInfo(portworx), node_with_pods([]))) == EXCEEDED


# -- hints ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("deleted", "scheduled", "want"), [
    P(claims_pod("placeholder"), True, Q, id="return a Queue when a deleted pod has a PVC"),
    P(volumes_pod({"name": "", "awsElasticBlockStore": {}}), True, Q,
      id="return a Queue when a deleted pod has a inline migratable volume"),
    P(pod(), True, QS, id="return a QueueSkip when a deleted pod doesn't have any volume"),
    P(claims_pod("csi-ebs.csi.aws.com-0"), False, QS, id="return a QueueSkip when a deleted pod is not scheduled."),
])
def test_csi_limits_qhint(deleted: dict[str, Any], scheduled: bool, want: QueueingHint) -> None:
    deleted = {**deleted, "spec": {**deleted["spec"], "nodeName": NODE_NAME if scheduled else ""}}
    assert is_schedulable_after_assigned_pod_deleted(claims_pod("csi-ebs.csi.aws.com-2"), deleted, None) == want


def claim_volume(name: str) -> dict[str, Any]:
    return {"name": "", "persistentVolumeClaim": {"claimName": name}}


@pytest.mark.parametrize(("new_pod", "added", "want"), [
    P(pod(namespace="ns1"), pvc("", "ns2"), QS, id="a pod isn't in the same namespace as an added PVC"),
    P(volumes_pod(claim_volume("pvc1"), namespace="ns1"), pvc("pvc1", "ns1"), Q,
      id="a pod is in the same namespace as an added PVC"),
    P(volumes_pod({"name": "ephemeral", "ephemeral": {}}, name="pod1", namespace="ns1"), pvc("pod1-ephemeral", "ns1"),
      Q, id="a pod has an ephemeral volume related to an added PVC"),
    P(volumes_pod(claim_volume("pvc1"), namespace="ns1"), pvc("pvc2", "ns1"), QS,
      id="a pod doesn't have the same PVC as an added PVC"),
    P(pod(namespace="ns1"), pvc("pvc2", "ns1"), QS, id="a pod doesn't have any PVC attached"),
])
def test_csi_limits_added_pvc_qhint(new_pod: dict[str, Any], added: dict[str, Any], want: QueueingHint) -> None:
    assert is_schedulable_after_pvc_added(new_pod, None, added) == want


def va(attacher: str, *, pv_name: str | None = None, inline_driver: str | None = None) -> dict[str, Any]:
    source: dict[str, Any] = {"persistentVolumeName": pv_name} if pv_name else {
        "inlineVolumeSpec": {"csi": {"driver": inline_driver}}}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "volumeattachment1"},
            "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}}


AWS_TEST = {"name": "", "awsElasticBlockStore": {"volumeID": "test"}}


@pytest.mark.parametrize(("new_pod", "deleted", "want"), [
    P(volumes_pod(claim_volume("pvc1"), namespace="ns1"), va("test.storage.gke.io", pv_name="pv1"), Q,
      id="a pod has PVC when VolumeAttachment is deleting"),
    P(volumes_pod(AWS_TEST, namespace="ns1"), va(EBS, inline_driver=EBS), Q,
      id="a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting "
         "(match)"),
    P(volumes_pod({"name": "", "gcePersistentDisk": {"pdName": "test"}}, namespace="ns1"),
      va(EBS, inline_driver=EBS), QS,
      id="a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting "
         "(no match)"),
    P(volumes_pod(AWS_TEST, claim_volume("pvc1"), namespace="ns1"), va(EBS, inline_driver=EBS), Q,
      id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is "
         "deleting"),
    P(volumes_pod(AWS_TEST, claim_volume("pvc1"), namespace="ns1"), va("test.storage.gke.io", pv_name="pv1"), Q,
      id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is "
         "deleting"),
    P(pod(namespace="ns1"), va("test.storage.gke.io", pv_name="pv1"), QS,
      id="a pod has no PVC when VolumeAttachment is deleting"),
])
def test_csi_limits_deleted_volume_attachment_qhint(new_pod: dict[str, Any], deleted: dict[str, Any],
                                                    want: QueueingHint) -> None:
    pl = NodeVolumeLimits(None, handle([pvc("pvc1", "ns1", volume_name="pv1")]))
    assert pl.is_schedulable_after_volume_attachment_deleted(new_pod, deleted, None) == want


def csi_node_with(count: int) -> dict[str, Any]:
    return {"metadata": {"name": "test-node"}, "spec": {"drivers": [
        {"name": EBS, "nodeID": "test-node", "allocatable": {"count": count}}]}}


@pytest.mark.parametrize(("old", "new", "want"), [
    P(1, 2, Q, id="limit raised, queue"),
    P(2, 1, QS, id="limit decreased, skip queueing"),
    P(1, 1, QS, id="limit unchanged, skip queueing"),
])
def test_csi_limits_after_csi_node_updated_qhint(old: int, new: int, want: QueueingHint) -> None:
    p = volumes_pod(claim_volume("csi-ebs.csi.aws.com-0"), name="test-pod", namespace="ns1")
    assert is_schedulable_after_csi_node_updated(p, csi_node_with(old), csi_node_with(new)) == want


@pytest.mark.parametrize(("release", "pods"), [
    (V1_35, EventResource.POD), (V1_36, EventResource.POD), (V1_37, EventResource.ASSIGNED_POD),
])
def test_events_to_register(release: Release, pods: EventResource) -> None:
    """csi.go EventsToRegister; the deleted pod is Pod/Delete until v1.36, AssignedPod/Delete in v1.37."""
    events = NodeVolumeLimits(None, handle(release=release)).events_to_register()
    assert [(e.event.resource, e.event.action, e.hint is not None) for e in events] == [
        (EventResource.CSI_NODE, ActionType.ADD, False),
        (EventResource.CSI_NODE, ActionType.UPDATE, True),
        (pods, ActionType.DELETE, True),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, True),
        (EventResource.VOLUME_ATTACHMENT, ActionType.DELETE, True),
    ]
