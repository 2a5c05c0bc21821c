"""Ported from staging/src/k8s.io/component-helpers/resource/helpers_test.go (TestPodRequestsAndLimits,
TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests, TestPodLevelResourceRequests,
TestIsSupportedPodLevelResource), pkg/scheduler/framework/types_test.go (TestPodInfoCalculateResources,
TestNewResource), staging/src/k8s.io/component-helpers/scheduling/corev1/resource_names_test.go and
pkg/apis/core/v1/helper/helpers_test.go (TestIsNativeResource, TestIsExtendedResourceName).

Expected values are upstream's, converted to the scheduler's units (milli-CPU, bytes). Where our
function differs from the upstream helper by design the case says so:
* overhead is always included (the scheduler never passes ``ExcludeOverhead``), so the
  "without overhead" cases expect upstream's numbers plus the overhead, computed by hand;
* in-place resize status is always considered (``InPlacePodVerticalScaling`` is GA);
* limits default missing requests, as API-server defaulting would have done.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import InvalidObjectError
from kubesched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Resource,
    compute_pod_resources,
    is_attachable_volume_resource_name,
    is_extended_resource_name,
    is_hugepage_resource_name,
    is_native_resource,
    is_prefixed_native_resource,
    is_scalar_resource_name,
    is_supported_pod_level_resource,
    pod_non_zero_requests,
    pod_requests,
)

Obj = dict[str, Any]

Ki, Mi, Gi = 1024, 1024**2, 1024**3


def ctr(
    requests: Obj | None = None,
    limits: Obj | None = None,
    name: str = "",
    sidecar: bool = False,
) -> Obj:
    c: Obj = {"name": name} if name else {}
    res: Obj = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def pod(
    containers: list[Obj] | None = None,
    init: list[Obj] | None = None,
    overhead: Obj | None = None,
    pod_requests_: Obj | None = None,
    pod_limits: Obj | None = None,
    statuses: list[Obj] | None = None,
    init_statuses: list[Obj] | None = None,
    conditions: list[Obj] | None = None,
) -> Obj:
    spec: Obj = {"containers": containers or []}
    if init is not None:
        spec["initContainers"] = init
    if overhead is not None:
        spec["overhead"] = overhead
    if pod_requests_ is not None or pod_limits is not None:
        spec["resources"] = {}
        if pod_requests_ is not None:
            spec["resources"]["requests"] = pod_requests_
        if pod_limits is not None:
            spec["resources"]["limits"] = pod_limits
    p: Obj = {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    status: Obj = {}
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    if conditions is not None:
        status["conditions"] = conditions
    if status:
        p["status"] = status
    return p


def cstatus(name: str, allocated: Obj | None = None, actual: Obj | None = None) -> Obj:
    s: Obj = {"name": name}
    if allocated is not None:
        s["allocatedResources"] = allocated
    if actual is not None:
        s["resources"] = {"requests": actual}
    return s


INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def R(cpu: int = 0, mem: int = 0, eph: int = 0, scalars: dict[str, int] | None = None) -> Resource:
    return Resource(milli_cpu=cpu, memory=mem, ephemeral_storage=eph, scalar_resources=dict(scalars or {}))


# --- TestPodRequestsAndLimits (requests side; overhead included) ----------------------------

REQUESTS_AND_OVERHEAD: list[tuple[str, Obj, Resource]] = [
    # Upstream's helper returns {} here; a real pod's requests are defaulted from its limits.
    ("just-limit-no-overhead", pod([ctr(limits={"cpu": "9"})]), R(cpu=9000)),
    ("just-overhead", pod([ctr()], overhead={"cpu": "5", "memory": "5"}), R(cpu=5000, mem=5)),
    (
        "req-and-overhead",
        pod([ctr({"cpu": "1", "memory": "10"})], overhead={"cpu": "5", "memory": "5"}),
        R(cpu=6000, mem=15),
    ),
    (
        "all-req-lim-and-overhead",
        pod(
            [ctr({"cpu": "1", "memory": "10"}, {"cpu": "2", "memory": "12"})],
            overhead={"cpu": "5", "memory": "5"},
        ),
        R(cpu=6000, mem=15),
    ),
    (
        "req-some-lim-and-overhead",
        pod([ctr({"cpu": "1", "memory": "10"}, {"cpu": "2"})], overhead={"cpu": "5", "memory": "5"}),
        R(cpu=6000, mem=15),
    ),
]

TWO_CONTAINERS = [
    ctr({"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}, "foobar"),
    ctr({"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"}, "foobar2"),
]

# TestPodRequestsAndLimitsWithoutOverhead, with the overhead added back by hand.
WITHOUT_OVERHEAD: list[tuple[str, Obj, Resource]] = [
    ("two containers, no overhead: sum", pod(TWO_CONTAINERS), R(cpu=5000, mem=17)),
    (
        "two containers with overhead: 5+3 cpu, 17+8 memory",
        pod(TWO_CONTAINERS, overhead={"cpu": "3", "memory": "8"}),
        R(cpu=8000, mem=25),
    ),
    (
        "massive init: max(5, 40)+3 cpu, max(17, 120)+8 memory",
        pod(
            TWO_CONTAINERS,
            init=[
                ctr({"cpu": "1", "memory": "5"}, {"cpu": "1", "memory": "5"}, "small-init"),
                ctr({"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"}, "big-init"),
            ],
            overhead={"cpu": "3", "memory": "8"},
        ),
        R(cpu=43000, mem=128),
    ),
]

# TestPodResourceRequests (the cases that use status resources, or need none).
POD_RESOURCE_REQUESTS: list[tuple[str, Obj, Resource]] = [
    ("larger init container", pod([ctr({"cpu": "1"})], init=[ctr({"cpu": "4"})]), R(cpu=4000)),
    ("larger containers", pod([ctr({"cpu": "2"}), ctr({"cpu": "3"})], init=[ctr({"cpu": "2"})]), R(cpu=5000)),
    (
        "pod overhead included",
        pod(
            [ctr({"cpu": "2"}), ctr({"cpu": "3"})],
            init=[ctr({"cpu": "2"}, {"cpu": "2"})],
            overhead={"cpu": "1", "memory": "1Gi"},
        ),
        R(cpu=6000, mem=Gi),
    ),
    (
        "resized, infeasible",
        pod(
            [ctr({"cpu": "4"}, name="container-1")],
            statuses=[cstatus("container-1", actual={"cpu": "2"})],
            conditions=INFEASIBLE,
        ),
        R(cpu=2000),
    ),
    (
        "resized, infeasible & in-progress",
        pod(
            [ctr({"cpu": "6"}, name="container-1")],
            statuses=[cstatus("container-1", allocated={"cpu": "4"}, actual={"cpu": "2"})],
            conditions=INFEASIBLE,
        ),
        R(cpu=4000),
    ),
    (
        "resized, no resize status",
        pod([ctr({"cpu": "4"}, name="container-1")], statuses=[cstatus("container-1", actual={"cpu": "2"})]),
        R(cpu=4000),
    ),
    (
        "resized: per-resource 3-way maximum",
        pod(
            [ctr({"cpu": "30m", "memory": "20M", "ephemeral-storage": "10G"}, name="container-1")],
            statuses=[
                cstatus(
                    "container-1",
                    allocated={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                    actual={"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"},
                )
            ],
        ),
        R(cpu=30, mem=30_000_000, eph=30_000_000_000),
    ),
    (
        "resized, restartable init container, infeasible",
        pod(
            [],
            init=[ctr({"cpu": "4"}, name="restartable-init-1", sidecar=True)],
            init_statuses=[cstatus("restartable-init-1", actual={"cpu": "2"})],
            conditions=INFEASIBLE,
        ),
        R(cpu=2000),
    ),
    (
        "resized, restartable init container, no resize status",
        pod(
            [],
            init=[ctr({"cpu": "4"}, name="restartable-init-1", sidecar=True)],
            init_statuses=[cstatus("restartable-init-1", actual={"cpu": "2"})],
        ),
        R(cpu=4000),
    ),
    (
        "restartable init container: sidecar + regular",
        pod([ctr({"cpu": "1"}, name="container-1")], init=[ctr({"cpu": "1"}, name="r1", sidecar=True)]),
        R(cpu=2000),
    ),
    (
        "multiple restartable init containers: max(5, 3+2+1 + 1)",
        pod(
            [ctr({"cpu": "1"})],
            init=[
                ctr({"cpu": "5"}, name="init-1"),
                ctr({"cpu": "1"}, name="r1", sidecar=True),
                ctr({"cpu": "2"}, name="r2", sidecar=True),
                ctr({"cpu": "3"}, name="r3", sidecar=True),
            ],
        ),
        R(cpu=7000),
    ),
    (
        "restartable and regular init containers: init-2 needs 5 + 1 + 2",
        pod(
            [ctr({"cpu": "1"})],
            init=[
                ctr({"cpu": "5"}, name="init-1"),
                ctr({"cpu": "1"}, name="r1", sidecar=True),
                ctr({"cpu": "2"}, name="r2", sidecar=True),
                ctr({"cpu": "5"}, name="init-2"),
                ctr({"cpu": "3"}, name="r3", sidecar=True),
            ],
        ),
        R(cpu=8000),
    ),
    (
        "restartable-init, init and regular",
        pod(
            [ctr({"cpu": "100"})],
            init=[ctr({"cpu": "10"}, name="r1", sidecar=True), ctr({"cpu": "200"}, name="init-1")],
        ),
        R(cpu=210000),
    ),
    (
        "aggregate request resolves max of sums instead of sum of maxes",
        pod(
            [ctr({"cpu": "1"}, name="c1"), ctr({"cpu": "2"}, name="c2")],
            statuses=[cstatus("c1", allocated={"cpu": "2"}), cstatus("c2", allocated={"cpu": "1"})],
        ),
        R(cpu=3000),
    ),
]

C_3MI_2M = ctr({"memory": "3Mi", "cpu": "2m"})
INIT_5MI_4M = ctr({"memory": "5Mi", "cpu": "4m"})
SIDECAR_5MI_4M = ctr({"memory": "5Mi", "cpu": "4m"}, sidecar=True)
INIT_6MI_8M = ctr({"memory": "6Mi", "cpu": "8m"})

# TestPodLevelResourceRequests (PodLevelResources is on by default in v1.35).
POD_LEVEL: list[tuple[str, Obj, Resource]] = [
    ("nil", pod(), R()),
    ("pod level memory", pod(pod_requests_={"memory": "2Mi"}), R(mem=2 * Mi)),
    (
        "pod level memory and container level cpu",
        pod([ctr({"cpu": "2m"})], pod_requests_={"memory": "2Mi"}),
        R(cpu=2, mem=2 * Mi),
    ),
    (
        "unsupported at pod level and container level",
        pod([ctr({"storage": "3Mi"})], pod_requests_={"storage": "2Mi"}),
        R(),
    ),
    ("unsupported at pod level", pod([ctr({"memory": "3Mi"})], pod_requests_={"storage": "2Mi"}), R(mem=3 * Mi)),
    ("only container level", pod([C_3MI_2M]), R(cpu=2, mem=3 * Mi)),
    (
        "both levels: pod level wins",
        pod([C_3MI_2M], pod_requests_={"memory": "6Mi", "cpu": "8m"}),
        R(cpu=8, mem=6 * Mi),
    ),
    ("container and init container", pod([C_3MI_2M], init=[INIT_5MI_4M]), R(cpu=4, mem=5 * Mi)),
    ("container and sidecar", pod([C_3MI_2M], init=[SIDECAR_5MI_4M]), R(cpu=6, mem=8 * Mi)),
    ("container, sidecar and init", pod([C_3MI_2M], init=[SIDECAR_5MI_4M, INIT_6MI_8M]), R(cpu=12, mem=11 * Mi)),
    (
        "pod level over container, sidecar and init",
        pod([C_3MI_2M], init=[SIDECAR_5MI_4M, INIT_6MI_8M], pod_requests_={"memory": "15Mi", "cpu": "18m"}),
        R(cpu=18, mem=15 * Mi),
    ),
    (
        "pod level hugepages, single page size",
        pod(pod_requests_={"memory": "10Mi", "hugepages-2Mi": "2Mi"}, pod_limits={"hugepages-2Mi": "2Mi"}),
        R(mem=10 * Mi, scalars={"hugepages-2Mi": 2 * Mi}),
    ),
    (
        "pod level hugepages, multiple page sizes",
        pod(
            pod_requests_={"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"},
            pod_limits={"hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"},
        ),
        R(cpu=1000, scalars={"hugepages-2Mi": 2 * Mi, "hugepages-1Gi": Gi}),
    ),
    (
        "pod and container level hugepages, single page size",
        pod(
            [ctr({"hugepages-2Mi": "6Mi"}, {"hugepages-2Mi": "6Mi"})],
            pod_requests_={"cpu": "1", "hugepages-2Mi": "10Mi"},
            pod_limits={"hugepages-2Mi": "10Mi"},
        ),
        R(cpu=1000, scalars={"hugepages-2Mi": 10 * Mi}),
    ),
    (
        "pod and container level hugepages, multiple page sizes",
        pod(
            [ctr({"cpu": "1", "hugepages-1Gi": "2Gi"}, {"hugepages-1Gi": "2Gi"})],
            pod_requests_={"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
            pod_limits={"hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
        ),
        R(cpu=1000, scalars={"hugepages-2Mi": 10 * Mi, "hugepages-1Gi": 2 * Gi}),
    ),
    (
        "hugepage sizes split between pod and container level",
        pod(
            [ctr({"memory": "4Mi", "hugepages-1Gi": "1Gi"}, {"hugepages-1Gi": "1Gi"})],
            pod_requests_={"cpu": "1", "hugepages-2Mi": "10Mi"},
            pod_limits={"hugepages-2Mi": "10Mi"},
        ),
        R(cpu=1000, mem=4 * Mi, scalars={"hugepages-2Mi": 10 * Mi, "hugepages-1Gi": Gi}),
    ),
]


@pytest.mark.parametrize(
    ("the_pod", "want"),
    [c[1:] for c in REQUESTS_AND_OVERHEAD + WITHOUT_OVERHEAD + POD_RESOURCE_REQUESTS + POD_LEVEL],
    ids=[c[0] for c in REQUESTS_AND_OVERHEAD + WITHOUT_OVERHEAD + POD_RESOURCE_REQUESTS + POD_LEVEL],
)
def test_pod_requests(the_pod: Obj, want: Resource) -> None:
    assert pod_requests(the_pod) == want


# --- TestPodInfoCalculateResources: requests and non-zero requests ---------------------------

M500, M700, M1200 = 500, 700, 1200
MEM500, MEM800, MEM1200 = 500 * Mi, 800 * Mi, 1200 * Mi
C500 = ctr({"cpu": "500m", "memory": "500Mi"})

CALCULATE: list[tuple[str, Obj, Resource, tuple[int, int]]] = [
    ("requestless container", pod([ctr()]), R(), (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST)),
    ("1X container with requests", pod([C500]), R(cpu=M500, mem=MEM500), (M500, MEM500)),
    (
        "2X container with requests",
        pod([C500, ctr({"cpu": "700m", "memory": "800Mi"})]),
        R(cpu=M500 + M700, mem=MEM500 + MEM800),
        (M500 + M700, MEM500 + MEM800),
    ),
    (
        "container and init container with pod-level requests",
        pod([C500], init=[C500], pod_requests_={"cpu": "1200m", "memory": "1200Mi"}),
        R(cpu=M1200, mem=MEM1200),
        (M1200, MEM1200),
    ),
    (
        "container and sidecar with pod-level requests",
        pod(
            [C500],
            init=[ctr({"cpu": "500m", "memory": "500Mi"}, sidecar=True)],
            pod_requests_={"cpu": "1200m", "memory": "1200Mi"},
        ),
        R(cpu=M1200, mem=MEM1200),
        (M1200, MEM1200),
    ),
    (
        "pod-level memory only: cpu defaulted",
        pod([ctr()], init=[ctr()], pod_requests_={"memory": "1200Mi"}),
        R(mem=MEM1200),
        (DEFAULT_MILLI_CPU_REQUEST, MEM1200),
    ),
    (
        "pod-level cpu only: memory defaulted",
        pod([ctr()], init=[ctr()], pod_requests_={"cpu": "500m"}),
        R(cpu=M500),
        (M500, DEFAULT_MEMORY_REQUEST),
    ),
    (
        "unsupported container resources and pod-level cpu",
        pod(
            [ctr({"ephemeral-storage": "800Mi"})],
            init=[ctr({"ephemeral-storage": "500Mi"})],
            pod_requests_={"cpu": "500m"},
        ),
        R(cpu=M500, eph=MEM800),
        (M500, DEFAULT_MEMORY_REQUEST),
    ),
    # Hand-computed cases for getNonMissingContainerRequests without pod-level requests.
    (
        "default per container missing cpu: 500m + 100m",
        pod([ctr({"cpu": "500m"}), ctr()]),
        R(cpu=M500),
        (M500 + DEFAULT_MILLI_CPU_REQUEST, 2 * DEFAULT_MEMORY_REQUEST),
    ),
    (
        "explicit zero is not defaulted",
        pod([ctr({"cpu": "0", "memory": "0"})]),
        R(),
        (0, 0),
    ),
    (
        "defaulted init container is part of the max",
        pod([ctr({"cpu": "500m"})], init=[ctr()]),
        R(cpu=M500),
        (M500, DEFAULT_MEMORY_REQUEST),
    ),
    (
        "defaulted sidecar adds up",
        pod([ctr()], init=[ctr(sidecar=True)]),
        R(),
        (2 * DEFAULT_MILLI_CPU_REQUEST, 2 * DEFAULT_MEMORY_REQUEST),
    ),
    (
        "overhead is added to the non-zero requests",
        pod([ctr()], overhead={"cpu": "250m", "memory": "10Mi"}),
        R(cpu=250, mem=10 * Mi),
        (DEFAULT_MILLI_CPU_REQUEST + 250, DEFAULT_MEMORY_REQUEST + 10 * Mi),
    ),
    (
        "pod-level memory with cpu only in the overhead: no cpu default",
        pod([ctr()], overhead={"cpu": "250m"}, pod_requests_={"memory": "1Gi"}),
        R(cpu=250, mem=Gi),
        (250, Gi),
    ),
]


@pytest.mark.parametrize(("the_pod", "want", "non_zero"), [c[1:] for c in CALCULATE], ids=[c[0] for c in CALCULATE])
def test_calculate_resources(the_pod: Obj, want: Resource, non_zero: tuple[int, int]) -> None:
    assert pod_requests(the_pod) == want
    assert pod_non_zero_requests(the_pod) == non_zero
    computed = compute_pod_resources(the_pod)
    assert (computed.requests, computed.non_zero_milli_cpu, computed.non_zero_memory) == (want, *non_zero)


# --- API defaulting of requests from limits ---------------------------------------------------

DEFAULTING: list[tuple[str, Obj, Resource, tuple[int, int]]] = [
    (
        "container limit defaults the missing request only",
        pod([ctr({"memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"})]),
        R(cpu=2000, mem=Gi),
        (2000, Gi),
    ),
    (
        "init container limits default its requests",
        pod([ctr({"cpu": "1"})], init=[ctr(limits={"cpu": "3"})]),
        R(cpu=3000),
        (3000, DEFAULT_MEMORY_REQUEST),
    ),
    (
        "pod-level limit without container requests becomes the pod-level request",
        pod([ctr()], pod_limits={"cpu": "2"}),
        R(cpu=2000),
        (2000, DEFAULT_MEMORY_REQUEST),
    ),
    (
        "pod-level limit with container requests: request is the containers' aggregate",
        pod([ctr({"cpu": "500m"}), ctr({"cpu": "250m"})], pod_limits={"cpu": "2"}),
        R(cpu=750),
        (750, 2 * DEFAULT_MEMORY_REQUEST),
    ),
    (
        "unsupported pod-level limit is ignored",
        pod([ctr()], pod_limits={"ephemeral-storage": "1Gi"}),
        R(),
        (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST),
    ),
]


@pytest.mark.parametrize(("the_pod", "want", "non_zero"), [c[1:] for c in DEFAULTING], ids=[c[0] for c in DEFAULTING])
def test_requests_defaulted_from_limits(the_pod: Obj, want: Resource, non_zero: tuple[int, int]) -> None:
    assert pod_requests(the_pod) == want
    assert pod_non_zero_requests(the_pod) == non_zero


# --- exactness and scalar resources -------------------------------------------------------------


def test_quantities_are_summed_before_rounding() -> None:
    # Upstream adds Quantities exactly and rounds once (MilliValue/Value of the sum).
    p = pod([ctr({"cpu": "0.0001", "memory": "1.5"}), ctr({"cpu": "0.0001", "memory": "1.5"})])
    assert pod_requests(p) == R(cpu=1, mem=3)


def test_extended_resources_follow_the_init_container_formula() -> None:
    p = pod(
        [ctr({"example.com/gpu": "1", "foo": "3"}), ctr({"example.com/gpu": 2})],
        init=[ctr({"example.com/gpu": "4", "hugepages-2Mi": "4Mi"}), ctr({"attachable-volumes-csi-x": "1"})],
    )
    # "foo" is neither native nor scalar: ignored, as Resource.Add ignores it.
    assert pod_requests(p) == R(scalars={"example.com/gpu": 4, "hugepages-2Mi": 4 * Mi, "attachable-volumes-csi-x": 1})


def test_pods_resource_is_not_counted_for_pods() -> None:
    assert pod_requests(pod([ctr({"pods": "1", "cpu": "1"})])).allowed_pod_number == 0


def test_json_numbers_are_quantities() -> None:
    assert pod_requests(pod([ctr({"cpu": 2, "memory": 1.5e9})])) == R(cpu=2000, mem=1_500_000_000)


def test_surrounding_whitespace_is_trimmed_like_unmarshal_json() -> None:
    assert pod_requests(pod([ctr({"cpu": " 250m "})])) == R(cpu=250)


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("the_pod", "field"),
    [
        (pod([ctr({"cpu": "1 core"})]), "spec.containers[0].resources.requests.cpu"),
        (pod([ctr(), ctr(limits={"memory": "lots"})]), "spec.containers[1].resources.limits.memory"),
        (pod([ctr()], init=[ctr(), ctr({"cpu": "1x"})]), "spec.initContainers[1].resources.requests.cpu"),
        (pod([ctr()], overhead={"cpu": "-"}), None),  # "-" parses as zero upstream
        (pod([ctr()], overhead={"cpu": "1.1.1"}), "spec.overhead.cpu"),
        (pod([ctr()], pod_requests_={"memory": "1Q"}), "spec.resources.requests.memory"),
        (pod([ctr({"cpu": {"value": 1}})]), "spec.containers[0].resources.requests.cpu"),
        (pod([ctr({"cpu": True})]), "spec.containers[0].resources.requests.cpu"),
        ({"spec": {"containers": {"a": 1}}}, "spec.containers"),
        (
            pod([ctr(name="c")], statuses=[cstatus("c", allocated={"cpu": "x"})]),
            "status.containerStatuses[c].allocatedResources.cpu",
        ),
    ],
)
def test_invalid_quantities_name_their_field(the_pod: Obj, field: str | None) -> None:
    if field is None:
        pod_requests(the_pod)
        return
    with pytest.raises(InvalidObjectError) as info:
        pod_requests(the_pod)
    assert info.value.field == field


# --- caching ----------------------------------------------------------------------------------


def test_results_are_independent_copies() -> None:
    p = pod([C500])
    first = pod_requests(p)
    first.add(R(cpu=1, scalars={"example.com/gpu": 1}))
    assert pod_requests(p) == R(cpu=M500, mem=MEM500)
    assert compute_pod_resources(p).requests == R(cpu=M500, mem=MEM500)


def test_a_new_pod_object_is_computed_afresh() -> None:
    assert pod_requests(pod([ctr({"cpu": "1"})])) == R(cpu=1000)
    assert pod_requests(pod([ctr({"cpu": "2"})])) == R(cpu=2000)


# --- Resource (TestNewResource and helpers) ----------------------------------------------------


def test_new_resource() -> None:
    assert Resource.from_resource_list({}) == Resource()
    assert Resource.from_resource_list(None) == Resource()
    got = Resource.from_resource_list(
        {
            "cpu": "4m",
            "memory": "2000",
            "pods": "80",
            "ephemeral-storage": "5000",
            "scalar.test/scalar1": "1",
            "hugepages-test": "2",
            "unknown": "7",
        }
    )
    assert got == Resource(
        milli_cpu=4,
        memory=2000,
        ephemeral_storage=5000,
        allowed_pod_number=80,
        scalar_resources={"scalar.test/scalar1": 1, "hugepages-test": 2},
    )


def test_from_resource_list_errors_name_the_field() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Resource.from_resource_list({"cpu": "1", "memory": "1 Gi"}, "status.allocatable")
    assert info.value.field == "status.allocatable.memory"
    with pytest.raises(InvalidObjectError) as info:
        Resource.from_resource_list({"unknown": "bad"})
    assert info.value.field == "unknown"
    # Quantity.UnmarshalJSON trims surrounding spaces.
    assert Resource.from_resource_list({"cpu": " 2 "}).milli_cpu == 2000


def test_resource_arithmetic() -> None:
    a = Resource(1000, 2 * Gi, 10, 110, {"example.com/gpu": 2})
    b = Resource(250, Gi, 5, 0, {"example.com/gpu": 1, "hugepages-2Mi": 2 * Mi})
    c = a.clone()
    c.add(b)
    assert c == Resource(1250, 3 * Gi, 15, 110, {"example.com/gpu": 3, "hugepages-2Mi": 2 * Mi})
    assert a == Resource(1000, 2 * Gi, 10, 110, {"example.com/gpu": 2})  # clone is independent
    c.sub(b)
    assert c == Resource(1000, 2 * Gi, 10, 110, {"example.com/gpu": 2, "hugepages-2Mi": 0})
    assert c.get("cpu") == 1000 and c.get("memory") == 2 * Gi and c.get("ephemeral-storage") == 10
    assert c.get("pods") == 110 and c.get("example.com/gpu") == 2 and c.get("nvidia.com/gpu") == 0
    c.set("cpu", 5)
    c.set("pods", 3)
    c.set("example.com/gpu", 7)
    assert (c.milli_cpu, c.allowed_pod_number, c.scalar_resources["example.com/gpu"]) == (5, 3, 7)


def test_is_zero() -> None:
    assert Resource().is_zero()
    assert Resource(scalar_resources={"example.com/gpu": 0}).is_zero()
    assert not Resource(scalar_resources={"example.com/gpu": 1}).is_zero()
    assert not Resource(allowed_pod_number=1).is_zero()


# --- resource names (resource_names_test.go, TestIsSupportedPodLevelResource) ---------------

NAMES: list[tuple[str, bool, bool, bool]] = [
    # (name, prefixed native, native, extended)
    ("pod.alpha.kubernetes.io/opaque-int-resource-foo", True, True, False),
    ("kubernetes.io/resource-foo", True, True, False),
    ("foo", False, True, False),
    ("a/b", False, False, True),
    ("requests.foobar", False, True, False),
    ("c/d/", False, False, False),
    ("", False, True, False),
    ("example.com/foo", False, False, True),
    ("requests.nvidia.com/gpu", False, False, False),
]


@pytest.mark.parametrize(("name", "prefixed", "native", "extended"), NAMES)
def test_resource_name_classes(name: str, prefixed: bool, native: bool, extended: bool) -> None:
    assert is_prefixed_native_resource(name) is prefixed
    assert is_native_resource(name) is native
    assert is_extended_resource_name(name) is extended


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("example.com/foo", True),
        ("nvidia.com/gpu", True),
        ("kubernetes.io/foo", True),
        ("hugepages-2Mi", True),
        ("attachable-volumes-aws-ebs", True),
        ("cpu", False),
        ("memory", False),
        ("foo", False),
        ("example.com/Bad_", False),
        ("requests.example.com/foo", False),
    ],
)
def test_is_scalar_resource_name(name: str, scalar: bool) -> None:
    assert is_scalar_resource_name(name) is scalar


def test_hugepages_and_attachable_volumes() -> None:
    assert is_hugepage_resource_name("hugepages-2Mi") and not is_hugepage_resource_name("memory")
    assert is_attachable_volume_resource_name("attachable-volumes-aws-ebs")
    assert not is_attachable_volume_resource_name("memory")


@pytest.mark.parametrize(
    ("name", "supported"),
    [("cpu", True), ("memory", True), ("ephemeral-storage", False), ("hugepages-2Mi", True), ("hugepages-1Gi", True)],
)
def test_is_supported_pod_level_resource(name: str, supported: bool) -> None:
    assert is_supported_pod_level_resource(name) is supported
