"""TenantIsolation: nodes dedicated to a tenant, shared nodes, tenants from namespace labels.

No upstream counterpart (kubesched's own plugin); expectations are hand-written from the rules in
docs/tenancy.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.config.errors import ConfigError
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.status import Code
from kubesched.plugins.tenancy import TenantIsolation
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

TI = "TenantIsolation"
KEY = "kubesched.io/tenant"
OTHER = "node(s) are dedicated to another tenant"
SHARED = "node(s) are not dedicated to the pod's tenant"


def namespace(name: str, tenant: str | None = None, key: str = KEY) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if tenant is not None:
        md["labels"] = {key: tenant}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md}


def node(name: str, tenant: str | None = None, key: str = KEY) -> dict[str, Any]:
    w = make_node(name).capacity(cpu="4", memory="8Gi")
    if tenant is not None:
        w.label(key, tenant)
    return w.obj()


NAMESPACES = [namespace("shop", "acme"), namespace("billing", "acme"), namespace("lab", "globex"), namespace("scratch")]
NODES = [node("acme-1", "acme"), node("globex-1", "globex"), node("scratch-1", "scratch"), node("shared-1")]


def framework(
    args: dict[str, Any] | None = None, nodes: list[dict[str, Any]] = NODES, plugins: tuple[str, ...] = ()
) -> TestFramework:
    return new_framework([*plugins, TI], nodes=nodes, objects=NAMESPACES, args={TI: args} if args is not None else None)


# (namespace of the pod, node, allowSharedNodes) -> None (fits) or the reason.
FILTER = [
    ("shop", "acme-1", True, None),
    ("billing", "acme-1", True, None),  # two namespaces, one tenant
    ("shop", "globex-1", True, OTHER),
    ("lab", "acme-1", True, OTHER),  # isolation works both ways
    ("lab", "globex-1", True, None),
    ("shop", "shared-1", True, None),
    ("shop", "shared-1", False, SHARED),
    ("lab", "shared-1", False, SHARED),
    ("shop", "acme-1", False, None),
    # A namespace without the label is its own tenant, named after it...
    ("scratch", "scratch-1", True, None),
    ("scratch", "acme-1", True, OTHER),
    ("scratch", "shared-1", True, None),
    ("shop", "scratch-1", True, OTHER),
    # ...and so is a namespace that does not exist (yet).
    ("nowhere", "shared-1", True, None),
    ("nowhere", "acme-1", True, OTHER),
    ("nowhere", "shared-1", False, SHARED),
]


@pytest.mark.parametrize(("ns", "node_name", "shared", "reason"), FILTER)
def test_filter(ns: str, node_name: str, shared: bool, reason: str | None) -> None:
    fw = framework({"allowSharedNodes": shared})
    st = fw.run_filter(make_pod("p").namespace(ns).obj(), node_name)
    if reason is None:
        assert st.is_success(), st
    else:
        assert (st.code, st.message(), st.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, TI)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("ns", ["shop", "lab", "scratch", "nowhere"])
def test_filter_batch_agrees_with_filter(ns: str, shared: bool) -> None:
    fw = framework({"allowSharedNodes": shared})
    pod = make_pod("p").namespace(ns).obj()
    fw.run_pre_filter(pod)
    snap = fw.scheduler.snapshot
    indices = np.arange(len(snap.node_infos), dtype=np.intp)[::-1].copy()
    mask = fw.plugin(TI).filter_batch(fw.state, fw.pod_info(pod), snap, indices)
    want = [fw.plugin(TI).filter(fw.state, fw.pod_info(pod), snap.node_infos[i]) is None for i in indices]
    assert mask.tolist() == want


def test_custom_tenant_label() -> None:
    fw = new_framework(
        [TI],
        nodes=[node("a", "red", key="example.com/team"), node("b", "red")],
        objects=[namespace("ns", "red", key="example.com/team")],
        args={TI: {"tenantLabel": "example.com/team"}},
    )
    pod = make_pod("p").namespace("ns").obj()
    assert fw.run_filter(pod, "a").is_success()
    # b carries the default key only: for this configuration it is a shared node.
    assert fw.run_filter(pod, "b").is_success()


def test_pods_land_only_on_their_tenants_nodes_or_shared_ones() -> None:
    fw = framework(
        nodes=[node("acme-1", "acme"), node("globex-1", "globex")], plugins=("NodeResourcesFit", "DefaultPreemption")
    )
    for i in range(4):
        fw.add_pod(make_pod(f"s{i}").namespace("shop").req(cpu="1").obj())
    for i in range(3):
        fw.add_pod(make_pod(f"l{i}").namespace("lab").req(cpu="1").obj())
    fw.add_pod(make_pod("s4").namespace("shop").req(cpu="1").obj())
    fw.schedule()
    placed = {k: p["spec"].get("nodeName") for k, p in fw.cluster.pods.items()}
    assert {placed[f"shop/s{i}"] for i in range(4)} == {"acme-1"}
    assert {placed[f"lab/l{i}"] for i in range(3)} == {"globex-1"}
    assert placed["shop/s4"] is None  # acme-1 is full; globex-1 has room but is not acme's
    note = next(e.note for e in fw.cluster.events if e.reason == "FailedScheduling" and e.name == "s4")
    assert note == (
        f"0/2 nodes are available: 1 Insufficient cpu, 1 {OTHER}. preemption: 0/2 nodes are available: "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


def test_args_are_validated() -> None:
    with pytest.raises(ConfigError) as err:
        new_framework([TI], args={TI: {"tenantLabel": "bad key!"}})
    assert [str(e) for e in err.value.errors] == [
        "profiles[0].pluginConfig[0].args.tenantLabel: must be a valid label key: name part must consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        """'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), got "bad key!\""""
    ]
    with pytest.raises(ConfigError) as err:
        new_framework([TI], args={TI: {"allowSharedNodes": "no"}})
    assert [str(e) for e in err.value.errors] == [
        'profiles[0].pluginConfig[0].args.allowSharedNodes: must be bool, got "no"'
    ]


