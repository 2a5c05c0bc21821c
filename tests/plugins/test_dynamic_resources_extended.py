"""DynamicResources with extended resources backed by DRA: upstream's TestPlugin cases whose names
start with ``extended-resource`` / ``implicit-extended-resource`` / ``non-DRA-extended-resource``
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``), as data.

The driver is ``run_points`` (tests/plugins/dra_fakes.py: testPlugin's order of points, the small
``FakeAllocator``). Upstream's fixtures: ``deviceClassWithExtendResourceName`` (class
``my-resource-class``, ``extendedResourceName: example.com/gpu``) and ``...2`` (``my-resource-class2``,
``example.com/gpu2``); the pod ``my-pod`` with one container requesting the resources; the claim
PreBind creates is named by the fake clientset's generateName (``my-pod-extended-resources-0``).

Left out: the rows' metric checks (``scheduler_resourceclaim_creates_total``: kubesched has no
such metric), and "extended-resource-name-with-resources-fail-patch"'s exact status (upstream's
fake returns a bare ``patch error``; ours wraps it as upstream's code does, see the test below).
Upstream's PostFilter says ``still not schedulable`` in that table; v1.37 says nothing there
(kubernetes#140222, ``NO_DRA_DEALLOCATE_REASON``), as the plugin follows.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dra_fakes import CLASS_NAME, DRIVER, NAMESPACE, NODE_NAME, POD_NAME, POD_UID, StoringClient, on_node, run_points

from kubesched.config.releases import V1_35, V1_37
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo

AV = "resource.k8s.io/v1"
GPU = "example.com/gpu"
GPU2 = "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS_NAME}"
SPECIAL = "<extended-resources>"
CREATED = "my-pod-extended-resources-0"
ANNOTATION = {"resource.kubernetes.io/extended-resource-claim": "true"}
OWNER = [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID, "controller": True}]
POD_REF = {"resource": "pods", "name": POD_NAME, "uid": POD_UID}
FINALIZER = "resource.kubernetes.io/delete-protection"


def device_class(name: str, extended: str | None) -> dict[str, Any]:
    spec = {"extendedResourceName": extended} if extended else {}
    return {"apiVersion": AV, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


CLASS_GPU = device_class(CLASS_NAME, GPU)
CLASS_GPU2 = device_class(f"{CLASS_NAME}2", GPU2)
CLASS_PLAIN = device_class(CLASS_NAME, None)


def ext_pod(*containers: dict[str, str]) -> dict[str, Any]:
    """``st.MakePod().Req(...)``: one container per request list."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID},
        "spec": {
            "containers": [
                {"name": f"c{i}", "image": "pause", "resources": {"requests": dict(r)}}
                for i, r in enumerate(containers)
            ]
        },
        "status": {},
    }


def worker(allocatable: dict[str, str] | None = None, name: str = NODE_NAME) -> dict[str, Any]:
    n: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
    }
    if allocatable is not None:
        n["status"] = {"allocatable": dict(allocatable), "capacity": dict(allocatable)}
    return n


def worker_slice(devices: int = 1) -> dict[str, Any]:
    """``workerNodeSlice`` (one device) and ``largeWorkerNodeSlice`` (several)."""
    return {
        "apiVersion": AV,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{NODE_NAME}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": NODE_NAME,
            "pool": {"name": NODE_NAME, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"instance-{i + 1}"} for i in range(devices)],
        },
    }


def request(name: str, class_name: str = CLASS_NAME, count: int = 1) -> dict[str, Any]:
    """``RequestWithName`` / ``RequestWithNameCount``."""
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}}


def results(*entries: tuple[str, str], node_name: str = NODE_NAME) -> dict[str, Any]:
    """An allocation result: (device, request) per device."""
    return {
        "devices": {"results": [{"driver": DRIVER, "pool": node_name, "device": d, "request": r} for d, r in entries]},
        "nodeSelector": on_node(node_name),
    }


