"""kubesched.api.dra.extended_resource: upstream's ``Test_createRequestsAndMappings_requests`` and
``Test_createRequestsAndMappings_mappings`` (``pkg/scheduler/framework/plugins/dynamicresources/
extendeddynamicresources_test.go``) as data, and the DeviceClass resolver.

Upstream's pods come from ``st.MakePod()``: ``Res`` adds a container ``con<i>``, ``InitReq`` an init
container ``init-con<i>``, ``SidecarReq`` a restartable init container ``sidecar-con<i>`` (``i``
counting each list). Its ``mockDeviceClassResolver`` mappings are built here from DeviceClasses
(``class``: ``example.com/gpu``; ``class1``: ``example.com/gpu1``; ``classInit``:
``example.com/gpuinit``, and by its implicit name ``deviceclass.resource.kubernetes.io/classInit``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra.extended_resource import (
    DeviceClassResolver,
    create_requests_and_mappings,
    is_dra_extended_resource_name,
)

GPU = "example.com/gpu"
GPU1 = GPU + "1"
INIT = GPU + "init"
IMPLICIT_INIT = "deviceclass.resource.kubernetes.io/classInit"


def _class(name: str, extended: str | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"extendedResourceName": extended} if extended else {}}


DEV_MAP = DeviceClassResolver([_class("class", GPU)])
DEV_MAP2 = DeviceClassResolver([_class("class", GPU), _class("class1", GPU1)])
DEV_MAP_INIT = DeviceClassResolver([_class("class", GPU), _class("classInit", INIT)])


def make_pod(*parts: tuple[str, dict[str, str]]) -> dict[str, Any]:
    """("res" | "init" | "sidecar", requests) in builder order."""
    containers: list[dict[str, Any]] = []
    inits: list[dict[str, Any]] = []
    for kind, requests in parts:
        if kind == "res":
            containers.append({"name": f"con{len(containers)}", "resources": {"requests": dict(requests)}})
        else:
            c: dict[str, Any] = {"name": f"{kind}-con{len(inits)}", "resources": {"requests": dict(requests)}}
            if kind == "sidecar":
                c["restartPolicy"] = "Always"
            inits.append(c)
    return {
        "metadata": {"name": "my-pod", "namespace": "default"},
        "spec": {"containers": containers, "initContainers": inits},
    }


POD1 = make_pod(("res", {GPU: "1", GPU1: "2"}))
POD2 = make_pod(("res", {GPU: "1"}), ("res", {GPU1: "2"}))
POD_INIT = make_pod(("res", {GPU: "1"}), ("init", {INIT: "2"}))
POD_INIT2 = make_pod(("res", {GPU: "1"}), ("init", {INIT: "1"}), ("init", {INIT: "2"}))
POD_INIT3 = make_pod(("res", {GPU: "1"}), ("init", {INIT: "1"}), ("sidecar", {INIT: "1"}), ("init", {INIT: "2"}))
POD1_INIT_IMPLICIT = make_pod(("init", {INIT: "1", IMPLICIT_INIT: "2"}))
POD_INIT_IMPLICIT = make_pod(("res", {GPU: "1"}), ("init", {INIT: "1"}), ("init", {IMPLICIT_INIT: "2"}))

RES = [GPU]
RES2 = [GPU, GPU1]
RES_INIT = [GPU, INIT]
RES_INIT_IMPLICIT = [GPU, INIT, IMPLICIT_INIT]

# (name, pod, extended resources, resolver, want requests: (name, class, count)).
REQUEST_ROWS = [
    ("nil", POD1, [], DEV_MAP, []),
    ("one resource match", POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)]),
    ("one resource match, one resource not match", POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)]),
    (
        "two resources match",
        POD1,
        RES2,
        DEV_MAP2,
        [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)],
    ),
    (
        "two containers match",
        POD2,
        RES2,
        DEV_MAP2,
        [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)],
    ),
    (
        "one init container, one regular container",
        POD_INIT,
        RES_INIT,
        DEV_MAP_INIT,
        [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)],
    ),
    (
        "two init containers, one regular container",
        POD_INIT2,
        RES_INIT,
        DEV_MAP_INIT,
        [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)],
    ),
    (
        "three init containers, one sidecar, one regular container",
        POD_INIT3,
        RES_INIT,
        DEV_MAP_INIT,
        [
            ("container-1-request-0", "classInit", 1),
            ("container-2-request-0", "classInit", 2),
            ("container-3-request-0", "class", 1),
        ],
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "extended", "resolver", "want"), REQUEST_ROWS, ids=[r[0] for r in REQUEST_ROWS]
)
def test_create_requests_and_mappings_requests(
    name: str, pod: dict[str, Any], extended: list[str], resolver: DeviceClassResolver, want: list[tuple[str, str, int]]
) -> None:
    requests, _ = create_requests_and_mappings(pod, extended, resolver)
    got = [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in requests]
    assert got == want
    assert all(r["exactly"]["allocationMode"] == "ExactCount" for r in requests)


# (name, pod, extended resources, resolver, want mappings: (request, container, resource), sorted
# by request then container as upstream's test sorts them).
MAPPING_ROWS = [
    (
        "one container, two requests",
        POD1,
        RES2,
        DEV_MAP2,
        [("container-0-request-0", "con0", GPU), ("container-0-request-1", "con0", GPU1)],
    ),
    (
        "one container, one explicit and one implicit request",
        POD1_INIT_IMPLICIT,
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT,
        [("container-0-request-0", "init-con0", IMPLICIT_INIT), ("container-0-request-1", "init-con0", INIT)],
    ),
    (
        "two containers, two requests",
        POD2,
        RES2,
        DEV_MAP2,
        [("container-0-request-0", "con0", GPU), ("container-1-request-0", "con1", GPU1)],
    ),
    (
        "one init container, one regular container, one request",
        POD_INIT,
        RES_INIT,
        DEV_MAP_INIT,
        [("container-0-request-0", "init-con0", INIT), ("container-1-request-0", "con0", GPU)],
    ),
    (
        "three containers (two are init container), two requests",
        POD_INIT2,
        RES_INIT,
        DEV_MAP_INIT,
        [
            ("container-1-request-0", "init-con0", INIT),
            ("container-1-request-0", "init-con1", INIT),
            ("container-2-request-0", "con0", GPU),
        ],
    ),
    (
        "three containers (two are init container), both explicit and implicit resources",
        POD_INIT_IMPLICIT,
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT,
        [
            ("container-0-request-0", "init-con0", INIT),
            ("container-1-request-0", "init-con1", IMPLICIT_INIT),
            ("container-2-request-0", "con0", GPU),
        ],
    ),
    (
        "four containers (two are init container, one sidecar), three requests",
        POD_INIT3,
        RES_INIT,
        DEV_MAP_INIT,
        [
            ("container-1-request-0", "init-con0", INIT),
            ("container-1-request-0", "sidecar-con1", INIT),
            ("container-2-request-0", "init-con2", INIT),
            ("container-3-request-0", "con0", GPU),
        ],
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "extended", "resolver", "want"), MAPPING_ROWS, ids=[r[0] for r in MAPPING_ROWS]
)
def test_create_requests_and_mappings_mappings(
    name: str, pod: dict[str, Any], extended: list[str], resolver: DeviceClassResolver, want: list[tuple[str, str, str]]
) -> None:
    _, mappings = create_requests_and_mappings(pod, extended, resolver)
    got = sorted((m.request_name, m.container_name, m.resource_name) for m in mappings)
    assert got == want


def test_resolver_explicit_and_implicit_names() -> None:
    resolver = DeviceClassResolver([_class("gpu.example.com", GPU), _class("other")])
    assert resolver.get_device_class(GPU) == "gpu.example.com"
    assert resolver.get_device_class("deviceclass.resource.kubernetes.io/gpu.example.com") == "gpu.example.com"
    assert resolver.get_device_class("deviceclass.resource.kubernetes.io/other") == "other"
    assert resolver.get_device_class("example.com/none") is None


def test_resolver_newest_class_wins_a_shared_name() -> None:
    older = {**_class("b-old", GPU), "metadata": {"name": "b-old", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    newer = {**_class("a-new", GPU), "metadata": {"name": "a-new", "creationTimestamp": "2026-02-01T00:00:00Z"}}
    assert DeviceClassResolver([older, newer]).get_device_class(GPU) == "a-new"
    assert DeviceClassResolver([newer, older]).get_device_class(GPU) == "a-new"


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "x",
        {"metadata": None},
        {"metadata": {"name": 3}},
        {"metadata": {"name": "c"}, "spec": {"extendedResourceName": 5}},
    ],
)
def test_resolver_ignores_malformed_classes(bad: object) -> None:
    resolver = DeviceClassResolver([bad, _class("ok", GPU)])
    assert resolver.get_device_class(GPU) == "ok"


def test_malformed_pods_request_nothing() -> None:
    for pod in (
        {},
        {"spec": None},
        {"spec": {"containers": "x", "initContainers": 3}},
        make_pod(("res", {GPU: "1.5"})),
        make_pod(("res", {GPU: "lots"})),
        make_pod(("res", {GPU: "0"})),
    ):
        assert create_requests_and_mappings(pod, [GPU], DEV_MAP) == ([], [])


def test_is_dra_extended_resource_name() -> None:
    assert is_dra_extended_resource_name(GPU)
    assert is_dra_extended_resource_name(IMPLICIT_INIT)
    assert not is_dra_extended_resource_name("cpu")
    assert not is_dra_extended_resource_name("kubernetes.io/something")
