"""DynamicResources with device binding conditions (DRADeviceBindingConditions, on in v1.37).

Expectations from upstream's pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go
(v1.37): ``isClaimReadyForBinding`` (every binding condition True in the claim's
``status.devices``; a True binding failure condition is the error ``claim <name> binding failed:
reason=<reason>, message=<%q message>``), ``isClaimTimeout`` (``allocationTimestamp`` plus
``bindingTimeout``, DynamicResourcesArgs, default 600 s), Filter (such a claim is "resourceclaim
not available on the node", so PostFilter deallocates it), PreBind (the ``BindingConditionsPending``
event, a poll every 5 s, ``device binding timeout``). The binding-condition cases of upstream's
dynamicresources_test.go were not in the stored sources (only versions before the feature), so
the cases here are written from that code, in test_dynamic_resources.py's style.
"""

from __future__ import annotations

import copy
from typing import Any

from dra_fakes import (
    CLAIM_NAME,
    DRIVER,
    NODE_NAME,
    POD_WITH_CLAIM_NAME,
    StoringClient,
    allocation_result,
    claim,
    device_class,
    node,
    pod,
    run_points,
    slice_,
)

from kubesched.api.dra.structured import new_allocator
from kubesched.config.releases import parse_emulated_version
from kubesched.framework.clock import VirtualClock
from kubesched.framework.prebind_wait import PRE_BIND_WAIT, PreBindWait
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.testing import new_framework

NOT_AVAILABLE = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node")
#: One second past DynamicResourcesBindingTimeoutDefault before the FakeHandle's clock (epoch 0).
TIMED_OUT = "1969-12-31T23:49:59Z"


def _with_binding(alloc: dict[str, Any], stamp: str | None = None) -> dict[str, Any]:
    """upstream's allocation result with binding conditions on its one device."""
    out = copy.deepcopy(alloc)
    out["devices"]["results"][0].update(bindingConditions=["attached"], bindingFailureConditions=["failed"])
    if stamp is not None:
        out["allocationTimestamp"] = stamp
    return out


def _device_status(*conditions: tuple[str, str], reason: str = "", message: str = "") -> list[dict[str, Any]]:
    return [
        {
            "driver": DRIVER,
            "pool": NODE_NAME,
            "device": "instance-1",
            "conditions": [
                {
                    "type": t,
                    "status": s,
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": "1970-01-01T00:00:00Z",
                }
                for t, s in conditions
            ],
        }
    ]


def _allocated(stamp: str | None, *conditions: tuple[str, str], **kw: str) -> dict[str, Any]:
    c = claim(allocation=_with_binding(allocation_result(), stamp))
    if conditions:
        c["status"]["devices"] = _device_status(*conditions, **kw)
    return c


def _stored(client: StoringClient) -> dict[str, Any]:
    [c] = [o for o in client.objects if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == CLAIM_NAME]
    return c


def test_allocated_and_attached_binds_without_waiting() -> None:
    run = run_points(POD_WITH_CLAIM_NAME, [_allocated(None, ("attached", "True")), device_class()])
    assert run.got["filter/worker"] == (Code.SUCCESS, "")
    assert run.got["prebindpreflight"] == (Code.SUCCESS, "")
    assert run.got["prebind"] == (Code.SUCCESS, "")
    assert run.state is not None and PRE_BIND_WAIT not in run.state
    handle = run.plugin.handle
    assert handle is not None
    [event] = [e for e in handle.events if e.reason == "BindingConditionsPending"]  # type: ignore[attr-defined]
    assert (event.type_, event.action, event.note) == (
        "Normal",
        "Scheduling",
        "waiting for binding conditions for device on node worker",
    )


def test_binding_failure_condition_makes_the_claim_unavailable_and_post_filter_deallocates() -> None:
    run = run_points(
        POD_WITH_CLAIM_NAME,
        [
            _allocated(None, ("attached", "False"), ("failed", "True"), reason="Broken", message="no fabric"),
            device_class(),
        ],
    )
    assert run.got["filter/worker"] == NOT_AVAILABLE
    assert run.got["postfilter"] == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    # allocation, reservedFor and devices go (upstream clears the three).
    assert _stored(run.client)["status"] == {}


def test_binding_timeout_makes_the_claim_unavailable() -> None:
    run = run_points(POD_WITH_CLAIM_NAME, [_allocated(TIMED_OUT), device_class()])
    assert run.got["filter/worker"] == NOT_AVAILABLE
    assert run.got["postfilter"] == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")


