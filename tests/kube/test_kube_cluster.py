"""KubeCluster's API calls (paths, bodies, content types) and error mapping.

Upstream references: the Binding sent by DefaultBinder (pkg/scheduler/framework/plugins/
defaultbinder/default_binder.go: metadata with the pod's UID, target Node), the API server's
answers to it (409 "already assigned", 404, "is being deleted"; pkg/registry/core/pod/storage/
storage.go), ``updatePod``/``UpdatePodCondition`` in pkg/scheduler/schedule_one.go and
pkg/api/v1/pod/util.go (no patch when nothing changes; lastTransitionTime moves only when the
status flips), and preemption's delete of a victim.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest
from kube_fakes import FakeApi, body, status

from kubesched.framework.clock import VirtualClock
from kubesched.framework.cluster import BindConflictError, RetriableAPIError
from kubesched.kube.client import ApiError
from kubesched.kube.cluster import PODS, KubeCluster, status_patch
from kubesched.kube.informer import Informer

T0 = 1767225600.0
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "uid-1"}, "spec": {}}


def cluster(api: FakeApi) -> KubeCluster:
    return KubeCluster(api.client(), VirtualClock(T0))


def test_bind_posts_a_binding_with_the_pods_uid() -> None:
    api = FakeApi()
    api.route(
        "POST",
        "/api/v1/namespaces/ns/pods/p/binding",
        httpx.Response(201, json={"kind": "Status", "status": "Success"}),
    )
    c = cluster(api)
    c.bind(POD, "node-1")
    [req] = api.sent("POST")
    assert body(req) == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p", "namespace": "ns", "uid": "uid-1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"},
    }
    assert c.bindings == 1


@pytest.mark.parametrize(
    "answer",
    [
        status(409, "Conflict", 'pod p is already assigned to node "node-2"'),
        status(409, "Conflict", "Precondition failed: UID in precondition: uid-1, UID in object meta: uid-2"),
        status(404, "NotFound", 'pods "p" not found'),
        status(500, "InternalError", "pod p is being deleted, cannot be assigned to a host"),
    ],
)
def test_bind_conflicts_and_gone_pods_raise_bind_conflict(answer: httpx.Response) -> None:
    api = FakeApi()
    api.route("POST", "/api/v1/namespaces/ns/pods/p/binding", answer)
    c = cluster(api)
    with pytest.raises(BindConflictError):
        c.bind(POD, "node-1")
    assert c.bindings == 0 and c.bind_conflicts == 1


def test_other_bind_errors_stay_errors() -> None:
    api = FakeApi()
    api.route("POST", "/api/v1/namespaces/ns/pods/p/binding", status(403, "Forbidden", "no"))
    with pytest.raises(ApiError):
        cluster(api).bind(POD, "node-1")


def test_transient_bind_errors_are_retriable_not_conflicts() -> None:
    api = FakeApi()
    api.route("POST", "/api/v1/namespaces/ns/pods/p/binding", status(500, "InternalError", "etcdserver: timeout"))
    with pytest.raises(RetriableAPIError, match="etcdserver: timeout") as err:
        cluster(api).bind(POD, "node-1")
    assert not isinstance(err.value, BindConflictError)


def test_delete_pod_with_a_uid_precondition() -> None:
    api = FakeApi()
    api.route("DELETE", "/api/v1/namespaces/ns/pods/p", httpx.Response(200, json={}), status(404, "NotFound"))
    c = cluster(api)
    c.delete_pod(POD, "Preempted")
    assert body(api.sent("DELETE")[0]) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "uid-1"},
    }
    with pytest.raises(BindConflictError):
        c.delete_pod(POD)


def test_patch_pod_status_is_a_strategic_merge_patch_of_the_status_subresource() -> None:
    api = FakeApi()
    api.route("PATCH", "/api/v1/namespaces/ns/pods/p/status", httpx.Response(200, json={}))
    c = cluster(api)
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available."}
    c.patch_pod_status(POD, {"conditions": [cond], "nominatedNodeName": "n1"})
    [req] = api.sent("PATCH")
    assert req.headers["content-type"] == "application/strategic-merge-patch+json"
    assert body(req) == {
        "status": {"conditions": [{**cond, "lastTransitionTime": "2026-01-01T00:00:00Z"}], "nominatedNodeName": "n1"}
    }


def test_patch_pod_status_sends_nothing_when_the_informer_copy_already_agrees() -> None:
    api = FakeApi()
    c = cluster(api)
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}
    inf = Informer(c.client, PODS)
    inf._store["ns/p"] = {
        **POD,
        "status": {"conditions": [{**cond, "lastTransitionTime": "x"}], "nominatedNodeName": "n1"},
    }
    c.informers["Pod"] = inf
    c.patch_pod_status(POD, {"conditions": [cond], "nominatedNodeName": "n1"})
    assert api.requests == []


def test_patch_pod_status_of_a_gone_pod_raises_bind_conflict_and_retries_server_errors() -> None:
    api = FakeApi()
    api.route(
        "PATCH", "/api/v1/namespaces/ns/pods/p/status", status(503, "ServiceUnavailable"), status(404, "NotFound")
    )
    with pytest.raises(BindConflictError):
        cluster(api).patch_pod_status(POD, {"nominatedNodeName": "x"})
    assert len(api.sent("PATCH")) == 2


CURRENT = {
    "conditions": [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "old",
            "lastTransitionTime": "T1",
        }
    ],
    "nominatedNodeName": "n1",
}
NEW_MSG = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "new"}


@pytest.mark.parametrize(
    ("patch", "want"),
    [
        # Same status, new message: the transition time stays (UpdatePodCondition).
        ({"conditions": [NEW_MSG]}, {"conditions": [{**NEW_MSG, "lastTransitionTime": "T1"}]}),
        # The status flips: the transition time is now.
        (
            {"conditions": [{**NEW_MSG, "status": "True"}]},
            {"conditions": [{**NEW_MSG, "status": "True", "lastTransitionTime": "NOW"}]},
        ),
        # Identical condition and nomination: nothing to send.
        ({"conditions": [{k: v for k, v in CURRENT["conditions"][0].items() if k != "lastTransitionTime"}]}, None),  # type: ignore[index]
        # Only a new observedGeneration: v1.35.4's UpdatePodCondition (pkg/api/v1/pod/util.go)
        # compares status, reason, message and the times, not the generation: nothing to send.
        (
            {"conditions": [{**{k: v for k, v in CURRENT["conditions"][0].items() if k != "lastTransitionTime"},  # type: ignore[index]
                             "observedGeneration": 2}]},
            None,
        ),
        # A new message carries the generation along.
        (
            {"conditions": [{**NEW_MSG, "observedGeneration": 2}]},
            {"conditions": [{**NEW_MSG, "observedGeneration": 2, "lastTransitionTime": "T1"}]},
        ),
        ({"nominatedNodeName": "n1"}, None),
        ({"nominatedNodeName": "n2"}, {"nominatedNodeName": "n2"}),
        # Clearing writes null (strategic merge patch deletes the field).
        ({"nominatedNodeName": None}, {"nominatedNodeName": None}),
        ({"nominatedNodeName": ""}, {"nominatedNodeName": None}),
    ],
)
def test_status_patch(patch: dict[str, Any], want: dict[str, Any] | None) -> None:
    assert status_patch(CURRENT, patch, "NOW") == want


def test_patch_pod_metadata_is_a_merge_patch_with_nulls_for_removals() -> None:
    api = FakeApi()
    api.route("PATCH", "/api/v1/namespaces/ns/pods/p", httpx.Response(200, json={}))
    cluster(api).patch_pod_metadata(POD, annotations={"a": "1", "gone": None}, labels={"l": "v"})
    [req] = api.sent("PATCH")
    assert req.headers["content-type"] == "application/merge-patch+json"
    assert body(req) == {"metadata": {"annotations": {"a": "1", "gone": None}, "labels": {"l": "v"}}}


def test_update_object_status_replaces_status_through_the_subresource() -> None:
    api = FakeApi()
    api.route(
        "GET",
        "/apis/scheduling.x-k8s.io/v1alpha1",
        httpx.Response(
            200,
            json={
                "resources": [
                    {"name": "elasticquotas", "kind": "ElasticQuota", "namespaced": True},
                    {"name": "elasticquotas/status", "kind": "ElasticQuota", "namespaced": True},
                ]
            },
        ),
    )
    api.route(
        "PATCH", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/elasticquotas/q/status", httpx.Response(200, json={})
    )
    eq = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q", "namespace": "ns"},
    }
    cluster(api).update_object_status(eq, {"used": {"cpu": "2"}})
    [req] = api.sent("PATCH")
    assert req.headers["content-type"] == "application/json-patch+json"
    assert json.loads(req.content) == [{"op": "add", "path": "/status", "value": {"used": {"cpu": "2"}}}]


def test_list_objects_reads_informer_stores_and_knows_absent_crds() -> None:
    api = FakeApi()
    c = cluster(api)
    from kubesched.kube.cluster import NAMESPACES

    inf = Informer(c.client, NAMESPACES)
    inf._store["a"] = {"metadata": {"name": "a"}}
    c.informers["Namespace"] = inf
    assert c.list_objects("v1", "Namespace") == [{"metadata": {"name": "a"}}]
    assert c.list_objects("scheduling.x-k8s.io/v1alpha1", "PodGroup") == []
    assert api.requests == []  # neither needed the API server


def test_list_objects_of_an_uninformed_kind_lists_from_the_api_server() -> None:
    api = FakeApi()
    api.route(
        "GET",
        "/apis/apps/v1",
        httpx.Response(200, json={"resources": [{"name": "deployments", "kind": "Deployment", "namespaced": True}]}),
    )
    api.route(
        "GET",
        "/apis/apps/v1/deployments",
        httpx.Response(
            200,
            json={"metadata": {"resourceVersion": "1"}, "items": [{"metadata": {"name": "d", "managedFields": [{}]}}]},
        ),
    )
    assert cluster(api).list_objects("apps/v1", "Deployment") == [
        {"metadata": {"name": "d"}, "apiVersion": "apps/v1", "kind": "Deployment"}
    ]


def test_submitted_binding_cycles_run_on_the_pool_and_drain_waits_for_them() -> None:
    c = cluster(FakeApi())
    release, ran = threading.Event(), []

    def cycle() -> None:
        release.wait(10)
        ran.append(threading.current_thread().name)

    c.submit(cycle)
    assert not c.drain(0.05)  # still running
    release.set()
    assert c.drain(10)
    assert ran and ran[0].startswith("binding")
    c.submit(lambda: ran.append("late"))  # refused once draining
    assert ran == ran[:1]


EXTENDED = {"requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu", "requestName": "r"}],
            "resourceClaimName": "p-extended-resources-abcde"}


@pytest.mark.parametrize(
    ("current", "want"),
    [({}, {"extendedResourceClaimStatus": EXTENDED}), ({"extendedResourceClaimStatus": EXTENDED}, None)],
)
def test_status_patch_writes_the_extended_resource_claim_status(current: dict[str, Any], want: Any) -> None:
    """DynamicResources' PreBind (DRAExtendedResource): sent unless the pod already says so."""
    assert status_patch(current, {"extendedResourceClaimStatus": EXTENDED}, "NOW") == want


