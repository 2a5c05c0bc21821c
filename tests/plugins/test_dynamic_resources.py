"""DynamicResources (kubesched.plugins.dynamicresources), the upstream TestPlugin table.

Ported from pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go (v1.37.2,
``testPlugin``): the cases without pod groups, extended resources, node-allocatable resources or
binding conditions, as data. The driver runs the plugin's points in the order testPlugin does
(PreEnqueue, PreFilter, Filter per node, Score when several nodes fit, Reserve, PreBindPreFlight,
PreBind, Unreserve after a bind failure; PostFilter when no node fits) and compares each status
and the claims as stored afterwards with upstream's expectations. The allocator is the small
``FakeAllocator`` (tests/plugins/dra_fakes.py), so these test the plugin, not the allocator;
``REAL_ALLOCATOR_CASES`` are the rows whose outcome is the allocator's, run with kubesched's
structured allocator (which device is chosen is not compared, as upstream's verify ignores it).

Inventory of dynamicresources_test.go. Read for this inventory: the stored resource.k8s.io/v1
copy (extended resources, binding conditions, prioritized-list scoring; no pod groups); rows
marked (newer) come from the v1.37 copy the first port read. Where each row lives:

TestPlugin, here as data (CASES, FakeAllocator):
  empty, claim-reference, claim-template, missing-claim, deleted-claim, wrong-claim,
  no-resources, with-resources, with-resources-has-finalizer,
  with-resources-finalizer-gets-removed, with-resources-finalizer-gets-added, skip-bind,
  structured-ignore-allocated-admin-access, exhausted-resources (as
  exhausted-resources-in-informer-cache), exhausted-resources-in-flight-claim (newer),
  other-resources-in-flight-claim (newer), missing-class, wrong-topology, good-topology,
  bind-failure, reserved-okay, claim-with-request-with-unknown-device-class,
  claim-with-prioritized-list-unknown-device-class, claim-with-prioritized-list.
TestPlugin, here as data (REAL_ALLOCATOR_CASES, structured allocator):
  tainted-device-disabled (v1.35: DRADeviceTaints off), tainted-device-enabled (v1.37),
  request-admin-access-with-DRAAdminAccess-featuregate, claim-parameters-CEL-runtime-error,
  class-parameters-CEL-runtime-error, CEL-runtime-error-for-one-of-two-nodes,
  CEL-runtime-error-for-one-of-three-nodes (its PreScore expectation predates the harness
  stopping at a Filter error; the Filter outcome is ported), single-claim-prioritized-list-scoring,
  multiple-claims-prioritized-list-scoring, multiple-requests-prioritized-list-scoring.
TestPlugin, elsewhere: timeout and timeout_zero/timeout_disabled (test_dynamic_resources_cases.py
  test_filter_timeout, per release: v1.36+ made the timeout an Error),
  bind-failure-preserves-inflight-until-unreserve (newer; test_dynamic_resources_cases.py).
TestPlugin, not ported:
  - empty-with-extended-resources-enabled and every extended-resource-* /
    implicit-extended-resource-* row: DRAExtendedResource, ported by another engineer in
    parallel (the plugin's extended-resource path is theirs).
  - bound-claim-with-* , prebind-fail-with-binding-timeout, multi-claims-binding-conditions-*:
    DRADeviceBindingConditions, likewise ported in parallel by another engineer.
  - pod-group rows (v1.37 copy): DRAWorkloadResourceClaims is off in v1.37 (beta, default off);
    node-allocatable rows: DRANodeAllocatableResources is alpha.
  - request-admin-access-without-DRAAdminAccess-featuregate,
    claim-with-prioritized-list-feature-disabled, DRA-disabled: no kubesched release has
    DRAAdminAccess, DRAPrioritizedList or DynamicResourceAllocation off (v1.35: beta on / GA).
  - canceled: Filter has no context to cancel in kubesched's plugin contract.
TestIsSchedulableAfterClaimChange, TestIsSchedulableAfterPodChange, Test_computesScore,
  TestNormalizeScore: test_dynamic_resources_hints.py (every row). TestAllocatorSelection: not
  ported (which of upstream's three Go allocator implementations a gate set picks; kubesched has
  one). EventsToRegister: test_dynamic_resources_cases.py test_events_registered.
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
    DRIVER,
    NODE2_NAME,
    NODE_NAME,
    POD_NAME,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
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
from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.plugin import AllocatorFactory

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


def reserved(alloc: Mapping[str, Any], timestamp: bool = True) -> dict[str, Any]:
    """A claim status after PreBind: the allocation (with its timestamp, which v1.35 does not
    write: DRADeviceBindingConditions off) and the pod's reservation."""
    return {"allocation": {**alloc, "allocationTimestamp": TS} if timestamp else dict(alloc), "reservedFor": [POD_REF]}


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
    #: upstream's ``nodes`` (default: worker).
    nodes: list[dict[str, Any]] = field(default_factory=list)
    #: the release whose feature gates the row needs (upstream's enable*/disable* fields).
    release: Release = V1_37
    #: node -> Score, and the normalized scores in node order (upstream scoreResult and
    #: normalizeScoreResult).
    want_scores: dict[str, int] | None = None
    want_normalized: list[int] | None = None


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


