"""Which pods need which declared features, and the feature sets the plugin compares.

Ported from component-helpers (k8s.io/component-helpers@v0.36.3 and @v0.37.2, nodedeclaredfeatures/):
features/restartallcontainers/restart_all_containers_test.go (TestInferForScheduling),
features/usernamespaceshostnetwork/user_namespaces_host_network_test.go (TestInferForScheduling),
features/inplacepodresize/*_test.go, features/extendwebsocketstokubelet/feature_test.go,
features/dranodeallocatableresources/feature_test.go (InferForScheduling false, MaxVersion nil),
framework_test.go (TestInferForPodScheduling, TestMatchNode), featureset_test.go (TestFeatureMapper),
bitmap_test.go (TestBitmap_String, TestBitmap_DifferenceSubset's subset answers), and
features/registry.go of both versions (the registries). VolumeBindMountOptions (v0.37.2) has no
upstream test: its cases follow features/volumebindmountoptions/feature.go line by line.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.releases import V1_36, V1_37, Release
from kubesched.plugins.nodedeclaredfeatures.features import (
    FEATURES_V1_36,
    FEATURES_V1_37,
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    VOLUME_BIND_MOUNT_OPTIONS,
    framework_for,
)
from kubesched.plugins.nodedeclaredfeatures.featureset import (
    DeclaredFeature,
    FeatureFramework,
    FeatureMapper,
    FeatureSet,
)


def container(name: str = "name", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "image", **fields}


#: ``containerWithRestartAllContainersAction``.
RESTART_ALL = container(
    "container",
    restartPolicy="Never",
    restartPolicyRules=[{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}],
)

# -- restartallcontainers TestInferForScheduling -------------------------------------------------------
RESTART_CASES: list[dict[str, Any]] = [
    {"name": "init container with rules", "spec": {"initContainers": [RESTART_ALL], "containers": [container()]},
     "want": True},
    {"name": "regular container with rules",
     "spec": {"initContainers": [container()], "containers": [RESTART_ALL]}, "want": True},
    {"name": "no rules", "spec": {"initContainers": [container()], "containers": [container("name2")]},
     "want": False},
    # Not upstream rows: the action is what counts, and ephemeral containers are not read.
    {"name": "rule with another action", "spec": {"containers": [container(
        restartPolicyRules=[{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}])]},
     "want": False},
    {"name": "ephemeral container with rules", "spec": {"containers": [container()],
                                                        "ephemeralContainers": [RESTART_ALL]}, "want": False},
]


@pytest.mark.parametrize("case", RESTART_CASES, ids=lambda c: c["name"])
def test_restart_all_containers(case: dict[str, Any]) -> None:
    assert RESTART_ALL_CONTAINERS.name == "RestartAllContainersOnContainerExits"
    assert RESTART_ALL_CONTAINERS.infer_for_scheduling(case["spec"]) is case["want"]


# -- usernamespaceshostnetwork TestInferForScheduling ----------------------------------------------------
USERNS_CASES: list[dict[str, Any]] = [
    {"name": "HostNetwork true, HostUsers false", "hostNetwork": True, "hostUsers": False, "want": True},
    {"name": "HostNetwork true, HostUsers nil", "hostNetwork": True, "hostUsers": None, "want": False},
    {"name": "HostNetwork true, HostUsers true", "hostNetwork": True, "hostUsers": True, "want": False},
    {"name": "HostNetwork false, HostUsers false", "hostNetwork": False, "hostUsers": False, "want": False},
]


@pytest.mark.parametrize("case", USERNS_CASES, ids=lambda c: c["name"])
def test_user_namespaces_host_network(case: dict[str, Any]) -> None:
    spec: dict[str, Any] = {"hostNetwork": case["hostNetwork"]}
    if case["hostUsers"] is not None:
        spec["hostUsers"] = case["hostUsers"]
    assert USER_NAMESPACES_HOST_NETWORK.name == "UserNamespacesHostNetworkSupport"
    assert USER_NAMESPACES_HOST_NETWORK.infer_for_scheduling(spec) is case["want"]


# -- volumebindmountoptions (feature.go) -------------------------------------------------------------------
def mounts(*options: list[str] | None) -> list[dict[str, Any]]:
    out = []
    for i, opts in enumerate(options):
        m: dict[str, Any] = {"name": f"v{i}", "mountPath": f"/m{i}"}
        if opts is not None:
            m["bindMountOptions"] = opts
        out.append(m)
    return out


BIND_CASES: list[dict[str, Any]] = [
    {"name": "container mount with options", "spec": {"containers": [container(volumeMounts=mounts(None, ["ro"]))]},
     "want": True},
    {"name": "init container mount with options",
     "spec": {"containers": [container()], "initContainers": [container(volumeMounts=mounts(["nosuid"]))]},
     "want": True},
    {"name": "ephemeral container mount with options",
     "spec": {"containers": [container()], "ephemeralContainers": [container(volumeMounts=mounts(["nodev"]))]},
     "want": True},
    {"name": "empty options", "spec": {"containers": [container(volumeMounts=mounts([]))]}, "want": False},
    {"name": "mounts without options", "spec": {"containers": [container(volumeMounts=mounts(None, None))]},
     "want": False},
    {"name": "no mounts", "spec": {"containers": [container()]}, "want": False},
]


@pytest.mark.parametrize("case", BIND_CASES, ids=lambda c: c["name"])
def test_volume_bind_mount_options(case: dict[str, Any]) -> None:
    assert VOLUME_BIND_MOUNT_OPTIONS.name == "VolumeBindMountOptions"
    assert VOLUME_BIND_MOUNT_OPTIONS.infer_for_scheduling(case["spec"]) is case["want"]


# -- the features that never affect scheduling; MaxVersion nil everywhere ----------------------------------
SCHEDULING_IRRELEVANT = {
    "InPlacePodLevelResourcesVerticalScaling", "ExtendWebSocketsToKubelet", "InPlacePodVerticalScalingInitContainers",
    "InPlacePodVerticalScalingMemoryBackedVolumes", "DRANodeAllocatableResources", "DRAOptionalNodeOperations",
}
#: A pod using everything the other features look at (pod-level resources, sidecar and init
#: containers with resources, memory-backed emptyDirs): still no requirement from them.
BUSY_SPEC: dict[str, Any] = {
    "resources": {"requests": {"cpu": "1"}},
    "initContainers": [container("i", resources={"requests": {"cpu": "1"}}),
                       container("s", restartPolicy="Always", resources={"requests": {"cpu": "1"}})],
    "containers": [container(resources={"requests": {"cpu": "1"}})],
    "volumes": [{"name": "m", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}],
}


@pytest.mark.parametrize("feature", FEATURES_V1_37, ids=lambda f: f.name)
def test_max_version_and_irrelevant_features(feature: DeclaredFeature) -> None:
    assert feature.max_version is None
    if feature.name in SCHEDULING_IRRELEVANT:
        assert feature.infer_for_scheduling({}) is False
        assert feature.infer_for_scheduling(BUSY_SPEC) is False


# -- the registries (features/registry.go) ------------------------------------------------------------------
@pytest.mark.parametrize(("release", "names"), [
    (V1_36, ["ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
             "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits",
             "UserNamespacesHostNetworkSupport"]),
    (V1_37, ["DRANodeAllocatableResources", "DRAOptionalNodeOperations", "ExtendWebSocketsToKubelet",
             "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers",
             "InPlacePodVerticalScalingMemoryBackedVolumes", "RestartAllContainersOnContainerExits",
             "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"]),
])
def test_registry_of_each_release(release: Release, names: list[str]) -> None:
    fw = framework_for(release)
    assert list(fw.registered) == names  # sorted, as ndf.New sorts the registry
    assert [f.name for f in fw.registry] == names
    assert framework_for(release) is fw
    assert len(FEATURES_V1_36) == 5 and len(FEATURES_V1_37) == 9


# -- framework_test.go TestInferForPodScheduling --------------------------------------------------------------
def pod_level_resources(spec: Any) -> bool:
    return spec.get("resources") is not None


WITH_RESOURCES = {"resources": {"requests": {"cpu": "500m"}}}
INFER_CASES: list[dict[str, Any]] = [
    {"name": "pod with feature, inferred during scheduling", "max": None, "spec": WITH_RESOURCES,
     "target": (1, 30, 0), "want": ["PodLevelResources"]},
    {"name": "pod without feature", "max": None, "spec": {}, "target": (1, 30, 0), "want": []},
    {"name": "feature universally available, not inferred during create", "max": (1, 30, 0),
     "spec": WITH_RESOURCES, "target": (1, 31, 0), "want": []},
    # Upstream's target is 0.0.0-alpha.2.39+049eafd34dfbd2, below 1.30.0 as 0.0.0 is.
    {"name": "pre-release target version", "max": (1, 30, 0), "spec": WITH_RESOURCES, "target": (0, 0, 0),
     "want": ["PodLevelResources"]},
    {"name": "exceeds max version", "max": (1, 30, 0), "spec": WITH_RESOURCES, "target": (1, 40, 0), "want": []},
    {"name": "target version nil", "max": None, "spec": WITH_RESOURCES, "target": None,
     "error": "target version cannot be nil"},
]


@pytest.mark.parametrize("case", INFER_CASES, ids=lambda c: c["name"])
def test_infer_for_pod_scheduling(case: dict[str, Any]) -> None:
    fw = FeatureFramework([DeclaredFeature("PodLevelResources", pod_level_resources, case["max"])])
    if "error" in case:
        with pytest.raises(ValueError, match=case["error"]):
            fw.infer_for_pod_scheduling(case["spec"], case["target"])
        return
    assert fw.unmap(fw.infer_for_pod_scheduling(case["spec"], case["target"])) == case["want"]


# -- framework_test.go TestMatchNode (IsMatch; the plugin never computes the difference) ------------------
MATCH_CASES: list[dict[str, Any]] = [
    {"name": "all features match", "pod": ["feature-a", "feature-b"],
     "node": ["feature-a", "feature-b", "feature-c"], "want": True},
    {"name": "some features missing", "pod": ["feature-a", "feature-b"], "node": ["feature-a", "feature-c"],
     "want": False},
    {"name": "all features missing", "pod": ["feature-a", "feature-b"], "node": ["feature-c"], "want": False},
    {"name": "no node features", "pod": ["feature-a", "feature-b"], "node": [], "want": False},
    {"name": "no requirements", "pod": [], "node": ["feature-a", "feature-b", "feature-c"], "want": True},
]


@pytest.mark.parametrize("case", MATCH_CASES, ids=lambda c: c["name"])
def test_match_node(case: dict[str, Any]) -> None:
    fw = FeatureFramework([DeclaredFeature(n, lambda spec: False) for n in ("feature-a", "feature-b", "feature-c")])
    reqs = fw.map_sorted(case["pod"])
    assert reqs.is_subset(fw.map_sorted(case["node"])) is case["want"]
    assert reqs.is_subset(fw.try_map(case["node"])) is case["want"]  # MatchNode reads the node with TryMap


# -- featureset_test.go TestFeatureMapper ---------------------------------------------------------------------
MAPPER_CASES: list[dict[str, Any]] = [
    {"name": "Empty input", "input": [], "set": set()},
    {"name": "Single valid feature", "input": ["a"], "set": {0}},
    {"name": "Multiple valid features", "input": ["a", "c"], "set": {0, 2}},
    {"name": "All features", "input": ["a", "b", "c", "d"], "set": {0, 1, 2, 3}},
    {"name": "Unknown feature (start)", "input": ["0", "a"], "error": True, "set": {0}},
    {"name": "Unknown feature (middle)", "input": ["a", "ab", "b"], "error": True, "set": {0, 1}},
    {"name": "Unknown feature (end)", "input": ["d", "e"], "error": True, "set": {3}},
]


@pytest.mark.parametrize("case", MAPPER_CASES, ids=lambda c: c["name"])
def test_feature_mapper(case: dict[str, Any]) -> None:
    features = ["a", "b", "c", "d"]
    mapper = FeatureMapper(features)
    fs = mapper.try_map(case["input"])
    assert {i for i in range(len(features)) if fs.get(i)} == case["set"]
    if case.get("error"):
        with pytest.raises(ValueError, match="unknown feature"):
            mapper.map_sorted(case["input"])
        assert set(mapper.unmap(fs)) <= set(case["input"])
    else:
        assert mapper.map_sorted(case["input"]) == fs
        assert mapper.unmap(fs) == case["input"]


# -- bitmap_test.go -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("size", "bits", "want"), [
    (5, [0, 4], "10001"),
    (10, [], "0000000000"),
    (65, [0, 64], "1" + "0" * 63 + "1"),
])
def test_feature_set_string(size: int, bits: list[int], want: str) -> None:
    assert str(FeatureSet(sum(1 << b for b in bits), size)) == want


@pytest.mark.parametrize(("b", "other", "subset"), [
    ([1, 2], [3, 4], False),  # Disjoint sets
    ([1, 2, 3], [2, 3, 4], False),  # Overlap
    ([1, 2], [1, 2], True),  # Identical
    ([], [1], True),
])
def test_feature_set_subset(b: list[int], other: list[int], subset: bool) -> None:
    def fs(bits: list[int]) -> FeatureSet:
        return FeatureSet(sum(1 << i for i in bits), 64)

    assert fs(b).is_subset(fs(other)) is subset


def test_feature_sets_of_two_sizes_do_not_compare() -> None:
    """"Mismatch size": an error, which Filter turns into an Error status."""
    with pytest.raises(ValueError, match="bitmap size mismatch; 64 != 128"):
        FeatureSet(0, 64).is_subset(FeatureSet(0, 128))
