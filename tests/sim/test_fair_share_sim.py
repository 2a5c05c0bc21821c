"""examples/fair-share in whole runs: TenantFairSort against upstream's PrioritySort, with the queue,
the unschedulable pool, both cycles and pod completions on the virtual clock.

The scenario (examples/fair-share/*.yaml), worked out by hand:

* node-1 has 4 CPU. The batch namespace (no tenant label: its own tenant) fills it at t=0 with
  etl-1..4 (1 CPU each), which complete at 10m, 20m, 30m and 40m.
* team-a queues a-1..4 at 1m, team-b b-1..4 at 2m (1 CPU, 1Gi each, never completing). All wait
  in the unschedulable pool; each completion frees one CPU and moves them all back to activeQ,
  where the pod popped first takes the CPU and the others fail again.
* PrioritySort (FIFO among equal priorities): team-a's pods were queued first and stay ahead, so
  a-1, a-2, a-3, a-4 take the CPUs freed at 10m, 20m, 30m and 40m; team-b gets nothing.
* TenantFairSort (DRF over cpu, memory, nvidia.com/gpu; the cluster has no GPU, so cpu and memory;
  a pod's dominant share is cpu: 1/4 against 1Gi/16Gi):
  - 10m: team-a 0, team-b 0: a tie; team-a's pods have the earlier queue timestamps -> a-1;
  - 20m: team-a 1/4, team-b 0 -> b-1;
  - 30m: 1/4 each; every pending pod failed at the same instant, so the timestamps tie too, and
    the pod key decides: "team-a/a-2" < "team-b/b-2" -> a-2;
  - 40m: team-a 2/4, team-b 1/4 -> b-2.
  The tenants' pods interleave: two each by 40m.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.config.load import load_config
from kubesched.plugins.registry import default_registry
from kubesched.plugins.tenantfairsort import TenantFairSort
from kubesched.sim.manifests import load_manifests
from kubesched.sim.runner import SimResult, simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fair-share"
CONFIG = EXAMPLE / "scheduler-config.yaml"
MINUTE = 60.0


def run(config_path: Path | None, seed: int = 0) -> SimResult:
    reg = default_registry(entry_points=False)
    config = load_config(str(config_path) if config_path else None, args_types=reg.args_types())
    objects = load_manifests([EXAMPLE], skip={CONFIG.resolve()})
    return simulate(objects, config, reg, seed=seed)


def bound_at(r: SimResult) -> dict[str, float]:
    """``namespace/name`` -> minutes after the start, for the pods of the two tenants that ran."""
    return {
        f"{p['namespace']}/{p['name']}": (p["boundAt"] - r.start) / MINUTE
        for p in r.pods
        if p["boundAt"] is not None and p["namespace"] != "batch"
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fair_share_interleaves_the_tenants(seed: int) -> None:
    r = run(CONFIG, seed)
    assert bound_at(r) == {"team-a/a-1": 10, "team-b/b-1": 20, "team-a/a-2": 30, "team-b/b-2": 40}
    pending = sorted(f"{p['namespace']}/{p['name']}" for p in r.pods if p["node"] is None)
    assert pending == ["team-a/a-3", "team-a/a-4", "team-b/b-3", "team-b/b-4"]


def test_priority_sort_serves_the_first_tenant_only() -> None:
    """The same cluster with kube-scheduler's default profile: FIFO among equal priorities."""
    assert bound_at(run(None)) == {"team-a/a-1": 10, "team-a/a-2": 20, "team-a/a-3": 30, "team-a/a-4": 40}


def test_shares_at_the_end() -> None:
    """Two 1-CPU pods each of 4 CPU; batch's last job completed at 40m (seen at the last cycle)."""
    r = run(CONFIG)
    plugin = r.scheduler.frameworks["default-scheduler"].plugins["TenantFairSort"]
    assert isinstance(plugin, TenantFairSort)
    assert plugin.tenant_share("team-a") == 0.5
    assert plugin.tenant_share("team-b") == 0.5