# -- rows decided by the allocator ------------------------------------------------------------
NODE3_NAME = "worker-3"
CLAIM2_NAME = f"{CLAIM_NAME}-2"
POD_WITH_TWO_CLAIM_NAMES = pod(
    [
        {"name": "my-resource", "resourceClaimName": CLAIM_NAME},
        {"name": "my-resource-2", "resourceClaimName": CLAIM2_NAME},
    ]
)
#: upstream's brokenSelector: the attribute exists on worker-2's and worker-3's device only.
BROKEN_SELECTOR = {"cel": {"expression": f'device.attributes["{DRIVER}"].healthy'}}
CEL_ERROR = "selector #0: CEL runtime error: no such key: healthy"


def healthy(value: bool) -> dict[str, Any]:
    """A device ``instance-1`` with the boolean attribute ``healthy`` (upstream's attrName)."""
    return {"name": "instance-1", "attributes": {"healthy": {"bool": value}}}


def instances(n: int) -> list[dict[str, Any]]:
    return [{"name": f"instance-{i}"} for i in range(1, n + 1)]


def alloc(*requests: str, node_name: str = NODE_NAME) -> dict[str, Any]:
    """An allocation on ``node_name``, one result per request entry (devices not compared)."""
    return {
        "devices": {"results": [{"driver": DRIVER, "pool": node_name, "request": r} for r in requests]},
        "nodeSelector": on_node(node_name),
    }


def admin_access(c: dict[str, Any]) -> dict[str, Any]:
    """upstream adminAccess(claim): every request (and result) with admin access."""
    out = copy.deepcopy(c)
    for r in out["spec"]["devices"]["requests"]:
        r["exactly"]["adminAccess"] = True
    for r in ((out["status"].get("allocation") or {}).get("devices") or {}).get("results") or []:
        r["adminAccess"] = True
    return out


def break_cel_in_claim(c: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(c)
    for r in out["spec"]["devices"]["requests"]:
        r["exactly"]["selectors"] = [BROKEN_SELECTOR]
    return out


def prioritized(name: str, *subrequests: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subrequests)}


def sub(name: str, count: int = 1, *selectors: dict[str, Any]) -> dict[str, Any]:
    """st.SubRequest / SubRequestWithSelector."""
    out: dict[str, Any] = {"name": name, "deviceClassName": CLASS_NAME, "count": count}
    if selectors:
        out["selectors"] = list(selectors)
    return out


TAINTED = {"name": "instance-1", "taints": [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]}

