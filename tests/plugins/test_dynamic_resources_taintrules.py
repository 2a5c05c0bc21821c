"""DynamicResources with DeviceTaintRules (DRADeviceTaintRules, on in v1.37): the rules' taints
reach the allocator on the slices' devices, as upstream's ``ListWithDeviceTaintRules`` (the
resource slice tracker) hands them to ``structured.NewAllocator``; a NoSchedule taint keeps the
device from a claim that does not tolerate it (allocator_testing.go's tainted-* rows, here with
the taint coming from a rule). With the gate off (v1.36's default) the rules are not read.
"""

from __future__ import annotations

from typing import Any

from dra_fakes import CLASS_NAME, DRIVER, NODE_NAME, POD_WITH_CLAIM_NAME, claim, device_class, run_points, slice_

from kubesched.api.dra.structured import new_allocator
from kubesched.config.releases import parse_emulated_version
from kubesched.framework.status import Code


def _rule(api_version: str = "resource.k8s.io/v1", effect: str = "NoSchedule") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": NODE_NAME, "device": "instance-1"},
            "taint": {"key": "example.com/maintenance", "effect": effect},
        },
    }


def _tolerating() -> dict[str, Any]:
    return claim(
        requests=[
            {
                "name": "req-1",
                "exactly": {
                    "deviceClassName": CLASS_NAME,
                    "tolerations": [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}],
                },
            }
        ]
    )


def test_rule_taint_keeps_the_device_from_the_claim() -> None:
    run = run_points(POD_WITH_CLAIM_NAME, [claim(), device_class(), slice_(), _rule()], allocator=new_allocator)
    assert run.got["filter/worker"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")


def test_tolerated_rule_taint() -> None:
    run = run_points(POD_WITH_CLAIM_NAME, [_tolerating(), device_class(), slice_(), _rule()], allocator=new_allocator)
    assert run.got["filter/worker"] == (Code.SUCCESS, "")


def test_effect_none_does_not_keep_the_device() -> None:
    run = run_points(
        POD_WITH_CLAIM_NAME, [claim(), device_class(), slice_(), _rule(effect="None")], allocator=new_allocator
    )
    assert run.got["filter/worker"] == (Code.SUCCESS, "")


def test_rules_not_read_with_the_gate_off() -> None:
    # v1.36: DRADeviceTaintRules is beta and off by default (rules served as v1beta2).
    run = run_points(
        POD_WITH_CLAIM_NAME,
        [claim(), device_class(), slice_(), _rule("resource.k8s.io/v1beta2")],
        allocator=new_allocator,
        release=parse_emulated_version("1.36"),
    )
    assert run.got["filter/worker"] == (Code.SUCCESS, "")


def test_malformed_rule_affects_nothing_else() -> None:
    bad = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "bad"}, "spec": 7}
    run = run_points(POD_WITH_CLAIM_NAME, [claim(), device_class(), slice_(), bad], allocator=new_allocator)
    assert run.got["filter/worker"] == (Code.SUCCESS, "")