# -- EnqueueExtensions ----------------------------------------------------------------------------
def test_events_to_register() -> None:
    events = {(e.event.resource, e.event.action) for e in TenantIsolation().events_to_register()}
    assert events == {
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        (EventResource.NAMESPACE, ActionType.ADD | ActionType.UPDATE),
    }


NODE_HINTS = [
    ("new node of the pod's tenant", None, node("n", "acme"), True, "QUEUE"),
    ("new node of another tenant", None, node("n", "globex"), True, "QUEUE_SKIP"),
    ("new shared node", None, node("n"), True, "QUEUE"),
    ("new shared node, shared nodes not allowed", None, node("n"), False, "QUEUE_SKIP"),
    ("relabelled to the pod's tenant", node("n", "globex"), node("n", "acme"), True, "QUEUE"),
    ("dedication removed", node("n", "globex"), node("n"), True, "QUEUE"),
    ("already the pod's tenant", node("n", "acme"), node("n", "acme"), True, "QUEUE_SKIP"),
    ("dedicated away from the pod's tenant", node("n"), node("n", "globex"), True, "QUEUE_SKIP"),
]


@pytest.mark.parametrize(("name", "old", "new", "shared", "want"), NODE_HINTS, ids=[c[0] for c in NODE_HINTS])
def test_node_hint(name: str, old: Any, new: Any, shared: bool, want: str) -> None:
    fw = framework({"allowSharedNodes": shared})
    pod = make_pod("p").namespace("shop").obj()
    assert fw.plugin(TI).node_hint(pod, old, new) == QueueingHint[want]


