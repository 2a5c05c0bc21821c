"""Helpers for the kubesched-against-kube-apiserver tests (``test_kube_*.py``); no tests here.

Objects are created through the admin client exactly as a user would; kubesched runs either
in-process (``InProcessScheduler``: one ``SchedulerApp`` on a thread, so tests can read its
counters) or as ``kubesched run`` subprocesses (``SubprocessScheduler``: what leader-election
tests kill). Every test uses its own ``schedulerName``, namespace and Lease, so schedulers of
other tests never touch its pods.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kubesched.config.load import load_config
from kubesched.config.releases import DEFAULT_RELEASE, Release
from kubesched.kube.cluster import KubeOptions
from kubesched.kube.controlplane import ControlPlane, start_kube_scheduler
from kubesched.kube.run import RunOptions, SchedulerApp
from kubesched.kube.serving import SecureServingOptions
from kubesched.plugins.registry import default_registry

MERGE = {"Content-Type": "application/merge-patch+json"}
#: Namespaces made by these tests (their pods are cleaned up between tests).
NAMESPACE_PREFIX = "ks"


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def healthy(port: int) -> bool:
    """A scheduler's secure port answers /healthz with 200."""
    try:
        return httpx.get(f"https://127.0.0.1:{port}/healthz", verify=False, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def outcome(api: Api, ns: str, name: str, timeout: float = 60) -> str:
    """The pod's node (``node <name>``), or its FailedScheduling message once it has one."""

    def decided() -> str | None:
        pod = api.get_pod(ns, name) or {}
        node = pod.get("spec", {}).get("nodeName")
        if node:
            return f"node {node}"
        for c in pod.get("status", {}).get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("message"):
                return str(c["message"])
        return None

    got = eventually(decided, f"{ns}/{name} decided", timeout=timeout)
    assert isinstance(got, str)
    return got


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def eventually(check: Callable[[], Any], what: str, timeout: float = 60.0, interval: float = 0.2) -> Any:
    """Poll ``check`` until it returns something truthy (returned); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class Api:
    """The admin's view of the cluster: thin helpers over the REST API."""

    def __init__(self, client: httpx.Client) -> None:
        self.c = client

    def ok(self, resp: httpx.Response, *codes: int) -> Any:
        assert resp.status_code in (codes or (200, 201)), f"{resp.request.method} {resp.request.url}: {resp.text}"
        return resp.json() if resp.content else None

    # -- objects -------------------------------------------------------------------------------
    def namespace(self, name: str | None = None) -> str:
        name = name or unique(NAMESPACE_PREFIX)
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        resp = self.c.post("/api/v1/namespaces", json=body)
        assert resp.status_code in (201, 409), resp.text
        return name

    def node(
        self,
        name: str,
        *,
        cpu: str = "4",
        memory: str = "8Gi",
        pods: str = "110",
        labels: Mapping[str, str] | None = None,
        taints: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints} if taints else {},
        }
        self.ok(self.c.post("/api/v1/nodes", json=body))
        res = {"cpu": cpu, "memory": memory, "pods": pods}
        status = {
            "status": {
                "capacity": res,
                "allocatable": res,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}],
            }
        }
        return dict(self.ok(self.c.patch(f"/api/v1/nodes/{name}/status", json=status, headers=MERGE)))

    def delete_all_nodes(self) -> None:
        for n in self.ok(self.c.get("/api/v1/nodes"))["items"]:
            self.c.delete(f"/api/v1/nodes/{n['metadata']['name']}")

    def delete_our_pods(self) -> None:
        """Pods left by earlier kube tests (namespaces ``ks-*``): without a kubelet they stay,
        and a new node of the same name would find them still counted on it."""
        for p in self.ok(self.c.get("/api/v1/pods"))["items"]:
            md = p["metadata"]
            if md["namespace"].startswith(f"{NAMESPACE_PREFIX}-"):
                self.c.delete(
                    f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}", params={"gracePeriodSeconds": 0}
                )

    def node_names(self) -> list[str]:
        return sorted(n["metadata"]["name"] for n in self.ok(self.c.get("/api/v1/nodes"))["items"])

    def pod(
        self,
        namespace: str,
        name: str,
        *,
        scheduler: str,
        cpu: str = "100m",
        node_name: str | None = None,
        priority_class: str | None = None,
        labels: Mapping[str, str] | None = None,
        extra_spec: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "schedulerName": scheduler,
            # Without a kubelet a bound pod only goes away when deleted with no grace period.
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "registry.invalid/pause", "resources": {"requests": {"cpu": cpu}}}],
            **(extra_spec or {}),
        }
        if node_name:
            spec["nodeName"] = node_name
        if priority_class:
            spec["priorityClassName"] = priority_class
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
            "spec": spec,
        }
        return dict(self.ok(self.c.post(f"/api/v1/namespaces/{namespace}/pods", json=body)))

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        resp = self.c.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        if resp.status_code == 404:
            return None
        return dict(self.ok(resp))

    def pods(self, namespace: str) -> list[dict[str, Any]]:
        return list(self.ok(self.c.get(f"/api/v1/namespaces/{namespace}/pods"))["items"])

    def node_of(self, namespace: str, name: str) -> str | None:
        pod = self.get_pod(namespace, name)
        return (pod or {}).get("spec", {}).get("nodeName")

    def events(
        self, namespace: str, *, reason: str | None = None, regarding: str | None = None
    ) -> list[dict[str, Any]]:
        items = self.ok(self.c.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"))["items"]
        return [
            e
            for e in items
            if (reason is None or e.get("reason") == reason)
            and (regarding is None or e.get("regarding", {}).get("name") == regarding)
        ]

    def priority_class(self, name: str, value: int) -> None:
        body = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        resp = self.c.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=body)
        assert resp.status_code in (201, 409), resp.text

    def lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        resp = self.c.get(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}")
        return None if resp.status_code == 404 else dict(self.ok(resp))