def ext_claim(name: str, requests: list[dict[str, Any]], allocation: dict[str, Any] | None = None) -> dict[str, Any]:
    """Upstream's ``extendedResourceClaim...`` objects."""
    md: dict[str, Any] = {
        "name": name,
        "generateName": f"{POD_NAME}-extended-resources-",
        "namespace": NAMESPACE,
        "annotations": dict(ANNOTATION),
        "ownerReferences": copy.deepcopy(OWNER),
    }
    out: dict[str, Any] = {
        "apiVersion": AV,
        "kind": "ResourceClaim",
        "metadata": md,
        "spec": {"devices": {"requests": requests}},
    }
    if allocation is not None:
        out["status"] = {"allocation": allocation}
    return out


class RecordingClient(StoringClient):
    """Also keeps the pod status patches (upstream's fake clientset records the patch)."""

    patches: list[dict[str, Any]]
    fail_patch = False

    def patch_pod_status(self, pod: Any, patch: Any) -> None:
        if self.fail_patch:
            raise RuntimeError("patch error")
        self.patches = [*getattr(self, "patches", []), copy.deepcopy(dict(patch))]


class FailingPatchClient(RecordingClient):
    fail_patch = True


def claims_in(run: Any) -> list[dict[str, Any]]:
    return [o for o in run.client.objects if o.get("kind") == "ResourceClaim"]


def shape(claim: dict[str, Any]) -> dict[str, Any]:
    """The fields upstream's expectations name (without UID and resourceVersion)."""
    md = claim["metadata"]
    out = {
        "name": md.get("name"),
        "generateName": md.get("generateName"),
        "annotations": md.get("annotations"),
        "ownerReferences": md.get("ownerReferences"),
        "requests": claim["spec"]["devices"]["requests"],
        # DRADeviceBindingConditions stamps the allocation (upstream's table compares it apart).
        "allocation": {
            k: v for k, v in ((claim.get("status") or {}).get("allocation") or {}).items() if k != "allocationTimestamp"
        }
        or None,
    }
    reserved = (claim.get("status") or {}).get("reservedFor")
    if reserved is not None:
        out["reservedFor"] = reserved
    return out


def expected(name: str, requests: list[dict[str, Any]], allocation: dict[str, Any], reserved: bool) -> dict[str, Any]:
    want = shape(ext_claim(name, requests, allocation))
    if reserved:
        want["reservedFor"] = [POD_REF]
    return want


def mappings(*entries: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "extendedResourceClaimStatus": {
            "requestMappings": [{"containerName": c, "resourceName": r, "requestName": q} for c, r, q in entries],
            "resourceClaimName": CREATED,
        }
    }


OK = (Code.SUCCESS, "")

# Allocated through DRA: (case, pod, classes, node allocatable, slice devices, the claim's
# requests, its allocation, the pod status patch).
ALLOCATED_CASES = [
    (
        "extended-resource-name-with-resources",
        ext_pod({GPU: "1"}),
        [CLASS_GPU],
        None,
        1,
        [request("container-0-request-0")],
        results(("instance-1", "container-0-request-0")),
        mappings(("c0", GPU, "container-0-request-0")),
    ),
    (
        "extended-resource-name-with-zero-allocatable",
        ext_pod({GPU: "1"}),
        [CLASS_GPU],
        {GPU: "0"},
        1,
        [request("container-0-request-0")],
        results(("instance-1", "container-0-request-0")),
        mappings(("c0", GPU, "container-0-request-0")),
    ),
    (
        "extended-resource-one-device-plugin-one-dra",
        ext_pod({GPU: "1", GPU2: "1"}),
        [CLASS_GPU, CLASS_GPU2],
        {GPU: "1"},
        1,
        [request("container-0-request-1", f"{CLASS_NAME}2")],
        results(("instance-1", "container-0-request-1")),
        mappings(("c0", GPU2, "container-0-request-1")),
    ),
    (
        "implicit-extended-resource-name-with-resources",
        ext_pod({IMPLICIT: "1", GPU: "2"}),
        [CLASS_GPU],
        None,
        3,
        [request("container-0-request-0"), request("container-0-request-1", count=2)],
        results(
            ("instance-1", "container-0-request-0"),
            ("instance-2", "container-0-request-1"),
            ("instance-3", "container-0-request-1"),
        ),
        mappings(("c0", IMPLICIT, "container-0-request-0"), ("c0", GPU, "container-0-request-1")),
    ),
    (
        "implicit-extended-resource-name-two-containers-with-resources",
        ext_pod({IMPLICIT: "1"}, {GPU: "2"}),
        [CLASS_GPU],
        None,
        3,
        [request("container-0-request-0"), request("container-1-request-0", count=2)],
        results(
            ("instance-1", "container-0-request-0"),
            ("instance-2", "container-1-request-0"),
            ("instance-3", "container-1-request-0"),
        ),
        mappings(("c0", IMPLICIT, "container-0-request-0"), ("c1", GPU, "container-1-request-0")),
    ),
]


