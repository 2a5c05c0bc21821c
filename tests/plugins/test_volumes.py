"""DynamicResources through its old import path (kubesched.plugins.volumes): a no-op for pods
without resource claims, a pod whose claim does not exist waits at PreEnqueue/PreFilter, the
release's PostFilter reason, and the default profile's plugins (the volume plugins included)
building at upstream's extension points.

Hand-written; upstream's dynamicresources TestPlugin table is ported in
test_dynamic_resources.py, the tables of the volume plugins in test_volume_zone.py,
test_volume_restrictions.py and test_node_volume_limits.py. The
extension points and weights follow pkg/scheduler/apis/config/testing/defaults/defaults.go
(ExpandedPluginsV1).
"""

from __future__ import annotations

import pytest
from plugin_builders import FakeHandle, make_pod

from kubesched import testing
from kubesched.config import load_config, loads_config
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.config.types import PluginSet
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.volumes import DynamicResources
from kubesched.testing import make_node as make_node_builder
from kubesched.testing import make_pod as make_pod_builder
from kubesched.testing import new_framework


def test_dynamic_resources() -> None:
    pl = DynamicResources(handle=testing.FakeHandle())
    plain = PodInfo(make_pod())
    claims = PodInfo(make_pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}]))
    assert pl.pre_enqueue(plain) is None
    _, skip = pl.pre_filter(CycleState(), plain, [])
    assert skip is not None and skip.code == Code.SKIP
    # A claim that does not exist (dynamicresources.go foreachPodResourceClaim; the assume
    # cache's NotFoundError reads 'could not find ResourceClaim "<namespace>/<name>"').
    missing = 'could not find ResourceClaim "default/gpu-claim"'
    waiting = pl.pre_enqueue(claims)
    unresolvable = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, missing)
    assert waiting is not None and (waiting.code, waiting.message()) == unresolvable
    _, rejected = pl.pre_filter(CycleState(), claims, [])
    assert rejected is not None and (rejected.code, rejected.message()) == unresolvable
    result, post = pl.post_filter(CycleState(), plain, {})
    assert result is None and post is not None
    # The default release, v1.37 (dynamicresources.go PostFilter): Unschedulable without a reason;
    # v1.35 and v1.36 say "no new claims to deallocate" (test_dynamic_resources_post_filter_reason_by_release).
    assert (post.code, post.message()) == (Code.UNSCHEDULABLE, "")


@pytest.mark.parametrize(("release", "reasons"), [
    (V1_35, ["no new claims to deallocate"]),
    (V1_36, ["no new claims to deallocate"]),  # dynamicresources.go at v1.36.3: still there
    (V1_37, []),  # v1.37.2: fwk.NewStatus(fwk.Unschedulable), no reason (kubernetes#140222)
])
def test_dynamic_resources_post_filter_reason_by_release(release: Release, reasons: list[str]) -> None:
    _, post = DynamicResources(handle=testing.FakeHandle(release=release)).post_filter(
        CycleState(), PodInfo(make_pod()), {}
    )
    assert post is not None and post.code == Code.UNSCHEDULABLE and list(post.reasons) == reasons


def test_failed_scheduling_message_by_release() -> None:
    """The whole message, as RunPostFilterPlugins joins the PostFilter reasons (framework.go)."""

    def message(release: Release) -> str:
        fw = new_framework(
            load_config(None, release=release),
            nodes=[make_node_builder("n1").capacity(cpu="1").obj()],
            pods=[make_pod_builder("big").req(cpu="2").obj()],
        )
        fw.schedule(until=fw.clock.now() + 1)
        [pod] = fw.cluster.pods.values()
        [cond] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        return str(cond["message"])

    tail = "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert message(V1_35) == f"0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, {tail}"
    assert message(V1_37) == f"0/1 nodes are available: 1 Insufficient cpu. {tail}"


# Upstream's expanded default points for the plugins of this brief (ExpandedPluginsV1, v1.35).
EXPECTED_POINTS = {
    "pre_filter": [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DynamicResources",
    ],
    "filter": [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DynamicResources",
    ],
    "pre_score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "NodeResourcesBalancedAllocation",
    ],
    "score": [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "pre_bind": ["VolumeBinding", "DynamicResources"],
}
MINE = {n for names in EXPECTED_POINTS.values() for n in names}


def test_default_profile_builds_these_plugins_at_upstream_points() -> None:
    # ExpandedPluginsV1 of v1.35 (v1.37's NodeName PreFilter is in tests/plugins/test_node_name.py).
    cfg = loads_config("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", release=V1_35)
    profile = cfg.profiles[0]
    keep = MINE | {"PrioritySort", "DefaultBinder"}
    multi = profile.plugins.multi_point
    profile.plugins.multi_point = PluginSet([r for r in multi.enabled if r.name in keep], multi.disabled)
    fw = Framework(profile, in_tree_registry(), FakeHandle())
    for point, expected in EXPECTED_POINTS.items():
        assert [p.name for p in fw.points[point]] == expected, point
    assert {n: fw.score_weights[n] for n in EXPECTED_POINTS["score"]} == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
