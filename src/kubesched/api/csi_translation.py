"""The in-tree volume plugins migrated to CSI drivers, and the CSI driver and volume handle a
migrated volume becomes (k8s.io/csi-translation-lib v0.37.2, identical in v0.35 and v0.36).

Only what the scheduler reads of a translation is ported: which sources are migratable
(``IsInlineMigratable``, ``IsPVMigratable``, ``IsMigratableIntreePluginByName``), the names
(``GetInTreePluginNameFromSpec``, ``GetCSINameFromInTreeName``), and the translated volume's
driver and handle with the translation's errors (``TranslateInTreeInlineVolumeToCSI``,
``TranslateInTreePVToCSI``). The translated PV's node affinity (``translateTopologyFromInTreeToCSI``,
which VolumeBinding needs) is not ported yet.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from kubesched.api.storage import (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_MULTI_ZONE_DELIMITER,
    LABEL_TOPOLOGY_ZONE,
    PersistentVolume,
    PodVolume,
)

__all__ = [
    "AWS_EBS",
    "AZURE_DISK",
    "AZURE_FILE",
    "CINDER",
    "GCE_PD",
    "IN_TREE_PLUGINS",
    "PORTWORX",
    "VSPHERE",
    "InTreePlugin",
    "TranslationError",
    "inline_plugin",
    "plugin_by_in_tree_name",
    "pv_plugin",
    "translate_inline_volume",
    "translate_pv",
]


class TranslationError(ValueError):
    """A migratable volume the translation library refuses (its error text)."""


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    in_tree_name: str
    driver_name: str
    #: The volume source key (in a pod's volume and a PV's spec) this plugin serves.
    source_key: str


GCE_PD = InTreePlugin("kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "gcePersistentDisk")
AWS_EBS = InTreePlugin("kubernetes.io/aws-ebs", "ebs.csi.aws.com", "awsElasticBlockStore")
CINDER = InTreePlugin("kubernetes.io/cinder", "cinder.csi.openstack.org", "cinder")
AZURE_DISK = InTreePlugin("kubernetes.io/azure-disk", "disk.csi.azure.com", "azureDisk")
AZURE_FILE = InTreePlugin("kubernetes.io/azure-file", "file.csi.azure.com", "azureFile")
VSPHERE = InTreePlugin("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", "vsphereVolume")
PORTWORX = InTreePlugin("kubernetes.io/portworx-volume", "pxd.portworx.com", "portworxVolume")
IN_TREE_PLUGINS = (GCE_PD, AWS_EBS, CINDER, AZURE_DISK, AZURE_FILE, VSPHERE, PORTWORX)
_BY_SOURCE = {p.source_key: p for p in IN_TREE_PLUGINS}
_BY_IN_TREE_NAME = {p.in_tree_name: p for p in IN_TREE_PLUGINS}

_UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME = re.compile(r"^vol-[^/]*$")
_AZURE_SECRET_NAME = re.compile(r"azure-storage-account-(.+)-secret")
_AZURE_FILE_RESOURCE_GROUP = "kubernetes.io/azure-file-resource-group"


def inline_plugin(volume: PodVolume) -> InTreePlugin | None:
    """The plugin of a migratable inline volume (``IsInlineMigratable``), else None."""
    return _BY_SOURCE.get(volume.kind)


def pv_plugin(pv: PersistentVolume) -> InTreePlugin | None:
    """The plugin of a migratable PV's source (``IsPVMigratable``), else None."""
    for key, plugin in _BY_SOURCE.items():
        if isinstance(pv.spec.get(key), Mapping):
            return plugin
    return None


def plugin_by_in_tree_name(name: str) -> InTreePlugin | None:
    """``IsMigratableIntreePluginByName`` / ``GetCSINameFromInTreeName``."""
    return _BY_IN_TREE_NAME.get(name)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _ebs_volume_id(kubernetes_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/vol-x`` -> ``vol-x``; others unchanged."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlparse(kubernetes_id).path.strip("/")
    if not _AWS_VOLUME.match(aws_id):
        raise TranslationError(
            f"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ({kubernetes_id})"
        )
    return aws_id


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                "failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, "
                f"got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"failed to get region from zones: multiple or no regions gotten from zones, got: "
                               f"{sorted(regions)}")
    return regions.pop()


def _azure_disk_handle(source: Mapping[str, Any]) -> str:
    kind = source.get("kind")
    if isinstance(kind, str) and kind.lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")
    return _str(source.get("diskURI"))


def _azure_account(secret_name: str) -> str:
    m = _AZURE_SECRET_NAME.search(secret_name)
    return m.group(1) if m else secret_name


def translate_inline_volume(volume: PodVolume, pod_namespace: str) -> tuple[str, str]:
    """(driver, volume handle) of a migratable inline volume; TranslationError as upstream's."""
    plugin = inline_plugin(volume)
    if plugin is None:
        raise TranslationError(f'could not find in-tree plugin translation logic for "{volume.name}"')
    s = volume.source
    if plugin is AWS_EBS:
        handle = _ebs_volume_id(_str(s.get("volumeID")))
    elif plugin is GCE_PD:
        handle = f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{_str(s.get('pdName'))}"
    elif plugin is AZURE_DISK:
        handle = _azure_disk_handle(s)
    elif plugin is AZURE_FILE:
        namespace = pod_namespace or "default"
        handle = f"#{_azure_account(_str(s.get('secretName')))}#{_str(s.get('shareName'))}#{volume.name}#{namespace}"
    elif plugin is VSPHERE:
        handle = _str(s.get("volumePath"))
    else:  # cinder, portworx
        handle = _str(s.get("volumeID"))
    return plugin.driver_name, handle


def translate_pv(pv: PersistentVolume) -> tuple[str, str]:
    """(driver, volume handle) of a migratable PV; TranslationError as upstream's."""
    plugin = pv_plugin(pv)
    if plugin is None:
        raise TranslationError(f'could not find in-tree plugin translation logic for "{pv.name}"')
    source = pv.spec.get(plugin.source_key)
    s: Mapping[str, Any] = source if isinstance(source, Mapping) else {}
    if plugin is AWS_EBS:
        handle = _ebs_volume_id(_str(s.get("volumeID")))
    elif plugin is GCE_PD:
        zones_label = pv.labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE) or pv.labels.get(LABEL_TOPOLOGY_ZONE) or ""
        zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
        disk = _str(s.get("pdName"))
        if len(zones) == 1 and zones[0]:
            handle = f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{disk}"
        elif len(zones) > 1:
            handle = f"projects/{_UNSPECIFIED}/regions/{_gce_region(zones)}/disks/{disk}"
        else:
            handle = f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{disk}"
    elif plugin is AZURE_DISK:
        handle = _azure_disk_handle(s)
    elif plugin is AZURE_FILE:
        namespace = _str(s.get("secretNamespace")) if s.get("secretNamespace") is not None else (
            pv.claim_ref.namespace if pv.claim_ref is not None else "")
        if not namespace:
            raise TranslationError("could not find a secret namespace in PersistentVolumeSource or ClaimRef")
        group = pv.annotations.get(_AZURE_FILE_RESOURCE_GROUP, "")
        handle = f"{group}#{_azure_account(_str(s.get('secretName')))}#{_str(s.get('shareName'))}#{pv.name}#{namespace}"
    elif plugin is VSPHERE:
        handle = _str(s.get("volumePath"))
    else:
        handle = _str(s.get("volumeID"))
    return plugin.driver_name, handle
