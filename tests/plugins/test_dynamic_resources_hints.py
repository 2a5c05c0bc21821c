"""DynamicResources' queueing hints and scoring helpers, upstream's tables as data.

Ported from pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go: the
tables of ``TestIsSchedulableAfterClaimChange`` (9 rows), ``TestIsSchedulableAfterPodChange``
(5 rows), ``Test_computesScore`` (7 rows) and ``TestNormalizeScore`` (7 rows). The stored copy of
that file read for this port is the resource.k8s.io/v1 one with extended resources and binding
conditions but without pod groups (v1.34/v1.35 era); its hint rows hold for v1.35 and v1.37 alike,
so each runs under both releases. v1.37 (kubernetes#140831, "fix queuing hints for deleted
ResourceClaim") also queues a pod when an allocated claim is deleted, which the older table
cannot show: ``DELETE_ROWS`` are the two rows that follow from that PR's description, marked so.

Upstream's ``wantErr`` (an object that is not a claim or pod) is a raised TypeError here, which
the queue reads as Queue, as upstream reads the error.

Not here (see test_dynamic_resources.py's inventory): ``TestAllocatorSelection`` (which Go
implementation of the allocator a feature set picks: kubesched has one allocator) and the
``PreQueueingHint`` narrowing (alpha SchedulerPreQueueingHints, off in v1.37; it only narrows which
pods the hint is asked about, never the answer).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dra_fakes import (
    CLAIM_NAME,
    CLASS_NAME,
    POD_NAME,
    POD_UID,
    POD_WITH_CLAIM_NAME,
    POD_WITH_CLAIM_TEMPLATE,
    POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
    allocation_result,
    claim,
    pod,
)

from kubesched.config.releases import V1_35, V1_37, Release
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint, object_event
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.plugins.dynamicresources.plugin import STATE_KEY, StateData
from kubesched.testing import FakeHandle

RELEASES = [pytest.param(V1_35, id="v1.35"), pytest.param(V1_37, id="v1.37")]
CLAIM_EVENT = str(object_event("ResourceClaim", ActionType.ADD | ActionType.UPDATE | ActionType.DELETE))
POD_EVENT = str(ClusterEvent(EventResource.POD, ActionType.UPDATE_OTHER))

# Upstream's claims (dynamicresources_test.go's var block).
PENDING = claim()
ALLOCATED = claim(allocation=allocation_result())
OTHER_ALLOCATED = claim("not-my-claim", owner=False, allocation=allocation_result())
#: podWithTwoClaimTemplates: both entries name the template my-pod-my-resource.
POD_WITH_TWO_CLAIM_TEMPLATES = pod(
    [
        {"name": "my-resource", "resourceClaimTemplateName": CLAIM_NAME},
        {"name": "my-resource-2", "resourceClaimTemplateName": CLAIM_NAME},
    ]
)


def _with(c: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(c)
    out["metadata"].update(meta)
    return out


def _wrong_owner(c: dict[str, Any]) -> dict[str, Any]:
    """``claim.OwnerReferences[0].UID += "123"``."""
    out = copy.deepcopy(c)
    out["metadata"]["ownerReferences"][0]["uid"] += "123"
    return out


def _status(c: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(c)
    out["status"] = status
    return out


def _hint(event: str, objects: list[dict[str, Any]], release: Release) -> Any:
    """The plugin's hint for ``event``, the store holding ``objects`` (upstream's informer)."""
    pl = DynamicResources(handle=FakeHandle(objects=copy.deepcopy(objects), release=release))
    return {str(e.event): e.hint for e in pl.events_to_register()}[event]


ERR = "error"

#: name -> (pod, claims stored, old, new, want). The claim a row adds or updates is stored, as
#: upstream's test stores it through the client before asking the hint.
CLAIM_ROWS: dict[str, tuple[dict[str, Any], list[dict[str, Any]], Any, Any, QueueingHint | str]] = {
    "skip-deletes": (POD_WITH_CLAIM_TEMPLATE, [], ALLOCATED, None, QueueingHint.QUEUE_SKIP),
    "backoff-wrong-new-object": (POD_WITH_CLAIM_TEMPLATE, [], None, "not-a-claim", ERR),
    "skip-wrong-claim": (
        POD_WITH_CLAIM_TEMPLATE,
        [_wrong_owner(ALLOCATED)],
        None,
        _wrong_owner(ALLOCATED),
        QueueingHint.QUEUE_SKIP,
    ),
    "skip-unrelated-claim": (
        POD_WITH_CLAIM_TEMPLATE,
        [ALLOCATED, _with(ALLOCATED, name=CLAIM_NAME + "-foo", uid="uid-my-pod-my-resource123")],
        None,
        _with(ALLOCATED, name=CLAIM_NAME + "-foo", uid="uid-my-pod-my-resource123"),
        QueueingHint.QUEUE_SKIP,
    ),
    "queue-on-add": (POD_WITH_CLAIM_NAME, [PENDING], None, PENDING, QueueingHint.QUEUE),
    "backoff-wrong-old-object": (POD_WITH_CLAIM_NAME, [PENDING], "not-a-claim", PENDING, ERR),
    "skip-adding-finalizer": (
        POD_WITH_CLAIM_NAME,
        [_with(PENDING, finalizers=["foo"])],
        PENDING,
        _with(PENDING, finalizers=["foo"]),
        QueueingHint.QUEUE_SKIP,
    ),
    "queue-on-status-change": (
        POD_WITH_CLAIM_NAME,
        [_status(PENDING, {"allocation": {}})],
        PENDING,
        _status(PENDING, {"allocation": {}}),
        QueueingHint.QUEUE,
    ),
    "claim-deallocate": (
        POD_WITH_CLAIM_NAME,
        [PENDING, _status(OTHER_ALLOCATED, {})],
        OTHER_ALLOCATED,
        _status(OTHER_ALLOCATED, {}),
        QueueingHint.QUEUE,
    ),
}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("name", CLAIM_ROWS)
def test_is_schedulable_after_claim_change(name: str, release: Release) -> None:
    """Upstream TestIsSchedulableAfterClaimChange (dynamicresources_test.go)."""
    case_pod, stored, old, new, want = CLAIM_ROWS[name]
    hint = _hint(CLAIM_EVENT, stored, release)
    if want == ERR:
        with pytest.raises(TypeError):
            hint(copy.deepcopy(case_pod), old, new)
        return
    assert hint(copy.deepcopy(case_pod), copy.deepcopy(old), copy.deepcopy(new)) == want


#: v1.37 (kubernetes#140831): deleting an allocated claim frees its devices like deallocating it
#: does ("claim-deallocate"), for a pod whose own claims all exist; one that held nothing does not.
DELETE_ROWS: dict[str, tuple[list[dict[str, Any]], dict[str, Any], QueueingHint]] = {
    "queue-on-delete-of-allocated-claim": ([PENDING], OTHER_ALLOCATED, QueueingHint.QUEUE),
    "skip-delete-of-unallocated-claim": ([PENDING], claim("not-my-claim", owner=False), QueueingHint.QUEUE_SKIP),
}


@pytest.mark.parametrize("name", DELETE_ROWS)
def test_is_schedulable_after_claim_delete(name: str) -> None:
    """v1.37's hint for a deleted claim (kubernetes#140831; not a row of the stored table)."""
    stored, old, want = DELETE_ROWS[name]
    hint = _hint(CLAIM_EVENT, stored, V1_37)
    assert hint(copy.deepcopy(POD_WITH_CLAIM_NAME), copy.deepcopy(old), None) == want


