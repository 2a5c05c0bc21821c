"""DynamicResources (kubesched.plugins.dynamicresources): hand-computed cases and bad input.

Not from upstream's table (that is test_dynamic_resources.py, from dynamicresources_test.go):
an 8-GPU claim that must share an NVLink domain (matchAttribute), a claim that fits nowhere, a
template-generated claim, PostFilter's deallocation and its limits, in-flight allocations seen by
the next pod, Score over ``firstAvailable``, the queueing hints and the release differences.
Every expectation is worked out by hand from the objects below. The NVLink case also runs with
the real allocator (kubesched.api.dra.structured) when it allocates.
"""

from __future__ import annotations

import copy
import time
from fractions import Fraction
from typing import Any

import pytest
from dra_fakes import (
    CLAIM_NAME,
    CLASS_NAME,
    DRIVER,
    NAMESPACE,
    NODE2_NAME,
    NODE_NAME,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    FakeAllocator,
    StoringClient,
    allocation_result,
    claim,
    device_class,
    node,
    on_node,
    pod,
    run_points,
    slice_,
)

from kubesched.api.dra import structured
from kubesched.api.dra.structured import gather_allocated_state as allocated_state
from kubesched.config.plugin_args import DynamicResourcesArgs
from kubesched.config.releases import V1_35, V1_37
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint, object_event
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.plugins.dynamicresources.plugin import STATE_KEY, StateData
from kubesched.testing import FakeHandle

NVLINK = f"{DRIVER}/nvlinkDomain"  # an unqualified attribute is in the driver's domain


def gpus(domains: list[str]) -> list[dict[str, Any]]:
    """One device per entry, ``gpu-<i>`` with its NVLink domain attribute."""
    return [{"name": f"gpu-{i}", "attributes": {"nvlinkDomain": {"string": d}}} for i, d in enumerate(domains)]


