"""DynamicResources in the simulated cluster: the whole scheduling and binding cycles.

Hand-computed: one node with one device and two pods each with its own one-device claim. The
first pod is bound and its claim stores the allocation and the reservation (PreBind's writes);
the second finds the device taken (the first's allocation, in the store by then) and fails with
the FailedScheduling message kube-scheduler v1.37 writes for it (no DefaultPreemption here). The allocator is the test
fake (tests/plugins/dra_fakes.py): this tests the plugin inside the framework, not allocation.
"""

from __future__ import annotations

import copy
from typing import Any

from dra_fakes import FakeAllocator, claim, device_class, node, pod, slice_

from kubesched.config.plugin_args import DynamicResourcesArgs
from kubesched.framework.interfaces import Handle
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.testing import new_framework


class FakeAllocatorDRA(DynamicResources):
    """DynamicResources with the fake allocator (its own name: the registry has the real one)."""

    name = "DynamicResourcesWithFakeAllocator"

    def __init__(self, args: DynamicResourcesArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle, allocator_factory=FakeAllocator)


def _pod(name: str, claim_name: str) -> dict[str, Any]:
    p = pod([{"name": "gpu", "resourceClaimName": claim_name}])
    p["metadata"].update(name=name, uid=f"uid-{name}")
    return p


def test_two_pods_one_device() -> None:
    claims = [claim("claim-a", owner=False), claim("claim-b", owner=False)]
    fw = new_framework(
        [FakeAllocatorDRA],
        nodes=[node()],
        pods=[_pod("a", "claim-a"), _pod("b", "claim-b")],
        objects=[*copy.deepcopy(claims), device_class(), slice_()],
    )
    fw.schedule(until=fw.clock.now() + 1)
    a, b = fw.cluster.pods["default/a"], fw.cluster.pods["default/b"]
    assert a["spec"].get("nodeName") == "worker"
    assert not b["spec"].get("nodeName")
    [cond] = [c for c in b["status"]["conditions"] if c["type"] == "PodScheduled"]
    # No DefaultPreemption in this profile; v1.37's PostFilter adds no reason for the claim it
    # cannot free (claim-b is not allocated), so the message is the Filter diagnosis alone.
    assert (cond["reason"], cond["message"]) == (
        "Unschedulable",
        "0/1 nodes are available: 1 cannot allocate all claims.",
    )
    stored = fw.cluster.get_object("resource.k8s.io/v1", "ResourceClaim", "default", "claim-a")
    assert stored is not None
    assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": "a", "uid": "uid-a"}]
    assert stored["status"]["allocation"]["devices"]["results"] == [
        {"driver": "some-driver", "pool": "worker", "device": "instance-1", "request": "req-1"}
    ]


def test_score_picks_the_node_of_the_preferred_subrequest() -> None:
    # subreq-1 (2 devices) fits only worker-2: 8 there against 7 (subreq-2) on worker, so the pod
    # lands on worker-2 whatever the tie-break (the framework's batch Score path).
    prioritized = claim(
        "claim-a",
        owner=False,
        requests=[
            {
                "name": "req-1",
                "firstAvailable": [
                    {"name": "subreq-1", "deviceClassName": "my-resource-class", "count": 2},
                    {"name": "subreq-2", "deviceClassName": "my-resource-class", "count": 1},
                ],
            }
        ],
    )
    two = slice_("worker-2", [{"name": "instance-1"}, {"name": "instance-2"}])
    for seed in range(4):
        fw = new_framework(
            [FakeAllocatorDRA],
            nodes=[node(), node("worker-2")],
            pods=[_pod("a", "claim-a")],
            objects=[copy.deepcopy(prioritized), device_class(), slice_(), two],
            seed=seed,
        )
        fw.schedule(until=fw.clock.now() + 1)
        assert fw.cluster.pods["default/a"]["spec"].get("nodeName") == "worker-2"


def test_pod_waits_at_pre_enqueue_until_its_claim_exists() -> None:
    # PreEnqueue keeps the pod out of the queue (no condition written); creating the claim is a
    # ResourceClaim Add whose hint queues the pod, which then binds.
    fw = new_framework(
        [FakeAllocatorDRA], nodes=[node()], pods=[_pod("a", "claim-a")], objects=[device_class(), slice_()]
    )
    fw.schedule(until=fw.clock.now() + 1)
    assert fw.cluster.pods["default/a"]["spec"].get("nodeName") is None
    assert fw.cluster.pods["default/a"].get("status") == {}
    fw.cluster.create_object("resource.k8s.io/v1", "ResourceClaim", claim("claim-a", owner=False))
    fw.schedule(until=fw.clock.now() + 5)
    assert fw.cluster.pods["default/a"]["spec"].get("nodeName") == "worker"