def _resource_discovery(api: FakeApi) -> None:
    api.route(
        "GET",
        "/apis/resource.k8s.io/v1",
        httpx.Response(
            200, json={"resources": [{"name": "resourceclaims", "kind": "ResourceClaim", "namespaced": True}]}
        ),
    )


def test_create_posts_to_the_collection_and_returns_the_created_object() -> None:
    """The pod's extended-resource claim: generateName is the API server's to complete."""
    api = FakeApi()
    _resource_discovery(api)
    name = "p-extended-resources-x7k2q"
    created = {"metadata": {"name": name, "namespace": "ns", "uid": "u", "resourceVersion": "5"}}
    api.route("POST", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims", httpx.Response(201, json=created))
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"generateName": "p-extended-resources-", "namespace": "ns"},
        "spec": {"devices": {"requests": []}},
        "status": {"allocation": {}},
    }
    got = cluster(api).create(claim)
    [req] = api.sent("POST")
    assert body(req) == {k: v for k, v in claim.items() if k != "status"}
    assert got["metadata"]["name"] == "p-extended-resources-x7k2q"
    assert (got["apiVersion"], got["kind"]) == ("resource.k8s.io/v1", "ResourceClaim")


@pytest.mark.parametrize("answer", [httpx.Response(200, json={}), status(404, "NotFound", "gone")])
def test_delete_ignores_an_object_already_gone(answer: httpx.Response) -> None:
    api = FakeApi()
    _resource_discovery(api)
    api.route("DELETE", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c", answer)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"}}
    cluster(api).delete(claim)
    assert len(api.sent("DELETE")) == 1