def condition(pod: Mapping[str, Any], type_: str) -> dict[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def scheduler_config(
    scheduler_name: str,
    *,
    leader_elect: bool = False,
    lease_namespace: str = "kube-system",
    lease_name: str | None = None,
    lease: tuple[str, str, str] = ("4s", "3s", "1s"),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A KubeSchedulerConfiguration with one profile; short leader-election timings for tests
    (lease, renew deadline, retry period)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {
            "leaderElect": leader_elect,
            "resourceNamespace": lease_namespace,
            "resourceName": lease_name or scheduler_name,
            "leaseDuration": lease[0],
            "renewDeadline": lease[1],
            "retryPeriod": lease[2],
        },
        "profiles": [{"schedulerName": scheduler_name}],
        **(extra or {}),
    }


def metrics_text(port: int) -> str:
    return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text


def metric_value(text: str, metric: str, **labels: str) -> float | None:
    """The value of one sample in Prometheus text (labels must all match), or None."""
    for line in text.splitlines():
        if not line.startswith(metric):
            continue
        series, _, value = line.rpartition(" ")
        named = series == metric or series.startswith(metric + "{")
        if named and all(f'{k}="{v}"' in series for k, v in labels.items()):
            return float(value)
    return None


class InProcessScheduler:
    """One ``SchedulerApp`` on a thread, so a test can read its counters and stop it cleanly."""

    def __init__(
        self,
        config: Mapping[str, Any],
        kubeconfig: Path,
        *,
        identity: str | None = None,
        backend: KubeOptions | None = None,
        serving: SecureServingOptions | None = None,
        release: Release | None = None,
    ) -> None:
        self.metrics_port = free_port()
        options = RunOptions(
            kubeconfig=str(kubeconfig),
            metrics_bind_address=f"127.0.0.1:{self.metrics_port}",
            serving=serving or SecureServingOptions(secure_port=0),
            identity=identity,
            shutdown_grace=10.0,
            backend=backend or KubeOptions(bind_workers=4),
        )
        registry = default_registry()
        # As ``kubesched run`` does: pluginConfig args decoded into the registry's typed args.
        self.app = SchedulerApp(
            load_config(dict(config), args_types=registry.args_types(), release=release or DEFAULT_RELEASE),
            registry,
            options,
        )
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, name="kubesched-under-test", daemon=True)

    def _run(self) -> None:
        self.exit_code = self.app.run(install_signal_handlers=False)

    def start(self) -> InProcessScheduler:
        self._thread.start()
        eventually(self.app.cluster.synced, "kubesched's informers to sync", timeout=60)
        return self

    def stop(self, timeout: float = 30.0) -> int | None:
        self.app.shutdown()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "kubesched did not stop"
        return self.exit_code

    def metrics(self) -> str:
        return metrics_text(self.metrics_port)


@contextlib.contextmanager
def in_process(config: Mapping[str, Any], kubeconfig: Path, **kw: Any) -> Iterator[InProcessScheduler]:
    sched = InProcessScheduler(config, kubeconfig, **kw).start()
    try:
        yield sched
    finally:
        sched.stop()