REAL_ALLOCATOR_CASES: dict[str, Case] = {
    # The gate reaches the allocator: v1.35 has DRADeviceTaints off, v1.37 on.
    "tainted-device-disabled": Case(
        release=V1_35,
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[device_class()],
        slices=[slice_(devices=[TAINTED])],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_status={CLAIM_NAME: reserved(alloc("req-1"), timestamp=False)},
    ),
    "tainted-device-enabled": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[device_class()],
        slices=[slice_(devices=[TAINTED])],
        want={
            "filter/worker": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"),
            "postfilter": (Code.UNSCHEDULABLE, ""),
        },
        want_status={CLAIM_NAME: {}},
    ),
    # Admin access is allowed (GA since v1.36, on in v1.35) although the device is taken.
    "request-admin-access-with-DRAAdminAccess-featuregate": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[admin_access(PENDING), OTHER_ALLOCATED],
        classes=[device_class()],
        slices=[slice_()],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_in_flight=[CLAIM_NAME],
        want_status={CLAIM_NAME: reserved(admin_access(claim(allocation=alloc("req-1")))["status"]["allocation"])},
        want_finalizers=[FINALIZER],
    ),
    "claim-parameters-CEL-runtime-error": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[break_cel_in_claim(PENDING)],
        classes=[device_class()],
        slices=[slice_()],
        want={"filter/worker": (Code.ERROR, f"claim default/my-pod-my-resource: {CEL_ERROR}")},
        want_status={CLAIM_NAME: {}},
    ),
    "class-parameters-CEL-runtime-error": Case(
        pod=POD_WITH_CLAIM_NAME,
        claims=[PENDING],
        classes=[{**device_class(), "spec": {"selectors": [BROKEN_SELECTOR]}}],
        slices=[slice_()],
        want={"filter/worker": (Code.ERROR, f"class {CLASS_NAME}: {CEL_ERROR}")},
        want_status={CLAIM_NAME: {}},
    ),
    # A CEL error on one node keeps the pod pending although another node would fit: the error
    # aborts the cycle. Upstream's "...-three-nodes" row adds PreScore's echo of that error,
    # from before the harness stopped at a Filter error; the Filter outcome is the same.
    "CEL-runtime-error-for-one-of-two-nodes": Case(
        nodes=[node(NODE_NAME), node(NODE2_NAME)],
        pod=POD_WITH_CLAIM_NAME,
        claims=[break_cel_in_claim(PENDING)],
        classes=[device_class()],
        slices=[slice_(), slice_(NODE2_NAME, [healthy(True)])],
        want={"filter/worker": (Code.ERROR, f"claim default/my-pod-my-resource: {CEL_ERROR}")},
        want_status={CLAIM_NAME: {}},
    ),
    "CEL-runtime-error-for-one-of-three-nodes": Case(
        nodes=[node(NODE_NAME), node(NODE2_NAME), node(NODE3_NAME)],
        pod=POD_WITH_CLAIM_NAME,
        claims=[break_cel_in_claim(PENDING)],
        classes=[device_class()],
        slices=[slice_(), slice_(NODE2_NAME, [healthy(True)]), slice_(NODE3_NAME, [healthy(True)])],
        want={"filter/worker": (Code.ERROR, f"claim default/my-pod-my-resource: {CEL_ERROR}")},
        want_status={CLAIM_NAME: {}},
    ),
    "single-claim-prioritized-list-scoring": Case(
        nodes=[node(NODE_NAME), node(NODE2_NAME)],
        pod=POD_WITH_CLAIM_NAME,
        claims=[
            claim(
                requests=[
                    prioritized(
                        "req-1",
                        sub("subreq-1", 1, {"cel": {"expression": f'device.attributes["{DRIVER}"].healthy'}}),
                        sub("subreq-2"),
                    )
                ]
            )
        ],
        classes=[device_class()],
        slices=[slice_(NODE_NAME, [healthy(True)]), slice_(NODE2_NAME, [healthy(False)])],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_scores={NODE_NAME: 8, NODE2_NAME: 7},
        want_normalized=[100, 87],
        want_in_flight=[CLAIM_NAME],
        want_status={CLAIM_NAME: reserved(alloc("req-1/subreq-1"))},
    ),
    "multiple-claims-prioritized-list-scoring": Case(
        nodes=[node(NODE_NAME), node(NODE2_NAME), node(NODE3_NAME)],
        pod=POD_WITH_TWO_CLAIM_NAMES,
        claims=[
            claim(requests=[prioritized("req-1", sub("subreq-1"))]),
            claim(
                CLAIM2_NAME,
                requests=[
                    prioritized("req-1", sub("subreq-1", 4), sub("subreq-2", 3), sub("subreq-3", 2), sub("subreq-4"))
                ],
            ),
        ],
        classes=[device_class()],
        slices=[slice_(NODE_NAME, instances(4)), slice_(NODE2_NAME, instances(2)), slice_(NODE3_NAME, instances(1))],
        want={
            "filter/worker-3": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"),
            "reserve": (Code.SUCCESS, ""),
            "prebind": (Code.SUCCESS, ""),
        },
        want_scores={NODE_NAME: 15, NODE2_NAME: 13},
        want_normalized=[100, 86],
        want_in_flight=[CLAIM_NAME, CLAIM2_NAME],
        want_status={
            CLAIM_NAME: reserved(alloc("req-1/subreq-1")),
            CLAIM2_NAME: reserved(alloc(*["req-1/subreq-2"] * 3)),
        },
    ),
    "multiple-requests-prioritized-list-scoring": Case(
        nodes=[node(NODE_NAME), node(NODE2_NAME), node(NODE3_NAME)],
        pod=POD_WITH_CLAIM_NAME,
        claims=[
            claim(
                requests=[
                    prioritized("req-1", sub("subreq-1", 2), sub("subreq-2")),
                    prioritized("req-2", sub("subreq-1", 2), sub("subreq-2")),
                ]
            )
        ],
        classes=[device_class()],
        slices=[slice_(NODE_NAME, instances(4)), slice_(NODE2_NAME, instances(3)), slice_(NODE3_NAME, instances(2))],
        want={"reserve": (Code.SUCCESS, ""), "prebind": (Code.SUCCESS, "")},
        want_scores={NODE_NAME: 16, NODE2_NAME: 15, NODE3_NAME: 14},
        want_normalized=[100, 93, 87],
        want_in_flight=[CLAIM_NAME],
        want_status={CLAIM_NAME: reserved(alloc(*["req-1/subreq-1"] * 2, *["req-2/subreq-1"] * 2))},
    ),
}


