"""SetDefaults for KubeSchedulerConfiguration and plugin args.

Ported from pkg/scheduler/apis/config/v1/defaults_test.go (TestSchedulerDefaults,
TestPluginArgsDefaults), with v1.35's default feature gates (DRA on, StorageCapacityScoring off).
"""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from kubesched.config import (
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    default_plugins,
    load_config,
    set_defaults,
)
from kubesched.config.args import decode_into
from kubesched.config.errors import FieldError
from kubesched.config.plugin_args import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from kubesched.config.releases import Release, parse_emulated_version

T = TypeVar("T")

CPU_MEM = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]

#: defaults_test.go ``pluginConfigs`` at v1.37.2 (the default release): what every profile gets,
#: sorted by plugin name; VolumeBinding's shape is defaulted since StorageCapacityScoring is on.
DEFAULT_PLUGIN_CONFIGS = [
    PluginConfig("DefaultPreemption", DefaultPreemptionArgs(10, 100)),
    PluginConfig("DynamicResources", DynamicResourcesArgs(filter_timeout=10.0, binding_timeout=600.0)),
    PluginConfig("InterPodAffinity", InterPodAffinityArgs(hard_pod_affinity_weight=1)),
    PluginConfig("NodeAffinity", NodeAffinityArgs()),
    PluginConfig("NodeResourcesBalancedAllocation", NodeResourcesBalancedAllocationArgs(resources=CPU_MEM)),
    PluginConfig(
        "NodeResourcesFit",
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type="LeastAllocated", resources=CPU_MEM)),
    ),
    PluginConfig("PodTopologySpread", PodTopologySpreadArgs(defaulting_type="System")),
    PluginConfig(
        "VolumeBinding",
        VolumeBindingArgs(
            bind_timeout_seconds=600, shape=[UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
        ),
    ),
]


def _default_profile(**overrides: Any) -> Profile:
    return Profile(
        scheduler_name=overrides.pop("scheduler_name", "default-scheduler"),
        percentage_of_nodes_to_score=overrides.pop("percentage_of_nodes_to_score", None),
        plugins=default_plugins(),
        plugin_config=list(DEFAULT_PLUGIN_CONFIGS),
    )


def _expected(**overrides: Any) -> KubeSchedulerConfiguration:
    """defaults_test.go's expected object: every top-level default spelled out by hand."""
    from kubesched.config import ClientConnection, LeaderElectionConfiguration

    values: dict[str, Any] = {
        "parallelism": 16,
        "leader_election": LeaderElectionConfiguration(
            leader_elect=True,
            lease_duration=15.0,
            renew_deadline=10.0,
            retry_period=2.0,
            resource_lock="leases",
            resource_name="kube-scheduler",
            resource_namespace="kube-system",
        ),
        "client_connection": ClientConnection(
            kubeconfig="",
            accept_content_types="",
            content_type="application/vnd.kubernetes.protobuf",
            qps=50.0,
            burst=100,
        ),
        "percentage_of_nodes_to_score": 0,
        "pod_initial_backoff_seconds": 1,
        "pod_max_backoff_seconds": 10,
        "profiles": [_default_profile()],
        "extenders": [],
        "delay_cache_until_active": False,
        "enable_profiling": True,
        "enable_contention_profiling": True,
    }
    values.update(overrides)
    return KubeSchedulerConfiguration(**values)


