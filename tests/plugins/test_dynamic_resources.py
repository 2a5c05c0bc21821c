"""DynamicResources (kubesched.plugins.dynamicresources), the upstream TestPlugin table.

Ported from pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go (v1.37.2,
``testPlugin``): the cases without pod groups, extended resources, node-allocatable resources or
binding conditions, as data. The driver runs the plugin's points in the order testPlugin does
(PreEnqueue, PreFilter, Filter per node, Score when several nodes fit, Reserve, PreBindPreFlight,
PreBind, Unreserve after a bind failure; PostFilter when no node fits) and compares each status
and the claims as stored afterwards with upstream's expectations. The allocator is the small
``FakeAllocator`` (tests/plugins/dra_fakes.py), so these test the plugin, not the allocator.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from dra_fakes import (
    CLAIM_NAME,
    CLASS_NAME,
    NODE_NAME,
    POD_NAME,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    StoringClient,
    allocation_result,
    claim,
    device_class,
    pod,
    run_points,
    slice_,
)

from kubesched.framework.status import Code

FINALIZER = "resource.kubernetes.io/delete-protection"
POD_REF = {"resource": "pods", "name": POD_NAME, "uid": POD_UID}
TS = "<allocationTimestamp>"

# Upstream's claims.
PENDING = claim()
ALLOCATED = claim(allocation=allocation_result())
IN_USE = claim(allocation=allocation_result(), reserved_for=[POD_REF])
OTHER = claim("not-my-claim", owner=False)
OTHER_ALLOCATED = claim("not-my-claim", owner=False, allocation=allocation_result())
#: upstream adminAccess(otherAllocatedClaim): its device does not count as taken.
ADMIN_ACCESS_OTHER = claim(
    "not-my-claim",
    owner=False,
    requests=[{"name": "req-1", "exactly": {"deviceClassName": CLASS_NAME, "adminAccess": True}}],
    allocation={
        "devices": {
            "results": [
                {
                    "driver": "some-driver",
                    "pool": NODE_NAME,
                    "device": "instance-1",
                    "request": "req-1",
                    "adminAccess": True,
                }
            ]
        },
        "nodeSelector": allocation_result()["nodeSelector"],
    },
)
WRONG_TOPOLOGY = claim(
    allocation={
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}
            ]
        }
    }
)
GOOD_TOPOLOGY_ALLOCATION = {
    "nodeSelector": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE_NAME]}]}
        ]
    }
}
GOOD_TOPOLOGY = claim(allocation=GOOD_TOPOLOGY_ALLOCATION)
PRIORITIZED = claim(
    requests=[
        {
            "name": "req-1",
            "firstAvailable": [
                {"name": "subreq-1", "deviceClassName": CLASS_NAME, "count": 1},
                {"name": "subreq-2", "deviceClassName": CLASS_NAME, "count": 2},
            ],
        }
    ]
)


def reserved(alloc: Mapping[str, Any]) -> dict[str, Any]:
    """A claim status after PreBind: the allocation (with its timestamp) and the pod's reservation."""
    return {"allocation": {**alloc, "allocationTimestamp": TS}, "reservedFor": [POD_REF]}


def _changing(change: Callable[[dict[str, Any]], None]) -> Callable[[StoringClient], None]:
    """Apply ``change`` to the stored claim as another writer would: a new resourceVersion."""

    def apply(client: StoringClient) -> None:
        for o in client.objects:
            if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == CLAIM_NAME:
                change(o)
                o["metadata"]["resourceVersion"] = str(int(o["metadata"]["resourceVersion"]) + 1)

    return apply


def _drop_finalizers(c: dict[str, Any]) -> None:
    c["metadata"].pop("finalizers", None)


def _add_finalizer(c: dict[str, Any]) -> None:
    c["metadata"]["finalizers"] = [FINALIZER]


