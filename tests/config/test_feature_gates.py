"""``--feature-gates`` as kube-scheduler v1.35.4 reads it (component-base featuregate and
ComponentGlobalsRegistry): the expected messages were taken from the v1.35.4 binary
(``kube-scheduler --feature-gates=... --write-config-to=/dev/null``) for the same values."""

from __future__ import annotations

import pytest

from kubesched.config.feature_gates import (
    HONOURED,
    FeatureGateError,
    FeatureGates,
    known_feature_gates,
    parse_feature_gates,
)


def errors_of(*values: str) -> list[str]:
    with pytest.raises(FeatureGateError) as info:
        parse_feature_gates(values)
    return info.value.errors


def test_the_v1_35_gates_are_known_with_their_stage_and_default() -> None:
    known = known_feature_gates()
    assert len(known) == 218  # 141 alpha/beta in `kube-scheduler --help`, plus GA and deprecated
    assert sum(s.pre_release in ("ALPHA", "BETA") for s in known.values()) == 141
    qh = known["SchedulerQueueingHints"]
    assert (qh.default, qh.pre_release, qh.lock_to_default) == (True, "", True)
    ap = known["SchedulerAsyncPreemption"]
    assert (ap.default, ap.pre_release, ap.lock_to_default) == (True, "BETA", False)
    assert known["GangScheduling"].pre_release == "ALPHA" and not known["GangScheduling"].default
    # registered by client-go, component-base (logs, zpages) and featuregate itself
    assert {"InOrderInformers", "ContextualLogging", "ComponentFlagz", "AllAlpha", "AllBeta"} <= set(known)
    # "Default: false ... LockToDefault: true" is not read as a default of true
    wf = known["WatchFromStorageWithoutResourceVersion"]
    assert (wf.default, wf.pre_release, wf.lock_to_default) == (False, "DEPRECATED", True)


def test_valid_values_are_kept_and_the_rest_default() -> None:
    gates = parse_feature_gates(["SchedulerAsyncPreemption=false,GangScheduling=true,GenericWorkload=true"])
    assert gates.enabled("SchedulerAsyncPreemption") is False
    assert gates.enabled("GangScheduling") is True
    assert gates.enabled("SchedulerPopFromBackoffQ") is True  # default
    assert gates.warnings == []
    assert FeatureGates().enabled("SchedulerQueueingHints") is True


@pytest.mark.parametrize("values", [
    ["kube:SchedulerAsyncPreemption=false"],
    [" SchedulerAsyncPreemption = false "],
    ["SchedulerAsyncPreemption=true,SchedulerAsyncPreemption=F"],  # the last value wins
    ["SchedulerAsyncPreemption=0", ",,"],
    ["kube:SchedulerAsyncPreemption=true", "kube:SchedulerAsyncPreemption=FALSE"],  # repeated flag
])
def test_upstream_forms(values: list[str]) -> None:
    assert parse_feature_gates(values).enabled("SchedulerAsyncPreemption") is False


@pytest.mark.parametrize(("value", "message"), [
    ("Foo=true", "unrecognized feature gate: Foo"),
    ("SchedulerQueueingHints=maybe",
     'invalid value of SchedulerQueueingHints=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
    ("SchedulerQueueingHints=yes",
     'invalid value of SchedulerQueueingHints=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    ("a=b=c", 'invalid value of a=b=c, err: strconv.ParseBool: parsing "b=c": invalid syntax'),
    ('SchedulerAsyncPreemption=é"x',
     'invalid value of SchedulerAsyncPreemption=é"x, err: strconv.ParseBool: parsing "é\\"x": invalid syntax'),
    ("SchedulerQueueingHints", "missing bool value for SchedulerQueueingHints"),
    ("PodSchedulingReadiness=false",
     "cannot set feature gate PodSchedulingReadiness to false, feature is locked to true"),
    ("wardle:X=true", "component not registered: wardle"),
    ("SchedulerAsyncPreemption=true:y", "component not registered: SchedulerAsyncPreemption=true"),
    ("SchedulerAsyncPreemption=false,kube:GangScheduling=true",
     "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"),
    ("GangScheduling=true", "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("AllAlpha=true,GenericWorkload=false",
     "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
])
def test_refused_with_upstreams_message(value: str, message: str) -> None:
    assert errors_of(value) == [message]


def test_every_problem_of_a_kind_is_reported() -> None:
    assert errors_of("PodSchedulingReadiness=false,SchedulerQueueingHints=false") == [
        "cannot set feature gate PodSchedulingReadiness to false, feature is locked to true",
        "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true",
    ]
    # an unknown name stops the check, with what was found before it
    assert errors_of("PodSchedulingReadiness=false,Foo=true") == [
        "cannot set feature gate PodSchedulingReadiness to false, feature is locked to true",
        "unrecognized feature gate: Foo",
    ]
    assert errors_of("GracefulNodeShutdown=false") == [
        "GracefulNodeShutdownBasedOnPodPriority is enabled, but depends on features that are disabled: "
        "[GracefulNodeShutdown]",
        "WindowsGracefulNodeShutdown is enabled, but depends on features that are disabled: [GracefulNodeShutdown]",
    ]


def test_all_alpha_and_all_beta_set_the_gates_not_named() -> None:
    gates = parse_feature_gates(["AllAlpha=true,ComponentFlagz=false"])
    assert gates.enabled("GangScheduling") and gates.enabled("GenericWorkload")
    assert gates.enabled("ComponentFlagz") is False
    assert gates.enabled("SchedulerAsyncAPICalls") is False  # beta: untouched
    gates = parse_feature_gates(["AllBeta=false"])
    assert gates.enabled("SchedulerAsyncPreemption") is False
    assert gates.without_effect() == []  # AllBeta=false is its default


def test_ga_and_deprecated_gates_warn_as_upstream() -> None:
    gates = parse_feature_gates(["InformerResourceVersion=false,AllowDNSOnlyNodeCSR=true,SchedulerQueueingHints=true"])
    assert gates.warnings == [
        "Setting GA feature gate InformerResourceVersion=false. It will be removed in a future release.",
        "Setting deprecated feature gate AllowDNSOnlyNodeCSR=true. It will be removed in a future release.",
        "Setting GA feature gate SchedulerQueueingHints=true. It will be removed in a future release.",
    ]


def test_gates_set_away_from_their_default_are_named_as_without_effect() -> None:
    assert frozenset({"OpportunisticBatching"}) == HONOURED  # framework/batch.py
    gates = parse_feature_gates(
        ["SchedulerAsyncPreemption=false,SchedulerPopFromBackoffQ=true,AllAlpha=true,OpportunisticBatching=false"]
    )
    assert gates.without_effect() == ["SchedulerAsyncPreemption=false", "AllAlpha=true"]
    assert not gates.enabled("OpportunisticBatching")