# TestSchedulerDefaults, loaded from the YAML mapping the Go test's input object encodes to.
SCHEDULER_DEFAULTS_CASES: list[tuple[str, dict[str, Any] | None, KubeSchedulerConfiguration]] = [
    ("empty config", {}, _expected()),
    ("nil config", None, _expected()),
    ("no scheduler name", {"profiles": [{}]}, _expected()),
    ("Prallelism with no port", {"parallelism": 16}, _expected()),
    ("set non default parallelism", {"parallelism": 8}, _expected(parallelism=8)),
    (
        "set non default delayCacheUntilActive",
        {"delayCacheUntilActive": True},
        _expected(delay_cache_until_active=True),
    ),
    (
        "set non default global percentageOfNodesToScore",
        {"percentageOfNodesToScore": 50},
        _expected(percentage_of_nodes_to_score=50),
    ),
    (
        "set non default profile percentageOfNodesToScore",
        {"profiles": [{"percentageOfNodesToScore": 50}]},
        _expected(profiles=[_default_profile(percentage_of_nodes_to_score=50)]),
    ),
    (
        "set non default global and profile percentageOfNodesToScore",
        {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
        _expected(
            percentage_of_nodes_to_score=10, profiles=[_default_profile(percentage_of_nodes_to_score=50)]
        ),
    ),
]


@pytest.mark.parametrize(
    ("name", "raw", "expected"), SCHEDULER_DEFAULTS_CASES, ids=[c[0] for c in SCHEDULER_DEFAULTS_CASES]
)
def test_scheduler_defaults(
    name: str, raw: dict[str, Any] | None, expected: KubeSchedulerConfiguration
) -> None:
    assert load_config(raw) == expected


def test_two_profiles_defaults() -> None:
    """TestSchedulerDefaults "two profiles": the unnamed profile stays unnamed (validation then
    requires a name), user pluginConfig entries come first, a Bind override keeps its disabled list."""
    config = KubeSchedulerConfiguration(
        profiles=[
            Profile(scheduler_name="", plugin_config=[PluginConfig("FooPlugin", {})]),
            Profile(
                scheduler_name="custom-scheduler",
                plugins=Plugins(
                    bind=PluginSet(enabled=[PluginRef("BarPlugin")], disabled=[PluginRef("DefaultBinder")])
                ),
            ),
        ]
    )
    assert set_defaults(config) == []
    first, second = config.profiles
    assert first.scheduler_name == ""
    assert first.plugins == default_plugins()
    assert first.plugin_config == [PluginConfig("FooPlugin", {}), *DEFAULT_PLUGIN_CONFIGS]
    expected_plugins = default_plugins()
    expected_plugins.bind = PluginSet(enabled=[PluginRef("BarPlugin")], disabled=[PluginRef("DefaultBinder")])
    assert second.plugins == expected_plugins
    assert second.plugin_config == DEFAULT_PLUGIN_CONFIGS


def test_existing_plugin_config_is_not_replaced() -> None:
    """TestSchedulerDefaults "unknown plugin config": an entry that exists is kept as is, no second one."""
    raw_args = {"anything": True}
    config = KubeSchedulerConfiguration(
        profiles=[Profile(plugin_config=[PluginConfig("DefaultPreemption", raw_args)])]
    )
    set_defaults(config)
    names = [pc.name for pc in config.profiles[0].plugin_config]
    assert names == [pc.name for pc in DEFAULT_PLUGIN_CONFIGS]
    assert config.profiles[0].plugin_config[0].args is raw_args


def test_default_args_only_for_enabled_plugins() -> None:
    """pluginsNames: plugins disabled everywhere get no default args; enabled ones anywhere do."""
    config = load_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                        },
                        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 3}]},
                    },
                }
            ],
        }
    )
    assert [pc.name for pc in config.profiles[0].plugin_config] == ["NodeResourcesFit"]


def test_zero_values_defaulted_like_upstream() -> None:
    """Non-pointer fields are defaulted when zero (RecommendedDefaultLeaderElectionConfiguration,
    SetDefaults_KubeSchedulerConfiguration's qps/burst/contentType checks)."""
    config = load_config(
        {
            "leaderElection": {
                "leaseDuration": "0s",
                "resourceLock": "",
                "resourceName": "",
                "resourceNamespace": "",
            },
            "clientConnection": {"qps": 0, "burst": 0, "contentType": ""},
        }
    )
    le = config.leader_election
    assert (le.lease_duration, le.resource_lock, le.resource_name, le.resource_namespace) == (
        15.0,
        "leases",
        "kube-scheduler",
        "kube-system",
    )
    cc = config.client_connection
    assert (cc.qps, cc.burst, cc.content_type) == (50.0, 100, "application/vnd.kubernetes.protobuf")


@pytest.mark.parametrize(
    ("raw", "profiling", "contention"),
    [
        ({}, True, True),
        ({"enableProfiling": False}, False, False),
        ({"enableProfiling": False, "enableContentionProfiling": True}, False, True),
        ({"enableContentionProfiling": False}, True, False),
    ],
)
def test_contention_profiling_follows_profiling(
    raw: dict[str, Any], profiling: bool, contention: bool
) -> None:
    config = load_config(raw)
    assert (config.enable_profiling, config.enable_contention_profiling) == (profiling, contention)


def test_explicit_leader_election_kept() -> None:
    config = load_config(
        {
            "leaderElection": {
                "leaderElect": False,
                "leaseDuration": "1m30s",
                "renewDeadline": "45s",
                "retryPeriod": "500ms",
            }
        }
    )
    le = config.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (
        False,
        90.0,
        45.0,
        0.5,
    )


# ---------------------------------------------------------------------------------------------
# TestPluginArgsDefaults: decode + SetDefaults only (no validation), like scheme.Default.


def _defaulted(cls: type[T], raw: dict[str, Any], release: Release | None = None) -> T:
    errors: list[FieldError] = []
    args = decode_into(cls, raw, "args", errors)
    assert errors == []
    hook = getattr(args, "set_defaults", None)
    if hook is not None:
        hook(release=release) if release is not None else hook()
    return args