def _pod_with(p: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"].update(meta)
    return out


#: name -> (claims stored, the scheduled pod, the updated pod, want).
POD_ROWS: dict[str, tuple[list[dict[str, Any]], dict[str, Any], Any, QueueingHint | str]] = {
    "backoff-wrong-new-object": ([], POD_WITH_CLAIM_TEMPLATE, "not-a-claim", ERR),
    "complete": ([PENDING], POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE_IN_STATUS, QueueingHint.QUEUE),
    "wrong-pod": (
        [PENDING],
        _pod_with(POD_WITH_CLAIM_TEMPLATE, name=POD_NAME + "2", uid=POD_UID + "2"),
        POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
        QueueingHint.QUEUE_SKIP,
    ),
    "missing-claim": ([], POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE_IN_STATUS, QueueingHint.QUEUE_SKIP),
    "incomplete": (
        [PENDING],
        POD_WITH_TWO_CLAIM_TEMPLATES,
        pod(
            POD_WITH_TWO_CLAIM_TEMPLATES["spec"]["resourceClaims"],
            [{"name": "my-resource", "resourceClaimName": CLAIM_NAME}],
        ),
        QueueingHint.QUEUE_SKIP,
    ),
}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("name", POD_ROWS)
def test_is_schedulable_after_pod_change(name: str, release: Release) -> None:
    """Upstream TestIsSchedulableAfterPodChange (dynamicresources_test.go): old object nil."""
    stored, scheduled, updated, want = POD_ROWS[name]
    hint = _hint(POD_EVENT, stored, release)
    if want == ERR:
        with pytest.raises(TypeError):
            hint(copy.deepcopy(scheduled), None, updated)
        return
    assert hint(copy.deepcopy(scheduled), None, copy.deepcopy(updated)) == want


def _prioritized(*requests: tuple[str, int]) -> dict[str, Any]:
    """``st.MakeResourceClaim().NamedRequestWithPrioritizedList(name, subreq-1..n)``, unallocated."""
    return claim(
        requests=[
            {
                "name": name,
                "firstAvailable": [
                    {"name": f"subreq-{i}", "deviceClassName": CLASS_NAME, "count": 1} for i in range(1, n + 1)
                ],
            }
            for name, n in requests
        ],
        owner=False,
    )


def _results(*requests: str) -> dict[str, Any]:
    return {"devices": {"results": [{"request": r} for r in requests]}}


#: name -> (claims, allocation results of the node, want score or None for an error).
SCORE_ROWS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], int | None]] = {
    "more-claims-than-allocations": ([_prioritized(("req-1", 1)), _prioritized(("req-2", 1))], [], None),
    "single-request-only-subrequest-allocated": ([_prioritized(("req-1", 1))], [_results("req-1/subreq-1")], 8),
    "single-request-last-subrequest-allocated": ([_prioritized(("req-1", 8))], [_results("req-1/subreq-8")], 1),
    "multiple-requests-with-middle-subrequests-allocated": (
        [_prioritized(("req-1", 4), ("req-2", 5))],
        [_results("req-1/subreq-4", "req-2/subreq-5")],
        9,
    ),
    "multiple-requests-with-top-subrequests-allocated": (
        [_prioritized(("req-1", 8), ("req-2", 1))],
        [_results("req-1/subreq-8", "req-2/subreq-1")],
        9,
    ),
    "multiple-claims-with-last-subrequests-allocated": (
        [_prioritized(("req-1", 8)), _prioritized(("req-2", 8))],
        [_results("req-1/subreq-8"), _results("req-2/subreq-8")],
        2,
    ),
    "multiple-claims-with-top-subrequests-allocated": (
        [_prioritized(("req-1", 1)), _prioritized(("req-2", 1))],
        [_results("req-1/subreq-1"), _results("req-2/subreq-1")],
        16,
    ),
}