class _Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, object, object]] = []

    def on_object_event(self, kind: str, action: object, old: object, new: object) -> None:
        self.seen.append((kind, old, new))


def test_device_taint_rules_are_watched_in_the_newest_served_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """DRADeviceTaintRules: v1 is not served here (a v1.36 API server), v1beta2 is; a rule's
    change reaches the queue as a ResourceSlice update (upstream's slice tracker)."""
    api = FakeApi()
    api.route(
        "GET",
        "/apis/resource.k8s.io/v1beta2",
        httpx.Response(200, json={"resources": [{"name": "devicetaintrules", "kind": "DeviceTaintRule"}]}),
    )
    monkeypatch.setattr(Informer, "start", lambda self: self)
    c = cluster(api)
    events = _Events()
    c.add_event_handlers(events)  # type: ignore[arg-type]
    c._start_device_taint_rule_informer()
    inf = c.informers["DeviceTaintRule"]
    assert inf.resource.api_version == "resource.k8s.io/v1beta2"
    assert inf.on_add is not None
    inf.on_add({"metadata": {"name": "r"}})
    assert events.seen == [("ResourceSlice", None, {"metadata": {"name": "r"}})]


def test_device_taint_rules_not_served_are_not_watched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Informer, "start", lambda self: self)
    c = cluster(FakeApi())
    c._start_device_taint_rule_informer()
    assert "DeviceTaintRule" not in c.informers
