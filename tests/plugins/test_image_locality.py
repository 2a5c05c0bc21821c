"""ImageLocality Score and image-name normalisation, per release.

Ported from pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go
(TestImageLocalityPriority, TestNormalizedImageName) at v1.35.4, v1.36.3 and v1.37.2; tables in
data/image_locality.yaml. Image volumes are ignored in v1.35, add to the sum in v1.36 and to the
threshold's image count as well in v1.37; these and the incremental image index are also checked
with hand-computed cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from plugin_builders import make_node, make_pod, make_snapshot, node_info

from kubesched.config.releases import RELEASES, V1_35, V1_36, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.plugins.imagelocality import ImageLocality
from kubesched.plugins.imagelocality.image_locality import MB, normalized_image_name
from kubesched.testing import FakeHandle

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


def _volumes(references: list[str]) -> list[dict[str, Any]]:
    return [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(references)]


@pytest.mark.parametrize("release", RELEASES, ids=str)
@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_image_locality_priority(case: dict[str, Any], release: Release) -> None:
    snap = make_snapshot([_node(n, imgs) for n, imgs in case["nodes"]])
    pod = _pod(case["containers"], case.get("init_containers", []))
    assert _scores(ImageLocality(None, FakeHandle(snap, release=release)), pod, snap) == case["expected"]


@pytest.mark.parametrize("release", RELEASES, ids=str)
@pytest.mark.parametrize("case", DATA["image_volume_cases"], ids=lambda c: c["name"])
def test_image_locality_priority_image_volumes(case: dict[str, Any], release: Release) -> None:
    snap = make_snapshot([_node(n, imgs) for n, imgs in case["nodes"]])
    pod = _pod(case["containers"], volumes=_volumes(case.get("volumes", [])))
    assert _scores(ImageLocality(None, FakeHandle(snap, release=release)), pod, snap) == case["expected"][str(release)]


@pytest.mark.parametrize(("name", "given", "want"), DATA["normalized_image_name"])
def test_normalized_image_name(name: str, given: str, want: str) -> None:
    assert normalized_image_name(given) == want


@pytest.mark.parametrize(
    ("release", "want"),
    [
        # v1.35: the volume's image is ignored; gcr.io/30 is on node2 only: 15 MiB < 23 MiB -> 0.
        (V1_35, {"node1": 0, "node2": 0}),
        # v1.36: gcr.io/300 on 1 of 2 nodes -> 150 MiB in the sum, threshold of one container:
        # 100 * (150 - 23) / (1000 - 23) = 12.
        (V1_36, {"node1": 12, "node2": 0}),
        # v1.37: the volume counts in the threshold too: 100 * (150 - 23) / (2000 - 23) = 6.
        (V1_37, {"node1": 6, "node2": 0}),
    ],
    ids=lambda v: str(v) if isinstance(v, Release) else "",
)
def test_image_volume_by_release(release: Release, want: dict[str, int]) -> None:
    snap = make_snapshot([_node("node1", "node403002000"), _node("node2", "node203040")])
    pod = _pod(["gcr.io/30"], volumes=_volumes(["gcr.io/300"]))
    assert _scores(ImageLocality(None, FakeHandle(snap, release=release)), pod, snap) == want


@pytest.mark.parametrize(("release", "want"), [(V1_35, 28), (V1_36, 89), (V1_37, 29)], ids=str)
def test_image_volumes_and_the_threshold(release: Release, want: int) -> None:
    # gcr.io/300 (600 MiB) is on a, one node of two: 300 MiB each time the pod names it. The pod
    # names it in its container and in two image volumes.
    # v1.35: the container only: 100 * (300 - 23) / (1000 - 23) = 28.
    # v1.36: 900 MiB against one container's threshold: 100 * (900 - 23) / (1000 - 23) = 89.
    # v1.37: 900 MiB against three images' threshold: 100 * (900 - 23) / (3000 - 23) = 29.
    snap = make_snapshot([_node("a", [{"names": ["gcr.io/300:latest"], "size": 600}]), _node("b", [])])
    pod = _pod(["gcr.io/300"], volumes=_volumes(["gcr.io/300", "gcr.io/300"]))
    assert _scores(ImageLocality(None, FakeHandle(snap, release=release)), pod, snap) == {"a": want, "b": 0}


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
