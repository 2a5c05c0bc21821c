"""OpportunisticBatching in the scheduling cycle (pkg/scheduler/schedule_one.go ``schedulePod``,
``findNodesThatFitPod``; framework/runtime/batch.go), with placements computed by hand.

The profile scores with NodeResourcesFit LeastAllocated on CPU only (score = free share × 100 after
the pod) and has no PodTopologySpread (its system default constraints make every pod unsignable,
so the default profile never batches). Nodes n1, n2, n3 have 4, 2 and 1 CPUs; each pod asks 1 CPU.

v1.37, five pods, traced through batch.go and Go's container/heap (kube-scheduler sets a node's
tie-breaking ``Randomizer`` only when an extender scored it, so equal scores keep the heap's order):
pod 1 is scored on every node (n1 75, n2 50, n3 0) and goes to n1; the heap keeps [n2, n3].
Pod 2: n1 still fits and is re-scored (50); the heap rebuilt from [n2, n3, n1] keeps n2 on top
(a child replaces its parent only when strictly better), so the hint is n2. Pod 3: n2 re-scored
0; n1 (cached 50) is the hint. Pod 4: n1 re-scored 25, the hint again. Pod 5: n1 re-scored 0;
the heap built from [n2, n3, n1], all 0, keeps n2 on top, and n2 still has a free CPU. Final: n1
three pods, n2 two; four hints used, four re-scores. kube-scheduler v1.37.2 places the same burst
the same way (tests/e2e/test_kube_opportunistic_batching.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.feature_gates import parse_feature_gates
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

NODES = (("n1", "4"), ("n2", "2"), ("n3", "1"))
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"disabled": [{"name": "PodTopologySpread"}]},
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}]}
                    },
                }
            ],
        }
    ],
}


def _run(release: Release, pods: int, *, gates: list[str] | None = None, config: dict[str, Any] | None = None,
          host_port: int = 0, seed: int = 0) -> TestFramework:
    fw = new_framework(
        config or CONFIG,
        nodes=[make_node(n).capacity(cpu=c, memory="8Gi", pods="110").obj() for n, c in NODES],
        release=release,
        seed=seed,
        feature_gates=parse_feature_gates(gates or [], str(release)) if gates is not None else None,
    )
    for i in range(pods):
        b = make_pod(f"p{i}").req(cpu="1")
        if host_port:
            b = b.host_port(host_port)
        fw.add_pod(b.obj())
    fw.schedule()
    return fw


def _counts(fw: TestFramework) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in fw.cluster.pods.values():
        node = p["spec"].get("nodeName") or ""
        out[node] = out.get(node, 0) + 1
    return out


def _value(fw: TestFramework, name: str, **labels: str) -> float:
    return fw.scheduler.metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_v1_37_rescoring_places_a_run_of_identical_pods_as_traced(seed: int) -> None:
    fw = _run(V1_37, 5, seed=seed)
    assert _counts(fw) == {"n1": 3, "n2": 2}
    profile = {"profile": "default-scheduler"}
    assert _value(fw, "scheduler_batch_attempts_total", result="hint_used", **profile) == 4
    assert _value(fw, "scheduler_batch_attempts_total", result="no_hint", **profile) == 1
    assert _value(fw, "scheduler_batch_rescore_attempts_total", **profile) == 4


def test_v1_35_flushes_when_the_last_node_still_fits() -> None:
    """v1.35: pod 2 finds n1 not full (node_not_full) and is scored on every node again; so do
    the others while their last node fits. No hint is ever given."""
    fw = _run(V1_35, 5)
    assert sum(_counts(fw).values()) == 5 and "" not in _counts(fw)
    profile = {"profile": "default-scheduler"}
    assert _value(fw, "scheduler_batch_attempts_total", result="hint_used", **profile) == 0
    assert _value(fw, "scheduler_batch_cache_flushed_total", reason="node_not_full", **profile) >= 1
    assert fw.scheduler.metrics.batch_rescore_attempts is None  # v1.37's family


@pytest.mark.parametrize("release", [V1_35, V1_36, V1_37])
def test_one_pod_per_node_follows_the_first_pods_ranking(release: Release) -> None:
    """Host port 8080 allows one pod per node: pod 1 ranks n1 (75), n2 (50), n3 (0); pods 2 and 3
    take the hints n2 and n3 in every release; pod 4 fits nowhere."""
    fw = _run(release, 4, host_port=8080)
    assert _counts(fw) == {"n1": 1, "n2": 1, "n3": 1, "": 1}
    assert _value(fw, "scheduler_batch_attempts_total", result="hint_used", profile="default-scheduler") == 2


def test_the_default_profile_never_batches() -> None:
    """PodTopologySpread's system default constraints make no pod signable (its SignPod), so every
    cycle asks for a hint in vain and every stored result is flushed as not batchable."""
    fw = _run(V1_37, 5, config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    profile = {"profile": "default-scheduler"}
    assert _value(fw, "scheduler_batch_attempts_total", result="no_hint", **profile) == 5
    assert _value(fw, "scheduler_batch_attempts_total", result="hint_used", **profile) == 0
    flushed = _value(fw, "scheduler_batch_cache_flushed_total", reason="pod_not_batchable", **profile)
    assert flushed == 5


def test_the_gate_off_turns_batching_off() -> None:
    fw = _run(V1_37, 5, gates=["OpportunisticBatching=false"])
    assert fw.framework.batch is None
    assert _value(fw, "scheduler_batch_attempts_total", result="no_hint", profile="default-scheduler") == 0
    assert sum(_counts(fw).values()) == 5
