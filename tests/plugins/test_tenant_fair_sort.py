"""TenantFairSort: queue order by the tenants' dominant resource shares (DRF, Ghodsi et al. NSDI'11).

No upstream counterpart (kubesched's own plugin). The priority and timestamp rules are upstream's
PrioritySort (pkg/scheduler/framework/plugins/queuesort/priority_sort.go); every share below is
worked out by hand from the bound pods and the nodes' allocatable (docs/tenancy.md).

The cluster of most cases: n1 (6 CPU, 60Gi) and n2 (4 CPU, 40Gi, 2 GPUs): 10 CPU, 100Gi, 2 GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.config.errors import ConfigError
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.plugins import names
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.tenantfairsort import TenantFairSort, TenantFairSortArgs, TenantShares
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

TFS = "TenantFairSort"
KEY = "kubesched.io/tenant"
GPU = "nvidia.com/gpu"
T0 = 1767225600.0


def namespace(name: str, tenant: str | None = None, key: str = KEY) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if tenant is not None:
        md["labels"] = {key: tenant}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md}


NAMESPACES = [
    namespace("team-a", "a"),
    namespace("team-b", "b"),
    namespace("shop", "acme"),
    namespace("billing", "acme"),
    namespace("lab", "globex"),
    namespace("scratch"),  # no label: its own tenant, "scratch"
]
NODES = [
    make_node("n1").capacity(cpu="6", memory="60Gi", pods="110").obj(),
    make_node("n2").capacity(cpu="4", memory="40Gi", pods="110").res({GPU: 2}).obj(),
]


def config(args: Mapping[str, Any] | None = None, profiles: Sequence[str] = ("default-scheduler",)) -> dict[str, Any]:
    """TenantFairSort at every point it implements, and as the only QueueSort (docs/tenancy.md)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": name,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": TFS}]},
                    "queueSort": {"enabled": [{"name": TFS}], "disabled": [{"name": "*"}]},
                },
                "pluginConfig": [{"name": TFS, "args": dict(args or {})}],
            }
            for name in profiles
        ],
    }


_seq = iter(range(10**6))


def bound(ns: str, node: str = "n1", **req: Any) -> dict[str, Any]:
    """A pod of ``ns`` already running on ``node`` with requests ``req`` (gpu= for nvidia.com/gpu)."""
    name = f"{ns}-running-{next(_seq)}"
    requests = {(GPU if k == "gpu" else k): str(v) for k, v in req.items()}
    return make_pod(name).namespace(ns).uid(name).res(requests).node(node).obj()


def framework(
    running: Sequence[dict[str, Any]] = (),
    args: Mapping[str, Any] | None = None,
    nodes: Sequence[dict[str, Any]] = NODES,
    namespaces: Sequence[dict[str, Any]] = NAMESPACES,
) -> TestFramework:
    fw = new_framework(config(args), nodes=nodes, pods=list(running), objects=namespaces)
    sync(fw)
    return fw


def sync(fw: TestFramework) -> None:
    """A scheduling cycle's PreFilter: the plugin reconciles with the cycle's snapshot."""
    assert fw.run_pre_filter(make_pod("probe").uid("probe").obj()).status.is_success()


def plugin(fw: TestFramework) -> TenantFairSort:
    p = fw.plugin(TFS)
    assert isinstance(p, TenantFairSort)
    return p


def queued(name: str, ns: str, *, priority: int = 0, timestamp: float = T0) -> QueuedPodInfo:
    pod = make_pod(name).namespace(ns).uid(name).priority(priority).req(cpu="1").obj()
    return QueuedPodInfo(PodInfo(pod), timestamp=timestamp)


def first(fw: TestFramework, x: QueuedPodInfo, y: QueuedPodInfo) -> str:
    """The pod the queue takes first; checks ``less`` is a strict order on the pair."""
    p = plugin(fw)
    ab, ba = p.less(x, y), p.less(y, x)
    assert ab != ba, "less must order two different pods one way"
    return (x if ab else y).pod_info.name