@pytest.mark.parametrize("name", SCORE_ROWS)
def test_compute_score(name: str) -> None:
    """Upstream Test_computesScore (dynamicresources_test.go), through Score with the node's
    allocations as Filter would have left them."""
    claims, allocations, want = SCORE_ROWS[name]
    pl = DynamicResources(handle=FakeHandle())
    state = CycleState()
    state.write(STATE_KEY, StateData(claims=copy.deepcopy(claims), node_allocations={"worker": allocations}))
    node = NodeInfo({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker"}})
    score, status = pl.score(state, PodInfo(copy.deepcopy(POD_WITH_CLAIM_NAME)), node)
    if want is None:
        assert status is not None and status.code == Code.ERROR
    else:
        assert status is None
        assert score == want


MAX_INT32 = 2**31 - 1
#: name -> (scores, normalized scores), node names node-1.. in order.
NORMALIZE_ROWS: dict[str, tuple[list[int], list[int]]] = {
    "empty": ([], []),
    "single-score": ([42], [100]),
    "all-same": ([8, 8], [100, 100]),
    "all-same-very-large": ([MAX_INT32, MAX_INT32], [100, 100]),
    "max-and-min-values": ([MAX_INT32, 0], [100, 0]),
    "mid-value": ([99, 98, 97], [100, 98, 97]),
    "large-spread-lost-precision": ([MAX_INT32, MAX_INT32 - 1, 1, 0], [100, 99, 0, 0]),
}


@pytest.mark.parametrize("name", NORMALIZE_ROWS)
def test_normalize_score(name: str) -> None:
    """Upstream TestNormalizeScore (dynamicresources_test.go), list and batch forms."""
    import numpy as np

    given, want = NORMALIZE_ROWS[name]
    pl = DynamicResources(handle=FakeHandle())
    scores = [NodeScore(f"node-{i + 1}", s) for i, s in enumerate(given)]
    assert pl.normalize_score(CycleState(), PodInfo(pod()), scores) is None
    assert [s.score for s in scores] == want
    batch = pl.normalize_score_batch(CycleState(), PodInfo(pod()), np.array(given, dtype=np.int64))
    assert batch.tolist() == want