NAMESPACE_HINTS = [
    ("the pod's namespace gets a tenant", namespace("shop"), namespace("shop", "acme"), "QUEUE"),
    ("the pod's namespace changes tenant", namespace("shop", "globex"), namespace("shop", "acme"), "QUEUE"),
    ("the pod's namespace loses its tenant", namespace("shop", "acme"), namespace("shop"), "QUEUE"),
    ("the pod's namespace is created with a tenant", None, namespace("shop", "acme"), "QUEUE"),
    ("the pod's namespace is created without one", None, namespace("shop"), "QUEUE_SKIP"),
    ("the same tenant", namespace("shop", "acme"), namespace("shop", "acme"), "QUEUE_SKIP"),
    ("another namespace", namespace("lab"), namespace("lab", "acme"), "QUEUE_SKIP"),
]


@pytest.mark.parametrize(("name", "old", "new", "want"), NAMESPACE_HINTS, ids=[c[0] for c in NAMESPACE_HINTS])
def test_namespace_hint(name: str, old: Any, new: Any, want: str) -> None:
    pod = make_pod("p").namespace("shop").obj()
    assert TenantIsolation().namespace_hint(pod, old, new) == QueueingHint[want]


def test_relabelling_the_namespace_moves_the_pod() -> None:
    """A pod rejected everywhere waits; labelling its namespace with the tenant of a node with room
    brings it back and it lands there, without waiting for the unschedulable pool's flush."""
    fw = framework({"allowSharedNodes": False}, nodes=[node("acme-1", "acme")])
    fw.add_pod(make_pod("p").namespace("lab").req(cpu="1").obj())
    fw.schedule(until=fw.clock.now() + 30)
    assert fw.cluster.pods["lab/p"]["spec"].get("nodeName") is None
    relabel_at = fw.clock.now()
    fw.cluster.create_object("v1", "Namespace", namespace("lab", "acme"))
    fw.schedule(until=relabel_at + 30)
    assert fw.cluster.pods["lab/p"]["spec"]["nodeName"] == "acme-1"
    assert fw.scheduler.stats.bound_at[fw.cluster.pods["lab/p"]["metadata"]["uid"]] < relabel_at + 30


def test_unrelated_events_leave_the_pod_waiting() -> None:
    fw = framework(nodes=[node("acme-1", "acme")])
    fw.add_pod(make_pod("p").namespace("lab").req(cpu="1").obj())
    fw.schedule(until=fw.clock.now() + 30)
    assert fw.scheduler.queue.counts()["unschedulable"] == 1
    fw.add_node(node("initech-1", "initech"))  # not the pod's tenant
    fw.cluster.create_object("v1", "Namespace", namespace("shop", "other"))  # not the pod's namespace
    assert fw.scheduler.queue.counts()["unschedulable"] == 1
    fw.add_node(node("shared-9"))
    assert fw.scheduler.queue.counts()["unschedulable"] == 0


def test_filter_batch_follows_node_changes_across_cycles() -> None:
    """The owner column is refreshed for relabelled nodes and rebuilt when nodes come and go."""
    fw = framework()
    pod = make_pod("p").namespace("shop").obj()

    def mask() -> dict[str, bool]:
        fw.run_pre_filter(pod)
        snap = fw.scheduler.snapshot
        idx = np.arange(len(snap.node_infos), dtype=np.intp)
        got = fw.plugin(TI).filter_batch(fw.state, fw.pod_info(pod), snap, idx)
        return {snap.node_infos[i].name: bool(got[i]) for i in idx}

    assert mask() == {"acme-1": True, "globex-1": False, "scratch-1": False, "shared-1": True}
    fw.cluster.update_node(node("globex-1", "acme"))
    fw.cluster.update_node(node("shared-1", "globex"))
    assert mask() == {"acme-1": True, "globex-1": True, "scratch-1": False, "shared-1": False}
    fw.add_node(node("shared-2"))
    fw.add_node(node("initech-1", "initech"))
    assert mask() == {
        "acme-1": True,
        "globex-1": True,
        "scratch-1": False,
        "shared-1": False,
        "shared-2": True,
        "initech-1": False,
    }
