"""VolumeZone: PreFilter, Filter and the queueing hints.

Ported from pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go (v1.37.2; v1.35.4 and
v1.36.3 have the same rows): TestSingleZone, TestMultiZone, TestWithBinding,
TestIsSchedulableAfterPersistentVolumeClaimAdded, TestIsSchedulableAfterStorageClassAdded,
TestIsSchedulableAfterPersistentVolumeChange. Not ported: TestVolumeZone_DeferredResizeSkipped
(v1.37, gate InPlacePodVerticalScalingSchedulerPreemption, alpha and off) and the benchmark.

One deliberate difference: upstream's "unbound volume no storage class" row expects
``storageclasses.storage.k8s.io "Class_0" not found``, the text of the test's fake lister
(testing/framework/fake_listers.go); kube-scheduler's informer lister (client-go
listers/storage/v1/storageclass.go, resource ``storageclass``) says
``storageclass.storage.k8s.io "Class_0" not found``, which is what kubesched reports.
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_builders import make_node, node_info
from storage_builders import handle, pod, pv, pvc, storage_class

from kubesched.config.releases import V1_35, V1_37
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.volumezone import VolumeZone
from kubesched.plugins.volumezone.volume_zone import (
    ERR_REASON_CONFLICT,
    is_schedulable_after_persistent_volume_change,
    is_schedulable_after_persistent_volume_claim_change,
    is_schedulable_after_storage_class_added,
)

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
Q, QS = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
U = "UnschedulableAndUnresolvable"
CONFLICT = (U, ERR_REASON_CONFLICT)
SKIP = ("Skip", "")


def with_volume(pod_name: str, claim: str) -> dict[str, Any]:
    """Upstream ``createPodWithVolume``."""
    return pod(pod_name, claims=[claim])


def status_of(status: Status | None) -> tuple[str, str] | None:
    return None if status is None else (status.code.upstream_name, status.message())


SINGLE_ZONE_OBJECTS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
    pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
]

SINGLE_ZONE = [
    ("pod without volume", pod("pod_1"), {BETA_ZONE: "us-west1-a"}, SKIP, None),
    ("node without labels", with_volume("pod_1", "PVC_1"), {}, None, None),
    ("beta zone label matched", with_volume("pod_1", "PVC_1"), {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
     None, None),
    ("beta region label matched", with_volume("pod_1", "PVC_2"), {BETA_REGION: "us-west1", "uselessLabel": "none"},
     None, None),
    ("beta region label doesn't match", with_volume("pod_1", "PVC_2"),
     {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT),
    ("beta zone label doesn't match", with_volume("pod_1", "PVC_1"),
     {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label matched", with_volume("pod_1", "PVC_Stable_1"), {ZONE: "us-west1-a", "uselessLabel": "none"},
     None, None),
    ("region label matched", with_volume("pod_1", "PVC_Stable_2"), {REGION: "us-west1", "uselessLabel": "none"},
     None, None),
    ("region label doesn't match", with_volume("pod_1", "PVC_Stable_2"),
     {REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label doesn't match", with_volume("pod_1", "PVC_Stable_1"),
     {ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT),
    ("pv with zone and region, node with only zone", with_volume("pod_1", "PVC_Stable_3"), {ZONE: "us-west1-a"},
     None, CONFLICT),
    ("pv with zone,node with beta zone", with_volume("pod_1", "PVC_Stable_1"), {BETA_ZONE: "us-west1-a"},
     None, CONFLICT),
    ("pv with beta label,node with ga label, matched", with_volume("pod_1", "PVC_1"), {ZONE: "us-west1-a"},
     None, None),
    ("pv with beta label,node with ga label, don't match", with_volume("pod_1", "PVC_1"), {ZONE: "us-west1-b"},
     None, CONFLICT),
]

MULTI_ZONE_OBJECTS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
]

MULTI_ZONE = [
    ("node without labels", with_volume("pod_1", "PVC_3"), {}, None, None),
    ("beta zone label matched", with_volume("pod_1", "PVC_3"), {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
     None, None),
    ("beta zone label doesn't match", with_volume("pod_1", "PVC_1"),
     {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label matched", with_volume("pod_1", "PVC_Stable_2"), {ZONE: "us-west1-a", "uselessLabel": "none"},
     None, None),
    ("zone label doesn't match", with_volume("pod_1", "PVC_Stable_1"), {ZONE: "us-west1-b", "uselessLabel": "none"},
     None, CONFLICT),
]

BINDING_OBJECTS = [
    storage_class("Class_Immediate"),  # volumeBindingMode unset (the API server would default it)
    storage_class("Class_Wait", "WaitForFirstConsumer"),
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]
NO_NAME = (U, "PersistentVolumeClaim had no pv name and storageClass name")
NO_CLASS = (U, 'storageclass.storage.k8s.io "Class_0" not found')
MODE_NOT_SET = (U, 'VolumeBindingMode not set for StorageClass "Class_Immediate"')
BINDING_NODE = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}

WITH_BINDING = [
    ("label zone failure domain matched", with_volume("pod_1", "PVC_1"), BINDING_NODE, None, None),
    ("unbound volume empty storage class", with_volume("pod_1", "PVC_EmptySC"), BINDING_NODE, NO_NAME, NO_NAME),
    ("unbound volume no storage class", with_volume("pod_1", "PVC_NoSC"), BINDING_NODE, NO_CLASS, NO_CLASS),
    ("unbound volume immediate binding mode", with_volume("pod_1", "PVC_ImmediateSC"), BINDING_NODE,
     MODE_NOT_SET, MODE_NOT_SET),
    ("unbound volume wait binding mode", with_volume("pod_1", "PVC_WaitSC"), BINDING_NODE, SKIP, None),
]


def run(objects: list[dict[str, Any]], pod_obj: dict[str, Any], node_labels: dict[str, str],
        want_pre: tuple[str, str] | None, want_filter: tuple[str, str] | None) -> None:
    """As upstream's loop: PreFilter, then Filter on the same state whatever PreFilter said."""
    pl = VolumeZone(None, handle(objects))
    pi = PodInfo(pod_obj)
    state = CycleState()
    _, pre = pl.pre_filter(state, pi, [])
    assert status_of(pre) == want_pre
    assert status_of(pl.filter(state, pi, node_info(make_node("host1", labels=node_labels)))) == want_filter


