"""``--feature-gates`` per release: each release knows its own gates, at its own emulation version.

Every fact below was read in the release's own upstream file, named in the test:
pkg/features/kube_features.go of k8s.io/kubernetes v1.35.4, v1.36.3 and v1.37.2
(``defaultVersionedKubernetesFeatureGates`` and ``defaultKubernetesFeatureGateDependencies``) and
staging/src/k8s.io/component-base/featuregate/feature_gate.go (``unsafeSetFromMap``'s messages).
The messages of the v1.37.2 binary itself are compared in tests/e2e/test_feature_gates_binary.py.
"""

from __future__ import annotations

import pytest

from kubesched.config.feature_gates import (
    RELEASES,
    FeatureGateError,
    FeatureGates,
    known_feature_gates,
    parse_feature_gates,
)


def errors_of(*values: str, release: str) -> list[str]:
    with pytest.raises(FeatureGateError) as info:
        parse_feature_gates(values, release)
    return info.value.errors


def spec(release: str, name: str) -> tuple[bool, str, bool]:
    s = known_feature_gates(release)[name]
    return s.default, s.pre_release, s.lock_to_default


def test_the_default_release_is_1_35() -> None:
    assert RELEASES == ("1.35", "1.36", "1.37")
    assert known_feature_gates() == known_feature_gates("1.35")
    assert parse_feature_gates([]).release == "1.35"
    assert FeatureGates().enabled("SchedulerQueueingHints") is True  # a 1.35 gate, gone in 1.37


@pytest.mark.parametrize(("release", "gates", "alpha_beta"), [
    # alpha and beta: the gates `kube-scheduler --help` of v1.35.4 and v1.37.2 lists (AllAlpha and
    # AllBeta among them; tests/e2e/test_feature_gates_binary.py compares the lists themselves)
    ("1.35", 218, 141),
    ("1.37", 253, 165),
])
def test_each_release_has_its_own_gates(release: str, gates: int, alpha_beta: int) -> None:
    known = known_feature_gates(release)
    assert len(known) == gates
    assert sum(s.pre_release in ("ALPHA", "BETA") for s in known.values()) == alpha_beta


@pytest.mark.parametrize("release", ["1.34", "1.38", "v1.37", "1.37.2", "", "latest"])
def test_an_unsupported_release_is_a_value_error(release: str) -> None:
    with pytest.raises(ValueError, match="unknown release"):
        known_feature_gates(release)
    with pytest.raises(ValueError, match="unknown release"):
        parse_feature_gates(["SchedulerAsyncPreemption=false"], release)


@pytest.mark.parametrize(("release", "expected"), [
    # kube_features.go v1.35.4: {1.33, false, Alpha} only
    ("1.35", (False, "ALPHA", False)),
    # v1.36.3: unchanged
    ("1.36", (False, "ALPHA", False)),
    # v1.37.2: {1.33, false, Alpha}, {1.37, true, Beta}
    ("1.37", (True, "BETA", False)),
])
def test_storage_capacity_scoring(release: str, expected: tuple[bool, str, bool]) -> None:
    assert spec(release, "StorageCapacityScoring") == expected


@pytest.mark.parametrize("release", RELEASES)
def test_scheduler_async_api_calls_is_a_beta_off_by_default_in_every_release(release: str) -> None:
    # kube_features.go v1.35.4, v1.36.3, v1.37.2: {1.34, false, Beta} only
    assert spec(release, "SchedulerAsyncAPICalls") == (False, "BETA", False)


@pytest.mark.parametrize(("release", "expected"), [
    ("1.35", (False, "ALPHA", False)),  # v1.35.4: {1.35, false, Alpha}
    ("1.36", (True, "BETA", False)),  # v1.36.3: + {1.36, true, Beta}
    ("1.37", (True, "", True)),  # v1.37.2: + {1.37, true, GA, LockToDefault}
])
def test_node_declared_features_goes_ga_and_locked_in_1_37(release: str, expected: tuple[bool, str, bool]) -> None:
    assert spec(release, "NodeDeclaredFeatures") == expected


