"""VolumeRestrictions: disk conflicts, ReadWriteOncePod claims, PreFilterExtensions and hints.

Ported from pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go
(v1.37.2): TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
TestISCSIDiskConflicts, TestAccessModeConflicts, Test_isSchedulableAfterAssignedPodDeleted
(v1.35.4/v1.36.3: Test_isSchedulableAfterPodDeleted, same rows) and
Test_isSchedulableAfterPersistentVolumeClaimChange. Not ported:
TestVolumeRestrictions_DeferredResizeSkipped (v1.37, alpha gate off). The release difference is
the deleted-pod event: ``Pod/Delete`` in v1.35 and v1.36, ``AssignedPod/Delete`` in v1.37.
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_builders import make_node, make_snapshot, node_info
from storage_builders import handle, pod, pvc

from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.volumerestrictions import VolumeRestrictions
from kubesched.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    is_schedulable_after_assigned_pod_deleted,
    is_schedulable_after_persistent_volume_claim_added,
)

Q, QS = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
SKIP = ("Skip", "")
DISK = ("Unschedulable", ERR_REASON_DISK_CONFLICT)
RWOP = ("Unschedulable", ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


def status_of(status: Status | None) -> tuple[str, str] | None:
    return None if status is None else (status.code.upstream_name, status.message())


def with_volume(volume: dict[str, Any]) -> dict[str, Any]:
    """``st.MakePod().Volume(v)`` (no namespace, as upstream's)."""
    return pod(namespace="", volumes=[{"name": "", **volume}])


EMPTY = pod(namespace="")
GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                   "fsType": "ext4", "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}}


def disk_cases(one: dict[str, Any], two: dict[str, Any]) -> list[Any]:
    """The four rows every disk test shares (TestGCE/AWS/RBD/ISCSIDiskConflicts)."""
    return [
        pytest.param(EMPTY, [], SKIP, None, id="nothing"),
        pytest.param(EMPTY, [with_volume(one)], SKIP, None, id="one state"),
        pytest.param(with_volume(one), [with_volume(one)], None, DISK, id="same state"),
        pytest.param(with_volume(two), [with_volume(one)], None, None, id="different state"),
    ]


DISK_CASES = [
    *(pytest.param(*p.values, id=f"gce {p.id}") for p in disk_cases(GCE, GCE2)),
    pytest.param(with_volume({"name": "volume with no restriction"}), [], SKIP, None,
                 id="gce pod with a volume that doesn't have restrictions"),
    *(pytest.param(*p.values, id=f"aws {p.id}") for p in disk_cases(AWS, AWS2)),
    *(pytest.param(*p.values, id=f"rbd {p.id}") for p in disk_cases(RBD, RBD2)),
    *(pytest.param(*p.values, id=f"iscsi {p.id}") for p in disk_cases(ISCSI, ISCSI2)),
]


def run(pl: VolumeRestrictions, pod_obj: dict[str, Any], ni: NodeInfo,
        want_pre: tuple[str, str] | None, want_filter: tuple[str, str] | None) -> None:
    """Upstream's loop: PreFilter, and Filter only when PreFilter succeeded."""
    pi = PodInfo(pod_obj)
    state = CycleState()
    _, pre = pl.pre_filter(state, pi, [])
    assert status_of(pre) == want_pre
    if pre is None:
        assert status_of(pl.filter(state, pi, ni)) == want_filter


@pytest.mark.parametrize(("pod_obj", "on_node", "want_pre", "want_filter"), DISK_CASES)
def test_disk_conflicts(pod_obj: dict[str, Any], on_node: list[dict[str, Any]],
                        want_pre: tuple[str, str] | None, want_filter: tuple[str, str] | None) -> None:
    # framework.NewNodeInfo(pods...): a NodeInfo without a node object.
    ni = NodeInfo(None, [PodInfo(p) for p in on_node])
    run(VolumeRestrictions(None, handle()), pod_obj, ni, want_pre, want_filter)


@pytest.mark.parametrize(("a", "b", "conflict"), [
    ({"pdName": "x", "readOnly": True}, {"pdName": "x", "readOnly": True}, False),
    ({"pdName": "x", "readOnly": True}, {"pdName": "x"}, True),
])
def test_read_only_gce_disks_may_be_shared(a: dict[str, Any], b: dict[str, Any], conflict: bool) -> None:
    ni = NodeInfo(None, [PodInfo(with_volume({"gcePersistentDisk": b}))])
    want = DISK if conflict else None
    run(VolumeRestrictions(None, handle()), with_volume({"gcePersistentDisk": a}), ni, None, want)


# -- ReadWriteOncePod ----------------------------------------------------------------------------
POD_WITH_ONE_PVC = pod("pod-with-one-pvc", claims=["claim-with-rwop-1"], node="node-1")
POD_WITH_TWO_PVCS = pod("pod-with-two-pvcs", claims=["claim-with-rwop-1", "claim-with-rwop-2"], node="node-1")
POD_WITH_ONE_CONFLICT = pod("pod-with-one-conflict", claims=["claim-with-rwop-1"], node="node-1")
POD_WITH_TWO_CONFLICTS = pod("pod-with-two-conflicts", claims=["claim-with-rwop-1", "claim-with-rwop-2"],
                             node="node-1")
POD_WITH_RWX = pod("pod-with-rwx", claims=["claim-with-rwx"], node="node-1")
NODE = make_node("node-1")
RWOP_1 = pvc("claim-with-rwop-1", access_modes=["ReadWriteOncePod"])
RWOP_2 = pvc("claim-with-rwop-2", access_modes=["ReadWriteOncePod"])
RWX = pvc("claim-with-rwx", access_modes=["ReadWriteMany"])

ACCESS_MODE_CASES = [
    pytest.param(EMPTY, [], [], [], [], SKIP, None, id="nothing"),
    pytest.param(POD_WITH_ONE_PVC, [], [], [], [],
                 ("UnschedulableAndUnresolvable", 'persistentvolumeclaim "claim-with-rwop-1" not found'), None,
                 id="failed to get PVC"),
    pytest.param(POD_WITH_ONE_PVC, [POD_WITH_RWX], [POD_WITH_RWX], [NODE], [RWOP_1, RWX], SKIP, None,
                 id="no access mode conflict"),
    pytest.param(POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX], [POD_WITH_ONE_PVC, POD_WITH_RWX], [NODE],
                 [RWOP_1, RWX], None, RWOP, id="access mode conflict, unschedulable"),
    pytest.param(POD_WITH_TWO_CONFLICTS, [POD_WITH_TWO_PVCS, POD_WITH_RWX], [POD_WITH_TWO_PVCS, POD_WITH_RWX],
                 [NODE], [RWOP_1, RWOP_2, RWX], None, RWOP, id="two conflicts, unschedulable"),
]