def test_not_ready_within_the_timeout_stays_allocated() -> None:
    run = run_points(POD_WITH_CLAIM_NAME, [_allocated("1970-01-01T00:00:00Z"), device_class()])
    assert run.got["filter/worker"] == (Code.SUCCESS, "")


def test_binding_conditions_ignored_with_the_gate_off() -> None:
    # v1.35: DRADeviceBindingConditions off; the failure condition does not count.
    run = run_points(
        POD_WITH_CLAIM_NAME,
        [_allocated(TIMED_OUT, ("failed", "True")), device_class()],
        release=parse_emulated_version("1.35"),
    )
    assert run.got["filter/worker"] == (Code.SUCCESS, "")
    assert run.got["prebind"] == (Code.SUCCESS, "")


def _pending_with_binding_device() -> tuple[Any, PreBindWait]:
    device = {"name": "instance-1", "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}
    run = run_points(POD_WITH_CLAIM_NAME, [claim(), device_class(), slice_(devices=[device])], allocator=new_allocator)
    assert run.got["prebind"] == (Code.SUCCESS, "")
    stored = _stored(run.client)
    assert stored["status"]["allocation"]["devices"]["results"] == [
        {
            "request": "req-1",
            "driver": DRIVER,
            "pool": NODE_NAME,
            "device": "instance-1",
            "bindingConditions": ["attached"],
            "bindingFailureConditions": ["failed"],
        }
    ]
    assert stored["status"]["allocation"]["allocationTimestamp"] == "1970-01-01T00:00:00Z"
    assert run.state is not None
    wait = run.state.read(PRE_BIND_WAIT)
    assert isinstance(wait, PreBindWait)
    assert (wait.plugin, wait.interval, wait.deadline, wait.timeout_message) == (
        "DynamicResources",
        5.0,
        600.0,
        "device binding timeout",
    )
    return run, wait


def _set_device_status(run: Any, devices: list[dict[str, Any]]) -> None:
    stored = _stored(run.client)
    stored["status"]["devices"] = devices
    stored["metadata"]["resourceVersion"] = str(int(stored["metadata"]["resourceVersion"]) + 1)


def test_pre_bind_waits_on_a_virtual_clock_until_attached() -> None:
    run, wait = _pending_with_binding_device()
    assert wait.poll() == (False, None)
    _set_device_status(run, _device_status(("attached", "True")))
    assert wait.poll() == (True, None)


def test_pre_bind_wait_ends_on_a_binding_failure() -> None:
    run, wait = _pending_with_binding_device()
    _set_device_status(run, _device_status(("failed", "True"), reason="Broken", message='no "fabric"'))
    assert wait.poll() == (
        False,
        'claim my-pod-my-resource binding failed: reason=Broken, message="no \\"fabric\\""',
    )


def test_pre_bind_wait_times_out_and_the_simulator_stops_offering_the_device() -> None:
    run, wait = _pending_with_binding_device()
    clock = run.plugin.handle.clock if run.plugin.handle is not None else None
    assert isinstance(clock, VirtualClock)
    clock.advance_to(wait.deadline)
    assert wait.poll() == (False, None)  # the binding cycle then fails with wait.timeout_message
    assert run.plugin._unbindable == {(DRIVER, NODE_NAME, "instance-1")}


def test_simulation_advances_the_clock_and_ends() -> None:
    # No driver sets "attached": PreBind waits bindingTimeout (600 s of virtual time), the pod
    # goes back to the queue, Filter finds the claim timed out, PostFilter deallocates it, and the
    # simulator no longer offers the device: the pod stays pending and the simulation ends.
    device = {"name": "instance-1", "bindingConditions": ["attached"]}
    p = pod([{"name": "gpu", "resourceClaimName": "claim-a"}])
    fw = new_framework(
        [DynamicResources],
        nodes=[node()],
        pods=[p],
        objects=[claim("claim-a", owner=False), device_class(), slice_(devices=[device])],
    )
    start = fw.clock.now()
    fw.schedule(until=start + 100_000)
    assert 600 <= fw.clock.now() - start < 100_000
    assert not fw.cluster.pods["default/my-pod"]["spec"].get("nodeName")
    reasons = [e.reason for e in fw.cluster.events]
    assert "BindingConditionsPending" in reasons
    stored = fw.cluster.get_object("resource.k8s.io/v1", "ResourceClaim", "default", "claim-a")
    assert stored is not None and not stored["status"].get("allocation")
