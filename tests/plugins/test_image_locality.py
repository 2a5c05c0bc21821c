"""ImageLocality Score and image-name normalisation.

Ported from pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go
(TestImageLocalityPriority, TestNormalizedImageName); tables in data/image_locality.yaml. Image
volumes (counted in v1.35's sum but not in its container count) and the incremental image index
are checked with hand-computed cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_builders import FakeHandle, make_node, make_pod, make_snapshot, node_info

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.plugins.imagelocality import ImageLocality
from kubesched.plugins.imagelocality.image_locality import MB, normalized_image_name

DATA = yaml.safe_load((Path(__file__).parent / "data" / "image_locality.yaml").read_text())


def _node(name: str, images: str | list[dict[str, Any]]) -> dict[str, Any]:
    imgs = DATA["node_images"][images] if isinstance(images, str) else images
    return make_node(name, images=[{"names": i["names"], "sizeBytes": i["size"] * MB} for i in imgs])


def _pod(containers: list[str], init: tuple[str, ...] | list[str] = (), **spec: Any) -> PodInfo:
    return PodInfo(
        make_pod(
            containers=[{"name": f"c{i}", "image": img} for i, img in enumerate(containers)],
            initContainers=[{"name": f"i{i}", "image": img} for i, img in enumerate(init)],
            **spec,
        )
    )


def _scores(pl: ImageLocality, pod: PodInfo, snap: Snapshot) -> dict[str, int]:
    state = CycleState()
    out = {}
    for ni in snap.list():
        score, status = pl.score(state, pod, ni)
        assert status is None
        out[ni.name] = score
    return out


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_image_locality_priority(case: dict[str, Any]) -> None:
    snap = make_snapshot([_node(n, imgs) for n, imgs in case["nodes"]])
    pod = _pod(case["containers"], case.get("init_containers", []))
    assert _scores(ImageLocality(None, FakeHandle(snap)), pod, snap) == case["expected"]


@pytest.mark.parametrize(("name", "given", "want"), DATA["normalized_image_name"])
def test_normalized_image_name(name: str, given: str, want: str) -> None:
    assert normalized_image_name(given) == want


def test_image_volume_adds_to_sum_but_not_to_container_count() -> None:
    # node1: volume image gcr.io/300 on 1 of 2 nodes -> 150 MiB; 100 * (150 - 23) / (1000 - 23) = 12.
    # node2: gcr.io/30 on 1 of 2 nodes -> 15 MiB < 23 MiB -> 0.
    snap = make_snapshot([_node("node1", "node403002000"), _node("node2", "node203040")])
    pod = _pod(["gcr.io/30"], volumes=[{"name": "v", "image": {"reference": "gcr.io/300"}}])
    assert _scores(ImageLocality(None, FakeHandle(snap)), pod, snap) == {"node1": 12, "node2": 0}


def test_index_follows_node_updates_and_removals() -> None:
    pod = _pod(["gcr.io/300"])
    node_a = _node("a", [{"names": ["gcr.io/300:latest"], "size": 600}])
    node_b = _node("b", [])
    handle = FakeHandle(make_snapshot([node_a, node_b]))
    pl = ImageLocality(None, handle)
    # 600 MiB * 1/2 = 300 -> 100 * (300 - 23) / 977 = 28
    assert _scores(pl, pod, handle.snapshot) == {"a": 28, "b": 0}
    # b pulls the image (a new node object): 600 * 2/2 on both -> 100 * 577 / 977 = 59
    node_b2 = _node("b", [{"names": ["gcr.io/300:latest"], "size": 600}])
    handle.snapshot.replace_node(node_info(node_b2))
    assert _scores(pl, pod, handle.snapshot) == {"a": 59, "b": 59}
    # a leaves the cluster: b alone, spread 1/1.
    handle.snapshot = make_snapshot([node_b2])
    assert _scores(pl, pod, handle.snapshot) == {"b": 59}
    # b drops the image again: 0.
    handle.snapshot = make_snapshot([_node("b", [])])
    assert _scores(pl, pod, handle.snapshot) == {"b": 0}
