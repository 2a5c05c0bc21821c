"""DRAGpuScore: GPU policies over DRA devices (ours; no upstream counterpart). Scores are hand-computed
from the policies' formulas (plugins/gpu/policies.py docstrings, the FGD paper's GpuPacking and
BestFit):

- GpuPacking, all GPUs of a node free: max(33 - f, f); some GPU taken, a whole-GPU pod on u free
  GPUs: max(50 - u, 33).
- BestFit: int(100 (1 - s)), s = (cpuLeft - cpu) / 128000 / 2 + (gpuMilliLeft - gpuMilli) / 8000 / 2.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.errors import ConfigError
from kubesched.config.load import loads_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.dragpuscore import DRAGpuScore, DRAGpuScoreArgs
from kubesched.plugins.dragpuscore.devices import node_gpus, pod_claim_names
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import FakeHandle, make_node, make_pod

DRIVER = "gpu.example.com"
CLASS = "gpu.example.com"
API = "resource.k8s.io/v1"


def _slice(
    node: str,
    devices: int,
    *,
    pool: str | None = None,
    generation: int = 1,
    model: str = "h100",
    driver: str = DRIVER,
    qualified: bool = False,
) -> dict[str, Any]:
    key = f"{driver}/productName" if qualified else "productName"
    return {
        "apiVersion": API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{pool or node}-{generation}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": pool or node, "generation": generation, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "attributes": {key: {"string": model}}} for i in range(devices)],
        },
    }


def _claim(
    name: str,
    count: int = 1,
    *,
    cls: str = CLASS,
    mode: str = "ExactCount",
    allocated: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    claim: dict[str, Any] = {
        "apiVersion": API,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpus", "exactly": {"deviceClassName": cls, "allocationMode": mode, "count": count}}
                ]
            }
        },
        "status": {},
    }
    if allocated is not None:
        claim["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"request": "gpus", "driver": DRIVER, "pool": pool, "device": dev} for pool, dev in allocated
                ]
            }
        }
    return claim


def _pod(name: str, *claims: str, cpu: str = "1") -> PodInfo:
    pod = make_pod(name).req(cpu=cpu).obj()
    pod["spec"]["resourceClaims"] = [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    return PodInfo(pod)


def _node(name: str) -> NodeInfo:
    return NodeInfo(make_node(name).capacity(cpu="8", memory="64Gi", pods=110).obj())


def _plugin(objects: list[dict[str, Any]], policy: str = "GpuPacking") -> tuple[DRAGpuScore, FakeHandle]:
    handle = FakeHandle(objects=objects)
    args = DRAGpuScoreArgs(drivers=[DRIVER], device_class_names=[CLASS], scoring_policy=policy)
    return DRAGpuScore(args, handle), handle


def _scores(plugin: DRAGpuScore, pod: PodInfo, nodes: list[NodeInfo]) -> dict[str, int]:
    state = CycleState()
    status = plugin.pre_score(state, pod, nodes)
    assert status is None, status
    out: dict[str, int] = {}
    for n in nodes:
        score, st = plugin.score(state, pod, n)
        assert st is None
        out[n.name] = score
    return out


BASE = [_slice("n1", 4), _slice("n2", 4), _claim("held", 2, allocated=[("n2", "gpu-0"), ("n2", "gpu-1")])]


def test_gpu_packing_prefers_the_node_whose_gpus_are_partly_taken() -> None:
    plugin, _ = _plugin([*BASE, _claim("want")])
    assert _scores(plugin, _pod("p", "want"), [_node("n1"), _node("n2")]) == {"n1": 29, "n2": 49}


def test_best_fit_from_cpu_and_gpus_left() -> None:
    plugin, _ = _plugin([*BASE, _claim("want")], policy="BestFit")
    # n1: 7000/128000/2 + 3000/8000/2 = 0.21484375 -> 78; n2: 0.02734375 + 1000/8000/2 -> 91
    assert _scores(plugin, _pod("p", "want"), [_node("n1"), _node("n2")]) == {"n1": 78, "n2": 91}


def test_a_reserved_pod_counts_until_its_claim_shows_the_allocation() -> None:
    objects = [*BASE, _claim("first"), _claim("second")]
    plugin, handle = _plugin(objects)
    first = _pod("first", "first")
    state = CycleState()
    assert plugin.pre_score(state, first, [_node("n1"), _node("n2")]) is None
    assert plugin.reserve(state, first, "n1") is None
    # n1 has one GPU taken now: a whole-GPU pod on one free GPU scores max(50 - 1, 33).
    assert _scores(plugin, _pod("second", "second"), [_node("n1")]) == {"n1": 49}
    # The allocation reaches the API: the reservation is dropped and the device is held instead.
    claim = next(o for o in handle.client().objects if o["metadata"]["name"] == "first")
    claim["status"] = _claim("first", allocated=[("n1", "gpu-3")])["status"]
    assert _scores(plugin, _pod("second", "second"), [_node("n1")]) == {"n1": 49}
    assert plugin._reserved == {}
    # Unreserve forgets a pod that never got its allocation.
    third = _pod("third", "second")
    plugin.reserve(state, third, "n2")
    plugin.unreserve(state, third, "n2")
    assert plugin._reserved == {}


@pytest.mark.parametrize(
    ("claims", "objects"),
    [
        ((), []),
        (("all",), [_claim("all", mode="All")]),
        (("nic",), [_claim("nic", cls="nic.example.com")]),
        (("done",), [_claim("done", allocated=[("n1", "gpu-0")])]),
        (("missing",), []),
    ],
    ids=["no claims", "allocationMode All", "another class", "already allocated", "claim not found"],
)
def test_nothing_to_rank_is_skip(claims: tuple[str, ...], objects: list[dict[str, Any]]) -> None:
    plugin, _ = _plugin([*BASE, *objects])
    status = plugin.pre_score(CycleState(), _pod("p", *claims), [_node("n1")])
    assert status is not None and status.code == Code.SKIP


def test_only_the_newest_generation_of_a_pool_and_the_configured_drivers_count() -> None:
    slices = [
        _slice("n1", 8, pool="p", generation=1),
        _slice("n1", 2, pool="p", generation=2, qualified=True, model="a100"),
        _slice("n1", 4, pool="nics", driver="nic.example.com"),
        _slice("n2", 3),
    ]
    inventory = node_gpus(slices, "n1", [DRIVER], "productName")
    assert inventory.devices == ((DRIVER, "p", "gpu-0"), (DRIVER, "p", "gpu-1"))
    assert inventory.models == ("a100", "a100")
    assert node_gpus(slices, "n1", [DRIVER], f"{DRIVER}/productName").models == ("a100", "a100")


def test_generated_claim_names_come_from_the_pod_status() -> None:
    pod = make_pod("p").obj()
    pod["spec"]["resourceClaims"] = [
        {"name": "direct", "resourceClaimName": "mine"},
        {"name": "tpl", "resourceClaimTemplateName": "t"},
        {"name": "pending", "resourceClaimTemplateName": "t"},
    ]
    pod["status"]["resourceClaimStatuses"] = [{"name": "tpl", "resourceClaimName": "p-tpl-x7k2q"}]
    assert pod_claim_names(pod) == ["mine", "p-tpl-x7k2q"]


def test_malformed_objects_never_raise() -> None:
    garbage: list[dict[str, Any]] = [
        {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "x"}, "spec": "nope"},
        {
            "apiVersion": API,
            "kind": "ResourceSlice",
            "metadata": {"name": "y"},
            "spec": {"driver": DRIVER, "nodeName": "n1", "pool": [], "devices": ["gpu", 3, {"name": 7}]},
        },
        {
            "apiVersion": API,
            "kind": "ResourceClaim",
            "metadata": {"name": "bad", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": CLASS, "count": True}}]}},
            "status": {"allocation": {"devices": {"results": [None, {"driver": 1}]}}},
        },
        _claim("want", count=10**9),
    ]
    plugin, _ = _plugin([*BASE, *garbage])
    scores = _scores(plugin, _pod("p", "want"), [_node("n1"), _node("n2")])
    assert scores == {"n1": 0, "n2": 0}  # no node has a billion GPUs: nothing to rank by


def test_args_are_validated_with_paths() -> None:
    with pytest.raises(ConfigError) as err:
        DRAGpuScore(DRAGpuScoreArgs(scoring_policy="FGD"), FakeHandle())
    text = str(err.value)
    for path in ("drivers", "deviceClassNames", "typicalPods"):
        assert path in text


def test_registered_in_tree() -> None:
    assert "DRAGpuScore" in in_tree_registry()


def test_args_from_a_configuration_file() -> None:
    text = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{{name: DRAGpuScore, weight: 3}}]
  pluginConfig:
  - name: DRAGpuScore
    args:
      drivers: [{DRIVER}]
      deviceClassNames: [{CLASS}]
      modelAttribute: {DRIVER}/productName
      scoringPolicy: BestFit
"""
    cfg = loads_config(text, args_types=in_tree_registry().args_types())
    args = next(pc.args for pc in cfg.profiles[0].plugin_config if pc.name == "DRAGpuScore")
    assert args == DRAGpuScoreArgs(
        drivers=[DRIVER], device_class_names=[CLASS], model_attribute=f"{DRIVER}/productName", scoring_policy="BestFit"
    )
    with pytest.raises(ConfigError) as err:
        loads_config(
            text.replace("      drivers: [gpu.example.com]\n", "      drivers: [7]\n"),
            args_types=in_tree_registry().args_types(),
        )
    assert "drivers[0]" in str(err.value)
