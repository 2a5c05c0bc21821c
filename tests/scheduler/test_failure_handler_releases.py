"""handleSchedulingFailure's changes from v1.35 to v1.36.

Upstream: pkg/scheduler/schedule_one.go ``handleSchedulingFailure`` at v1.35.4 and v1.36.3. Since
v1.36 a pod recreated under its name while its cycle ran (another UID in the informer) is left
alone: no requeue, no event, no condition ("Pod was recreated while handling scheduling failure");
and the event and condition are about the informer's copy (``pod = podInfo.Pod`` after the
refresh), so the condition observes its newest generation. v1.35 requeues the informer's copy and
reports the pod its cycle scheduled.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.config import load_config
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.status import Code, Status
from kubesched.plugins.registry import default_registry
from kubesched.testing import TestFramework, make_node, make_pod, new_framework


def _framework(release: Release, filter_fn: Any) -> TestFramework:
    class Hook:
        name = "Hook"

        def __init__(self, args: object, handle: object) -> None:
            pass

        def filter(self, state: object, pod: Any, node_info: object) -> Status | None:
            return filter_fn(pod)

    reg = default_registry(entry_points=False)
    reg.register("Hook", Hook, origin="test")
    config = load_config(
        {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Hook"}]}}}]}, release=release
    )
    return new_framework(config, nodes=[make_node("n1").capacity(cpu="4").obj()], registry=reg)


def _failed_scheduling(fw: TestFramework) -> list[str]:
    return [e.note for e in fw.cluster.events if e.reason == "FailedScheduling"]


@pytest.mark.parametrize(("release", "reported"), [(V1_35, True), (V1_36, False), (V1_37, False)])
def test_a_pod_recreated_during_its_cycle(release: Release, reported: bool) -> None:
    holder: dict[str, TestFramework] = {}
    recreated: list[str] = []

    def filter_fn(pod: Any) -> Status | None:
        if recreated:
            return None  # the new pod fits
        fw = holder["fw"]
        [old] = [p for p in fw.cluster.pods.values() if p["metadata"]["name"] == "p"]
        fw.cluster.delete_pod(old)
        new = copy.deepcopy(make_pod("p").obj())
        new["metadata"]["uid"] = "uid-new"
        fw.add_pod(new)
        recreated.append(new["metadata"]["uid"])
        return Status(Code.UNSCHEDULABLE, "not now")

    fw = holder["fw"] = _framework(release, filter_fn)
    fw.add_pod(make_pod("p").obj())
    fw.schedule()
    [pod] = fw.cluster.pods.values()
    assert pod["metadata"]["uid"] == "uid-new" and pod["spec"]["nodeName"] == "n1"
    notes = _failed_scheduling(fw)
    if reported:
        # v1.35: the old cycle's failure is reported (and the informer's copy requeued).
        assert len(notes) == 1 and notes[0].startswith("0/1 nodes are available: 1 not now. "), notes
    else:
        assert notes == []


@pytest.mark.parametrize(("release", "observed"), [(V1_35, 1), (V1_36, 2)])
def test_the_condition_observes_the_generation_of(release: Release, observed: int) -> None:
    holder: dict[str, TestFramework] = {}

    def filter_fn(pod: Any) -> Status | None:
        fw = holder["fw"]
        [stored] = fw.cluster.pods.values()
        if stored["metadata"].get("generation") == 1:
            # A spec update lands while the cycle runs: the informer now holds generation 2.
            newer = copy.deepcopy(stored)
            newer["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
            fw.cluster.update_pod(newer)  # the spec changed: generation 2
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never")

    fw = holder["fw"] = _framework(release, filter_fn)
    pod = make_pod("p").obj()
    pod["metadata"]["generation"] = 1
    fw.add_pod(pod)
    fw.schedule(until=fw.clock.now() + 1)
    [stored] = fw.cluster.pods.values()
    [cond] = [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert cond["observedGeneration"] == observed
