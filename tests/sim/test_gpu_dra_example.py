"""examples/gpu-dra, hand-traced (its README): DynamicResources allocates through the simulated
resourceclaim controller's claims, DRAGpuScore (GpuPacking) packs finetune beside train-vision, and
train-a100 finds the A100 node kept whole; with the default profile alone it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.config.load import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.manifests import load_manifests
from kubesched.sim.runner import simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpu-dra"
API = "resource.k8s.io/v1"


def _run(with_score: bool) -> Any:
    reg = in_tree_registry()
    config = load_config(EXAMPLE / "scheduler-config.yaml", args_types=reg.args_types()) if with_score else None
    objects = load_manifests([EXAMPLE], skip={EXAMPLE / "scheduler-config.yaml"})
    return simulate(objects, config or load_config(None), reg, seed=1)


def _nodes(result: Any) -> dict[str, str | None]:
    return {p["name"]: p["node"] for p in result.to_json()["pods"]}


def _claim_of(sim: Any, pod: str) -> dict[str, Any]:
    p = sim.cluster.pods[f"ml/{pod}"]
    [status] = p["status"]["resourceClaimStatuses"]
    claim = sim.cluster.get_object(API, "ResourceClaim", "ml", status["resourceClaimName"])
    assert claim is not None
    return dict(claim)


def _devices(claim: dict[str, Any]) -> list[str]:
    return [f"{r['pool']}/{r['device']}" for r in claim["status"]["allocation"]["devices"]["results"]]


def test_dra_gpu_score_keeps_an_a100_node_whole() -> None:
    sim = _run(with_score=True)
    placed = _nodes(sim)
    assert placed["train-llm"] == "h100-0"
    assert placed["finetune"] == placed["train-vision"]
    assert placed["train-a100"] not in (None, placed["train-vision"])
    assert placed["train-a100"] in ("a100-0", "a100-1")
    assert (placed["infer-0"], placed["infer-1"]) == ("t4-0", "t4-0")
    assert placed["eval-too-big"] is None
    # The devices: all of h100-0; train-vision's 4 in one NVLink domain (gpu-0..3, the first that
    # fit in slice order); finetune the next two; two different T4s.
    assert _devices(_claim_of(sim, "train-llm")) == [f"h100-0/gpu-{i}" for i in range(8)]
    vision = placed["train-vision"]
    assert _devices(_claim_of(sim, "train-vision")) == [f"{vision}/gpu-{i}" for i in range(4)]
    assert _devices(_claim_of(sim, "finetune")) == [f"{vision}/gpu-4", f"{vision}/gpu-5"]
    assert _devices(_claim_of(sim, "infer-0")) == ["t4-0/gpu-0"]
    assert _devices(_claim_of(sim, "infer-1")) == ["t4-0/gpu-1"]
    claim = _claim_of(sim, "train-llm")
    assert claim["metadata"]["name"].startswith("train-llm-gpus-")
    assert claim["metadata"]["ownerReferences"][0]["name"] == "train-llm"
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "train-llm", "uid": sim.cluster.pods["ml/train-llm"]["metadata"]["uid"]}
    ]


def test_the_default_profile_strands_the_a100s() -> None:
    placed = _nodes(_run(with_score=False))
    assert placed["finetune"] != placed["train-vision"]
    assert placed["train-a100"] is None


def test_the_table_shows_who_holds_which_device() -> None:
    from click.testing import CliRunner

    from kubesched.cli import cli

    res = CliRunner().invoke(
        cli, ["simulate", str(EXAMPLE), "--config", str(EXAMPLE / "scheduler-config.yaml"), "--seed", "1"]
    )
    assert res.exit_code == 0, res.output
    table = res.output[res.output.index("DRA devices at the end") :]
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if line.startswith("│ ") and "/" in line}
    vision = [n for n in rows if "train-vision" in rows[n]]
    assert len(vision) == 1 and "6/8" in rows[vision[0]] and "finetune: gpu-4, gpu-5" in rows[vision[0]]
    assert "2/4" in rows["t4-0"] and "infer-0: gpu-0; infer-1: gpu-1" in rows["t4-0"]
    assert all(len(line) <= 80 for line in res.output.splitlines())
