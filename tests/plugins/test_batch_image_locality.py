"""ImageLocality's batch Score agrees with the per-node Score (the reference, ported from
pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go in test_image_locality.py) on
random clusters, including after nodes' images change (the per-image columns are rebuilt then), and
for pods with image volumes in every release (v1.35 ignores them, v1.36 sums them, v1.37 also counts
them in the threshold)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_builders import FakeHandle
from test_batch_cluster import IMAGES, cache_snapshot, candidate_rows, node_updates, nodes, pods

from kubesched import testing
from kubesched.config.releases import RELEASES, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.plugins.imagelocality import ImageLocality


def _agree(pl: ImageLocality, pod: PodInfo, snap: Snapshot, data: st.DataObject) -> None:
    rows = candidate_rows(data, snap)
    state = CycleState()
    batch = pl.score_batch(state, pod, snap, rows)
    assert batch.tolist() == [pl.score(state, pod, snap.node_infos[i])[0] for i in rows.tolist()]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_score_batch_equals_score(data: st.DataObject) -> None:
    node_objs = data.draw(nodes())
    cache, snap = cache_snapshot(node_objs)
    pl = ImageLocality(handle=FakeHandle(snap))
    _agree(pl, PodInfo(data.draw(pods())), snap, data)
    for _, obj in data.draw(node_updates(len(node_objs))):
        cache.update_node(obj)
    cache.update_snapshot(snap)
    _agree(pl, PodInfo(data.draw(pods())), snap, data)


@pytest.mark.parametrize("release", RELEASES, ids=str)
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_score_batch_equals_score_with_image_volumes(release: Release, data: st.DataObject) -> None:
    _, snap = cache_snapshot(data.draw(nodes()))
    pod: dict[str, Any] = data.draw(pods())
    refs = data.draw(st.lists(st.sampled_from(IMAGES), max_size=3))
    pod["spec"]["volumes"] = [{"name": f"v{i}", "image": {"reference": r}} for i, r in enumerate(refs)]
    pl = ImageLocality(handle=testing.FakeHandle(snap, release=release))
    _agree(pl, PodInfo(pod), snap, data)
