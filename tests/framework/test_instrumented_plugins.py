"""``scheduler_plugin_evaluation_total`` counted by wrapped plugins, as upstream's instrumented_plugins.go.

Upstream (pkg/scheduler/framework/runtime/instrumented_plugins.go, ``setInstrumentedPlugins``)
wraps the PreFilter, Filter, PreScore and Score plugins: Filter and Score count every call,
PreFilter and PreScore every call that did not return Skip. kubesched's batch forms count one
evaluation per node they answer for. Also: the typed extension-point lists and the one Filter
entry point of the scheduling cycle (``Framework.node_filter``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fw_fakes import fake

from kubesched.framework.filtering import FilterPlugins
from kubesched.framework.instrumented_plugins import (
    InstrumentedBatchFilterPlugin,
    InstrumentedFilterPlugin,
    unwrap,
)
from kubesched.framework.interfaces import BatchFilterPlugin, FilterPlugin
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NODES = ["n1", "n2", "n3"]


def tf(*plugins: Any) -> TestFramework:
    return new_framework(list(plugins), nodes=[make_node(n).capacity(cpu="4").obj() for n in NODES])


def evaluations(fw: TestFramework, plugin: str, point: str) -> float:
    value = fw.scheduler.metrics.registry.get_sample_value(
        "scheduler_plugin_evaluation_total",
        {"plugin": plugin, "extension_point": point, "profile": fw.framework.profile_name},
    )
    return value or 0.0


def pod() -> dict[str, Any]:
    return make_pod("p").obj()


def test_filter_counts_every_call_and_pre_filter_skips_are_not_counted() -> None:
    a = fake("A", pre_filter=lambda state, pod, nodes: (None, Status(Code.SKIP)), filter=lambda s, p, ni: None)
    b = fake("B", pre_filter=lambda state, pod, nodes: (None, None), filter=lambda s, p, ni: None)
    fw = tf(a, b)
    fw.run_pre_filter(pod())
    for n in NODES:
        assert fw.run_filter(pod(), n, pre_filter=False).is_success()
    assert evaluations(fw, "A", "PreFilter") == 0  # Skip: not counted, as upstream
    assert evaluations(fw, "B", "PreFilter") == 1
    assert evaluations(fw, "A", "Filter") == 0  # skipped by its PreFilter: never called
    assert evaluations(fw, "B", "Filter") == 3


def test_score_and_pre_score_are_counted() -> None:
    s = fake("S", pre_score=lambda state, pod, nodes: None, score=lambda state, pod, ni: (10, None))
    k = fake("K", pre_score=lambda state, pod, nodes: Status(Code.SKIP), score=lambda state, pod, ni: (10, None))
    fw = tf(s, k)
    fw.run_score(pod())
    assert evaluations(fw, "S", "PreScore") == 1
    assert evaluations(fw, "S", "Score") == 3
    assert evaluations(fw, "K", "PreScore") == 0
    assert evaluations(fw, "K", "Score") == 0  # its PreScore skipped it


def test_a_batch_filter_counts_the_nodes_it_answers_for() -> None:
    def batch(state: Any, pod: Any, snapshot: Any, indices: Any) -> Any:
        return np.ones(len(indices), dtype=np.bool_)

    b = fake("Batch", filter=lambda s, p, ni: None, filter_batch=batch)
    fw = tf(b)
    fw.run_pre_filter(pod())
    snap = fw.scheduler.snapshot
    nf = fw.framework.node_filter(fw.state, fw.pod_info(pod()), snap, snap.table.all)
    assert nf.error is None and nf.mask.tolist() == [True, True, True]
    assert not nf.has_per_node_plugins
    assert evaluations(fw, "Batch", "Filter") == 3


def test_wrappers_keep_the_plugins_batch_forms_and_members() -> None:
    def batch(state: Any, pod: Any, snapshot: Any, indices: Any) -> Any:
        return None

    b = fake("Batch", filter=lambda s, p, ni: None, filter_batch=batch)
    f = fake("PerNode", filter=lambda s, p, ni: None)
    fw = tf(b, f).framework
    wb, wf = fw.points.filter
    assert isinstance(wb, InstrumentedBatchFilterPlugin) and isinstance(wb, BatchFilterPlugin)
    assert isinstance(wf, InstrumentedFilterPlugin) and not isinstance(wf, BatchFilterPlugin)
    assert isinstance(wf, FilterPlugin)
    assert (wb.name, wf.name) == ("Batch", "PerNode")
    assert unwrap(wb) is fw.plugins["Batch"] and unwrap(wf) is fw.plugins["PerNode"]
    assert wf.args is None  # any other member comes from the plugin
    split = FilterPlugins.of(fw.points.filter)
    assert [p.name for p in split.batch] == ["Batch"] and [p.name for p in split.per_node] == ["PerNode"]


def test_points_are_typed_lists_readable_by_name() -> None:
    f = fake("F", filter=lambda s, p, ni: None)
    fw = tf(f).framework
    assert fw.points["filter"] is fw.points.filter
    assert [name for name, _ in fw.points.items()][:3] == ["pre_enqueue", "queue_sort", "pre_filter"]
    assert [p.name for p in fw.points["bind"]] == ["DefaultBinder"]


def test_node_filter_runs_per_node_plugins_and_nominated_pods() -> None:
    """The batch form of RunFilterPluginsWithNominatedPods gives the per-node chain's statuses."""
    rejected = {"n2"}
    f = fake(
        "F",
        filter=lambda s, p, ni: Status(Code.UNSCHEDULABLE, "no") if ni.name in rejected else None,
    )
    fw = tf(f)
    fw.run_pre_filter(pod())
    snap = fw.scheduler.snapshot
    pi = fw.pod_info(pod())
    nf = fw.framework.node_filter(fw.state, pi, snap, snap.table.all)
    assert nf.has_per_node_plugins
    got = [nf.run_filter_plugins_with_nominated_pods(ni, ()).code for ni in snap.node_infos]
    want = [fw.framework.run_filter_plugins(fw.state, pi, ni).code for ni in snap.node_infos]
    assert got == want == [Code.SUCCESS, Code.UNSCHEDULABLE, Code.SUCCESS]
    assert [s.code for s in nf.statuses(list(range(3)))] == want
    nominated = PodInfo(make_pod("other").priority(10).obj())
    st = nf.run_filter_plugins_with_nominated_pods(snap.node_infos[1], [nominated])
    assert (st.code, st.plugin) == (Code.UNSCHEDULABLE, "F")