EIGHT_GPUS_ONE_DOMAIN = claim(
    requests=[{"name": "gpus", "exactly": {"deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 8}}],
    constraints=[{"requests": ["gpus"], "matchAttribute": NVLINK}],
)


@pytest.mark.parametrize("allocator", ["fake", "real"])
def test_eight_gpus_go_where_one_nvlink_domain_has_them(allocator: str) -> None:
    # worker: 8 GPUs, 4 in domain a and 4 in b -> no 8 share a domain; worker-2: all 8 in c.
    objects = [
        EIGHT_GPUS_ONE_DOMAIN,
        device_class(),
        slice_(NODE_NAME, gpus(["a"] * 4 + ["b"] * 4)),
        slice_(NODE2_NAME, gpus(["c"] * 8)),
    ]
    factory = FakeAllocator if allocator == "fake" else structured.new_allocator
    try:
        run = run_points(POD_WITH_CLAIM_NAME, objects, [node(NODE_NAME), node(NODE2_NAME)], allocator=factory)
    except NotImplementedError:  # pragma: no cover - the real allocator before dra-alloc lands
        pytest.skip("the real allocator is not there yet")
    if allocator == "real" and run.got.get("filter/worker", (Code.SUCCESS, ""))[0] == Code.ERROR:
        pytest.skip(f"the real allocator is not there yet: {run.got['filter/worker'][1]}")
    assert run.got["filter/worker"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    assert run.got["filter/worker-2"] == (Code.SUCCESS, "")
    assert run.got["prebind"] == (Code.SUCCESS, "")
    [stored] = [o for o in run.client.objects if o.get("kind") == "ResourceClaim"]
    results = stored["status"]["allocation"]["devices"]["results"]
    assert sorted(r["device"] for r in results) == [f"gpu-{i}" for i in range(8)]
    assert {(r["driver"], r["pool"], r["request"]) for r in results} == {(DRIVER, NODE2_NAME, "gpus")}
    assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": POD_UID}]


def test_claim_that_fits_nowhere() -> None:
    # Three devices wanted, each node has one: every node says why, PostFilter has nothing to free.
    big = claim(requests=[{"name": "req-1", "exactly": {"deviceClassName": CLASS_NAME, "count": 3}}])
    objects = [big, device_class(), slice_(NODE_NAME), slice_(NODE2_NAME)]
    for release, post in ((V1_37, ""), (V1_35, "still not schedulable")):
        run = run_points(POD_WITH_CLAIM_NAME, objects, [node(NODE_NAME), node(NODE2_NAME)], release=release)
        assert run.got["filter/worker"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
        assert run.got["filter/worker-2"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
        assert run.got["postfilter"] == (Code.UNSCHEDULABLE, post)
        assert [c for c in run.client.calls if c[0] == "update_object_status"] == []


def test_template_generated_claim_is_allocated_and_reserved() -> None:
    run = run_points(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, [claim(), device_class(), slice_()])
    assert run.got["preenqueue"] == (Code.SUCCESS, "")
    assert run.got["prebind"] == (Code.SUCCESS, "")
    [stored] = [o for o in run.client.objects if o.get("kind") == "ResourceClaim"]
    alloc = stored["status"]["allocation"]
    assert alloc["devices"] == allocation_result()["devices"] and alloc["nodeSelector"] == on_node(NODE_NAME)
    assert stored["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]


def test_template_claim_not_generated_yet_waits() -> None:
    no_status = pod([{"name": "my-resource", "resourceClaimTemplateName": "tmpl"}])
    run = run_points(no_status, [device_class()])
    assert run.got == {
        "preenqueue": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'pod "default/my-pod": ResourceClaim not created yet')
    }


def test_post_filter_deallocates_only_claims_nobody_else_uses() -> None:
    # Allocated on worker-2, which is gone: reserved by nobody -> deallocated; reserved by another
    # pod -> left alone (PostFilter says nothing, v1.37).
    on_gone = {**allocation_result(node_name=NODE2_NAME)}
    free = claim(allocation=on_gone)
    run = run_points(POD_WITH_CLAIM_NAME, [free], [node(NODE_NAME)])
    assert run.got["filter/worker"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node")
    assert run.got["postfilter"] == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    [stored] = [o for o in run.client.objects if o.get("kind") == "ResourceClaim"]
    assert stored["status"] == {}

    other = {"resource": "pods", "name": "other", "uid": "other-uid"}
    shared = claim(allocation=on_gone, reserved_for=[other])
    run = run_points(POD_WITH_CLAIM_NAME, [shared], [node(NODE_NAME)])
    assert run.got["postfilter"] == (Code.UNSCHEDULABLE, "")
    [stored] = [o for o in run.client.objects if o.get("kind") == "ResourceClaim"]
    assert stored["status"]["reservedFor"] == [other]


def test_in_flight_allocation_is_seen_by_the_next_pod_until_unreserve() -> None:
    # One device; pod A reserves it, pod B's cycle (its own claim) finds nothing until A unreserves.
    claim_b = claim("b-claim", uid="uid-b")
    pod_b = pod([{"name": "r", "resourceClaimName": "b-claim"}])
    pod_b["metadata"].update(name="pod-b", uid="uid-pod-b")
    handle = FakeHandle(objects=[claim(), claim_b, device_class(), slice_()])
    pl = DynamicResources(handle=handle, allocator_factory=FakeAllocator)
    ni = NodeInfo(node())
    a, state_a = PodInfo(copy.deepcopy(POD_WITH_CLAIM_NAME)), CycleState()
    assert pl.pre_filter(state_a, a, [ni])[1] is None and pl.filter(state_a, a, ni) is None
    assert pl.reserve(state_a, a, NODE_NAME) is None
    b = PodInfo(pod_b)

    def filter_b() -> tuple[Code, str]:
        state = CycleState()
        assert pl.pre_filter(state, b, [ni])[1] is None
        st = pl.filter(state, b, ni)
        return (Code.SUCCESS, "") if st is None else (st.code, st.message())

    assert filter_b() == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    # A's own claim is in flight: a second cycle for A must wait (upstream's message).
    again = pl.pre_filter(CycleState(), a, [ni])[1]
    assert again is not None and again.message() == (
        f"resource claim {NAMESPACE}/{CLAIM_NAME} is in the process of being allocated"
    )
    pl.unreserve(state_a, a, NODE_NAME)
    assert filter_b() == (Code.SUCCESS, "")


def test_score_prefers_earlier_subrequests() -> None:
    # subreq-1 wants 2 devices, subreq-2 one: worker (1 device) gets subreq-2 -> 8 - 1 = 7,
    # worker-2 (2 devices) subreq-1 -> 8; normalised to 100 * 7 // 8 = 87 and 100.
    prioritized = claim(
        requests=[
            {
                "name": "req-1",
                "firstAvailable": [
                    {"name": "subreq-1", "deviceClassName": CLASS_NAME, "count": 2},
                    {"name": "subreq-2", "deviceClassName": CLASS_NAME, "count": 1},
                ],
            }
        ]
    )
    two = slice_(NODE2_NAME, [{"name": "instance-1"}, {"name": "instance-2"}])
    run = run_points(POD_WITH_CLAIM_NAME, [prioritized, device_class(), slice_(), two], [node(), node(NODE2_NAME)])
    assert run.scores is not None
    assert {s.name: s.score for s in run.scores} == {NODE_NAME: 87, NODE2_NAME: 100}
    assert run.selected == NODE2_NAME


def test_pods_with_claims_are_not_signable() -> None:
    pl = DynamicResources(handle=FakeHandle())
    frags, st = pl.sign_pod(PodInfo(copy.deepcopy(POD_WITH_CLAIM_NAME)))
    assert frags == [] and st is not None
    assert (st.code, st.message()) == (Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
    assert pl.sign_pod(PodInfo(pod([]))) == ([], None)


def test_not_owner_message_by_release() -> None:
    foreign = claim(owner=False)
    got = {}
    for release in (V1_35, V1_37):
        pl = DynamicResources(handle=FakeHandle(objects=[foreign], release=release))
        st = pl.pre_enqueue(PodInfo(copy.deepcopy(POD_WITH_CLAIM_TEMPLATE_IN_STATUS)))
        assert st is not None
        got[str(release)] = st.message()
    assert got == {
        "1.35": "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)",
        "1.37": "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)",
    }


# -- queueing hints --------------------------------------------------------------------------
CLAIM_EVENT = str(object_event("ResourceClaim", ActionType.ADD | ActionType.UPDATE | ActionType.DELETE))


def _hint(name: str) -> Any:
    pl = DynamicResources(handle=FakeHandle(objects=[claim(), claim("not-my-claim", owner=False)]))
    labels = {str(e.event): e.hint for e in pl.events_to_register()}
    return labels[name]


def test_events_registered() -> None:
    """v1.37's EventsToRegister: Node Add|UpdateNodeLabel|UpdateNodeAllocatable, ResourceClaim
    Add|Update|Delete (hinted), the pod's own update (hinted), DeviceClass and ResourceSlice
    Add|Update."""
    pl = DynamicResources(handle=FakeHandle())
    add_update = ActionType.ADD | ActionType.UPDATE
    assert [(e.event, e.hint is not None) for e in pl.events_to_register()] == [
        (
            ClusterEvent(
                EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
            ),
            False,
        ),
        (object_event("ResourceClaim", add_update | ActionType.DELETE), True),
        (ClusterEvent(EventResource.POD, ActionType.UPDATE_OTHER), True),
        (object_event("DeviceClass", add_update), False),
        (object_event("ResourceSlice", add_update), False),
    ]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, claim(), QueueingHint.QUEUE),  # the pod's claim was created
        (None, claim("not-my-claim", owner=False), QueueingHint.QUEUE_SKIP),  # another claim
        (claim(), claim(), QueueingHint.QUEUE_SKIP),  # status unchanged
        (claim(), claim(allocation=allocation_result()), QueueingHint.QUEUE),  # status changed
        # any claim deallocated frees devices
        (
            claim("not-my-claim", owner=False, allocation=allocation_result()),
            claim("not-my-claim", owner=False),
            QueueingHint.QUEUE,
        ),
        (claim("x", allocation=allocation_result()), None, QueueingHint.QUEUE),  # deleted while allocated
        (claim("x"), None, QueueingHint.QUEUE_SKIP),  # deleted, held nothing
    ],
)
def test_claim_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert _hint(CLAIM_EVENT)(copy.deepcopy(POD_WITH_CLAIM_NAME), old, new) == want


def test_pod_hint() -> None:
    hint = _hint("PodUpdate")
    pending = pod([{"name": "my-resource", "resourceClaimTemplateName": "t"}])
    assert hint(pending, pending, POD_WITH_CLAIM_TEMPLATE_IN_STATUS) == QueueingHint.QUEUE
    assert hint(pending, pending, pending) == QueueingHint.QUEUE_SKIP  # still no claim name
    other = copy.deepcopy(POD_WITH_CLAIM_TEMPLATE_IN_STATUS)
    other["metadata"]["uid"] = "other"
    assert hint(pending, pending, other) == QueueingHint.QUEUE_SKIP


# -- bad input: statuses, never exceptions ---------------------------------------------------
def _malformed_claims() -> dict[str, dict[str, Any]]:
    base = claim()
    return {
        "status-missing": {k: v for k, v in base.items() if k != "status"},
        "status-a-string": {**base, "status": "allocated"},
        "allocation-a-list": {**base, "status": {"allocation": ["x"]}},
        "spec-missing": {k: v for k, v in base.items() if k != "spec"},
        "requests-a-string": {**base, "spec": {"devices": {"requests": "gpu"}}},
        "request-not-an-object": {**base, "spec": {"devices": {"requests": [7]}}},
        "reserved-for-a-dict": {**base, "status": {"allocation": allocation_result(), "reservedFor": {"uid": "x"}}},
        "node-selector-malformed": {**base, "status": {"allocation": {"nodeSelector": {"nodeSelectorTerms": "x"}}}},
    }


@pytest.mark.parametrize("name", list(_malformed_claims()))
def test_malformed_claim_gives_statuses(name: str) -> None:
    bad = _malformed_claims()[name]
    run = run_points(POD_WITH_CLAIM_NAME, [bad, device_class(), slice_()], unreserve_after_bind=True)
    assert run.got  # ran to some point without raising
    for code, _ in run.got.values():
        assert isinstance(code, Code)


@pytest.mark.parametrize(
    "resource_claims",
    [
        "gpu",  # not a list
        [7],  # an entry that is not an object
        [{"name": "r"}],  # neither a claim name nor a template
        [{"name": "r", "resourceClaimName": 5}],
    ],
)
def test_malformed_pod_claims_give_statuses(resource_claims: Any) -> None:
    bad = copy.deepcopy(POD_WITH_CLAIM_NAME)
    bad["spec"]["resourceClaims"] = resource_claims
    pl = DynamicResources(handle=FakeHandle(objects=[claim(), device_class()]))
    pi = PodInfo(bad)
    st = pl.pre_enqueue(pi)
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.message()
    state = CycleState()
    _, st = pl.pre_filter(state, pi, [])
    assert st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert isinstance(state.read(STATE_KEY), StateData)
    _, post = pl.post_filter(state, pi, {})
    assert post is not None and post.code == Code.UNSCHEDULABLE


def test_points_without_pre_filter_state_are_errors_not_exceptions() -> None:
    pl = DynamicResources(handle=FakeHandle())
    pi, ni = PodInfo(copy.deepcopy(POD_WITH_CLAIM_NAME)), NodeInfo(node())
    for st in (
        pl.filter(CycleState(), pi, ni),
        pl.reserve(CycleState(), pi, NODE_NAME),
        pl.pre_bind(CycleState(), pi, NODE_NAME),
    ):
        assert st is not None and st.code == Code.ERROR
    pl.unreserve(CycleState(), pi, NODE_NAME)
    assert pl.score(CycleState(), pi, ni) == (0, None)


@pytest.mark.parametrize(
    ("release", "want"),
    [
        (V1_37, (Code.ERROR, "node worker: timed out trying to allocate devices")),
        (V1_35, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "timed out trying to allocate devices")),
    ],
)
def test_filter_timeout(release: Any, want: tuple[Code, str]) -> None:
    """filterTimeout from DynamicResourcesArgs; v1.36 made a timeout the cycle's Error."""

    class Slow(FakeAllocator):
        def allocate(self, node: Any, claims: Any, *, deadline: float | None = None) -> list[dict[str, Any]]:
            time.sleep(0.02)
            return super().allocate(node, claims)

    handle = FakeHandle(objects=[claim(), device_class(), slice_()], release=release)
    pl = DynamicResources(DynamicResourcesArgs(filter_timeout=0.001), handle, allocator_factory=Slow)
    pi, ni, state = PodInfo(copy.deepcopy(POD_WITH_CLAIM_NAME)), NodeInfo(node()), CycleState()
    assert pl.pre_filter(state, pi, [ni])[1] is None
    st = pl.filter(state, pi, ni)
    assert st is not None and (st.code, st.message()) == want
    # 0 disables the timeout.
    pl = DynamicResources(DynamicResourcesArgs(filter_timeout=0), handle, allocator_factory=Slow)
    state = CycleState()
    assert pl.pre_filter(state, pi, [ni])[1] is None and pl.filter(state, pi, ni) is None


def test_allocator_error_is_an_error_status() -> None:
    class Broken(FakeAllocator):
        def allocate(self, node: Any, claims: Any, *, deadline: float | None = None) -> list[dict[str, Any]]:
            raise structured.AllocationError("claim default/my-pod-my-resource: selector #0: CEL compile error")

    run = run_points(POD_WITH_CLAIM_NAME, [claim(), device_class(), slice_()], allocator=Broken)
    assert run.got["filter/worker"] == (Code.ERROR, "claim default/my-pod-my-resource: selector #0: CEL compile error")


def test_bind_failure_preserves_in_flight_until_unreserve() -> None:
    """Upstream's "bind-failure-preserves-inflight-until-unreserve" (dynamicresources_test.go):
    the claim update fails, PreBind is an Error wrapping the API error, the allocation stays in
    flight until Unreserve drops it."""

    class FailingUpdate(StoringClient):
        def update_object(self, obj: Any) -> Any:
            raise RuntimeError("claim bind error")

    run = run_points(
        POD_WITH_CLAIM_NAME,
        [claim(), device_class(), slice_()],
        client_type=FailingUpdate,
        unreserve_after_bind=True,
    )
    assert run.got["prebind"] == (Code.ERROR, f"add finalizer to claim {NAMESPACE}/{CLAIM_NAME}: claim bind error")
    assert run.in_flight_after_pre_bind == [CLAIM_NAME]
    assert run.plugin.tracker is not None and run.plugin.tracker.in_flight_claims() == []
    [stored] = [o for o in run.client.objects if o.get("kind") == "ResourceClaim"]
    assert stored["status"] == {}


def test_allocated_state() -> None:
    """allocateddevices.go foreachAllocatedDevice: admin access observes, a share takes its share
    and capacity (DRAConsumableCapacity) or else the whole device; malformed results are skipped."""
    results = [
        {"driver": "d", "pool": "p", "device": "a", "request": "r"},
        {"driver": "d", "pool": "p", "device": "b", "request": "r", "adminAccess": True},
        {
            "driver": "d",
            "pool": "p",
            "device": "c",
            "request": "r",
            "shareID": "s1",
            "consumedCapacity": {"mem": "1Gi"},
        },
        {
            "driver": "d",
            "pool": "p",
            "device": "c",
            "request": "r",
            "shareID": "s2",
            "consumedCapacity": {"mem": "1Gi"},
        },
        {"driver": 5, "pool": "p", "device": "x"},
        "not-a-result",
    ]
    claims = [claim(allocation={"devices": {"results": results}}), claim("other"), {"status": "x"}]
    with_capacity = allocated_state(claims, consumable_capacity=True)
    assert with_capacity.allocated_devices == {("d", "p", "a")}
    assert with_capacity.allocated_shared_device_ids == {("d", "p", "c", "s1"), ("d", "p", "c", "s2")}
    assert with_capacity.aggregated_capacity == {("d", "p", "c"): {"mem": Fraction(2 * 1024**3)}}
    without = allocated_state(claims, consumable_capacity=False)
    assert without.allocated_devices == {("d", "p", "a"), ("d", "p", "c")}
    assert without.allocated_shared_device_ids == set() and without.aggregated_capacity == {}
