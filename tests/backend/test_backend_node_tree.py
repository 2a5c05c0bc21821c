"""Zone-interleaved node order.

Ported from pkg/scheduler/backend/cache/node_tree_test.go (``TestNodeTree_AddNode``,
``TestNodeTree_RemoveNode``, ``TestNodeTree_UpdateNode``, ``TestNodeTree_List``,
``TestNodeTreeMultiOperations``). Zone keys follow ``utilnode.GetZoneKey``: the stable
topology.kubernetes.io labels, falling back to the deprecated failure-domain.beta ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.node_tree import NodeTree, zone_key

BETA_REGION = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": dict(labels)}}


def beta(name: str, region: str = "", zone: str = "") -> dict[str, Any]:
    labels = {}
    if region:
        labels[BETA_REGION] = region
    if zone:
        labels[BETA_ZONE] = zone
    return {"metadata": {"name": name, "labels": labels}}


ALL_NODES = [
    beta("node-0"),
    beta("node-1", region="region-1"),
    beta("node-2", zone="zone-2"),
    beta("node-3", "region-1", "zone-2"),
    beta("node-4", "region-1", "zone-2"),
    beta("node-5", "region-1", "zone-3"),
    beta("node-6", "region-2", "zone-2"),
    beta("node-7", "region-2", "zone-2"),
    beta("node-8", "region-2", "zone-2"),
    # node-9: stable and deprecated labels; node-10: only the deprecated ones.
    {"metadata": {"name": "node-9", "labels": {REGION: "region-2", ZONE: "zone-2",
                                               BETA_REGION: "region-2", BETA_ZONE: "zone-2"}}},
    beta("node-10", "region-2", "zone-3"),
]


def tree_of(nodes: list[dict[str, Any]]) -> NodeTree:
    t = NodeTree()
    for n in nodes:
        t.add(n)
    return t


def shape(t: NodeTree) -> dict[str, list[str]]:
    return {z: list(names) for z, names in t._tree.items()}


@pytest.mark.parametrize(("labels", "want"), [
    ({}, ""),
    ({BETA_REGION: "r"}, "r:\x00:"),
    ({BETA_ZONE: "z"}, ":\x00:z"),
    ({REGION: "r", ZONE: "z"}, "r:\x00:z"),
    ({REGION: "r", BETA_REGION: "old", ZONE: "z", BETA_ZONE: "old"}, "r:\x00:z"),
])
def test_zone_key(labels: dict[str, str], want: str) -> None:
    assert zone_key(node("n", **labels)) == want


@pytest.mark.parametrize(("nodes", "want"), [
    (ALL_NODES[:1], {"": ["node-0"]}),
    (ALL_NODES[:4], {"": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
                     "region-1:\x00:zone-2": ["node-3"]}),
    (ALL_NODES[:7], {"": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
                     "region-1:\x00:zone-2": ["node-3", "node-4"], "region-1:\x00:zone-3": ["node-5"],
                     "region-2:\x00:zone-2": ["node-6"]}),
    (ALL_NODES[9:], {"region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]}),
], ids=["single node no labels", "mix of nodes", "zones with multiple nodes", "deprecated labels"])
def test_add_node(nodes: list[dict[str, Any]], want: dict[str, list[str]]) -> None:
    t = tree_of(nodes)
    assert shape(t) == want
    assert len(t) == sum(len(v) for v in want.values())


@pytest.mark.parametrize(("existing", "remove", "want"), [
    (ALL_NODES[:7], ALL_NODES[:1], {"region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
                                    "region-1:\x00:zone-2": ["node-3", "node-4"],
                                    "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}),
    (ALL_NODES[:7], ALL_NODES[1:4], {"": ["node-0"], "region-1:\x00:zone-2": ["node-4"],
                                     "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}),
    (ALL_NODES[:7], ALL_NODES[:7], {}),
    ([], ALL_NODES[:5], {}),
], ids=["remove a single node", "remove a few nodes", "remove all nodes", "remove non-existing node"])
def test_remove_node(existing: list[dict[str, Any]], remove: list[dict[str, Any]],
                     want: dict[str, list[str]]) -> None:
    t = tree_of(existing)
    for n in remove:
        t.remove(n["metadata"]["name"])
    assert shape(t) == want
    assert len(t) == sum(len(v) for v in want.values())


@pytest.mark.parametrize(("existing", "updated", "want"), [
    (ALL_NODES[:7], beta("node-0", "region-1", "zone-2"),
     {"region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
      "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"], "region-1:\x00:zone-3": ["node-5"],
      "region-2:\x00:zone-2": ["node-6"]}),
    (ALL_NODES[:1], beta("node-0", "region-1", "zone-2"), {"region-1:\x00:zone-2": ["node-0"]}),
    (ALL_NODES[:1], beta("node-new", "region-1", "zone-2"),
     {"": ["node-0"], "region-1:\x00:zone-2": ["node-new"]}),
], ids=["update a node without label", "update the only existing node", "update non-existing node"])
def test_update_node(existing: list[dict[str, Any]], updated: dict[str, Any], want: dict[str, list[str]]) -> None:
    t = tree_of(existing)
    t.update(updated)
    assert shape(t) == want


@pytest.mark.parametrize(("nodes", "want"), [
    ([], []),
    (ALL_NODES[:1], ["node-0"]),
    (ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"]),
    (ALL_NODES[:9], ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7", "node-8"]),
], ids=["empty tree", "one node", "four nodes", "all nodes"])
def test_list(nodes: list[dict[str, Any]], want: list[str]) -> None:
    assert tree_of(nodes).list() == want


@pytest.mark.parametrize(("to_add", "to_remove", "ops", "want"), [
    (ALL_NODES[2:9], ALL_NODES[2:9], "aaarrr", []),
    (ALL_NODES[2:9], ALL_NODES[2:9], "aaar", ["node-3", "node-4"]),
    (ALL_NODES[2:9], ALL_NODES[2:9], "aaarrra", ["node-5"]),
    ([*ALL_NODES[4:9], ALL_NODES[3]], [], "aaaaaa", ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"]),
    ([*ALL_NODES[3:5], *ALL_NODES[6:8]], ALL_NODES[3:5], "aaraar", ["node-6", "node-7"]),
], ids=["add and remove all nodes", "add and remove some nodes", "remove three nodes",
        "add more nodes to an exhausted zone", "remove zone and add new"])
def test_multi_operations(to_add: list[dict[str, Any]], to_remove: list[dict[str, Any]], ops: str,
                          want: list[str]) -> None:
    t = NodeTree()
    adds, removes = iter(to_add), iter(to_remove)
    for op in ops:
        if op == "a":
            t.add(next(adds))
        else:
            t.remove(next(removes)["metadata"]["name"])
    assert t.list() == want
