"""When a pod fits nowhere the scheduler explains every node with ``NodeFilter.statuses``
(``Framework.node_filter``), which asks a plugin's batch mask which nodes pass and calls its per-node
Filter only on the others. The statuses (code, reasons, plugin) must be exactly those of
the reference chain, ``run_filter_plugins`` node by node (upstream stops at the first failing
plugin), on random clusters with taints, cordoned nodes, labels, node selectors and affinity,
tolerations and resource requests."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch_cluster import nodes, pods

from kubesched.testing import new_framework

PLUGINS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]


@st.composite
def probes(draw: st.DrawFn) -> dict[str, Any]:
    pod = draw(pods())
    for c in pod["spec"]["containers"]:
        c["resources"] = {"requests": {"cpu": draw(st.sampled_from(["100m", "3", "5"]))}}
    if draw(st.integers(0, 4)) == 0:
        pod["spec"]["nodeName"] = f"n{draw(st.integers(0, 3))}"
    return pod


@settings(max_examples=100, deadline=None)
@given(nodes(), probes(), st.permutations(PLUGINS))
def test_statuses_on_rows_equal_the_per_node_chain(
    node_objs: list[dict[str, Any]], probe: dict[str, Any], order: list[str]
) -> None:
    fw = new_framework(order, nodes=node_objs)
    pi = fw.pod_info(probe)
    if not fw.run_pre_filter(pi).status.is_success():
        return
    snap = fw.scheduler.snapshot
    rows = list(range(snap.num_nodes()))[::-1]
    got = fw.framework.node_filter(fw.state, pi, snap, np.asarray(rows, dtype=np.intp)).statuses(rows)
    want = [fw.framework.run_filter_plugins(fw.state, pi, snap.node_infos[r]) for r in rows]
    assert [(s.code, s.reasons, s.plugin) for s in got] == [(s.code, s.reasons, s.plugin) for s in want]
