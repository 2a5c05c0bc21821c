"""Framework support added for GpuShare's trace replay (issue 6), checked against the reference forms.

A pod that fits no node is explained by every Filter plugin's status on every node (upstream
``findNodesThatPassFilters`` then ``FitError``). ``NodeFilter.statuses`` (``Framework.node_filter``)
computes those statuses plugin by plugin, with ``filter_batch_statuses`` where a plugin has it; it must give
exactly what ``run_filter_plugins`` gives node by node, and NodeResourcesFit's batch statuses exactly
what its ``filter`` (upstream ``fitsRequest``, pkg/scheduler/framework/plugins/noderesources/fit.go)
returns. The FailedScheduling message is upstream's histogram either way.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.status import Code, Status
from kubesched.plugins.gpushare import RESOURCE_GPU, RESOURCE_GPU_MILLI, GpuShare
from kubesched.testing import make_node, make_pod, new_framework


class OddNodes:
    """A per-node-only Filter plugin: rejects nodes whose name ends in an odd digit."""

    name = "OddNodes"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "odd node") if int(node_info.name[-1]) % 2 else None


_node = st.tuples(st.sampled_from(["2", "4", "8"]), st.sampled_from(["4Gi", "16Gi"]), st.sampled_from([0, 2, 4]),
                  st.sampled_from(["3", "110"]))
_pod = st.tuples(st.sampled_from(["0", "1", "3", "9"]), st.sampled_from(["0", "2Gi", "20Gi"]),
                 st.sampled_from([{}, {RESOURCE_GPU: 1}, {RESOURCE_GPU: 3}, {RESOURCE_GPU_MILLI: 600},
                                  {"example.com/foo": 1}, {"hugepages-2Mi": "4Mi"}]))


def _pod_obj(name: str, spec: tuple[str, str, dict[str, Any]], node: str | None = None) -> dict[str, Any]:
    cpu, mem, extra = spec
    req: dict[str, Any] = dict(extra)
    if cpu != "0":
        req["cpu"] = cpu
    if mem != "0":
        req["memory"] = mem
    w = make_pod(name).res(req) if req else make_pod(name).container()
    if node is not None:
        w.node(node)
    return w.obj()


@settings(max_examples=80, deadline=None)
@given(st.lists(_node, min_size=1, max_size=6), st.lists(st.tuples(st.integers(0, 5), _pod), max_size=10), _pod,
       st.permutations(["NodeResourcesFit", "GpuShare", "OddNodes"]), st.booleans())
def test_statuses_on_rows_equal_the_per_node_chain(
    nodes: list[tuple[str, str, int, str]], placed: list[tuple[int, Any]], probe: Any, order: list[str],
    ignore_foo: bool,
) -> None:
    node_objs = []
    for i, (cpu, mem, gpus, pods) in enumerate(nodes):
        res: dict[str, Any] = {"cpu": cpu, "memory": mem, "pods": pods, "hugepages-2Mi": "2Mi"}
        if gpus:
            res.update({RESOURCE_GPU: gpus, RESOURCE_GPU_MILLI: gpus * 1000})
        if i % 3 == 0:
            res["example.com/foo"] = 1
        node_objs.append(make_node(f"n{i}").res(res).obj())
    pods = [_pod_obj(f"p{k}", spec, f"n{i % len(nodes)}") for k, (i, spec) in enumerate(placed)
            if RESOURCE_GPU not in spec[2] and RESOURCE_GPU_MILLI not in spec[2]]
    fit_args = {"ignoredResources": ["example.com/foo"]} if ignore_foo else {}
    plugins: dict[str, Any] = {"GpuShare": GpuShare, "OddNodes": OddNodes, "NodeResourcesFit": "NodeResourcesFit"}
    fw = new_framework([plugins[n] for n in order], nodes=node_objs, pods=pods,
                       args={"NodeResourcesFit": fit_args} if ignore_foo else None)
    pi = fw.pod_info(_pod_obj("probe", probe))
    if not fw.run_pre_filter(pi).status.is_success():
        return
    snap = fw.scheduler.snapshot
    rows = list(range(len(nodes)))[::-1]
    batch = fw.framework.node_filter(fw.state, pi, snap, np.asarray(rows, dtype=np.intp)).statuses(rows)
    reference = [fw.framework.run_filter_plugins(fw.state, pi, snap.node_infos[r]) for r in rows]
    assert [(s.code, s.reasons, s.plugin) for s in batch] == [(s.code, s.reasons, s.plugin) for s in reference]


def test_node_resources_fit_batch_statuses_keep_fits_request_s_order_and_codes() -> None:
    nodes = [make_node("small").capacity(cpu="1", memory="1Gi", pods="1").obj(),
             make_node("busy").capacity(cpu="8", memory="8Gi", pods="10").obj(),
             make_node("big").capacity(cpu="16", memory="64Gi", pods="10").obj()]
    busy = make_pod("busy-pod").req(cpu="7", memory="7Gi").node("busy").obj()
    small = make_pod("small-pod").req(cpu="100m").node("small").obj()
    fw = new_framework(["NodeResourcesFit"], nodes=nodes, pods=[busy, small])
    pi = fw.pod_info(make_pod("p").req(cpu="4", memory="2Gi").obj())
    fw.run_pre_filter(pi)
    fit = fw.plugin("NodeResourcesFit")
    codes, statuses = fit.filter_batch_statuses(fw.state, pi, fw.scheduler.snapshot, np.arange(3, dtype=np.intp))
    got = [None if c < 0 else (statuses[c].code, statuses[c].reasons) for c in codes.tolist()]
    assert got == [
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["Too many pods", "Insufficient cpu", "Insufficient memory"]),
        (Code.UNSCHEDULABLE, ["Insufficient cpu", "Insufficient memory"]),
        None,
    ]


def test_failed_scheduling_message_from_batch_statuses() -> None:
    def gpu_node(name: str) -> dict[str, Any]:
        return make_node(name).res({"cpu": "4", "memory": "8Gi", RESOURCE_GPU: 2, RESOURCE_GPU_MILLI: 2000}).obj()

    cpu_only = make_node("cpu-only").capacity(cpu="64", memory="64Gi").obj()
    nodes = [gpu_node("n0"), gpu_node("n1"), gpu_node("n2"), cpu_only]
    pods = [make_pod("a").res({"cpu": "3", RESOURCE_GPU: 1}).node("n0").obj(),  # 1 CPU left
            make_pod("b").res({RESOURCE_GPU: 2}).node("n1").obj(),  # no GPU left
            make_pod("c").res({"memory": "4Gi"}).node("n2").obj()]  # 4Gi left
    fw = new_framework([GpuShare, "NodeResourcesFit"], nodes=nodes, pods=pods)  # Filter order: GpuShare first
    fw.add_pod(make_pod("p").res({"cpu": "2", "memory": "6Gi", RESOURCE_GPU: 1}).obj())
    fw.schedule()
    note = next(e.note for e in fw.cluster.events if e.reason == "FailedScheduling")
    assert note == ("0/4 nodes are available: 1 Insufficient GPU, 1 Insufficient cpu, 1 Insufficient memory, "
                    "1 Node has no GPU.")


class PatchAtPreBind:
    """Annotates the pod at PreBind (as GpuShare does) and records what the queue holds right after."""

    name = "PatchAtPreBind"
    queue: ClassVar[Any] = None
    active_after_patch: ClassVar[list[bool]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status | None:
        self.handle.client().patch_pod_metadata(pod.pod, annotations={"example.com/step": "pre-bind"})
        PatchAtPreBind.active_after_patch.append(PatchAtPreBind.queue.has_active())
        return None


def test_an_assumed_pod_updated_during_its_binding_cycle_is_not_queued_again() -> None:
    # upstream eventhandlers.go updatePodInSchedulingQueue: "if isAssumed { return }"
    fw = new_framework([PatchAtPreBind], nodes=[make_node("n1").capacity(cpu="4").obj()])
    PatchAtPreBind.queue = fw.scheduler.queue
    PatchAtPreBind.active_after_patch = []
    fw.add_pod(make_pod("p").req(cpu="1").obj())
    fw.schedule()
    assert PatchAtPreBind.active_after_patch == [False]
    pod = fw.cluster.pods["default/p"]
    assert pod["spec"]["nodeName"] == "n1" and pod["metadata"]["annotations"]["example.com/step"] == "pre-bind"
    assert fw.scheduler.queue.counts()["active"] == 0 and fw.cluster.bind_count["default/p"] == 1
