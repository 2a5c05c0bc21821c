"""A scriptable in-memory API server for unit tests of the Kubernetes backend (httpx.MockTransport).

Real API-server behaviour is covered by tests/e2e/test_kube_*.py; these fakes pin our side of
the protocol (paths, bodies, content types, retries, reconcile logic) without a network.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from typing import Any

import httpx

from kubesched.kube.client import KubeClient
from kubesched.kube.config import ConnectionConfig

Responder = Callable[[httpx.Request], httpx.Response]


def status(code: int, reason: str, message: str = "") -> httpx.Response:
    return httpx.Response(
        code,
        json={
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": code,
            "reason": reason,
            "message": message,
        },
    )


def watch_stream(*events: dict[str, Any]) -> httpx.Response:
    """A finished watch response: one JSON event per line."""
    return httpx.Response(200, content=b"".join(json.dumps(e).encode() + b"\n" for e in events))


def body(request: httpx.Request) -> Any:
    return json.loads(request.content) if request.content else None


class FakeApi:
    """Routes ``(method, path regex)`` to responders; a route may hold a queue of responses
    (served in order, the last one repeated) or a function."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self._routes: list[tuple[str, re.Pattern[str], deque[Responder | httpx.Response]]] = []

    def route(self, method: str, path: str, *responses: Responder | httpx.Response) -> None:
        self._routes.append((method, re.compile(f"^{path}$"), deque(responses)))

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for method, pattern, queue in self._routes:
            if method == request.method and pattern.match(request.url.path):
                item = queue.popleft() if len(queue) > 1 else queue[0]
                return item(request) if callable(item) else item
        return status(404, "NotFound", f"no route for {request.method} {request.url.path}")

    def client(self) -> KubeClient:
        return KubeClient(ConnectionConfig("https://fake.invalid"), qps=-1, transport=httpx.MockTransport(self.handler))

    def sent(self, method: str | None = None, path: str | None = None) -> list[httpx.Request]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (path is None or re.match(f"^{path}$", r.url.path))
        ]


class LeaseStore:
    """coordination.k8s.io Leases with resourceVersion preconditions, as the API server keeps them."""

    def __init__(self, api: FakeApi, namespace: str = "kube-system") -> None:
        self.leases: dict[str, dict[str, Any]] = {}
        self.rv = 0
        self.fail_with: int | None = None
        base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        api.route("GET", base + "/([^/]+)", self._get)
        api.route("POST", base, self._create)
        api.route("PUT", base + "/([^/]+)", self._update)

    def _next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def _get(self, request: httpx.Request) -> httpx.Response:
        if self.fail_with:
            return status(self.fail_with, "InternalError")
        name = request.url.path.rsplit("/", 1)[-1]
        if name not in self.leases:
            return status(404, "NotFound", f'leases.coordination.k8s.io "{name}" not found')
        return httpx.Response(200, json=self.leases[name])

    def _create(self, request: httpx.Request) -> httpx.Response:
        if self.fail_with:
            return status(self.fail_with, "InternalError")
        obj = body(request)
        name = obj["metadata"]["name"]
        if name in self.leases:
            return status(409, "AlreadyExists")
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self.leases[name] = obj
        return httpx.Response(201, json=obj)

    def _update(self, request: httpx.Request) -> httpx.Response:
        if self.fail_with:
            return status(self.fail_with, "InternalError")
        obj = body(request)
        name = obj["metadata"]["name"]
        cur = self.leases.get(name)
        if cur is None:
            return status(404, "NotFound")
        if obj["metadata"].get("resourceVersion") != cur["metadata"]["resourceVersion"]:
            return status(
                409, "Conflict", "the object has been modified; please apply your changes to the latest version"
            )
        obj["metadata"]["resourceVersion"] = self._next_rv()
        self.leases[name] = obj
        return httpx.Response(200, json=obj)

    def put_directly(self, name: str, spec: dict[str, Any]) -> None:
        """Another writer (a different candidate) changes the Lease."""
        cur = self.leases.get(name) or {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name},
        }
        self.leases[name] = {**cur, "spec": spec, "metadata": {**cur["metadata"], "resourceVersion": self._next_rv()}}