@dataclass
class Case:
    pod: dict[str, Any]
    claims: list[dict[str, Any]] = field(default_factory=list)
    classes: list[dict[str, Any]] = field(default_factory=list)
    slices: list[dict[str, Any]] = field(default_factory=list)
    in_flight: list[dict[str, Any]] = field(default_factory=list)
    #: point -> (code, message); "filter/<node>" for Filter.
    want: dict[str, tuple[Code, str]] = field(default_factory=dict)
    #: claim name -> status as stored at the end.
    want_status: dict[str, dict[str, Any]] = field(default_factory=dict)
    want_finalizers: list[str] | None = None
    #: claims (by name) in flight after Reserve.
    want_in_flight: list[str] | None = None
    unreserve_after_bind: bool = False
    unreserve_before_pre_bind: bool = False
    #: upstream's ``prepare.prebind``: a change to the stored claim between Reserve and PreBind.
    before_pre_bind: Callable[[dict[str, Any]], None] | None = None


CASES: dict[str, Case] = {
    "empty": Case(
        pod=pod(),
        want={"prefilter": (Code.SKIP, ""), "prebindpreflight": (Code.SKIP, "")},
    ),
    "claim-reference": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[ALLOCATED, OTHER],
        want={"prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result()), "not-my-claim": {}},
    ),
    "claim-template": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
        claims=[ALLOCATED, OTHER],
        want={"prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result())},
    ),
    "missing-claim": Case(
        pod=POD_WITH_CLAIM_TEMPLATE,
        claims=[ALLOCATED, OTHER],
        want={
            "preenqueue": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'pod "default/my-pod": ResourceClaim not created yet')
        },
    ),
    "deleted-claim": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
        claims=[{**ALLOCATED, "metadata": {**ALLOCATED["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}],
        want={
            "preenqueue": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'resourceclaim "my-pod-my-resource" is being deleted')
        },
    ),
    "wrong-claim": Case(
        pod=POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
        claims=[claim(owner=False, allocation=allocation_result())],
        want={
            "preenqueue": (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)",
            )
        },
    ),
    "no-resources": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[device_class()],
        want={
            "filter/worker": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"),
            "postfilter": (Code.UNSCHEDULABLE, ""),
        },
    ),
    "with-resources": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[device_class()],
        slices=[slice_()],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_in_flight=[CLAIM_NAME],
        want_status={CLAIM_NAME: reserved(allocation_result())},
        want_finalizers=[FINALIZER],
    ),
    "with-resources-has-finalizer": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[{**PENDING, "metadata": {**PENDING["metadata"], "finalizers": [FINALIZER]}}],
        classes=[device_class()],
        slices=[slice_()],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_in_flight=[CLAIM_NAME],
        want_status={CLAIM_NAME: reserved(allocation_result())},
        want_finalizers=[FINALIZER],
    ),
    "with-resources-finalizer-gets-removed": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[{**PENDING, "metadata": {**PENDING["metadata"], "finalizers": [FINALIZER]}}],
        classes=[device_class()],
        slices=[slice_()],
        before_pre_bind=_drop_finalizers,
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result())},
        want_finalizers=[FINALIZER],
    ),
    "with-resources-finalizer-gets-added": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[device_class()],
        slices=[slice_()],
        before_pre_bind=_add_finalizer,
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result())},
        want_finalizers=[FINALIZER],
    ),
    "skip-bind": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[device_class()],
        slices=[slice_()],
        unreserve_before_pre_bind=True,
        want={"reserve": (Code.SUCCESS, "")},
        want_in_flight=[CLAIM_NAME],
        want_status={CLAIM_NAME: {}},
    ),
    "structured-ignore-allocated-admin-access": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING, ADMIN_ACCESS_OTHER],
        classes=[device_class()],
        slices=[slice_()],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result())},
    ),
    "exhausted-resources-in-informer-cache": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING, OTHER_ALLOCATED],
        classes=[device_class()],
        slices=[slice_()],
        want={
            "filter/worker": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"),
            "postfilter": (Code.UNSCHEDULABLE, ""),
        },
    ),
    "exhausted-resources-in-flight-claim": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING, OTHER],
        in_flight=[OTHER_ALLOCATED],
        classes=[device_class()],
        slices=[slice_()],
        want={
            "filter/worker": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"),
            "postfilter": (Code.UNSCHEDULABLE, ""),
        },
    ),
    "other-resources-in-flight-claim": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING, OTHER],
        in_flight=[claim("not-my-claim", owner=False, allocation=allocation_result("instance-1-other"))],
        classes=[device_class()],
        slices=[slice_()],
        want={"prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result())},
    ),
    "missing-class": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        want={
            "prefilter": (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"request req-1: device class {CLASS_NAME} does not exist",
            ),
            "postfilter": (Code.UNSCHEDULABLE, ""),
        },
    ),
    "wrong-topology": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[WRONG_TOPOLOGY],
        want={
            "filter/worker": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node"),
            "postfilter": (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
        },
        want_status={CLAIM_NAME: {}},
    ),
    "good-topology": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[GOOD_TOPOLOGY],
        want={"prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(GOOD_TOPOLOGY_ALLOCATION)},
    ),
    "bind-failure": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[GOOD_TOPOLOGY],
        unreserve_after_bind=True,
        want={"prebind": (Code.SUCCESS, "")},
        want_status={
            CLAIM_NAME: {"allocation": {**GOOD_TOPOLOGY_ALLOCATION, "allocationTimestamp": TS}, "reservedFor": []}
        },
    ),
    "reserved-okay": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[IN_USE],
        want={"prebindpreflight": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: {"allocation": allocation_result(), "reservedFor": [POD_REF]}},
    ),
    "claim-with-request-with-unknown-device-class": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[claim(requests=[{"name": "req-1", "exactly": {"deviceClassName": "does-not-exist"}}])],
        want={
            "prefilter": (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "request req-1: device class does-not-exist does not exist",
            )
        },
    ),
    "claim-with-prioritized-list-unknown-device-class": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[
            claim(
                requests=[
                    {"name": "req-1", "firstAvailable": [{"name": "subreq-1", "deviceClassName": "does-not-exist"}]}
                ]
            )
        ],
        want={
            "prefilter": (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "request req-1/subreq-1: device class does-not-exist does not exist",
            )
        },
    ),
    "claim-with-prioritized-list": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PRIORITIZED],
        classes=[device_class()],
        slices=[slice_()],
        want={"prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(allocation_result(request="req-1/subreq-1"))},
    ),
}


