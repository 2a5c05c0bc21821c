"""The storage views and helpers (kubesched.api.storage) and their validation
(kubesched.api.storage_validation).

Expectations follow component-helpers v0.37.2 storage/volume (``GetPersistentVolumeClaimClass``,
``GetPersistentVolumeClass``, ``CheckNodeAffinity``, ``IsVolumeBoundToClaim``), storage/ephemeral
(``VolumeClaimName``, ``VolumeIsForPod``, ephemeral_test.go's message), cloud-provider's
``LabelZonesToSet`` (volume/helpers/zones_test.go), pkg/apis/core/v1/helper ``MatchTopologySelectorTerms``
and client-go's lister NotFound errors; the validation wording is the API server's.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubesched.api.objects_validation import validate_pod
from kubesched.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    ephemeral_claim_name,
    label_zones_to_set,
    match_topology_selector_terms,
    not_found_message,
    pod_volumes,
    translate_to_ga_label,
    volume_is_for_pod,
)
from kubesched.api.storage_validation import validate_storage_object


def pvc(**spec: Any) -> PersistentVolumeClaim:
    md = spec.pop("metadata", {"name": "c", "namespace": "ns"})
    return PersistentVolumeClaim.from_object({"metadata": md, "spec": spec})


def test_claim_class_prefers_the_beta_annotation() -> None:
    assert pvc().storage_class == "" and not pvc().has_class
    assert pvc(storageClassName="").has_class
    assert pvc(storageClassName="fast").storage_class == "fast"
    annotated = pvc(metadata={"name": "c", "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
                    storageClassName="fast")
    assert annotated.storage_class == "old" and annotated.namespace == "default"


def test_claim_fields() -> None:
    c = pvc(volumeName="pv", accessModes=["ReadWriteOncePod"], resources={"requests": {"storage": "1.5Gi"}})
    assert c.key == "ns/c" and c.volume_name == "pv" and c.has_access_mode("ReadWriteOncePod")
    assert c.requested_storage == Fraction(3 * 2**29) and c.request_value == 3 * 2**29
    assert c.volume_mode == "Filesystem" and c.selector() is None
    assert not c.fully_bound
    bound = PersistentVolumeClaim.from_object({"metadata": {"name": "c", "annotations": {
        "pv.kubernetes.io/bind-completed": "yes"}}, "spec": {"volumeName": "pv"}})
    assert bound.fully_bound
    assert pvc(selector={"matchLabels": {"a": "b"}}).selector().matches({"a": "b"})  # type: ignore[union-attr]


def pv(**spec: Any) -> PersistentVolume:
    md = spec.pop("metadata", {"name": "pv"})
    return PersistentVolume.from_object({"metadata": md, "spec": spec})


HOST_A = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                        "values": ["a"]}]}]}


def test_pv_node_affinity() -> None:
    assert pv().matches_node_labels({})
    assert pv(nodeAffinity={}).matches_node_labels({})
    p = pv(nodeAffinity={"required": HOST_A})
    assert p.matches_node_labels({"kubernetes.io/hostname": "a"})
    assert not p.matches_node_labels({"kubernetes.io/hostname": "b"})
    # CheckNodeAffinity builds a node with labels only: matchFields on the name never matches.
    by_name = pv(nodeAffinity={"required": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}})
    assert not by_name.matches_node_labels({"kubernetes.io/hostname": "a"})
    # A malformed term never matches; a valid one still does.
    mixed = pv(nodeAffinity={"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "x", "operator": "Bogus"}]}, *HOST_A["nodeSelectorTerms"]]}})
    assert mixed.matches_node_labels({"kubernetes.io/hostname": "a"})
    assert not mixed.matches_node_labels({"x": "1"})
    # An empty term list (required: {}) matches nothing, as upstream.
    assert not pv(nodeAffinity={"required": {}}).matches_node_labels({"a": "b"})


def test_pv_fields_and_claim_binding() -> None:
    p = pv(metadata={"name": "pv", "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
           storageClassName="ga", capacity={"storage": "10Gi"}, csi={"driver": "d", "volumeHandle": "h"},
           claimRef={"namespace": "ns", "name": "c"})
    assert p.storage_class == "beta" and p.capacity_value == 10 * 2**30 and p.csi is not None
    assert p.csi.driver == "d" and p.csi.volume_handle == "h"
    assert p.is_bound_to(pvc())
    uid_ref = pv(claimRef={"namespace": "ns", "name": "c", "uid": "u1"})
    assert not uid_ref.is_bound_to(pvc())
    assert uid_ref.is_bound_to(pvc(metadata={"name": "c", "namespace": "ns", "uid": "u1"}))
    assert not pv().is_bound_to(pvc())


def test_storage_class_and_topology_terms() -> None:
    sc = StorageClass.from_object({"metadata": {"name": "s"}, "provisioner": "p",
                                   "volumeBindingMode": "WaitForFirstConsumer",
                                   "allowedTopologies": [{"matchLabelExpressions": [
                                       {"key": "zone", "values": ["a", "b"]}]}]})
    assert sc.wait_for_first_consumer and sc.allows_node_labels({"zone": "b"})
    assert not sc.allows_node_labels({"zone": "c"}) and not sc.allows_node_labels({})
    assert StorageClass.from_object({"metadata": {"name": "s"}}).volume_binding_mode is None
    assert match_topology_selector_terms([], {})
    assert not match_topology_selector_terms([{}], {"a": "b"})  # an empty term matches nothing
    # A term with an invalid requirement (no values) is skipped, the next one may match.
    assert match_topology_selector_terms(
        [{"matchLabelExpressions": [{"key": "a", "values": []}]},
         {"matchLabelExpressions": [{"key": "a", "values": ["1"]}]}], {"a": "1"})


def test_csi_objects() -> None:
    node = CSINode.from_object({"metadata": {"name": "n", "annotations": {
        "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd,kubernetes.io/aws-ebs"}},
        "spec": {"drivers": [{"name": "d1", "nodeID": "x", "allocatable": {"count": 3}}, {"name": "d2"}]}})
    assert node.migrated_plugins == {"kubernetes.io/gce-pd", "kubernetes.io/aws-ebs"}
    assert node.driver("d1").allocatable_count == 3  # type: ignore[union-attr]
    assert node.driver("d2").allocatable_count is None and node.driver("d3") is None  # type: ignore[union-attr]
    drv = CSIDriver.from_object({"metadata": {"name": "d"}, "spec": {"storageCapacity": True}})
    assert drv.storage_capacity is True and drv.prevent_pod_scheduling_if_missing is None
    cap = CSIStorageCapacity.from_object({"metadata": {"name": "c"}, "storageClassName": "s", "capacity": "10Gi",
                                          "nodeTopology": {"matchLabels": {"zone": "a"}}})
    assert cap.namespace == "default" and cap.volume_limit == 10 * 2**30
    assert cap.node_has_access({"zone": "a"}) and not cap.node_has_access({"zone": "b"})
    with_max = CSIStorageCapacity.from_object({"metadata": {"name": "c"}, "capacity": "10Gi",
                                              "maximumVolumeSize": "1Gi"})
    assert with_max.volume_limit == 2**30 and not with_max.node_has_access({})  # no nodeTopology: no access
    va = VolumeAttachment.from_object({"metadata": {"name": "va"}, "spec": {
        "attacher": "d", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}})
    assert (va.attacher, va.node_name, va.persistent_volume_name) == ("d", "n", "pv")


def test_pod_volumes_and_ephemeral_claims() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": {"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "disk", "gcePersistentDisk": {"pdName": "x"}},
        {"name": "odd"},
    ]}}
    vols = pod_volumes(pod)
    assert [(v.name, v.kind, v.claim_name) for v in vols] == [
        ("data", "persistentVolumeClaim", "c"), ("scratch", "ephemeral", ""), ("disk", "gcePersistentDisk", ""),
        ("odd", "", "")]
    assert vols[0].is_pvc and vols[1].is_ephemeral
    assert ephemeral_claim_name("p", "scratch") == "p-scratch"
    owned = pvc(metadata={"name": "p-scratch", "namespace": "ns",
                          "ownerReferences": [{"uid": "u", "controller": True}]})
    assert volume_is_for_pod("ns", "p", "u", owned) is None
    not_owned = pvc(metadata={"name": "p-scratch", "namespace": "ns", "ownerReferences": [{"uid": "u"}]})
    assert volume_is_for_pod("ns", "p", "u", not_owned) == (
        "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)")


@pytest.mark.parametrize(("value", "want"), [
    ("a", {"a"}), ("a__b", {"a", "b"}), (" a __ b ", {"a", "b"}), ("a____b", None), ("", None), ("a__", None),
])
def test_label_zones_to_set(value: str, want: set[str] | None) -> None:
    assert label_zones_to_set(value) == (frozenset(want) if want is not None else None)


def test_small_helpers() -> None:
    assert translate_to_ga_label("failure-domain.beta.kubernetes.io/zone") == "topology.kubernetes.io/zone"
    assert translate_to_ga_label("failure-domain.beta.kubernetes.io/region") == "topology.kubernetes.io/region"
    assert translate_to_ga_label("x") == "x"
    assert not_found_message("PersistentVolumeClaim", "c") == 'persistentvolumeclaim "c" not found'
    assert not_found_message("StorageClass", "s") == 'storageclass.storage.k8s.io "s" not found'


# -- validation -----------------------------------------------------------------------------------

VALIDATION_CASES = [
    pytest.param("PersistentVolume", {"metadata": {"name": "pv"}, "spec": {
        "capacity": {"storage": "-1"}, "volumeMode": "Raw", "claimRef": {"name": 3}}, "status": {"phase": "Gone"}},
        ['spec.capacity[storage]: Invalid value: "-1": must be greater than or equal to 0',
         'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
         "spec.claimRef.name: must be a string, got 3",
         'status.phase: Unsupported value: "Gone": supported values: "Available", "Bound", "Failed", "Pending", '
         '"Released"'], id="pv"),
    pytest.param("PersistentVolumeClaim", {"metadata": {"name": "c"}, "spec": {
        "selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]},
        "resources": {"requests": {"storage": "x"}}}},
        ["spec.resources.requests[storage]: quantities must match the regular expression "
         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
         'spec.selector.matchExpressions[0].operator: "Near" is not a valid label selector operator'], id="pvc"),
    pytest.param("StorageClass", {"metadata": {"name": "s"}, "provisioner": "p", "volumeBindingMode": "Later",
                                  "allowedTopologies": [{"matchLabelExpressions": [{"values": "a"}]}]},
        ['volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
         "allowedTopologies[0].matchLabelExpressions[0].key: Required value",
         'allowedTopologies[0].matchLabelExpressions[0].values: must be a list, got "a"'], id="storageclass"),
    pytest.param("CSINode", {"metadata": {"name": "n"}, "spec": {"drivers": [{"allocatable": {"count": -1}}]}},
        ["spec.drivers[0].name: Required value",
         "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"], id="csinode"),
    pytest.param("CSIDriver", {"metadata": {"name": "d"}, "spec": {"storageCapacity": "yes"}},
        ['spec.storageCapacity: must be a boolean, got "yes"'], id="csidriver"),
    pytest.param("CSIStorageCapacity", {"metadata": {"name": "c"}, "capacity": True},
        ["storageClassName: Required value", "capacity: must be a quantity (a string or a number), got true"],
        id="capacity"),
    pytest.param("VolumeAttachment", {"metadata": {"name": "v"}, "spec": {"attacher": "", "source": []}},
        ["spec.attacher: Required value", "spec.nodeName: Required value",
         "spec.source: must be an object, got a list"],
        id="volumeattachment"),
]


@pytest.mark.parametrize(("kind", "obj", "want"), VALIDATION_CASES)
def test_validation(kind: str, obj: dict[str, Any], want: list[str]) -> None:
    assert validate_storage_object(kind, obj) == want


def test_valid_objects_have_no_problems() -> None:
    assert validate_storage_object("PersistentVolume", {"metadata": {"name": "pv"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "nodeAffinity": {"required": HOST_A},
        "csi": {"driver": "d", "volumeHandle": "h"}}}) == []
    assert validate_storage_object("Unknown", {}) == []
    assert validate_storage_object("StorageClass", 3) == ["StorageClass: must be an object, got 3"]


def test_pod_volumes_are_validated() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [], "volumes": [
        {"name": "a", "persistentVolumeClaim": {"claimName": 1}},
        {"name": "b", "rbd": {"monitors": "m"}},
        "x",
    ]}}
    assert validate_pod(pod) == [
        "spec.volumes[0].persistentVolumeClaim.claimName: must be a string, got 1",
        'spec.volumes[1].rbd.monitors: must be a list, got "m"',
        'spec.volumes[2]: must be an object, got "x"',
    ]
