"""The nominator with an empty override (NominatingInfo{ModeOverride, ""}, what a failed cycle
without preemption passes).

From pkg/scheduler/backend/queue/nominator.go addNominatedPodUnlocked: v1.35.4 stores the pod under
node "" (nominatedPods[""], nominatedPodToNode[uid] = ""), v1.37.2 returns early ("Empty nodeName
clears nomination"). Both first delete the pod's previous nomination, and nothing asks the
nominator about node "" (NominatedPodsForNode is called with real node names), so the two are
indistinguishable from outside: the pod is nominated nowhere. kubesched behaves so in every release.
"""

from __future__ import annotations

import pytest

from kubesched.backend.queue import SchedulingQueue
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.clock import VirtualClock
from kubesched.framework.types import PodInfo
from kubesched.testing import make_node, make_pod, new_framework


def test_empty_override_clears_the_nomination() -> None:
    q = SchedulingQueue({}, VirtualClock(0.0))
    pi = PodInfo(make_pod("p").obj())
    q.add_nominated_pod(pi, "n1")
    assert [p.uid for p in q.nominated_pods_for_node("n1")] == [pi.uid]
    q.add_nominated_pod(pi, "")
    assert q.nominated_pods_for_node("n1") == []
    assert q.nominated_pods_for_node("") == []
    assert q.nominated_node_of(pi.uid) == ""
    assert not q.has_nominated_pods()


# -- a new pod's status.nominatedNodeName -------------------------------------------------------------
# scheduling_queue.go: v1.35.4 and v1.36.3 record it (addNominatedPod with nil NominatingInfo, i.e.
# the pod's status) in moveToActiveQ, only for a pod that enters activeQ; v1.37.2 records it in
# addPod before PreEnqueue, gated or not.


@pytest.mark.parametrize(("release", "gated_nominated"), [(V1_35, False), (V1_36, False), (V1_37, True)])
def test_a_new_pods_nomination_is_recorded(release: Release, gated_nominated: bool) -> None:
    fw = new_framework(["SchedulingGates"], [make_node("n1").capacity(cpu="2").obj()], release=release)
    queue = fw.scheduler.queue
    free = {**make_pod("free").obj(), "status": {"nominatedNodeName": "n1"}}
    gated = {**make_pod("gated").scheduling_gates("example.com/wait").obj(), "status": {"nominatedNodeName": "n1"}}
    queue.add(free)
    queue.add(gated)
    assert queue.nominated_node_of(free["metadata"]["uid"]) == "n1"
    assert queue.nominated_node_of(gated["metadata"]["uid"]) == ("n1" if gated_nominated else "")
