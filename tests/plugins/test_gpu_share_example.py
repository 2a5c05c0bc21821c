"""examples/gpu runs as its README says (placements and GPU indexes worked out in the README)."""

from __future__ import annotations

from pathlib import Path

from kubesched.config.load import load_config
from kubesched.plugins.gpushare import ANNOTATION_GPU_IDS
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import load_manifests
from kubesched.sim.runner import simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpu"


def test_example_places_jobs_in_groups_and_packs_shares() -> None:
    reg = default_registry(entry_points=False)
    config = load_config(EXAMPLE / "scheduler-config.yaml", args_types=reg.args_types())
    objects = load_manifests([EXAMPLE], skip={(EXAMPLE / "scheduler-config.yaml").resolve()})
    result = simulate(objects, config, reg)
    placed = {}
    for key, pod in result.cluster.pods.items():
        ids = (pod["metadata"].get("annotations") or {}).get(ANNOTATION_GPU_IDS)
        placed[key.split("/")[1]] = (pod["spec"].get("nodeName"), ids)
    a100 = placed["train-vision"][0]
    assert a100 in ("a100-0", "a100-1")
    assert placed == {
        "train-llm": ("h100-0", "0,1,2,3,4,5,6,7"),
        "train-vision": (a100, "0,1,2,3"),
        "finetune": (a100, "4,5"),
        "infer-0": ("t4-0", "0"),
        "infer-1": ("t4-0", "0"),
        "infer-2": ("t4-0", "0"),
        "infer-3": ("t4-0", "0"),
        "infer-big": ("t4-0", "1"),
        "eval-strict": (None, None),
    }
    pending = next(p for p in result.pods if p["name"] == "eval-strict")
    assert pending["message"].startswith(
        "0/4 nodes are available: 1 GPU group too small, 3 Insufficient nvidia.com/gpu.")