@pytest.mark.parametrize(("name", "pod_obj", "labels", "want_pre", "want_filter"), SINGLE_ZONE, ids=lambda x: x
                         if isinstance(x, str) else "")
def test_single_zone(name: str, pod_obj: dict[str, Any], labels: dict[str, str],
                     want_pre: tuple[str, str] | None, want_filter: tuple[str, str] | None) -> None:
    run(SINGLE_ZONE_OBJECTS, pod_obj, labels, want_pre, want_filter)


@pytest.mark.parametrize(("name", "pod_obj", "labels", "want_pre", "want_filter"), MULTI_ZONE, ids=lambda x: x
                         if isinstance(x, str) else "")
def test_multi_zone(name: str, pod_obj: dict[str, Any], labels: dict[str, str],
                    want_pre: tuple[str, str] | None, want_filter: tuple[str, str] | None) -> None:
    run(MULTI_ZONE_OBJECTS, pod_obj, labels, want_pre, want_filter)


@pytest.mark.parametrize(("name", "pod_obj", "labels", "want_pre", "want_filter"), WITH_BINDING, ids=lambda x: x
                         if isinstance(x, str) else "")
def test_with_binding(name: str, pod_obj: dict[str, Any], labels: dict[str, str],
                      want_pre: tuple[str, str] | None, want_filter: tuple[str, str] | None) -> None:
    run(BINDING_OBJECTS, pod_obj, labels, want_pre, want_filter)


def test_missing_objects_and_claim_names() -> None:
    """The other rejections of getPVbyPod (not in upstream's tables)."""
    objects = [pvc("PVC_4", volume_name="Vol_not_exist"), pvc("PVC_Immediate", storage_class="fast"),
               storage_class("fast", "Immediate")]
    for claim, want in [
        ("PVC_4", (U, 'persistentvolume "Vol_not_exist" not found')),
        ("missing", (U, 'persistentvolumeclaim "missing" not found')),
        ("", (U, "PersistentVolumeClaim had no name")),
        ("PVC_Immediate", (U, "PersistentVolume had no name")),
    ]:
        _, status = VolumeZone(None, handle(objects)).pre_filter(CycleState(), PodInfo(with_volume("p", claim)), [])
        assert status_of(status) == want, claim


