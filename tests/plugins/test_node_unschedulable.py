"""NodeUnschedulable Filter and queueing hints.

Ported from pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go
(TestNodeUnschedulable, TestIsSchedulableAfterNodeChange) plus the pod-toleration hint of
node_unschedulable.go (isSchedulableAfterPodTolerationChange).
"""

from __future__ import annotations

from typing import Any

import pytest
from plugin_builders import make_node, make_pod, node_info

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.plugins.nodeunschedulable.node_unschedulable import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_toleration_change,
)

UNSCHEDULABLE_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}

FILTER_CASES: list[dict[str, Any]] = [
    {
        "name": "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        "tolerations": [],
        "unschedulable": True,
        "want": ("UnschedulableAndUnresolvable", "node(s) were unschedulable"),
    },
    {"name": "Schedule pod to normal node", "tolerations": [], "unschedulable": False},
    {
        "name": "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        "tolerations": [UNSCHEDULABLE_TOLERATION],
        "unschedulable": True,
    },
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c["name"])
def test_filter(case: dict[str, Any]) -> None:
    pod = PodInfo(make_pod("p", tolerations=case["tolerations"]))
    status = NodeUnschedulable().filter(
        CycleState(), pod, node_info(make_node("n", unschedulable=case["unschedulable"]))
    )
    if "want" not in case:
        assert status is None
    else:
        assert status is not None and (status.code.upstream_name, status.message()) == case["want"]


NOT_READY = [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]
NODE_HINTS: list[dict[str, Any]] = [
    {"name": "skip-queue-on-unschedulable-node-added", "new": make_node("n", unschedulable=True), "want": "QUEUE_SKIP"},
    {"name": "queue-on-schedulable-node-added", "new": make_node("n"), "want": "QUEUE"},
    {
        "name": "skip-unrelated-change",
        "new": make_node("n", unschedulable=True, taints=NOT_READY),
        "old": make_node("n", unschedulable=True),
        "want": "QUEUE_SKIP",
    },
    {
        "name": "queue-on-unschedulable-field-change",
        "new": make_node("n"),
        "old": make_node("n", unschedulable=True),
        "want": "QUEUE",
    },
]


@pytest.mark.parametrize("case", NODE_HINTS, ids=lambda c: c["name"])
def test_node_change_hint(case: dict[str, Any]) -> None:
    assert is_schedulable_after_node_change(make_pod("p"), case.get("old"), case["new"]) == QueueingHint[case["want"]]


@pytest.mark.parametrize(("old", "new"), [(None, "not-a-node"), ("not-a-node", make_node("n", unschedulable=True))])
def test_node_change_hint_wrong_objects_raise(old: Any, new: Any) -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_node_change(make_pod("p"), old, new)


def test_pod_toleration_hint() -> None:
    pod = make_pod("p", uid="u1")
    updated = make_pod("p", uid="u1", tolerations=[UNSCHEDULABLE_TOLERATION])
    unrelated = make_pod("p", uid="u1", tolerations=[{"key": "other", "effect": "NoSchedule"}])
    other_pod = make_pod("q", uid="u2", tolerations=[UNSCHEDULABLE_TOLERATION])
    assert is_schedulable_after_pod_toleration_change(pod, pod, updated) == QueueingHint.QUEUE
    assert is_schedulable_after_pod_toleration_change(pod, pod, unrelated) == QueueingHint.QUEUE_SKIP
    assert is_schedulable_after_pod_toleration_change(pod, other_pod, other_pod) == QueueingHint.QUEUE_SKIP