PLUGIN_ARGS_DEFAULTS: list[tuple[str, type, dict[str, Any], object]] = [
    ("DefaultPreemptionArgs empty", DefaultPreemptionArgs, {}, DefaultPreemptionArgs(10, 100)),
    (
        "DefaultPreemptionArgs with value",
        DefaultPreemptionArgs,
        {"minCandidateNodesPercentage": 50},
        DefaultPreemptionArgs(50, 100),
    ),
    ("InterPodAffinityArgs empty", InterPodAffinityArgs, {}, InterPodAffinityArgs(1)),
    (
        "InterPodAffinityArgs explicit 0",
        InterPodAffinityArgs,
        {"hardPodAffinityWeight": 0},
        InterPodAffinityArgs(0),
    ),
    (
        "InterPodAffinityArgs with value",
        InterPodAffinityArgs,
        {"hardPodAffinityWeight": 5},
        InterPodAffinityArgs(5),
    ),
    (
        "NodeResourcesBalancedAllocationArgs resources empty",
        NodeResourcesBalancedAllocationArgs,
        {},
        NodeResourcesBalancedAllocationArgs(CPU_MEM),
    ),
    (
        "NodeResourcesBalancedAllocationArgs with scalar resource",
        NodeResourcesBalancedAllocationArgs,
        {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        NodeResourcesBalancedAllocationArgs([ResourceSpec("scalar.io/scalar1", 1)]),
    ),
    (
        "NodeResourcesBalancedAllocationArgs with mixed resources",
        NodeResourcesBalancedAllocationArgs,
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
        NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("scalar.io/scalar1", 1)]),
    ),
    (
        "NodeResourcesBalancedAllocationArgs have resource no weight",
        NodeResourcesBalancedAllocationArgs,
        {
            "resources": [
                {"name": "cpu"},
                {"name": "scalar.io/scalar0"},
                {"name": "scalar.io/scalar1", "weight": 1},
            ]
        },
        NodeResourcesBalancedAllocationArgs(
            [
                ResourceSpec("cpu", 1),
                ResourceSpec("scalar.io/scalar0", 1),
                ResourceSpec("scalar.io/scalar1", 1),
            ]
        ),
    ),
    ("PodTopologySpreadArgs resources empty", PodTopologySpreadArgs, {}, PodTopologySpreadArgs([], "System")),
    (
        "PodTopologySpreadArgs resources with value",
        PodTopologySpreadArgs,
        {
            "defaultConstraints": [
                {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
            ]
        },
        PodTopologySpreadArgs(
            [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}], "System"
        ),
    ),
    (
        "NodeResourcesFitArgs not set",
        NodeResourcesFitArgs,
        {},
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", CPU_MEM)),
    ),
    (
        "NodeResourcesFitArgs Resources empty",
        NodeResourcesFitArgs,
        {"scoringStrategy": {"type": "MostAllocated"}},
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated", CPU_MEM)),
    ),
    (
        "NodeResourcesFitArgs resource weight 0 -> 1",
        NodeResourcesFitArgs,
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "nvidia.com/gpu"}]}},
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy("MostAllocated", [ResourceSpec("nvidia.com/gpu", 1)])
        ),
    ),
    (
        "VolumeBindingArgs empty, StorageCapacityScoring disabled",
        VolumeBindingArgs,
        {},
        VolumeBindingArgs(600, None),
    ),
    ("DynamicResourcesArgs defaults", DynamicResourcesArgs, {}, DynamicResourcesArgs(10.0, 600.0)),
]


@pytest.mark.parametrize(
    ("name", "cls", "raw", "want"), PLUGIN_ARGS_DEFAULTS, ids=[c[0] for c in PLUGIN_ARGS_DEFAULTS]
)
def test_plugin_args_defaults(name: str, cls: type, raw: dict[str, Any], want: object) -> None:
    release = parse_emulated_version("1.35") if cls is VolumeBindingArgs else None  # the gate off
    assert _defaulted(cls, raw, release) == want


@pytest.mark.parametrize("version", ["1.37", None])
def test_volume_binding_shape_default_with_storage_capacity_scoring(version: str | None) -> None:
    """TestPluginArgsDefaults "VolumeBindingArgs empty, StorageCapacityScoring enabled": the gate
    is beta and on in v1.37 (kube_features.go), the default release."""
    release = parse_emulated_version(version) if version else None
    assert _defaulted(VolumeBindingArgs, {}, release) == VolumeBindingArgs(
        600, [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
    )
    assert _defaulted(VolumeBindingArgs, {}, parse_emulated_version("1.36")) == VolumeBindingArgs(600, None)
