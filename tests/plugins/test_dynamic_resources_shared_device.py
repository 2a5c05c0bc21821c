"""DynamicResources with the real allocator and DRAConsumableCapacity (on in v1.37): pods whose
claims ask for capacity share one device that allows multiple allocations.

Hand-computed from upstream's allocator (structured/internal/experimental, the
consumable-capacity rows of allocatortesting/allocator_testing.go): the device has capacity 4,
each claim requests 2 (no request policy: consumed as requested), so the first two pods bind, each
claim storing its own share (a shareID and consumedCapacity 2), and the third finds the device's
capacity used by the stored allocations (gathered as upstream's AllocatedState) and fails with
the Filter's "cannot allocate all claims".
"""

from __future__ import annotations

from typing import Any

from dra_fakes import claim, device_class, node, pod, slice_

from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.plugins.dynamicresources.plugin import share_id
from kubesched.testing import new_framework


def _pod(name: str) -> dict[str, Any]:
    p = pod([{"name": "gpu", "resourceClaimName": f"claim-{name}"}])
    p["metadata"].update(name=name, uid=f"uid-{name}")
    return p


def _claim(name: str) -> dict[str, Any]:
    request = {"deviceClassName": "my-resource-class", "capacity": {"requests": {"bandwidth": "2"}}}
    return claim(f"claim-{name}", owner=False, requests=[{"name": "req-1", "exactly": request}])


def test_three_pods_share_a_device_of_capacity_four() -> None:
    shared = {"name": "nic-1", "allowMultipleAllocations": True, "capacity": {"bandwidth": {"value": "4"}}}
    fw = new_framework(
        [DynamicResources],
        nodes=[node()],
        pods=[_pod("a"), _pod("b"), _pod("c")],
        objects=[_claim("a"), _claim("b"), _claim("c"), device_class(), slice_(devices=[shared])],
    )
    fw.schedule(until=fw.clock.now() + 1)
    pods = fw.cluster.pods
    assert [pods[f"default/{n}"]["spec"].get("nodeName") for n in "abc"] == ["worker", "worker", None]
    [cond] = [c for c in pods["default/c"]["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["reason"], cond["message"]) == (
        "Unschedulable",
        "0/1 nodes are available: 1 cannot allocate all claims.",
    )
    for name in "ab":
        stored = fw.cluster.get_object("resource.k8s.io/v1", "ResourceClaim", "default", f"claim-{name}")
        assert stored is not None
        [result] = stored["status"]["allocation"]["devices"]["results"]
        # The plugin's reproducible shareID for this claim's first result (upstream: random).
        assert result.pop("shareID") == share_id(f"uid-claim-{name}/req-1/some-driver/worker/nic-1/0")
        assert result == {
            "request": "req-1",
            "driver": "some-driver",
            "pool": "worker",
            "device": "nic-1",
            "consumedCapacity": {"bandwidth": "2"},
        }