def test_gates_removed_in_1_37_are_unknown_there() -> None:
    # kube_features.go v1.36.3 still lists GangScheduling {1.35, false, Alpha} and
    # SchedulerQueueingHints {1.34, true, GA, LockToDefault}; v1.37.2 lists neither.
    for name in ("GangScheduling", "SchedulerQueueingHints"):
        assert name in known_feature_gates("1.35") and name in known_feature_gates("1.36")
        assert name not in known_feature_gates("1.37")
        assert errors_of(f"{name}=true", release="1.37") == [f"unrecognized feature gate: {name}"]
    assert spec("1.36", "SchedulerQueueingHints") == (True, "", True)


def test_generic_workload_is_beta_but_off_in_1_37() -> None:
    # kube_features.go v1.37.2: {1.35, false, Alpha}, {1.37, false, Beta}
    assert spec("1.35", "GenericWorkload") == (False, "ALPHA", False)
    assert spec("1.37", "GenericWorkload") == (False, "BETA", False)


def test_a_locked_gate_set_away_from_its_default_under_1_37() -> None:
    assert errors_of("NodeDeclaredFeatures=false", release="1.37") == [
        "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"
    ]
    # an alpha gate in 1.35: settable there
    assert parse_feature_gates(["NodeDeclaredFeatures=false"], "1.35").enabled("NodeDeclaredFeatures") is False


def test_dependencies_of_the_release() -> None:
    # defaultKubernetesFeatureGateDependencies v1.37.2: TopologyAwareWorkloadScheduling: {GenericWorkload}
    # (v1.35.4 does not register TopologyAwareWorkloadScheduling at all)
    assert errors_of("TopologyAwareWorkloadScheduling=true", release="1.37") == [
        "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"
    ]
    assert errors_of("TopologyAwareWorkloadScheduling=true", release="1.35") == [
        "unrecognized feature gate: TopologyAwareWorkloadScheduling"
    ]
    gates = parse_feature_gates(["GenericWorkload=true,TopologyAwareWorkloadScheduling=true"], "1.37")
    assert gates.enabled("TopologyAwareWorkloadScheduling") and gates.release == "1.37"


def test_defaults_answer_for_the_release_parsed() -> None:
    assert parse_feature_gates([], "1.37").enabled("StorageCapacityScoring") is True
    assert parse_feature_gates([], "1.35").enabled("StorageCapacityScoring") is False
    # set to 1.37's default: nothing to ignore; away from it: named
    assert parse_feature_gates(["StorageCapacityScoring=true"], "1.37").without_effect() == []
    assert parse_feature_gates(["StorageCapacityScoring=false"], "1.37").without_effect() == [
        "StorageCapacityScoring=false"
    ]


def test_ga_and_deprecated_warnings_are_structured_from_1_36() -> None:
    # feature_gate.go of component-base v0.36.3 and v0.37.2: logger.Info("Warning: setting GA feature
    # gate. ...", "featureGate", k, "value", v); v0.35.4: klog.Warningf("Setting GA feature gate %s=%t. ...")
    values = ["InformerResourceVersion=false,AllowDNSOnlyNodeCSR=true"]
    assert parse_feature_gates(values, "1.37").warnings == [
        '"Warning: setting GA feature gate. It will be removed in a future release." '
        'featureGate="InformerResourceVersion" value=false',
        '"Warning: setting deprecated feature gate. It will be removed in a future release." '
        'featureGate="AllowDNSOnlyNodeCSR" value=true',
    ]
    assert parse_feature_gates(values, "1.35").warnings == [
        "Setting GA feature gate InformerResourceVersion=false. It will be removed in a future release.",
        "Setting deprecated feature gate AllowDNSOnlyNodeCSR=true. It will be removed in a future release.",
    ]


@pytest.mark.parametrize("release", RELEASES)
def test_every_dependency_names_a_gate_of_its_release(release: str) -> None:
    # v1.36.3 and v1.37.2 also write ``featuregate.Feature(clientfeatures.AtomicFIFO)``: a client-go gate
    from kubesched.config.feature_gates import _dependencies

    known = known_feature_gates(release)
    assert all(name in known and set(deps) <= set(known) for name, deps in _dependencies(release).items())
    if release != "1.35":
        assert _dependencies(release)["StaleControllerConsistencyJob"] == ["AtomicFIFO"]
