"""``kubesched bench`` end to end, small: every workload on the simulator, and SchedulingBasic on the
real API server with each scheduler. A smoke test of the harness and of the JSON it prints — not a
timed assertion (numbers live in docs/performance.md)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.bench.workloads import TRACE_PODS, WORKLOADS, trace_dir
from kubesched.cli import cli
from kubesched.config.releases import DEFAULT_RELEASE

KEYS = {
    "workload",
    "backend",
    "scheduler",
    "nodes",
    "init_pods",
    "pods",
    "seconds",
    "pods_per_second",
    "attempt_p50_ms",
    "attempt_p99_ms",
    "peak_rss_mb",
    "bound",
    "cpu_seconds",
    "apiserver_cpu_seconds",
    "release",
}

#: (nodes, init pods, measured pods) small enough for CI, large enough that every measured pod fits
#: (PreemptionBasic: four low-priority pods per node, so each measured pod must preempt three).
SIZES = {
    "SchedulingBasic": (5, 5, 10),
    "SchedulingPodAntiAffinity": (6, 2, 4),
    "SchedulingPodAffinity": (5, 5, 10),
    "SchedulingPreferredPodAffinity": (5, 5, 10),
    "SchedulingNodeAffinity": (5, 5, 10),
    "TopologySpreading": (6, 6, 10),
    "PreemptionBasic": (4, 16, 4),
    "Unschedulable": (5, 1, 20),
    "GpuTrace": (100, 10, 20),
    "HostPortReplicas": (6, 0, 6),
}


def _bench(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["bench", "--no-progress", *args])
    return res.exit_code, res.output


def _check(out: dict[str, Any], workload: str, backend: str, scheduler: str, size: tuple[int, int, int]) -> None:
    assert set(out) >= KEYS, KEYS - set(out)
    assert (out["workload"], out["backend"], out["scheduler"]) == (workload, backend, scheduler)
    assert (out["nodes"], out["init_pods"], out["pods"]) == size
    assert out["bound"] == size[2]
    assert out["seconds"] > 0 and out["pods_per_second"] > 0
    assert abs(out["pods_per_second"] - out["bound"] / out["seconds"]) <= 0.05 * out["pods_per_second"] + 0.1
    assert 0 < out["attempt_p50_ms"] <= out["attempt_p99_ms"]
    assert out["peak_rss_mb"] > 10


def test_every_workload_has_a_smoke_size() -> None:
    assert set(SIZES) == set(WORKLOADS)


@pytest.mark.parametrize("workload", sorted(SIZES))
def test_sim_workload(workload: str) -> None:
    if workload == "GpuTrace" and not (trace_dir() / TRACE_PODS).is_file():
        pytest.skip(f"Alibaba trace not found in {trace_dir()}")
    n, k, m = SIZES[workload]
    code, output = _bench("--workload", workload, "--nodes", str(n), "--init-pods", str(k), "--pods", str(m))
    assert code == 0, output
    _check(json.loads(output), workload, "sim", "kubesched", (n, k, m))


def test_kernel() -> None:
    # The bare kernel (--kernel) prints the same JSON, marked as the kernel.
    n, k, m = SIZES["SchedulingBasic"]
    code, output = _bench("--workload", "SchedulingBasic", "--kernel", "--nodes", str(n), "--init-pods", str(k),
                          "--pods", str(m))
    assert code == 0, output
    out = json.loads(output)
    _check(out, "SchedulingBasic", "sim", "kernel", (n, k, m))
    assert out["kernel"] is True and out["release"] == str(DEFAULT_RELEASE)


@pytest.mark.parametrize("kernel", [False, True])
def test_emulated_version(kernel: bool) -> None:
    n, k, m = SIZES["SchedulingBasic"]
    code, output = _bench("--workload", "SchedulingBasic", "--emulated-version", "1.35", "--nodes", str(n),
                          "--init-pods", str(k), "--pods", str(m), *(["--kernel"] if kernel else []))
    assert code == 0, output
    out = json.loads(output)
    assert out["release"] == "1.35" and out["bound"] == m
    assert ("kernel" in out) is kernel


def test_default_size_is_upstreams() -> None:
    # No size given: scheduler_perf's (SchedulingBasic 5000Nodes_10000Pods has 1000 init pods).
    size = WORKLOADS["SchedulingBasic"].default_size
    assert (size.nodes, size.init_pods, size.pods) == (5000, 1000, 10000)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--workload", "Nope"], "unknown workload 'Nope'"),
        (
            ["--workload", "SchedulingBasic", "--scheduler", "kube-scheduler", "--pods", "1"],
            "needs --backend apiserver",
        ),
        (["--workload", "SchedulingBasic", "--pods", "0"], "--pods: must be an integer in 1..100000, got 0"),
        (["--workload", "GpuTrace", "--backend", "apiserver", "--pods", "1"], "runs on the simulator only"),
        (["--workload", "Unschedulable", "--kernel", "--pods", "1"], "only SchedulingBasic has a kernel"),
        (["--workload", "SchedulingBasic", "--kernel", "--backend", "apiserver", "--pods", "1"],
         "--kernel runs on its own"),
        (["--workload", "SchedulingBasic", "--emulated-version", "1.20", "--pods", "1"], "is not between"),
    ],
)
def test_bad_input_exits_2(args: list[str], message: str) -> None:
    code, output = _bench(*args)
    assert code == 2
    assert message in " ".join(output.split())


#: Every workload the API server can run, with kubesched; both schedulers on two of them (one with
#: PriorityClasses and preemption through the API).
APISERVER_CASES = [
    *((w, "kubesched") for w in sorted(SIZES) if not WORKLOADS[w].sim_only),
    ("SchedulingBasic", "kube-scheduler"),
    ("PreemptionBasic", "kube-scheduler"),
]


@pytest.mark.controlplane
@pytest.mark.parametrize("workload, scheduler", APISERVER_CASES)
def test_apiserver(workload: str, scheduler: str) -> None:
    from kubesched.kube.controlplane import NOT_BUILT_MESSAGE, ControlPlaneNotBuiltError, find_binaries

    try:
        binaries = find_binaries()
    except ControlPlaneNotBuiltError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc), pytrace=False)
        pytest.skip(NOT_BUILT_MESSAGE)
    if binaries.kube_scheduler is None:
        pytest.fail("kube-scheduler not built (scripts/controlplane.sh builds it)", pytrace=False)
    n, k, m = SIZES[workload]
    code, output = _bench(
        "--workload", workload, "--backend", "apiserver", "--scheduler", scheduler,
        "--nodes", str(n), "--init-pods", str(k), "--pods", str(m),
    )  # fmt: skip
    assert code == 0, output
    out = json.loads(output)
    _check(out, workload, "apiserver", scheduler, (n, k, m))
    # kube-apiserver's CPU in the window: /proc counts in 10 ms ticks, so a run this small may
    # read 0; never negative (it is the same process before and after).
    assert isinstance(out["apiserver_cpu_seconds"], float) and out["apiserver_cpu_seconds"] >= 0


@pytest.mark.controlplane
@pytest.mark.parametrize("scheduler", ["kubesched", "kube-scheduler"])
def test_apiserver_emulated_version(scheduler: str) -> None:
    # --emulated-version 1.35 on the API server: that release's control plane and kube-scheduler,
    # and `kubesched run --emulated-version 1.35`.
    from kubesched.kube.controlplane import require_binaries

    binaries = require_binaries("v1.35")
    assert binaries.kube_scheduler is not None
    n, k, m = SIZES["SchedulingBasic"]
    code, output = _bench(
        "--workload", "SchedulingBasic", "--backend", "apiserver", "--scheduler", scheduler,
        "--emulated-version", "1.35", "--nodes", str(n), "--init-pods", str(k), "--pods", str(m),
    )  # fmt: skip
    assert code == 0, output
    out = json.loads(output)
    _check(out, "SchedulingBasic", "apiserver", scheduler, (n, k, m))
    assert out["release"] == "1.35"


@pytest.mark.parametrize(
    ("value", "expected"), [("OpportunisticBatching=false", False), ("OpportunisticBatching=true", True)]
)
def test_feature_gates_reach_the_simulated_scheduler(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    """``bench --feature-gates`` is kube-scheduler's flag: the simulated scheduler gets the gates
    (OpportunisticBatching is on by default in every release, so ``=false`` must arrive), and the
    JSON records them."""
    import kubesched.bench.sim as bench_sim

    seen: list[Any] = []
    real = bench_sim.new_simulation

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("feature_gates"))
        return real(*args, **kwargs)

    monkeypatch.setattr(bench_sim, "new_simulation", spy)
    code, output = _bench("--workload", "SchedulingBasic", "--nodes", "5", "--init-pods", "0", "--pods", "5",
                          "--feature-gates", value)
    assert code == 0, output
    out = json.loads(output)
    assert out["feature_gates"] == [value]
    assert len(seen) == 1 and seen[0] is not None
    assert seen[0].enabled("OpportunisticBatching") is expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--feature-gates", "NoSuchGate=true"), "error: --feature-gates: unrecognized feature gate: NoSuchGate"),
        (("--feature-gates", "OpportunisticBatching=maybe"), "error: --feature-gates: "),
        (("--kernel", "--feature-gates", "OpportunisticBatching=false"), "no --feature-gates"),
    ],
)
def test_bad_feature_gates_exit_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    code, output = _bench("--workload", "SchedulingBasic", "--nodes", "5", "--init-pods", "0", "--pods", "5", *args)
    assert code == 2
    lines = output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], output


def test_no_feature_gates_key_without_the_flag() -> None:
    code, output = _bench("--workload", "SchedulingBasic", "--nodes", "5", "--init-pods", "0", "--pods", "5")
    assert code == 0, output
    assert "feature_gates" not in json.loads(output)


def test_host_port_replicas_are_batchable_and_the_default_profile_pods_are_not() -> None:
    """HostPortReplicas exists to measure OpportunisticBatching: its profile must sign its pods
    (PodTopologySpread without default constraints), and the same pod under kube-scheduler's
    default profile must not be signable (the system default constraints), which is why the
    scheduler_perf workloads never batch."""
    from kubesched.bench.workloads import BATCHABLE_CONFIG, _host_port_pod
    from kubesched.framework.types import PodInfo
    from kubesched.testing import new_framework

    pod = _host_port_pod("default", "web-0")
    batchable = new_framework(BATCHABLE_CONFIG).framework
    default = new_framework({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    assert batchable.sign_pod(PodInfo(pod)) is not None
    assert default.framework.sign_pod(PodInfo(pod)) is None