@pytest.mark.parametrize(("pod_obj", "on_node", "existing_pods", "existing_nodes", "existing_pvcs", "want_pre",
                          "want_filter"), ACCESS_MODE_CASES)
def test_access_mode_conflicts(pod_obj: dict[str, Any], on_node: list[dict[str, Any]],
                               existing_pods: list[dict[str, Any]], existing_nodes: list[dict[str, Any]],
                               existing_pvcs: list[dict[str, Any]], want_pre: tuple[str, str] | None,
                               want_filter: tuple[str, str] | None) -> None:
    pl = VolumeRestrictions(None, handle(existing_pvcs, make_snapshot(existing_nodes, existing_pods)))
    ni = NodeInfo(None, [PodInfo(p) for p in on_node])
    run(pl, pod_obj, ni, want_pre, want_filter)


def test_pre_filter_extensions_follow_added_and_removed_pods() -> None:
    """AddPod/RemovePod (not in upstream's tables): preemption removing the pod that holds the
    claim lifts the conflict; a nominated pod using it brings it back."""
    pl = VolumeRestrictions(None, handle([RWOP_1], make_snapshot([NODE], [POD_WITH_ONE_PVC])))
    pi = PodInfo(POD_WITH_ONE_CONFLICT)
    state = CycleState()
    _, pre = pl.pre_filter(state, pi, [])
    assert pre is None
    holder = PodInfo(POD_WITH_ONE_PVC)
    ni = node_info(NODE, [POD_WITH_ONE_PVC])
    ext = pl.pre_filter_extensions()
    copy = state.clone()
    assert ext.remove_pod(copy, pi, holder, ni) is None
    assert pl.filter(copy, pi, node_info(NODE)) is None
    assert ext.add_pod(copy, pi, holder, ni) is None
    assert status_of(pl.filter(copy, pi, node_info(NODE))) == RWOP
    assert status_of(pl.filter(state, pi, node_info(NODE))) == RWOP  # the original state is untouched
    missing = ext.add_pod(CycleState(), pi, holder, ni)
    assert missing is not None and missing.code == Code.ERROR
    assert missing.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'


def test_filter_without_pre_filter_state_is_an_error() -> None:
    status = VolumeRestrictions(None, handle()).filter(CycleState(), PodInfo(EMPTY), node_info(NODE))
    assert status is not None and status.code == Code.ERROR


