"""The plugin test kit: ``new_framework``, the ``run_*`` helpers, builders and pytest fixtures.

What a plugin author relies on: a plugin class is registered under its ``name`` and enabled at every
point it implements (multiPoint), PrioritySort and DefaultBinder are added, typed args are decoded,
and the helpers run the real runtime on a simulated cluster with a virtual clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.framework.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.testing import TestFramework, make_node, make_pod, new_framework


class CpuFit:
    """A minimal Filter: does the node have ``cpu`` left for the pod?"""

    name = "CpuFit"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        free = node_info.allocatable.milli_cpu - node_info.requested.milli_cpu
        if pod.requests.milli_cpu > free:
            return Status(Code.UNSCHEDULABLE, "not enough cpu")
        return None


class MostFree:
    """Score: free milli-CPU, normalised to [0, 100]."""

    name = "MostFree"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return node_info.allocatable.milli_cpu - node_info.requested.milli_cpu, None

    def score_extensions(self) -> MostFree:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> None:
        top = max(s.score for s in scores) or 1
        for s in scores:
            s.score = s.score * 100 // top


@dataclass
class HoldArgs:
    timeout_seconds: int = 10


class Hold:
    """Permit: every pod waits ``timeoutSeconds``."""

    name = "Hold"
    Args = HoldArgs

    def __init__(self, args: HoldArgs | None, handle: Any) -> None:
        self.args = args or HoldArgs()

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        return Status(Code.WAIT), float(self.args.timeout_seconds)


def nodes(*cpus: str) -> list[dict[str, Any]]:
    return [make_node(f"n{i + 1}").capacity(cpu=c).obj() for i, c in enumerate(cpus)]


def test_new_framework_registers_the_plugin_and_adds_plumbing() -> None:
    fw = new_framework([CpuFit], nodes=nodes("1"))
    assert fw.framework.list_plugins() == {"QueueSort": ["PrioritySort"], "Filter": ["CpuFit"],
                                           "Bind": ["DefaultBinder"]}
    assert isinstance(fw.plugin("CpuFit"), CpuFit)
    assert fw.plugin("CpuFit").handle.profile_name == "default-scheduler"


def test_run_filter() -> None:
    fw = new_framework([CpuFit], nodes=nodes("1", "4"), pods=[make_pod("busy").req(cpu="500m").node("n1").obj()])
    pod = make_pod("p").req(cpu="1").obj()
    s = fw.run_filter(pod, "n1")
    assert (s.code, s.message(), s.plugin) == (Code.UNSCHEDULABLE, "not enough cpu", "CpuFit")
    assert fw.run_filter(pod, "n2").is_success()
    with pytest.raises(KeyError):
        fw.run_filter(pod, "nope")


def test_run_score_normalizes() -> None:
    fw = new_framework([MostFree], nodes=nodes("1", "2", "4"))
    res = fw.run_score(make_pod("p").obj())
    assert res.nodes == ["n1", "n2", "n3"]
    assert res.raw["MostFree"].tolist() == [1000, 2000, 4000]
    assert res.normalized["MostFree"].tolist() == [25, 50, 100]
    assert res.total.tolist() == [25, 50, 100]
    assert fw.run_score(make_pod("p").obj(), ["n3", "n1"]).total.tolist() == [100, 25]


def test_run_permit_with_typed_args_on_the_virtual_clock() -> None:
    fw = new_framework([Hold], nodes=nodes("1"), args={"Hold": {"timeoutSeconds": 30}})
    assert fw.plugin("Hold").args == HoldArgs(timeout_seconds=30)
    pod = make_pod("p").obj()
    assert fw.run_permit(pod, "n1").code == Code.WAIT
    wp = fw.framework.get_waiting_pod(fw.pod_info(pod).uid)
    assert wp is not None
    got: list[Status] = []
    wp.on_done(got.append)
    fw.clock.step(29)
    assert got == []
    fw.clock.step(1)
    assert [s.message() for s in got] == ["rejected due to timeout after waiting 30s at plugin Hold"]


def test_other_run_helpers() -> None:
    log: list[str] = []

    class Everything:
        name = "Everything"

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        def pre_enqueue(self, pod: PodInfo) -> Status | None:
            return Status(Code.UNSCHEDULABLE, "gated") if pod.labels.get("gated") else None

        def reserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
            log.append(f"reserve {node}")

        def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
            log.append(f"unreserve {node}")

        def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> None:
            log.append(f"pre_bind {node}")

    fw = new_framework([Everything], nodes=nodes("1"))
    assert fw.run_pre_enqueue(make_pod("p").label("gated", "yes").obj()).message() == "gated"
    assert fw.run_pre_enqueue(make_pod("p").obj()).is_success()
    pod = make_pod("p").obj()
    assert fw.run_reserve(pod, "n1").is_success()
    fw.run_unreserve(pod, "n1")
    assert fw.run_pre_bind(pod, "n1").is_success()
    assert log == ["reserve n1", "unreserve n1", "pre_bind n1"]
    # run_bind goes through DefaultBinder to the simulated API server.
    fw.add_pod(make_pod("q").obj())
    assert fw.run_bind(make_pod("q").obj(), "n1").is_success()
    assert fw.cluster.pods["default/q"]["spec"]["nodeName"] == "n1"
    assert fw.run_bind(make_pod("ghost").obj(), "n1").code == Code.ERROR


def test_bound_pods_count_on_their_nodes_and_schedule_runs_everything() -> None:
    fw = new_framework([CpuFit], nodes=nodes("2", "2"), pods=[make_pod("old").req(cpu="2").node("n1").obj()])
    assert [ni.requested.milli_cpu for ni in fw.nodes()] == [2000, 0]
    fw.add_pod(make_pod("new").req(cpu="1").obj())
    fw.schedule()
    assert fw.cluster.pods["default/new"]["spec"]["nodeName"] == "n2"


def test_new_framework_from_a_config_mapping_and_by_plugin_name() -> None:
    fw = new_framework(["NodeResourcesFit"], nodes=nodes("1"))
    s = fw.run_filter(make_pod("p").req(cpu="2").obj(), "n1")
    assert (s.code, s.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Insufficient cpu")
    cfg = {"profiles": [{"schedulerName": "mine", "plugins": {"multiPoint": {
        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}}}]}
    fw2 = new_framework(cfg, nodes=nodes("1"))
    assert fw2.framework.profile_name == "mine"


def test_pod_infos_are_reused_for_the_same_pod() -> None:
    fw = new_framework([CpuFit], nodes=nodes("1"))
    pod = make_pod("p").req(cpu="1").obj()
    assert fw.pod_info(pod) is fw.pod_info(pod)
    changed = make_pod("p").req(cpu="2").obj()
    assert fw.pod_info(changed).requests.milli_cpu == 2000


def test_fixtures_share_the_virtual_clock(virtual_clock: VirtualClock,
                                          make_framework: Callable[..., TestFramework]) -> None:
    assert virtual_clock.now() == 1767225600.0  # 2026-01-01T00:00:00Z
    fw = make_framework([CpuFit], nodes=nodes("1"))
    assert fw.clock is virtual_clock
    virtual_clock.step(5)
    assert fw.scheduler.clock.now() == 1767225605.0


def test_builders() -> None:
    pod = (make_pod("web").namespace("shop").label("app", "web").priority(7).req(cpu="500m", memory="1Gi")
           .toleration("k", "v", "NoSchedule").scheduling_gates("g1").host_port(8080).obj())
    pi = PodInfo(pod)
    assert (pi.key, pi.priority, pi.labels) == ("shop/web", 7, {"app": "web"})
    assert (pi.requests.milli_cpu, pi.requests.memory) == (500, 1024**3)
    assert pi.scheduling_gates == ["g1"]
    assert pi.host_ports == [("0.0.0.0", "TCP", 8080)]
    assert pi.tolerations == [{"operator": "Equal", "key": "k", "value": "v", "effect": "NoSchedule"}]
    assert make_pod("web").obj()["metadata"]["uid"] == make_pod("web").obj()["metadata"]["uid"]
    node = make_node("n1").capacity(cpu="4", pods="10").label("zone", "a").taint("k", "v").unschedulable().obj()
    ni = NodeInfo(node)
    assert (ni.allocatable.milli_cpu, ni.allocatable.allowed_pod_number) == (4000, 10)
    assert ni.labels == {"kubernetes.io/hostname": "n1", "zone": "a"}
    assert ni.taints == [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    assert ni.unschedulable