class SubprocessScheduler:
    """``kubesched run`` as its own process (for tests that kill it)."""

    def __init__(self, config: Mapping[str, Any], kubeconfig: Path, workdir: Path, *args: str) -> None:
        self.name = unique("kubesched")
        self.metrics_port = free_port()
        self.config_path = workdir / f"{self.name}.yaml"
        self.config_path.write_text(yaml.safe_dump(dict(config)))
        self.log_path = workdir / f"{self.name}.log"
        self.argv = [
            sys.executable,
            "-c",
            "import sys; from kubesched.cli import main; main(sys.argv[1:])",
            "run",
            f"--config={self.config_path}",
            f"--kubeconfig={kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            "--secure-port=0",  # replicas side by side; HTTPS has its own test (test_kube_https_serving.py)
            "-v=2",
            *args,
        ]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> SubprocessScheduler:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ready(self) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{self.metrics_port}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def metrics(self) -> str:
        return metrics_text(self.metrics_port)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no lease release, no flush; what a crashed node does."""
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            assert self.proc is not None
            self.proc.wait(30)

    def terminate(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


@contextlib.contextmanager
def subprocesses(*scheds: SubprocessScheduler) -> Iterator[None]:
    try:
        for s in scheds:
            s.start()
        yield
    finally:
        for s in scheds:
            if s.alive():
                s.kill()


# -- fixtures (import them into a test module to use them) ------------------------------------


@pytest.fixture
def api(control_plane: ControlPlane) -> Iterator[Api]:
    """Admin access, on a cluster with no Nodes: other tests' nodes would change the scheduler's
    choices and the node counts in its messages. Nodes and pods made by the test are deleted
    after it."""
    with control_plane.admin_client(timeout=30.0) as client:
        a = Api(client)
        a.delete_our_pods()
        a.delete_all_nodes()
        yield a
        a.delete_our_pods()
        a.delete_all_nodes()


@pytest.fixture
def ns(api: Api) -> str:
    return api.namespace()


@pytest.fixture
def kubeconfig(control_plane: ControlPlane) -> Path:
    """The admin kubeconfig (system:masters); test_kube_rbac.py runs with the ServiceAccount."""
    return control_plane.kubeconfig_path


@pytest.fixture
def kube_scheduler(control_plane: ControlPlane, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The real kube-scheduler of the control plane's release, with its own schedulerName:
    ``(scheduler name, HTTPS port)``, to compare kubesched with in the same cluster."""
    name = unique("ks")
    port = free_port()
    cfg = tmp_path / "ks.yaml"
    cfg.write_text(yaml.safe_dump(scheduler_config(name)))
    proc = start_kube_scheduler(cfg, control_plane.kubeconfig_path, secure_port=port, log_path=tmp_path / "ks.log")
    try:
        yield name, port
    finally:
        proc.terminate()
        proc.wait(30)


class PodWatch:
    """Watches a namespace's pods (resuming across API server restarts) and remembers every
    node each pod was ever seen on, every nominatedNodeName and every condition it carried."""

    def __init__(self, control_plane: ControlPlane, namespace: str) -> None:
        self.cp = control_plane
        self.namespace = namespace
        self.nodes: dict[str, set[str]] = {}
        self.nominated: dict[str, set[str]] = {}
        self.conditions: dict[str, set[tuple[str, str, str]]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"podwatch-{namespace}", daemon=True)

    def __enter__(self) -> PodWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def wait_seen(self, names: Iterable[str], timeout: float = 30) -> None:
        """Wait until the watch has seen every named pod bound: the watch is asynchronous, so
        a binding the API already returns may not have reached it yet (and after an API server
        restart it re-lists first)."""
        wanted = list(names)
        seen = lambda: all(self.nodes.get(n) for n in wanted)  # noqa: E731
        eventually(seen, "the pod watch to see every binding", timeout=timeout)

    def _see(self, pod: Mapping[str, Any]) -> None:
        name = pod["metadata"]["name"]
        node = (pod.get("spec") or {}).get("nodeName")
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if node:
            self.nodes.setdefault(name, set()).add(node)
        if nominated:
            self.nominated.setdefault(name, set()).add(nominated)
        for c in (pod.get("status") or {}).get("conditions") or []:
            self.conditions.setdefault(name, set()).add((c.get("type", ""), c.get("status", ""), c.get("reason", "")))

    def _run(self) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        rv = ""
        while not self._stop.is_set():
            try:
                with self.cp.admin_client(timeout=httpx.Timeout(10, read=5)) as client:
                    if not rv:
                        listed = client.get(path).json()
                        for p in listed["items"]:
                            self._see(p)
                        rv = listed["metadata"]["resourceVersion"]
                    params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"}
                    with client.stream("GET", path, params=params) as resp:
                        if resp.status_code != 200:
                            rv = ""
                            continue
                        for line in resp.iter_lines():
                            if self._stop.is_set():
                                return
                            ev = json.loads(line)
                            if ev["type"] == "ERROR":
                                rv = ""
                                break
                            rv = ev["object"]["metadata"].get("resourceVersion", rv)
                            if ev["type"] != "BOOKMARK":
                                self._see(ev["object"])
            except (httpx.HTTPError, OSError):
                time.sleep(0.5)  # resume from rv once the server is back
            except (ValueError, KeyError, TypeError):
                # A line cut by a restart, or an unexpected object: start over from a re-list
                # rather than let the thread die and the test read a stale record.
                rv = ""
                time.sleep(0.5)
