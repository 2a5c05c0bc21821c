"""NodePorts PreFilter/Filter, host-port extraction and the pod-deleted hint.

Ported from pkg/scheduler/framework/plugins/nodeports/node_ports_test.go (TestNodePorts,
TestPreFilterDisabled, TestGetContainerPorts, Test_isSchedulableAfterPodDeleted).
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_builders import make_pod

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.nodeports import NodePorts
from kubesched.plugins.nodeports.node_ports import is_schedulable_after_pod_deleted

ERR = ("Unschedulable", "node(s) didn't have free ports for the requested pod ports")


def new_pod(host: str, *port_infos: str) -> dict[str, Any]:
    """Upstream ``newPod(host, "PROTO/IP/PORT"...)``: one container with those host ports."""
    ports = []
    for info in port_infos:
        proto, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": proto})
    return make_pod(node=host, containers=[{"name": "c", "image": "pause", "ports": ports}])


CASES: list[dict[str, Any]] = [
    {"name": "other port", "pod": ["UDP/127.0.0.1/8080"], "node": ["UDP/127.0.0.1/9090"]},
    {"name": "same udp port", "pod": ["UDP/127.0.0.1/8080"], "node": ["UDP/127.0.0.1/8080"], "want": ERR},
    {"name": "same tcp port", "pod": ["TCP/127.0.0.1/8080"], "node": ["TCP/127.0.0.1/8080"], "want": ERR},
    {"name": "different host ip", "pod": ["TCP/127.0.0.1/8080"], "node": ["TCP/127.0.0.2/8080"]},
    {"name": "different protocol", "pod": ["UDP/127.0.0.1/8080"], "node": ["TCP/127.0.0.1/8080"]},
    {
        "name": "second udp port conflict",
        "pod": ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"],
        "node": ["UDP/127.0.0.1/8080"],
        "want": ERR,
    },
    {
        "name": "first tcp port conflict",
        "pod": ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        "node": ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        "want": ERR,
    },
    {
        "name": "first tcp port conflict due to 0.0.0.0 hostIP",
        "pod": ["TCP/0.0.0.0/8001"],
        "node": ["TCP/127.0.0.1/8001"],
        "want": ERR,
    },
    {
        "name": "TCP hostPort conflict due to 0.0.0.0 hostIP",
        "pod": ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
        "node": ["TCP/127.0.0.1/8001"],
        "want": ERR,
    },
    {
        "name": "second tcp port conflict to 0.0.0.0 hostIP",
        "pod": ["TCP/127.0.0.1/8001"],
        "node": ["TCP/0.0.0.0/8001"],
        "want": ERR,
    },
    {"name": "second different protocol", "pod": ["UDP/127.0.0.1/8001"], "node": ["TCP/0.0.0.0/8001"]},
    {
        "name": "UDP hostPort conflict due to 0.0.0.0 hostIP",
        "pod": ["UDP/127.0.0.1/8001"],
        "node": ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        "want": ERR,
    },
]


def test_skip_filter_without_ports() -> None:
    _, status = NodePorts().pre_filter(CycleState(), PodInfo({}), [])
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_node_ports(case: dict[str, Any]) -> None:
    pl = NodePorts()
    state = CycleState()
    pod = PodInfo(new_pod("m1", *case["pod"]))
    _, status = pl.pre_filter(state, pod, [])
    assert status is None
    ni = NodeInfo(None, [PodInfo(new_pod("m1", *case["node"]))])
    got = pl.filter(state, pod, ni)
    if "want" not in case:
        assert got is None
    else:
        assert got is not None and (got.code.upstream_name, got.message()) == case["want"]


def test_pre_filter_disabled_is_an_error() -> None:
    status = NodePorts().filter(CycleState(), PodInfo({}), NodeInfo({"metadata": {"name": "n"}}))
    assert status is not None and status.code == Code.ERROR


def test_host_ports_of_containers() -> None:
    # TestGetContainerPorts: only ports with a hostPort count.
    def ports(*nums: int, extra: int) -> list[dict[str, Any]]:
        return [{"containerPort": n, "hostPort": n, "protocol": "TCP"} for n in nums] + [
            {"containerPort": extra, "protocol": "TCP"}
        ]

    pod = make_pod(
        containers=[
            {"name": "a", "ports": ports(8001, 8002, extra=8005)[:2]},
            {"name": "b", "ports": ports(8003, 8004, extra=8005)},
        ]
    )
    assert PodInfo(pod).host_ports == [("0.0.0.0", "TCP", p) for p in (8001, 8002, 8003, 8004)]


def test_sidecar_host_ports_conflict() -> None:
    sidecar = {"name": "s", "restartPolicy": "Always", "ports": [{"hostPort": 9000}]}
    plain_init = {"name": "i", "ports": [{"hostPort": 9001}]}
    pod = PodInfo(make_pod(initContainers=[sidecar, plain_init]))
    assert pod.host_ports == [("0.0.0.0", "TCP", 9000)]


def _host_port_pod(port: int, node: str = "") -> dict[str, Any]:
    return make_pod(node=node, containers=[{"name": "c", "ports": [{"hostPort": port}]}])


HINTS: list[dict[str, Any]] = [
    {"name": "skip-queue-on-unscheduled", "old": make_pod(), "want": "QUEUE_SKIP"},
    {"name": "skip-queue-on-non-hostport", "old": make_pod(node="fake-node"), "want": "QUEUE_SKIP"},
    {"name": "skip-queue-on-unrelated-hostport", "old": _host_port_pod(8081, "fake-node"), "want": "QUEUE_SKIP"},
    {"name": "queue-on-released-hostport", "old": _host_port_pod(8080, "fake-node"), "want": "QUEUE"},
]


@pytest.mark.parametrize("case", HINTS, ids=lambda c: c["name"])
def test_pod_deleted_hint(case: dict[str, Any]) -> None:
    assert is_schedulable_after_pod_deleted(_host_port_pod(8080), case["old"], None) == QueueingHint[case["want"]]


def test_pod_deleted_hint_wrong_object_raises() -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_pod_deleted(_host_port_pod(8080), "not-a-pod", None)
