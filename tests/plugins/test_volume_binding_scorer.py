"""VolumeBinding's capacity scorer (``buildScorerFunction``).

Ported from pkg/scheduler/framework/plugins/volumebinding/scorer_test.go (v1.37.2), TestScore,
every case, as data/volume_binding_scorer.yaml; plus the edges upstream's ``scorer.go`` defines
(capacity 0 or over-requested count as full utilisation, no classes score 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config.plugin_args import UtilizationShapePoint, VolumeBindingArgs
from kubesched.plugins.volumebinding.volume_binding import build_scorer

DATA: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "volume_binding_scorer.yaml").read_text()
)
CASES = [(t["name"], t["shape"], res, want) for t in DATA for res, want in t["cases"]]


def scorer(shape: list[list[int]]) -> Any:
    return build_scorer(VolumeBindingArgs(shape=[UtilizationShapePoint(u, s) for u, s in shape]))


@pytest.mark.parametrize(("name", "shape", "resources", "want"), CASES)
def test_score(name: str, shape: list[list[int]], resources: dict[str, list[int]], want: int) -> None:
    assert scorer(shape)(resources) == want


def test_score_edges() -> None:
    """scorer.go: capacity 0 and requested > capacity score as 100% utilisation; no classes, 0."""
    f = scorer([[0, 10], [100, 0]])
    assert f({}) == 0
    assert f({"hdd": [10, 0]}) == 0
    assert f({"hdd": [200, 100]}) == 0
    assert f({"hdd": [0, 0], "ssd": [0, 100]}) == 50
