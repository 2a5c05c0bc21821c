"""The reflector loop of our informers, against a scripted API server.

Pins client-go's Reflector/SharedInformer contract (tools/cache/reflector.go, shared_informer.go):
list, then watch from the list's resourceVersion with allowWatchBookmarks; bookmarks and events
advance the resourceVersion the next watch resumes from; 410 Gone re-lists and reconciles the
store (synthetic deletes for objects gone, updates for changed ones, adds for new ones); any
other failure resumes the watch from the last resourceVersion, without a re-list.
"""

from __future__ import annotations

from typing import Any

import httpx
from kube_fakes import FakeApi, status, watch_stream

from kubesched.kube.client import ResourceType
from kubesched.kube.informer import Backoff, Informer

PODS = ResourceType("", "v1", "pods", "Pod", True)


def pod(name: str, rv: str, node: str = "") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "managedFields": [{"manager": "x"}]},
        "spec": {"nodeName": node} if node else {},
    }


def event(type_: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {"type": type_, "object": {"apiVersion": "v1", "kind": "Pod", **obj}}


def pod_list(rv: str, *items: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"kind": "PodList", "metadata": {"resourceVersion": rv}, "items": list(items)})


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def add(self, obj: dict[str, Any]) -> None:
        self.calls.append(("add", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.calls.append(
            ("update", new["metadata"]["name"], old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"])
        )

    def delete(self, obj: dict[str, Any]) -> None:
        self.calls.append(("delete", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))


def run(api: FakeApi, watches: list[Any], lists: list[httpx.Response], **kw: Any) -> tuple[Informer, Recorder]:
    """Run an informer until the scripted watches are used up."""
    rec = Recorder()
    inf = Informer(
        api.client(),
        PODS,
        on_add=rec.add,
        on_update=rec.update,
        on_delete=rec.delete,
        transform=lambda o: (
            {k: v for k, v in o.items()}
            | {"metadata": {k: v for k, v in o["metadata"].items() if k != "managedFields"}}
        ),
        backoff=Backoff(initial=0.0, cap=0.0),
        **kw,
    )
    script = list(watches)

    def on_watch(request: httpx.Request) -> httpx.Response:
        if not script:
            inf._stop.set()
            return watch_stream()
        step = script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step  # type: ignore[no-any-return]

    api.route("GET", "/api/v1/pods", lambda r: on_watch(r) if r.url.params.get("watch") else lists.pop(0))
    inf.run()
    return inf, rec


def watch_params(api: FakeApi) -> list[dict[str, str]]:
    return [dict(r.url.params) for r in api.sent("GET", "/api/v1/pods") if r.url.params.get("watch")]


def test_list_then_watch_from_the_lists_resource_version() -> None:
    api = FakeApi()
    inf, rec = run(
        api,
        watches=[
            watch_stream(
                event("ADDED", pod("b", "11")),
                event("MODIFIED", pod("a", "12", node="n1")),
                {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "15"}}},
                event("DELETED", pod("b", "16")),
            )
        ],
        lists=[pod_list("10", pod("a", "9"))],
        field_selector="status.phase!=Succeeded,status.phase!=Failed",
    )
    assert rec.calls == [("add", "a", "9"), ("add", "b", "11"), ("update", "a", "9", "12"), ("delete", "b", "16")]
    params = watch_params(api)
    assert params[0]["resourceVersion"] == "10"
    assert params[0]["allowWatchBookmarks"] == "true"
    assert params[0]["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"
    assert 300 <= int(params[0]["timeoutSeconds"]) <= 600  # client-go: 5 to 10 minutes
    # The stream ended cleanly: the next watch resumes after the last event, no re-list.
    assert params[1]["resourceVersion"] == "16"
    assert inf.lists == 1
    [only] = inf.list()
    assert only["metadata"] == {"name": "a", "namespace": "ns", "resourceVersion": "12"}  # transformed
    assert (only["apiVersion"], only["kind"]) == ("v1", "Pod")
    assert inf.synced.is_set()


def test_bookmark_moves_the_resume_point() -> None:
    api = FakeApi()
    run(
        api,
        watches=[watch_stream({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "42"}}})],
        lists=[pod_list("10")],
    )
    assert [p["resourceVersion"] for p in watch_params(api)] == ["10", "42"]