def _stored_status(client: StoringClient, name: str) -> dict[str, Any]:
    [c] = [o for o in client.objects if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == name]
    status = copy.deepcopy(c.get("status") or {})
    alloc = status.get("allocation")
    if isinstance(alloc, dict) and alloc.get("allocationTimestamp"):
        alloc["allocationTimestamp"] = TS
    return status


@pytest.mark.parametrize("name", CASES)
def test_plugin(name: str) -> None:
    case = CASES[name]
    run = run_points(
        case.pod,
        [*case.claims, *case.classes, *case.slices],
        in_flight=case.in_flight,
        unreserve_after_bind=case.unreserve_after_bind,
        unreserve_before_pre_bind=case.unreserve_before_pre_bind,
        before_pre_bind=None if case.before_pre_bind is None else _changing(case.before_pre_bind),
    )
    for point, want in case.want.items():
        assert run.got.get(point) == want, point
    for claim_name, want_status in case.want_status.items():
        assert _stored_status(run.client, claim_name) == want_status, claim_name
    if case.want_in_flight is not None:
        assert run.in_flight_after_reserve == case.want_in_flight
    if case.want_finalizers is not None:
        [c] = [
            o for o in run.client.objects if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == CLAIM_NAME
        ]
        assert c["metadata"].get("finalizers") == case.want_finalizers
    # PreBind's success drops the in-flight allocation (upstream prebindSuccessCleanup).
    if run.got.get("prebind") == (Code.SUCCESS, ""):
        assert run.plugin.tracker is not None
        assert [c["metadata"]["name"] for c in run.plugin.tracker.in_flight_claims()] == [
            c["metadata"]["name"] for c in case.in_flight
        ]
