"""NodeName Filter (and its batch form).

Ported from pkg/scheduler/framework/plugins/nodename/node_name_test.go (TestNodeName).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugin_builders import make_node, make_pod, node_info

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.plugins.nodename import NodeName

CASES: list[dict[str, Any]] = [
    {"name": "no host specified", "pod_node": "", "node": ""},
    {"name": "host matches", "pod_node": "foo", "node": "foo"},
    {
        "name": "host doesn't match",
        "pod_node": "bar",
        "node": "foo",
        "want": ("UnschedulableAndUnresolvable", "node(s) didn't match the requested node name"),
    },
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_node_name(case: dict[str, Any]) -> None:
    status = NodeName().filter(
        CycleState(), PodInfo(make_pod("p", node=case["pod_node"])), node_info(make_node(case["node"]))
    )
    if "want" not in case:
        assert status is None
    else:
        assert status is not None and (status.code.upstream_name, status.message()) == case["want"]


@given(st.integers(1, 12), st.one_of(st.just(""), st.sampled_from([f"n{i}" for i in range(15)])))
def test_filter_batch_equals_filter(n: int, wanted: str) -> None:
    snap = Snapshot(node_info(make_node(f"n{i}")) for i in range(n))
    pod = PodInfo(make_pod("p", node=wanted))
    pl = NodeName()
    mask = pl.filter_batch(CycleState(), pod, snap, np.arange(n))
    assert mask.tolist() == [pl.filter(CycleState(), pod, ni) is None for ni in snap.list()]
