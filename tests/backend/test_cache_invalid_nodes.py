"""A node with problems enters the scheduler cache (both backends' only entry) without harm.

It is kept (pods bound to it stay accounted, its deletion is handled) but never reaches a
snapshot; a WARNING names it and the field once per new set of problems; an update that fixes
it brings it back. Hand-computed expectations.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubesched.backend.cache import Cache
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.testing import make_node, make_pod


def _node(name: str, cpu: str = "4") -> dict[str, Any]:
    n = make_node(name).capacity(cpu="4", memory="8Gi", pods="110").obj()
    n["status"]["allocatable"]["cpu"] = cpu
    return n


def _names(cache: Cache) -> list[str]:
    snap = Snapshot()
    cache.update_snapshot(snap)
    return sorted(ni.name for ni in snap.node_infos)


@pytest.mark.parametrize(
    ("cpu", "problem"),
    [
        ("abc", "status.allocatable.cpu: quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ("1e400", 'status.allocatable.cpu: Invalid value: "1e400": must be less than or equal to 9223372036854775807m'),
        ("-2", 'status.allocatable.cpu: Invalid value: "-2": must be greater than or equal to 0'),
    ],
)
def test_bad_node_is_kept_out_of_the_snapshot(cpu: str, problem: str, caplog: pytest.LogCaptureFixture) -> None:
    cache = Cache()
    cache.add_node(_node("good"))
    with caplog.at_level(logging.WARNING, logger="kubesched.cache"):
        ni = cache.add_node(_node("bad", cpu))
        cache.update_node(_node("bad", cpu))  # the same problems again: no second warning
    assert ni.problems == (problem,)
    assert _names(cache) == ["good"]
    assert cache.invalid_nodes() == {"bad": (problem,)}
    assert [r.getMessage() for r in caplog.records] == [f'node "bad" is invalid and will not be used: {problem}']


def test_taints_of_the_wrong_shape_and_a_later_fix() -> None:
    cache = Cache()
    bad = _node("n1")
    bad["spec"]["taints"] = ["x"]
    cache.add_node(bad)
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert snap.num_nodes() == 0
    # A pod bound to the bad node (by another scheduler) is still accounted on it.
    pod = make_pod("p").req(cpu="1").node("n1").obj()
    cache.add_pod(PodInfo(pod))
    cache.update_node(_node("n1"))  # fixed: back in the snapshot, with its pod
    cache.update_snapshot(snap)
    assert [(ni.name, ni.requested.milli_cpu) for ni in snap.node_infos] == [("n1", 1000)]
    cache.update_node(bad)  # broken again: out of the next snapshot
    cache.update_snapshot(snap)
    assert snap.num_nodes() == 0
    cache.remove_node("n1")
    assert cache.invalid_nodes() == {}


def test_nameless_node_is_refused_without_an_exception(caplog: pytest.LogCaptureFixture) -> None:
    cache = Cache()
    with caplog.at_level(logging.WARNING, logger="kubesched.cache"):
        cache.add_node({"kind": "Node", "metadata": {}})
    assert _names(cache) == []
    assert "metadata.name: Required value: name or generateName is required" in caplog.text