def test_gone_relists_and_reconciles_the_store() -> None:
    api = FakeApi()
    expired = {
        "type": "ERROR",
        "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version: 10 (20)"},
    }
    inf, rec = run(
        api,
        watches=[watch_stream(event("ADDED", pod("c", "11")), expired), watch_stream()],
        lists=[
            pod_list("10", pod("a", "5"), pod("b", "6")),
            # After the 410: a unchanged, b changed, c gone, d new.
            pod_list("30", pod("a", "5"), pod("b", "25"), pod("d", "26")),
        ],
    )
    assert rec.calls == [
        ("add", "a", "5"),
        ("add", "b", "6"),
        ("add", "c", "11"),
        ("delete", "c", "11"),
        ("update", "b", "6", "25"),
        ("add", "d", "26"),
    ]
    assert inf.lists == 2 and inf.relists_gone == 1
    assert watch_params(api)[-1]["resourceVersion"] == "30"
    assert sorted(p["metadata"]["name"] for p in inf.list()) == ["a", "b", "d"]


def test_gone_at_watch_start_relists() -> None:
    api = FakeApi()
    inf, _ = run(api, watches=[status(410, "Gone", "too old"), watch_stream()], lists=[pod_list("10"), pod_list("11")])
    assert inf.lists == 2
    assert [p["resourceVersion"] for p in watch_params(api)][:2] == ["10", "11"]


def test_too_large_resource_version_after_a_restart_relists() -> None:
    api = FakeApi()
    too_large = status(504, "Timeout", "Too large resource version: 50, current: 12")
    inf, _ = run(api, watches=[too_large, watch_stream()], lists=[pod_list("50"), pod_list("12")])
    assert inf.lists == 2


def test_connection_errors_resume_from_the_last_resource_version_without_relisting() -> None:
    api = FakeApi()
    inf, rec = run(
        api,
        watches=[
            watch_stream(event("ADDED", pod("a", "11"))),
            httpx.ConnectError("connection refused"),
            httpx.ReadTimeout("no bookmark for 90s"),
            status(500, "InternalError", "etcd unavailable"),
            watch_stream(event("MODIFIED", pod("a", "12"))),
        ],
        lists=[pod_list("10")],
    )
    assert inf.lists == 1
    assert [p["resourceVersion"] for p in watch_params(api)] == ["10", "11", "11", "11", "11", "12"]
    assert rec.calls == [("add", "a", "11"), ("update", "a", "11", "12")]


def test_list_failures_are_retried() -> None:
    api = FakeApi()
    inf, rec = run(
        api, watches=[watch_stream()], lists=[status(503, "ServiceUnavailable"), pod_list("10", pod("a", "1"))]
    )
    assert inf.lists == 1
    assert rec.calls == [("add", "a", "1")]


def test_a_failing_handler_does_not_stop_the_informer() -> None:
    api = FakeApi()
    seen: list[str] = []

    def add(obj: dict[str, Any]) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("boom")

    inf = Informer(api.client(), PODS, on_add=add, backoff=Backoff(0.0, 0.0))
    api.route(
        "GET",
        "/api/v1/pods",
        lambda r: (
            (inf._stop.set() or watch_stream())
            if r.url.params.get("watch")
            else pod_list("1", pod("bad", "1"), pod("good", "1"))
        ),
    )
    inf.run()
    assert seen == ["bad", "good"]


def test_paginated_lists_are_followed() -> None:
    api = FakeApi()
    pages = [
        httpx.Response(200, json={"metadata": {"resourceVersion": "10", "continue": "tok"}, "items": [pod("a", "1")]}),
        httpx.Response(200, json={"metadata": {"resourceVersion": "10"}, "items": [pod("b", "2")]}),
    ]
    _, rec = run(api, watches=[], lists=pages)
    assert [c[1] for c in rec.calls] == ["a", "b"]
    lists = [dict(r.url.params) for r in api.sent("GET", "/api/v1/pods") if not r.url.params.get("watch")]
    assert lists[0]["limit"] == "500" and "continue" not in lists[0]
    assert lists[1]["continue"] == "tok"