# -- queueing hints ------------------------------------------------------------------------------
DELETED_POD_HINTS = [
    pytest.param(with_volume(GCE), with_volume(GCE), Q, id="queue-new-object-gcedisk-conflict"),
    pytest.param(with_volume(GCE), with_volume(GCE2), QS, id="skip-new-object-gcedisk-no-conflict"),
    pytest.param(with_volume(AWS), with_volume(AWS), Q, id="queue-new-object-awsdisk-conflict"),
    pytest.param(with_volume(AWS), with_volume(AWS2), QS, id="skip-new-object-awsdisk-no-conflict"),
    pytest.param(with_volume(RBD), with_volume(RBD), Q, id="queue-new-object-rbddisk-conflict"),
    pytest.param(with_volume(RBD), with_volume(RBD2), QS, id="skip-new-object-rbddisk-no-conflict"),
    pytest.param(with_volume(ISCSI), with_volume(ISCSI), Q, id="queue-new-object-iscsidisk-conflict"),
    pytest.param(with_volume(ISCSI), with_volume(ISCSI2), QS, id="skip-new-object-iscsidisk-no-conflict"),
    pytest.param(pod("pod1", namespace="", claims=["claim-rwop"]), pod("pod2", namespace="", claims=["claim-rwop"]),
                 Q, id="queue-has-same-claim"),
    pytest.param(pod("pod1", namespace="", claims=["claim-1-rwop"]),
                 pod("pod2", namespace="", claims=["claim-2-rwop"]), QS, id="skip-no-same-claim"),
    # Not in upstream's table: the namespace check comes first.
    pytest.param(pod("pod1", "a", claims=["c"]), pod("pod2", "b", claims=["c"]), QS, id="other-namespace"),
]


@pytest.mark.parametrize(("pod_obj", "deleted", "want"), DELETED_POD_HINTS)
def test_is_schedulable_after_assigned_pod_deleted(pod_obj: dict[str, Any], deleted: dict[str, Any],
                                                   want: QueueingHint) -> None:
    assert is_schedulable_after_assigned_pod_deleted(pod_obj, deleted, None) == want


PVC_POD_ONE = pod("pod-with-one-pvc", claims=["claim-with-rwx-1"], node="node-1")
PVC_POD_TWO = pod("pod-with-two-pvcs", claims=["claim-with-rwx-1", "claim-with-rwx-2"], node="node-1")
PVC_POD_OTHER_NS = pod("pod-with-one-pvc", "kube-system", claims=["claim-with-rwx-1"], node="claim-with-rwx-2")
PVC1 = pvc("claim-with-rwx-1", access_modes=["ReadWriteMany"])
PVC2 = pvc("claim-with-rwx-2", access_modes=["ReadWriteMany"])
PVC_HINTS = [
    pytest.param(PVC_POD_TWO, PVC1, Q, id="queue-new-object-pvc-belong-pod"),
    pytest.param(PVC_POD_ONE, PVC2, QS, id="skip-new-object-unused"),
    pytest.param(PVC_POD_ONE, PVC2, QS, id="skip-nil-old-object"),
    pytest.param(PVC_POD_ONE, PVC2, QS, id="skip-new-object-not-belong-pod"),
    pytest.param(PVC_POD_OTHER_NS, PVC1, QS, id="skip-new-object-namespace-not-equal-pod"),
]


@pytest.mark.parametrize(("pod_obj", "new", "want"), PVC_HINTS)
def test_is_schedulable_after_persistent_volume_claim_change(pod_obj: dict[str, Any], new: dict[str, Any],
                                                             want: QueueingHint) -> None:
    assert is_schedulable_after_persistent_volume_claim_added(pod_obj, None, new) == want


@pytest.mark.parametrize(("release", "pods"), [
    (V1_35, EventResource.POD), (V1_36, EventResource.POD), (V1_37, EventResource.ASSIGNED_POD),
])
def test_events_to_register(release: Release, pods: EventResource) -> None:
    """volume_restrictions.go EventsToRegister: Pod/Delete until v1.36, AssignedPod/Delete in v1.37
    (SplitPodEvents); Node/Add only (queueing hints on in every supported release)."""
    events = VolumeRestrictions(None, handle(release=release)).events_to_register()
    assert [(e.event.resource, e.event.action, e.hint is not None) for e in events] == [
        (pods, ActionType.DELETE, True),
        (EventResource.NODE, ActionType.ADD, False),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, True),
    ]