def test_ephemeral_volumes_are_not_looked_at() -> None:
    p = pod("p", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}])
    _, status = VolumeZone(None, handle()).pre_filter(CycleState(), PodInfo(p), [])
    assert status_of(status) == SKIP


PVC_HINTS = [
    ("pvc-was-added-but-pod-refers-no-pvc", pod("pod_1"), None, pvc("PVC_1", volume_name="Vol_1"), QS),
    ("pvc-was-added-and-pod-was-bound-to-different-pvc", with_volume("pod_1", "PVC_2"), None,
     pvc("PVC_1", volume_name="Vol_1"), QS),
    ("pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", with_volume("pod_1", "PVC_1"), None,
     pvc("PVC_1", "ns1", volume_name="Vol_1"), QS),
    ("pvc-was-added-and-pod-was-bound-to-the-pvc", with_volume("pod_1", "PVC_1"), None,
     pvc("PVC_1", volume_name="Vol_1"), Q),
    ("pvc-was-updated-and-pod-was-bound-to-the-pvc", with_volume("pod_1", "PVC_1"), pvc("PVC_1"),
     pvc("PVC_1", volume_name="Vol_1"), Q),
    ("pvc-was-updated-but-pod-refers-no-pvc", pod("pod_1"), pvc("PVC_1"), pvc("PVC_1", volume_name="Vol_1"), QS),
]


@pytest.mark.parametrize(("name", "pod_obj", "old", "new", "want"), PVC_HINTS, ids=[c[0] for c in PVC_HINTS])
def test_is_schedulable_after_persistent_volume_claim_change(
    name: str, pod_obj: dict[str, Any], old: Any, new: Any, want: QueueingHint
) -> None:
    assert is_schedulable_after_persistent_volume_claim_change(pod_obj, old, new) == want


def test_hints_refuse_wrong_objects() -> None:
    """The "error-wrong-*-object" rows: an error, which the queue reads as Queue."""
    p = with_volume("pod_1", "PVC_1")
    with pytest.raises(TypeError):
        is_schedulable_after_persistent_volume_claim_change(p, None, "not-a-pvc")
    with pytest.raises(TypeError):
        is_schedulable_after_storage_class_added(p, None, "not-a-storageclass")
    with pytest.raises(TypeError):
        is_schedulable_after_persistent_volume_change(p, None, "not-a-pv")
    with pytest.raises(TypeError):
        is_schedulable_after_persistent_volume_change(p, "not-a-pv", pv("Vol_1"))


@pytest.mark.parametrize(("name", "sc", "want"), [
    ("sc-doesn't-have-volume-binding-mode", storage_class("SC_1"), QS),
    ("new-sc-is-wait-for-first-consumer-mode", storage_class("SC_1", "WaitForFirstConsumer"), Q),
], ids=lambda x: x if isinstance(x, str) else "")
def test_is_schedulable_after_storage_class_added(name: str, sc: dict[str, Any], want: QueueingHint) -> None:
    assert is_schedulable_after_storage_class_added(with_volume("pod_1", "PVC_1"), None, sc) == want


PV_HINTS = [
    ("new-pv-was-added", None, pv("Vol_1", labels={BETA_ZONE: "us-west1-b"}), Q),
    ("pv-was-updated-and-changed-topology", pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
     pv("Vol_1", labels={BETA_ZONE: "us-west1-b"}), Q),
    ("pv-was-updated-and-added-topology-label", pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
     pv("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}), Q),
    ("pv-was-updated-but-no-topology-is-changed", pv("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}),
     pv("Vol_1", labels={BETA_ZONE: "us-west1-a", ZONE: "zone"}), QS),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), PV_HINTS, ids=[c[0] for c in PV_HINTS])
def test_is_schedulable_after_persistent_volume_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_persistent_volume_change(with_volume("pod_1", "PVC_1"), old, new) == want


@pytest.mark.parametrize("release", [V1_35, V1_37])
def test_events_to_register(release: Any) -> None:
    """volume_zone.go EventsToRegister; with queueing hints on (every supported release) Node
    events are Add and UpdateNodeLabel only."""
    events = VolumeZone(None, handle(release=release)).events_to_register()
    assert [(e.event.resource, e.event.action, e.hint is not None) for e in events] == [
        (EventResource.STORAGE_CLASS, ActionType.ADD, True),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE, True),
        (EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE, True),
    ]
