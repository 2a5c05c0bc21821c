"""The in-tree -> CSI facts the volume plugins read (kubesched.api.csi_translation).

Ported from k8s.io/csi-translation-lib v0.37.2: plugins/aws_ebs_test.go
(TestKubernetesVolumeIDToEBSVolumeID, through the translated handle) and plugins/gce_pd_test.go
(TestTranslateInTreePVToCSIVolIDFmt); the rest (plugin and driver names, Azure Disk's kind) read
from translate.go and the plugins' sources.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.csi_translation import (
    IN_TREE_PLUGINS,
    TranslationError,
    inline_plugin,
    plugin_by_in_tree_name,
    pv_plugin,
    translate_inline_volume,
    translate_pv,
)
from kubesched.api.storage import PersistentVolume, pod_volumes

VOL = "vol-02399794d890f9375"


def volume(source: dict[str, Any]) -> Any:
    [v] = pod_volumes({"spec": {"volumes": [{"name": "v", **source}]}})
    return v


@pytest.mark.parametrize(("kubernetes_id", "want"), [
    pytest.param(VOL, VOL, id="Normal ID format"),
    pytest.param(f"aws:///{VOL}", VOL, id="aws:///{volumeId} format"),
    pytest.param(f"aws://us-west-2a/{VOL}", VOL, id="aws://{zone}/{volumeId} format"),
    pytest.param("aws://us-west-2a/02399794d890f9375", None, id="fails on invalid volume ID"),
])
def test_ebs_volume_ids(kubernetes_id: str, want: str | None) -> None:
    v = volume({"awsElasticBlockStore": {"volumeID": kubernetes_id}})
    if want is None:
        with pytest.raises(TranslationError, match="Invalid format for AWS volume"):
            translate_inline_volume(v, "ns")
    else:
        assert translate_inline_volume(v, "ns") == ("ebs.csi.aws.com", want)


@pytest.mark.parametrize(("key", "value", "want"), [
    ("failure-domain.beta.kubernetes.io/zone", "us-east1-a", "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
    ("topology.kubernetes.io/zone", "us-east1-a", "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
    ("failure-domain.beta.kubernetes.io/zone", "us-central1-a__us-central1-c",
     "projects/UNSPECIFIED/regions/us-central1/disks/pd-name"),
    ("topology.kubernetes.io/zone", "us-central1-a__us-central1-c",
     "projects/UNSPECIFIED/regions/us-central1/disks/pd-name"),
    ("other", "x", "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name"),
])
def test_gce_pd_volume_ids(key: str, value: str, want: str) -> None:
    pv = PersistentVolume.from_object({"metadata": {"name": "pv", "labels": {key: value}},
                                       "spec": {"gcePersistentDisk": {"pdName": "pd-name"}}})
    assert pv_plugin(pv) is not None
    assert translate_pv(pv) == ("pd.csi.storage.gke.io", want)


def test_gce_pd_zones_of_two_regions_are_refused() -> None:
    pv = PersistentVolume.from_object({"metadata": {"name": "pv", "labels": {
        "topology.kubernetes.io/zone": "us-central1-a__europe-west1-b"}}, "spec": {"gcePersistentDisk": {}}})
    with pytest.raises(TranslationError, match="multiple or no regions"):
        translate_pv(pv)


def test_names_and_other_sources() -> None:
    assert [p.in_tree_name for p in IN_TREE_PLUGINS] == [
        "kubernetes.io/gce-pd", "kubernetes.io/aws-ebs", "kubernetes.io/cinder", "kubernetes.io/azure-disk",
        "kubernetes.io/azure-file", "kubernetes.io/vsphere-volume", "kubernetes.io/portworx-volume"]
    assert plugin_by_in_tree_name("kubernetes.io/cinder").driver_name == "cinder.csi.openstack.org"  # type: ignore[union-attr]
    assert plugin_by_in_tree_name("kubernetes.io/hostpath") is None
    assert inline_plugin(volume({"hostPath": {"path": "/tmp"}})) is None
    assert translate_inline_volume(volume({"gcePersistentDisk": {"pdName": "d"}}), "ns") == (
        "pd.csi.storage.gke.io", "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d")
    assert translate_inline_volume(volume({"azureDisk": {"diskURI": "uri", "kind": "Managed"}}), "ns") == (
        "disk.csi.azure.com", "uri")
    with pytest.raises(TranslationError, match=r"kind\(Shared\) is not supported in csi migration"):
        translate_inline_volume(volume({"azureDisk": {"diskURI": "uri", "kind": "Shared"}}), "ns")
    assert translate_inline_volume(volume({"azureFile": {"secretName": "azure-storage-account-acct-secret",
                                                         "shareName": "s"}}), "") == (
        "file.csi.azure.com", "#acct#s#v#default")
    assert translate_inline_volume(volume({"portworxVolume": {"volumeID": "px"}}), "ns") == ("pxd.portworx.com", "px")
