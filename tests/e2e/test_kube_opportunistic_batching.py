"""OpportunisticBatching against the kube-scheduler binaries (v1.37.2 and v1.35.4), then kubesched
on the same cluster with the same configuration.

The scenario is tests/scheduler/test_opportunistic_batching.py's, traced by hand through
pkg/scheduler/framework/runtime/batch.go: nodes of 4, 2 and 1 CPUs, a profile scoring
LeastAllocated on CPU only and without PodTopologySpread (whose system defaults make every pod
unsignable), and a burst of five identical 1-CPU pods, created within a few milliseconds so that
they are scheduled in consecutive cycles well inside the batch's 500 ms.

- v1.37 re-scores the previous pod's node: the pods land 3 / 2 on n1 / n2 (ties keep the heap's
  order: kube-scheduler draws no random tie-breaker without extenders), every pod after the
  first on its hint (``scheduler_batch_attempts_total{result="hint_used"}`` 4);
- v1.35 flushes while that node still fits (``node_not_full``): no hint is used;
- with a host port (one pod per node) both releases take the first pod's runners-up as hints:
  n1, n2, n3, and the fourth pod fits nowhere.

Both schedulers must show exactly this, which pins kubesched's batching to the binaries'.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_kube_support import (
    Api,
    InProcessScheduler,
    eventually,
    free_port,
    metric_value,
    metrics_text,
    unique,
)

from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.kube.controlplane import ControlPlane, require_binaries, start_kube_scheduler

pytestmark = pytest.mark.controlplane

NODES = (("n1", "4"), ("n2", "2"), ("n3", "1"))


def _config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{
            "schedulerName": name,
            "plugins": {
                "multiPoint": {"disabled": [{"name": "PodTopologySpread"}]},
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]},
            },
            "pluginConfig": [{
                "name": "NodeResourcesFit",
                "args": {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}]}},
            }],
        }],
    }


@pytest.fixture(scope="module", params=[V1_37, V1_35], ids=str)
def plane(request: pytest.FixtureRequest) -> Iterator[tuple[Release, ControlPlane]]:
    release: Release = request.param
    with ControlPlane(require_binaries(f"v{release}")) as cp:
        yield release, cp


def _burst(api: Api, namespace: str, scheduler: str, count: int, host_port: int) -> dict[str, int]:
    """``count`` identical pods created back to back; where they went once all were decided."""
    extra: dict[str, Any] = {}
    if host_port:
        extra = {"containers": [{"name": "c", "image": "registry.invalid/pause",
                                 "resources": {"requests": {"cpu": "1"}},
                                 "ports": [{"containerPort": 80, "hostPort": host_port}]}]}
    names = [f"{scheduler}-{i}" for i in range(count)]
    for name in names:
        api.pod(namespace, name, scheduler=scheduler, cpu="1", extra_spec=extra)

    def decided() -> dict[str, int] | None:
        out: dict[str, int] = {}
        for name in names:
            pod = api.get_pod(namespace, name) or {}
            node = pod.get("spec", {}).get("nodeName")
            failed = any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                         for c in pod.get("status", {}).get("conditions") or [])
            if not node and not failed:
                return None
            out[node or ""] = out.get(node or "", 0) + 1
        return out

    counts = eventually(decided, f"{scheduler}'s pods decided", timeout=60)
    assert isinstance(counts, dict)
    return counts


def _clear(api: Api, namespace: str) -> None:
    for p in api.pods(namespace):
        api.c.delete(f"/api/v1/namespaces/{namespace}/pods/{p['metadata']['name']}", params={"gracePeriodSeconds": 0})
    eventually(lambda: not api.pods(namespace), "pods deleted", timeout=30)


def _kube_scheduler(cp: ControlPlane, tmp_path: Path, name: str) -> tuple[Any, int]:
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(yaml.safe_dump(_config(name)))
    port = free_port()
    proc = start_kube_scheduler(cfg, cp.kubeconfig_path, binary=cp.binaries.kube_scheduler, secure_port=port,
                                log_path=tmp_path / f"{name}.log")
    return proc, port


def _ks_metric(port: int, **labels: str) -> float:
    text = httpx.get(f"https://127.0.0.1:{port}/metrics", verify=False, timeout=30).text
    return metric_value(text, "scheduler_batch_attempts_total", **labels) or 0.0


@pytest.mark.parametrize("host_port", [0, 8080], ids=["least-allocated", "one-pod-per-node"])
def test_batching_matches_the_release_binary(
    plane: tuple[Release, ControlPlane], host_port: int, tmp_path: Path
) -> None:
    release, cp = plane
    count = 4 if host_port else 5
    with cp.admin_client(timeout=30.0) as client:
        api = Api(client)
        api.delete_all_nodes()
        for name, cpu in NODES:
            api.node(name, cpu=cpu)
        namespace = api.namespace()
        time.sleep(1.0)  # the nodes' allocatable reaches the scheduler's cache
        results: dict[str, tuple[dict[str, int], float]] = {}

        ks_name = unique("ks")
        proc, port = _kube_scheduler(cp, tmp_path, ks_name)
        try:
            eventually(lambda: _healthy(port), "kube-scheduler serving", timeout=60)
            time.sleep(1.0)
            counts = _burst(api, namespace, ks_name, count, host_port)
            results["kube-scheduler"] = (counts, _ks_metric(port, profile=ks_name, result="hint_used"))
        finally:
            proc.terminate()
            proc.wait(30)
        _clear(api, namespace)

        ours_name = unique("kubesched")
        sched = InProcessScheduler(_config(ours_name), cp.kubeconfig_path, release=release).start()
        try:
            counts = _burst(api, namespace, ours_name, count, host_port)
            used = metric_value(metrics_text(sched.metrics_port), "scheduler_batch_attempts_total",
                                profile=ours_name, result="hint_used") or 0.0
            results["kubesched"] = (counts, used)
        finally:
            sched.stop()
        _clear(api, namespace)
        api.delete_all_nodes()

    for who, (counts, hints_used) in results.items():
        if host_port:
            assert counts == {"n1": 1, "n2": 1, "n3": 1, "": 1}, (who, release, counts)
            assert hints_used == 2, (who, release, hints_used)
        elif release == V1_37:
            assert counts == {"n1": 3, "n2": 2}, (who, release, counts)
            assert hints_used == 4, (who, release, hints_used)
        else:
            assert sum(counts.values()) == 5 and "" not in counts, (who, release, counts)
            assert hints_used == 0, (who, release, hints_used)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"https://127.0.0.1:{port}/healthz", verify=False, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False