@pytest.mark.parametrize(
    ("case", "pod", "classes", "allocatable", "devices", "requests", "allocation", "patch"),
    ALLOCATED_CASES,
    ids=[c[0] for c in ALLOCATED_CASES],
)
def test_extended_resources_allocated_through_dra(
    case: str,
    pod: dict[str, Any],
    classes: list[dict[str, Any]],
    allocatable: dict[str, str] | None,
    devices: int,
    requests: list[dict[str, Any]],
    allocation: dict[str, Any],
    patch: dict[str, Any],
) -> None:
    run = run_points(pod, [*classes, worker_slice(devices), pod], [worker(allocatable)], client_type=RecordingClient)
    assert run.got == {
        "preenqueue": OK,
        "prefilter": OK,
        f"filter/{NODE_NAME}": OK,
        "reserve": OK,
        "prebindpreflight": OK,
        "prebind": OK,
    }
    # reserve: the in-memory claim, allocated, in flight; prebind: created, allocated, reserved.
    assert run.in_flight_after_reserve == [SPECIAL]
    assert run.in_flight_after_pre_bind == []
    [created] = claims_in(run)
    assert shape(created) == expected(CREATED, requests, allocation, reserved=True)
    assert FINALIZER in created["metadata"]["finalizers"]
    assert run.client.patches == [patch]
    # postbind: the assume cache holds the written claim.
    assumed = run.plugin.tracker.get(NAMESPACE, CREATED)
    assert assumed is not None and shape(assumed) == expected(CREATED, requests, allocation, reserved=True)


def test_extended_resource_in_flight_claim_after_reserve() -> None:
    """``extendedResourceClaimNoName``: the in-flight claim is the node's instance of the special
    claim (requests and allocation), still named ``<extended-resources>``."""
    pod = ext_pod({GPU: "1"})
    run = run_points(
        pod, [CLASS_GPU, worker_slice(), pod], [worker()], unreserve_before_pre_bind=True, client_type=RecordingClient
    )
    assert run.got["reserve"] == OK
    assert run.in_flight_after_reserve == [SPECIAL]
    # extended-resource-name-skip-bind: Unreserve before PreBind leaves nothing behind.
    assert run.plugin.tracker.in_flight_claims() == []
    assert claims_in(run) == []


def test_extended_resource_name_with_node_resource() -> None:
    """The node's device plugin has it: nothing to allocate, nothing created."""
    pod = ext_pod({GPU: "1"})
    run = run_points(pod, [CLASS_GPU, pod], [worker({GPU: "1"})], client_type=RecordingClient)
    assert run.got == {
        "preenqueue": OK,
        "prefilter": OK,
        f"filter/{NODE_NAME}": OK,
        "reserve": OK,
        "prebindpreflight": OK,
        "prebind": OK,
    }
    assert claims_in(run) == []
    assert getattr(run.client, "patches", []) == []


def test_non_dra_extended_resource_name_with_zero_allocatable() -> None:
    pod = ext_pod({GPU: "1"})
    run = run_points(pod, [CLASS_PLAIN, worker_slice(), pod], [worker({GPU: "0"})], client_type=RecordingClient)
    assert run.got["prefilter"] == (Code.SKIP, "")
    assert run.got["prebindpreflight"] == (Code.SKIP, "")