def _stored_status(client: StoringClient, name: str, ignore_device: bool = False) -> dict[str, Any]:
    """The stored claim's status; with ``ignore_device`` without the devices' names (upstream's
    verify ignores ``DeviceRequestAllocationResult.Device``: which device is chosen does not matter)."""
    [c] = [o for o in client.objects if o.get("kind") == "ResourceClaim" and o["metadata"]["name"] == name]
    status = copy.deepcopy(c.get("status") or {})
    alloc = status.get("allocation")
    if isinstance(alloc, dict) and alloc.get("allocationTimestamp"):
        alloc["allocationTimestamp"] = TS
    if ignore_device and isinstance(alloc, dict):
        for result in (alloc.get("devices") or {}).get("results") or []:
            result.pop("device", None)
    return status


@pytest.mark.parametrize("name", CASES)
def test_plugin(name: str) -> None:
    check(CASES[name], FakeAllocator)


@pytest.mark.parametrize("name", REAL_ALLOCATOR_CASES)
def test_plugin_with_allocator(name: str) -> None:
    """The rows whose outcome is the allocator's (taints, admin access, CEL errors, which
    subrequest fits where), with kubesched's structured allocator."""
    check(REAL_ALLOCATOR_CASES[name], structured.new_allocator, ignore_device=True)


def check(case: Case, allocator: AllocatorFactory, ignore_device: bool = False) -> None:
    """Run upstream testPlugin's points for ``case`` and compare what the row states."""
    run = run_points(
        case.pod,
        [*case.claims, *case.classes, *case.slices],
        case.nodes,
        in_flight=case.in_flight,
        unreserve_after_bind=case.unreserve_after_bind,
        unreserve_before_pre_bind=case.unreserve_before_pre_bind,
        before_pre_bind=None if case.before_pre_bind is None else _changing(case.before_pre_bind),
        allocator=allocator,
        release=case.release,
    )
    for point, want in case.want.items():
        assert run.got.get(point) == want, point
    if case.want_scores is not None:
        assert run.raw_scores == case.want_scores
        assert run.scores is not None
        assert [s.score for s in run.scores] == case.want_normalized
    for claim_name, want_status in case.want_status.items():
        assert _stored_status(run.client, claim_name, ignore_device) == want_status, claim_name
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
