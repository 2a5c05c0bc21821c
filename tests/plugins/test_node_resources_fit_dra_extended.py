"""NodeResourcesFit with extended resources backed by DRA: upstream's ``TestEnoughRequests`` rows
about DRAExtendedResource (``pkg/scheduler/framework/plugins/noderesources/fit_test.go``), as data.

Also ``TestIsSchedulableAfterDeviceClassEvent``'s rows, ``TestHaveAnyRequestedResourcesIncreased``'s
DRA rows, and our sign_pod.

Upstream's fixture: the node allocates cpu 10m, memory 20, pods 32, ``example.com/aaa`` 5,
ephemeral-storage 20, hugepages-2Mi 5, already holds one pod (the row's ``placed`` requests), and
the cluster has DeviceClass ``device-class-name`` with ``extendedResourceName:
extended.resource.dra.io/something``. The gate follows the release: on in v1.37, off in v1.35.
The row "nil draManager" is left out: it covers the kubelet's admission path (no DRA manager),
which kubesched does not have. Each row is also checked through Filter's batch forms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from plugin_builders import make_node, make_pod, make_snapshot

from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.noderesources import Fit
from kubesched.plugins.noderesources.fit_hints import (
    have_any_requested_resources_increased,
    is_schedulable_after_device_class_event,
)
from kubesched.testing import FakeHandle

EXTENDED_A = "example.com/aaa"
EXTENDED_B = "example.com/bbb"
EXTENDED_DRA = "extended.resource.dra.io/something"
DEVICE_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "device-class-name"},
    "spec": {"extendedResourceName": EXTENDED_DRA},
}
ALLOCATABLE = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    EXTENDED_A: "5",
    "ephemeral-storage": "20",
    "hugepages-2Mi": "5",
}

# (name, gate on, pod requests, requests of the pod already on the node, want Filter status:
#  None or (code, reasons)).
ROWS: list[tuple[str, bool, dict[str, str], dict[str, str], tuple[Code, tuple[str, ...]] | None]] = [
    ("extended resource backed by device plugin", True, {EXTENDED_A: "1"}, {}, None),
    ("extended resource backed by DRA", True, {"cpu": "1m", "memory": "1", EXTENDED_DRA: "1"}, {}, None),
    (
        "extended resource backed by DRA not enabled",
        False,
        {"cpu": "1m", "memory": "1", EXTENDED_DRA: "1"},
        {},
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {EXTENDED_DRA}",)),
    ),
    (
        "extended resource NOT backed by DRA",
        True,
        {"cpu": "1m", "memory": "1", EXTENDED_B: "1"},
        {},
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {EXTENDED_B}",)),
    ),
    (
        "extended resource was backed by Device Plugin (Allocatable: 0)",
        True,
        {EXTENDED_DRA: "1"},
        {EXTENDED_DRA: "0"},
        None,
    ),
    (
        "extended resource was backed by Device Plugin (Allocatable: 0), global cache",
        True,
        {EXTENDED_A: "1"},
        {EXTENDED_A: "0"},
        None,
    ),
]


def _fit(release: Release) -> Fit:
    return Fit(handle=FakeHandle(objects=[DEVICE_CLASS], release=release))


@pytest.mark.parametrize(("name", "gate", "requests", "placed", "want"), ROWS, ids=[r[0] for r in ROWS])
def test_enough_requests_dra_extended_resource(
    name: str,
    gate: bool,
    requests: dict[str, str],
    placed: dict[str, str],
    want: tuple[Code, tuple[str, ...]] | None,
) -> None:
    release = V1_37 if gate else V1_35
    node = make_node("node", ALLOCATABLE)
    snap = make_snapshot([node], [make_pod("placed", node="node", requests=[placed])])
    pl = _fit(release)
    pod = PodInfo(make_pod("pod", requests=[requests]))
    state = CycleState()
    _, status = pl.pre_filter(state, pod, snap.list())
    assert status is None
    [ni] = snap.list()
    got = pl.filter(state, pod, ni)
    if want is None:
        assert got is None
    else:
        assert got is not None and (got.code, tuple(got.reasons)) == want
    rows = np.arange(snap.num_nodes())
    assert pl.filter_batch(state, pod, snap, rows).tolist() == [want is None]
    codes, statuses = pl.filter_batch_statuses(state, pod, snap, rows)
    if want is None:
        assert codes.tolist() == [-1]
    else:
        assert (statuses[int(codes[0])].code, tuple(statuses[int(codes[0])].reasons)) == want


def test_a_node_advertising_the_resource_is_checked_as_usual() -> None:
    """``shouldDelegateResourceToDRA``: allocatable above zero means the device plugin provides it."""
    node = make_node("node", {**ALLOCATABLE, EXTENDED_DRA: "2"})
    snap = make_snapshot([node], [make_pod("placed", node="node", requests=[{EXTENDED_DRA: "2"}])])
    pl = _fit(V1_37)
    pod = PodInfo(make_pod("pod", requests=[{EXTENDED_DRA: "1"}]))
    state = CycleState()
    pl.pre_filter(state, pod, snap.list())
    got = pl.filter(state, pod, snap.list()[0])
    assert got is not None and (got.code, tuple(got.reasons)) == (Code.UNSCHEDULABLE, (f"Insufficient {EXTENDED_DRA}",))
    assert pl.filter_batch(state, pod, snap, np.arange(1)).tolist() == [False]


def test_without_a_handle_nothing_is_delegated() -> None:
    node = make_node("node", ALLOCATABLE)
    snap = make_snapshot([node])
    pl = Fit()
    pod = PodInfo(make_pod("pod", requests=[{EXTENDED_DRA: "1"}]))
    state = CycleState()
    pl.pre_filter(state, pod, snap.list())
    got = pl.filter(state, pod, snap.list()[0])
    assert got is not None and got.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _class(name: str = "", extended: str | None = None) -> dict[str, Any]:
    spec = {"extendedResourceName": extended} if extended is not None else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


# fit_test.go TestIsSchedulableAfterDeviceClassEvent: (name, pod requests, old, new, want).
CLASS_EVENT_ROWS: list[tuple[str, dict[str, str], Any, Any, QueueingHint]] = [
    (
        "skip-queue-on-class-same-extended-resource-name",
        {"memory": "2"},
        _class(extended="example.com/gpu"),
        _class(extended="example.com/gpu"),
        QueueingHint.QUEUE_SKIP,
    ),
    (
        "queue-on-class-add-with-implicit-extended-resource-name",
        {"deviceclass.resource.kubernetes.io/gpuclass": "1"},
        None,
        _class("gpuclass", "example.com/gpu"),
        QueueingHint.QUEUE,
    ),
    (
        "skip-on-class-add-with-implicit-extended-resource-name-not-matching",
        {"deviceclass.resource.kubernetes.io/gpuclass": "1"},
        None,
        _class("myclass", "example.com/gpu"),
        QueueingHint.QUEUE_SKIP,
    ),
    (
        "skip-on-class-add-with-explicit-extended-resource-name-not-matching",
        {"example.com/othergpu": "1"},
        None,
        _class("myclass", "example.com/gpu"),
        QueueingHint.QUEUE_SKIP,
    ),
    (
        "skip-on-class-update-with-implicit-extended-resource-name",
        {"deviceclass.resource.kubernetes.io/gpuclass": "1"},
        _class("gpuclass"),
        _class("gpuclass", "example.com/gpu"),
        QueueingHint.QUEUE_SKIP,
    ),
    (
        "queue-on-class-add-with-extended-resource-name",
        {"example.com/gpu": "1"},
        None,
        _class(extended="example.com/gpu"),
        QueueingHint.QUEUE,
    ),
    (
        "queue-on-class-update-with-extended-resource-name",
        {"example.com/gpu": "1"},
        _class(extended="example.com/gpu1"),
        _class(extended="example.com/gpu"),
        QueueingHint.QUEUE,
    ),
]


@pytest.mark.parametrize(
    ("name", "requests", "old", "new", "want"), CLASS_EVENT_ROWS, ids=[r[0] for r in CLASS_EVENT_ROWS]
)
def test_is_schedulable_after_device_class_event(
    name: str, requests: dict[str, str], old: Any, new: Any, want: QueueingHint
) -> None:
    """fit_test.go ``TestIsSchedulableAfterDeviceClassEvent`` (the rows with objects of the right type)."""
    assert is_schedulable_after_device_class_event(make_pod("pod", requests=[requests]), old, new) == want


def test_sign_pod() -> None:
    """A pod whose extended resource a class provides is not signed; others are, as before."""
    pl = _fit(V1_37)
    _, status = pl.sign_pod(PodInfo(make_pod("pod", requests=[{EXTENDED_DRA: "1"}])))
    assert status is not None and status.code == Code.UNSCHEDULABLE
    fragments, status = pl.sign_pod(PodInfo(make_pod("pod", requests=[{"cpu": "1", EXTENDED_A: "1"}])))
    assert status is None and fragments
    fragments, status = _fit(V1_35).sign_pod(PodInfo(make_pod("pod", requests=[{EXTENDED_DRA: "1"}])))
    assert status is None and fragments


# fit_test.go TestHaveAnyRequestedResourcesIncreased, its DRAExtendedResource rows: upstream passes
# no DRA manager (every requested resource missing from the node is left to DRA); here a class
# provides example.com/aaa, the only extended resource the rows request. (name, gate on, pod
# requests, original node, modified node, want).
POD_A = {"cpu": "2m", "memory": "2", "ephemeral-storage": "2", EXTENDED_A: "2"}
INCREASED_ROWS: list[tuple[str, bool, dict[str, str], dict[str, str], dict[str, str], bool]] = [
    (
        "requested-resources-dra-in-node",
        True,
        POD_A,
        {"cpu": "1", "memory": "2", "ephemeral-storage": "3", EXTENDED_A: "4"},
        {"cpu": "1", "memory": "2", "ephemeral-storage": "1", EXTENDED_A: "1"},
        False,
    ),
    (
        "requested-resources-dra-not-in-node",
        True,
        POD_A,
        {"cpu": "1", "memory": "2", "ephemeral-storage": "3"},
        {"cpu": "1", "memory": "2", "ephemeral-storage": "1"},
        True,
    ),
    ("requested-resources-dra-zero-capacity", True, {EXTENDED_A: "1"}, {EXTENDED_A: "0"}, {EXTENDED_A: "0"}, True),
    (
        "scalar-resources-not-in-node",
        False,
        POD_A,
        {"cpu": "1", "memory": "2", "ephemeral-storage": "3"},
        {"cpu": "1", "memory": "2", "ephemeral-storage": "1"},
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "gate", "requests", "original", "modified", "want"), INCREASED_ROWS, ids=[r[0] for r in INCREASED_ROWS]
)
def test_have_any_requested_resources_increased(
    name: str, gate: bool, requests: dict[str, str], original: dict[str, str], modified: dict[str, str], want: bool
) -> None:
    backed = frozenset({EXTENDED_A}) if gate else frozenset()
    pod = make_pod("pod", requests=[requests])
    got = have_any_requested_resources_increased(pod, make_node("n", original), make_node("n", modified), backed)
    assert got is want


def test_node_hint_leaves_dra_backed_resources_to_dra() -> None:
    """A node added without the DRA-backed resource may now fit (v1.37); v1.35 skips it."""
    pod = make_pod("pod", requests=[{"cpu": "1", EXTENDED_DRA: "1"}])
    node = make_node("n", {"cpu": "2", "memory": "1Gi", "pods": "10"})
    hint_37 = _fit(V1_37).events_to_register()[1].hint
    hint_35 = _fit(V1_35).events_to_register()[1].hint
    assert hint_37 is not None and hint_35 is not None
    assert hint_37(pod, None, node) == QueueingHint.QUEUE
    assert hint_35(pod, None, node) == QueueingHint.QUEUE_SKIP