@pytest.mark.parametrize(("release", "reason"), [(V1_37, ""), (V1_35, "still not schedulable")])
def test_extended_resource_name_no_resource(release: Any, reason: str) -> None:
    pod = ext_pod({GPU: "1"})
    # v1.35 has the gate off: nothing for DynamicResources to do.
    run = run_points(pod, [CLASS_GPU, pod], [worker()], client_type=RecordingClient, release=release)
    if release is V1_35:
        assert run.got["prefilter"] == (Code.SKIP, "")
        return
    assert run.got[f"filter/{NODE_NAME}"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
    assert run.got["postfilter"] == (Code.UNSCHEDULABLE, reason)


@pytest.mark.parametrize("node_name", [NODE_NAME, "worker-2"], ids=["has-claim", "delete-claim"])
def test_extended_resource_name_with_resources_left_from_an_earlier_attempt(node_name: str) -> None:
    """extended-resource-name-with-resources-has-claim / -delete-claim: Filter refuses the claim,
    PostFilter deletes it."""
    pod = ext_pod({GPU: "1"})
    left = ext_claim(
        CREATED,
        [request("container-0-request-0")],
        results(("instance-1", "container-0-request-0"), node_name=node_name),
    )
    left["metadata"]["uid"] = "uid-left"
    left["metadata"]["resourceVersion"] = "1"
    run = run_points(pod, [CLASS_GPU, worker_slice(), pod, left], [worker()], client_type=RecordingClient)
    assert run.got[f"filter/{NODE_NAME}"] == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "cannot schedule extended resource claim",
    )
    assert run.got["postfilter"] == (Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
    assert claims_in(run) == []


def test_extended_resource_name_bind_failure() -> None:
    """Unreserve after a failed bind deletes the claim PreBind created."""
    pod = ext_pod({GPU: "1"})
    run = run_points(
        pod, [CLASS_GPU, worker_slice(), pod], [worker()], unreserve_after_bind=True, client_type=RecordingClient
    )
    assert run.got["prebind"] == OK
    assert claims_in(run) == []
    assert [c[0] for c in run.client.calls if c[0] in ("create", "delete")] == ["create", "delete"]


def test_extended_resource_name_with_resources_fail_patch() -> None:
    """The pod status patch fails: PreBind's error (upstream wraps it the same way)."""
    pod = ext_pod({GPU: "1"})
    run = run_points(pod, [CLASS_GPU, worker_slice(), pod], [worker()], client_type=FailingPatchClient)
    assert run.got["prebind"] == (
        Code.ERROR,
        f"update pod {NAMESPACE}/{POD_NAME} ExtendedResourceClaimStatus: patch error",
    )
    [created] = claims_in(run)  # created and reserved before the patch
    assert created["status"]["reservedFor"] == [POD_REF]
    # In flight until Unreserve, which deletes the claim PreBind created.
    assert run.in_flight_after_pre_bind == [SPECIAL]
    assert run.state is not None
    run.plugin.unreserve(run.state, PodInfo(pod), run.selected)
    assert run.plugin.tracker is not None and run.plugin.tracker.in_flight_claims() == []
    assert claims_in(run) == []


@pytest.mark.parametrize(
    "objects",
    [
        [{"apiVersion": AV, "kind": "DeviceClass", "metadata": None, "spec": None}, CLASS_GPU],
        [
            {
                "apiVersion": AV,
                "kind": "DeviceClass",
                "metadata": {"name": CLASS_NAME},
                "spec": {"extendedResourceName": 7},
            }
        ],
        [
            CLASS_GPU,
            {"apiVersion": AV, "kind": "ResourceClaim", "metadata": {"annotations": "x", "ownerReferences": 3}},
        ],
    ],
    ids=["class-without-metadata", "extended-name-not-a-string", "malformed-claim"],
)
def test_bad_objects_never_raise(objects: list[dict[str, Any]]) -> None:
    pod = ext_pod({GPU: "1"})
    run = run_points(pod, [*objects, worker_slice(), pod], [worker()], client_type=RecordingClient)
    assert all(code != Code.ERROR for code, _ in run.got.values())


@pytest.mark.parametrize("quantity", ["1.5", "500m"])
def test_a_fractional_request_is_not_allocated(quantity: str) -> None:
    """``AsInt64`` fails for a fractional quantity (the API server refuses such a pod): the claim
    gets no request for it, and PreBind has no mappings to write, upstream's error."""
    pod = ext_pod({GPU: quantity})
    run = run_points(pod, [CLASS_GPU, worker_slice(), pod], [worker()], client_type=RecordingClient)
    assert run.got["prebind"] == (
        Code.ERROR,
        f"nil or empty request mappings, no update of pod {NAMESPACE}/{POD_NAME} ExtendedResourceClaimStatus",
    )
    [created] = claims_in(run)
    assert created["spec"]["devices"]["requests"] == []