# -- DRF orderings, by hand -----------------------------------------------------------------------
@dataclass
class Case:
    name: str
    running: list[dict[str, Any]]
    #: (namespace, priority) of the two pending pods; the second is queued a second earlier, so
    #: wherever the share decides, it decides against upstream's timestamp order.
    x: tuple[str, int]
    y: tuple[str, int]
    shares: dict[str, float]
    first: str
    args: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case(
        "A: 2/10 cpu, 1/100Gi -> 0.2; B: 1/10 cpu, 30/100Gi -> 0.3: A first",
        [bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")],
        ("team-a", 0),
        ("team-b", 0),
        {"a": 0.2, "b": 0.3},
        "x",
    ),
    Case(
        "tenantWeights b: 2 -> B 0.3 / 2 = 0.15 < 0.2: B first",
        [bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")],
        ("team-a", 0),
        ("team-b", 0),
        {"a": 0.2, "b": 0.15},
        "y",
        {"tenantWeights": {"b": 2}},
    ),
    Case(
        "tenantWeights a: 0.5 -> A 0.2 / 0.5 = 0.4 > 0.3: B first",
        [bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")],
        ("team-a", 0),
        ("team-b", 0),
        {"a": 0.4, "b": 0.3},
        "y",
        {"tenantWeights": {"a": 0.5}},
    ),
    Case(
        "priority dominates: B (0.3) at priority 100 before A (0.2) at 0",
        [bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")],
        ("team-a", 0),
        ("team-b", 100),
        {"a": 0.2, "b": 0.3},
        "y",
    ),
    Case(
        "priority dominates weights too: A at 100 though its share is the larger",
        [bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")],
        ("team-b", 0),
        ("team-a", 100),
        {"a": 0.2, "b": 0.15},
        "y",
        {"tenantWeights": {"b": 2}},
    ),
    Case(
        "dominant resource is memory: A 1/10 cpu, 50/100Gi -> 0.5; B 4/10 cpu -> 0.4: B first",
        [bound("team-a", cpu=1, memory="50Gi"), bound("team-b", cpu=4)],
        ("team-b", 0),
        ("team-a", 0),
        {"a": 0.5, "b": 0.4},
        "x",
    ),
    Case(
        "GPUs count by default: A 1/2 gpu -> 0.5 against B 3/10 cpu -> 0.3: B first",
        [bound("team-a", node="n2", cpu=1, gpu=1), bound("team-b", cpu=3)],
        ("team-b", 0),
        ("team-a", 0),
        {"a": 0.5, "b": 0.3},
        "x",
    ),
    Case(
        "resources [cpu, memory]: A's GPU is not counted, A 1/10 cpu -> 0.1: A first",
        [bound("team-a", node="n2", cpu=1, gpu=1), bound("team-b", cpu=3)],
        ("team-b", 0),
        ("team-a", 0),
        {"a": 0.1, "b": 0.3},
        "y",
        {"resources": ["cpu", "memory"]},
    ),
    Case(
        "a namespace without the label is its own tenant: scratch 5/10 -> 0.5, globex (lab) 0.4",
        [bound("scratch", cpu=5), bound("lab", cpu=4)],
        ("lab", 0),
        ("scratch", 0),
        {"scratch": 0.5, "globex": 0.4},
        "x",
    ),
    Case(
        "two namespaces, one tenant: acme = shop 1 + billing 2 = 3/10 -> 0.3 > B's 0.25",
        [bound("shop", cpu=1), bound("billing", cpu=2), bound("team-b", cpu="2500m")],
        ("shop", 0),
        ("team-b", 0),
        {"acme": 0.3, "b": 0.25},
        "y",
    ),
    Case(
        "a namespace that does not exist is its own tenant, with no pods: 0 before A's 0.2",
        [bound("team-a", cpu=2)],
        ("team-a", 0),
        ("nowhere", 0),
        {"a": 0.2, "nowhere": 0.0},
        "y",
    ),
    Case(
        "equal shares (2/10 cpu and 20/100Gi): upstream's order, the earlier timestamp",
        [bound("team-a", cpu=2), bound("team-b", memory="20Gi")],
        ("team-a", 0),
        ("team-b", 0),
        {"a": 0.2, "b": 0.2},
        "y",
    ),
    Case(
        "equal after weights, (3/10) / 3 and 1/10, exactly: the earlier timestamp",
        [bound("team-a", cpu=3), bound("team-b", cpu=1)],
        ("team-a", 0),
        ("team-b", 0),
        {"a": 0.1, "b": 0.1},
        "y",
        {"tenantWeights": {"a": 3}},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_drf_order(case: Case) -> None:
    fw = framework(case.running, case.args)
    p = plugin(fw)
    for tenant, share in case.shares.items():
        assert p.tenant_share(tenant) == share, tenant
    x = queued("x", case.x[0], priority=case.x[1], timestamp=T0)
    y = queued("y", case.y[0], priority=case.y[1], timestamp=T0 - 1)
    assert first(fw, x, y) == case.first


def test_full_tie_falls_back_to_the_pod_key() -> None:
    fw = framework([bound("team-a", cpu=2), bound("team-b", cpu=2)])
    assert first(fw, queued("b-1", "team-b"), queued("a-1", "team-a")) == "a-1"
    assert first(fw, queued("a-2", "team-a"), queued("a-1", "team-a")) == "a-1"


def test_pods_of_one_namespace_keep_upstream_order() -> None:
    fw = framework([bound("team-a", cpu=9)])
    early, late = queued("early", "team-a", timestamp=T0), queued("late", "team-a", timestamp=T0 + 5)
    assert first(fw, late, early) == "early"
    assert first(fw, queued("lo", "team-a", priority=1), queued("hi", "team-a", priority=2)) == "hi"


# -- the queue ------------------------------------------------------------------------------------
def test_active_queue_pops_by_priority_then_share_then_time() -> None:
    """Pods added to the scheduler's queue one second apart, shares fixed while they wait:
    scratch 0 < a 0.2 < b 0.3; the priority-5 pod of b first whatever its share."""
    fw = framework([bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")])
    order = [("b-1", "team-b", 0), ("a-1", "team-a", 0), ("b-2", "team-b", 5), ("s-1", "scratch", 0)]
    order += [("a-2", "team-a", 0), ("b-3", "team-b", 0), ("s-2", "scratch", 0)]
    for name, ns, prio in order:
        fw.scheduler.queue.add(make_pod(name).namespace(ns).uid(name).priority(prio).req(cpu="1").obj())
        fw.clock.advance_to(fw.clock.now() + 1)
    popped = []
    while (qpi := fw.scheduler.queue.pop()) is not None:
        popped.append(qpi.pod_info.name)
    assert popped == ["b-2", "s-1", "s-2", "a-1", "a-2", "b-1", "b-3"]


# -- keeping the shares current -------------------------------------------------------------------
def test_reserve_counts_a_placed_pod_at_once_and_unreserve_releases_it() -> None:
    fw = framework([bound("team-a", cpu=2, memory="1Gi"), bound("team-b", cpu=1, memory="30Gi")])
    p = plugin(fw)
    x, y = queued("x", "team-a"), queued("y", "team-b")
    assert first(fw, x, y) == "x"
    big = make_pod("a-big").namespace("team-a").uid("a-big").req(cpu=2).obj()
    assert fw.run_reserve(big, "n1").is_success()
    assert p.tenant_share("a") == 0.4  # 4/10: behind B's 0.3 now
    assert first(fw, x, y) == "y"
    fw.run_unreserve(big, "n1")
    assert p.tenant_share("a") == 0.2
    assert first(fw, x, y) == "x"


def test_a_deleted_pod_is_released_at_the_next_cycle() -> None:
    gone = bound("team-a", cpu=3)
    fw = framework([bound("team-a", cpu=2), gone, bound("team-b", cpu=4)])
    p = plugin(fw)
    assert (p.tenant_share("a"), p.tenant_share("b")) == (0.5, 0.4)
    fw.cluster.delete_pod(gone)
    assert p.tenant_share("a") == 0.5  # the queue sees the scheduler's view, as of its last cycle
    sync(fw)
    assert (p.tenant_share("a"), p.tenant_share("b")) == (0.2, 0.4)
    assert first(fw, queued("y", "team-b"), queued("x", "team-a")) == "x"


def test_capacity_is_the_snapshot_nodes_allocatable() -> None:
    fw = framework([bound("team-a", cpu=2), bound("team-b", memory="30Gi")])
    p = plugin(fw)
    assert p.shares.totals == {"cpu": 10_000, "memory": 100 * 2**30, GPU: 2}
    fw.add_node(make_node("n3").capacity(cpu="10", memory="100Gi", pods="110").obj())
    sync(fw)
    assert p.shares.totals == {"cpu": 20_000, "memory": 200 * 2**30, GPU: 2}
    assert (p.tenant_share("a"), p.tenant_share("b")) == (0.1, 0.15)


def test_a_relabelled_namespace_changes_tenant_at_the_next_cycle() -> None:
    fw = framework([bound("team-a", cpu=2), bound("team-b", cpu=3), bound("lab", cpu=1)])
    p = plugin(fw)
    assert (p.tenant_share("a"), p.tenant_share("b"), p.tenant_share("globex")) == (0.2, 0.3, 0.1)
    fw.cluster.create_object("v1", "Namespace", namespace("lab", "a"))  # lab joins tenant a
    sync(fw)
    assert (p.tenant_share("a"), p.tenant_share("globex")) == (0.3, 0.0)
    # a 0.3 = b 0.3: the earlier timestamp
    assert first(fw, queued("x", "lab", timestamp=T0), queued("y", "team-b", timestamp=T0 - 1)) == "y"
    fw.cluster.create_object("v1", "Namespace", namespace("lab"))  # label removed: its own tenant
    sync(fw)
    assert (p.tenant_share("a"), p.tenant_share("lab")) == (0.2, 0.1)


def test_a_namespace_created_after_the_last_cycle_is_looked_up_once() -> None:
    fw = framework([bound("team-a", cpu=2)])
    fw.cluster.create_object("v1", "Namespace", namespace("team-a2", "a"))
    assert plugin(fw).shares.tenant_of("team-a2") == "a"
    # Its pods queue with tenant a's share (0.2), behind scratch's 0.
    assert first(fw, queued("x", "team-a2"), queued("y", "scratch", timestamp=T0 + 1)) == "y"


def test_profiles_share_one_ledger() -> None:
    """The queue is shared: a pod placed by one profile counts in every profile's order."""
    fw = new_framework(config(profiles=("default-scheduler", "other")), nodes=NODES, objects=NAMESPACES)
    one = plugin(fw)
    two = fw.scheduler.frameworks["other"].plugins[TFS]
    assert isinstance(two, TenantFairSort) and two is not one
    sync(fw)
    pod = make_pod("a-1").namespace("team-a").uid("a-1").scheduler_name("other").req(cpu=5).obj()
    assert fw.scheduler.frameworks["other"].run_reserve_plugins_reserve(fw.state, PodInfo(pod), "n1").is_success()
    assert one.tenant_share("a") == 0.5


def test_queue_sort_alone_orders_as_priority_sort() -> None:
    """Not at PreFilter/Reserve, the plugin sees no allocation: priority, then timestamp."""
    cfg = config()
    cfg["profiles"][0]["plugins"] = {"queueSort": {"enabled": [{"name": TFS}], "disabled": [{"name": "*"}]}}
    fw = new_framework(cfg, nodes=NODES, pods=[bound("team-a", cpu=8)], objects=NAMESPACES)
    assert "TenantFairSort" not in fw.framework.list_plugins().get("PreFilter", [])
    assert first(fw, queued("x", "team-a", timestamp=T0), queued("y", "team-b", timestamp=T0 + 1)) == "x"


# -- args and registration ------------------------------------------------------------------------
def test_default_args() -> None:
    a = TenantFairSortArgs()
    assert (a.tenant_label, a.resources, a.tenant_weights) == (KEY, ["cpu", "memory", GPU], {})


def test_registered_in_tree_with_typed_args() -> None:
    reg = in_tree_registry()
    assert names.TENANT_FAIR_SORT == TFS
    assert reg[TFS].factory is TenantFairSort
    assert reg.args_types()[TFS] is TenantFairSortArgs


def test_args_decode_from_yaml_keys() -> None:
    fw = framework(args={"tenantLabel": "example.com/team", "resources": ["cpu"], "tenantWeights": {"x": 2}})
    assert plugin(fw).args == TenantFairSortArgs("example.com/team", ["cpu"], {"x": 2.0})


P = "profiles[0].pluginConfig[0].args."


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        (
            {"tenantWeights": {"team-a": 0, "team-b": -1.5, "team-c": 2}},
            [
                P + "tenantWeights[team-a]: weight must be a finite number greater than 0, got 0.0",
                P + "tenantWeights[team-b]: weight must be a finite number greater than 0, got -1.5",
            ],
        ),
        (
            {"tenantWeights": {"not a tenant!": 1}},
            [
                P + "tenantWeights[not a tenant!]: tenant must be a valid label value: a valid label must be "
                "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
                """for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), got "not a tenant!\"""",
            ],
        ),
        (
            {"resources": ["cpu", "gpu", "nvidia.com/gpu", "cpu", "example.com/bad name"]},
            [
                P + "resources[1]: must be cpu, memory, ephemeral-storage or an extended resource name "
                '(such as nvidia.com/gpu), got "gpu"',
                P + 'resources[3]: duplicate value "cpu"',
                P + "resources[4]: must be a valid resource name: name part must consist of alphanumeric "
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                """'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), got "example.com/bad name\"""",
            ],
        ),
        ({"resources": []}, [P + "resources: required: at least one resource name"]),
        (
            {"resources": ["pods"]},
            [
                P + "resources[0]: must be cpu, memory, ephemeral-storage or an extended resource name "
                '(such as nvidia.com/gpu), got "pods"'
            ],
        ),
        ({"tenantWeights": {"a": "heavy"}}, [P + 'tenantWeights.a: must be float, got "heavy"']),
        (
            {"tenantLabel": ""},
            [
                P + "tenantLabel: must be a valid label key: name part must be non-empty; name part must consist "
                "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), got \"\"",
            ],
        ),
    ],
)
def test_args_are_validated_with_field_paths(args: dict[str, Any], errors: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        new_framework(config(args))
    assert [str(e) for e in err.value.errors] == errors


@pytest.mark.parametrize("resource", ["cpu", "memory", "ephemeral-storage", GPU, "hugepages-2Mi", "example.com/fpga"])
def test_valid_resource_names(resource: str) -> None:
    assert TenantFairSortArgs(resources=[resource]).validate() == []


def test_never_rejects_so_registers_no_event() -> None:
    assert TenantFairSort().events_to_register() == []


def test_a_failed_namespace_lookup_never_raises_inside_the_queue() -> None:
    """``less`` runs inside heap operations: a client error makes the namespace its own tenant
    until the next PreFilter lists the namespaces again."""
    calls: list[int] = []

    def broken() -> list[dict[str, Any]]:
        calls.append(1)
        raise ConnectionError("apiserver unavailable")

    shares = TenantShares(["cpu"], {}, KEY, broken)
    assert shares.share_of_namespace("team-a") == 0.0
    assert shares.tenant_of("team-a") == "team-a"
    assert len(calls) == 1  # looked up once, not at every comparison
    shares.sync_namespaces(NAMESPACES)
    assert shares.tenant_of("team-a") == "a"
