"""The declared features of each release and what makes a pod need them (component-helpers
``nodedeclaredfeatures/features/registry.go`` and ``features/*``, at v0.36.3 and v0.37.2).

The registry is part of the scheduler binary, so it differs between releases: v1.37 adds four
features, of which only VolumeBindMountOptions changes scheduling (a pod whose volume mounts set
``bindMountOptions`` needs a node declaring it). Features that matter only to pod updates (in-place
resize) or to other components are in the registries all the same: they size the sets and name
what a node may declare. No feature has a ``MaxVersion`` in either release.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kubesched.config.releases import V1_36, V1_37, Release
from kubesched.framework.types import JSONObj, JSONValue

from .featureset import DeclaredFeature, FeatureFramework

__all__ = [
    "FEATURES_V1_36",
    "FEATURES_V1_37",
    "RESTART_ALL_CONTAINERS",
    "USER_NAMESPACES_HOST_NETWORK",
    "VOLUME_BIND_MOUNT_OPTIONS",
    "framework_for",
]

#: ``v1.ContainerRestartRuleActionRestartAllContainers``.
ACTION_RESTART_ALL_CONTAINERS = "RestartAllContainers"


def _objects(value: JSONValue) -> Iterator[JSONObj]:
    """The objects of a JSON list (nothing for anything else): the pod is read as the API sent it."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                yield item


def needs_restart_all_containers(spec: JSONObj) -> bool:
    """``restartallcontainers``: a container or init container has a restart rule whose action is
    RestartAllContainers (ephemeral containers are not looked at, as upstream)."""
    for key in ("containers", "initContainers"):
        for container in _objects(spec.get(key)):
            for rule in _objects(container.get("restartPolicyRules")):
                if rule.get("action") == ACTION_RESTART_ALL_CONTAINERS:
                    return True
    return False


def needs_user_namespaces_host_network(spec: JSONObj) -> bool:
    """``usernamespaceshostnetwork``: host network together with a user namespace
    (``hostUsers: false``; unset means host users)."""
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def needs_volume_bind_mount_options(spec: JSONObj) -> bool:
    """``volumebindmountoptions`` (v0.37): a volume mount of any container, init or ephemeral
    container sets ``bindMountOptions``."""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _objects(spec.get(key)):
            for mount in _objects(container.get("volumeMounts")):
                options = mount.get("bindMountOptions")
                if isinstance(options, list) and options:
                    return True
    return False


def never(spec: JSONObj) -> bool:
    """A feature that does not affect scheduling (pod updates or other components only)."""
    return False


RESTART_ALL_CONTAINERS = DeclaredFeature("RestartAllContainersOnContainerExits", needs_restart_all_containers)
USER_NAMESPACES_HOST_NETWORK = DeclaredFeature("UserNamespacesHostNetworkSupport", needs_user_namespaces_host_network)
VOLUME_BIND_MOUNT_OPTIONS = DeclaredFeature("VolumeBindMountOptions", needs_volume_bind_mount_options)
POD_LEVEL_RESOURCES_RESIZE = DeclaredFeature("InPlacePodLevelResourcesVerticalScaling", never)
EXTEND_WEBSOCKETS_TO_KUBELET = DeclaredFeature("ExtendWebSocketsToKubelet", never)
NON_SIDECAR_INIT_CONTAINER_RESIZE = DeclaredFeature("InPlacePodVerticalScalingInitContainers", never)
MEMORY_BACKED_VOLUMES_RESIZE = DeclaredFeature("InPlacePodVerticalScalingMemoryBackedVolumes", never)
DRA_NODE_ALLOCATABLE_RESOURCES = DeclaredFeature("DRANodeAllocatableResources", never)
#: Needed by claims allocated with optional node operations, which DynamicResources checks itself
#: (the claim's allocation is unknown at PreFilter).
DRA_OPTIONAL_NODE_OPERATIONS = DeclaredFeature("DRAOptionalNodeOperations", never)

#: ``features.AllFeatures`` at component-helpers v0.36.3 (kube-scheduler v1.36.3).
FEATURES_V1_36: tuple[DeclaredFeature, ...] = (
    RESTART_ALL_CONTAINERS,
    POD_LEVEL_RESOURCES_RESIZE,
    EXTEND_WEBSOCKETS_TO_KUBELET,
    NON_SIDECAR_INIT_CONTAINER_RESIZE,
    USER_NAMESPACES_HOST_NETWORK,
)
#: ``features.AllFeatures`` at component-helpers v0.37.2 (kube-scheduler v1.37.2).
FEATURES_V1_37: tuple[DeclaredFeature, ...] = (
    RESTART_ALL_CONTAINERS,
    POD_LEVEL_RESOURCES_RESIZE,
    EXTEND_WEBSOCKETS_TO_KUBELET,
    NON_SIDECAR_INIT_CONTAINER_RESIZE,
    MEMORY_BACKED_VOLUMES_RESIZE,
    USER_NAMESPACES_HOST_NETWORK,
    DRA_NODE_ALLOCATABLE_RESOURCES,
    VOLUME_BIND_MOUNT_OPTIONS,
    DRA_OPTIONAL_NODE_OPERATIONS,
)
#: The registry each release's binary carries, oldest first; v1.35 runs the plugin disabled.
_REGISTRIES: tuple[tuple[Release, tuple[DeclaredFeature, ...]], ...] = (
    (V1_36, FEATURES_V1_36),
    (V1_37, FEATURES_V1_37),
)
_FRAMEWORKS: dict[Release, FeatureFramework] = {}


def framework_for(release: Release) -> FeatureFramework:
    """``ndf.DefaultFramework`` of ``release``'s binary (the newest registry not after it), built once."""
    fw = _FRAMEWORKS.get(release)
    if fw is None:
        candidates = [features for since, features in _REGISTRIES if since <= release]
        if not candidates:
            raise ValueError(f"kube-scheduler {release} has no declared-features registry")
        fw = _FRAMEWORKS[release] = FeatureFramework(candidates[-1])
    return fw
