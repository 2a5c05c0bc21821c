"""The nominator with an empty override (NominatingInfo{ModeOverride, ""}, what a failed cycle
without preemption passes).

From pkg/scheduler/backend/queue/nominator.go addNominatedPodUnlocked: v1.35.4 stores the pod under
node "" (nominatedPods[""], nominatedPodToNode[uid] = ""), v1.37.2 returns early ("Empty nodeName
clears nomination"). Both first delete the pod's previous nomination, and nothing asks the
nominator about node "" (NominatedPodsForNode is called with real node names), so the two are
indistinguishable from outside: the pod is nominated nowhere. kubesched behaves so in every release.
"""

from __future__ import annotations

from kubesched.backend.queue import SchedulingQueue
from kubesched.framework.clock import VirtualClock
from kubesched.framework.types import PodInfo
from kubesched.testing import make_pod


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
