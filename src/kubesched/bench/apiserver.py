"""The apiserver backend of ``kubesched bench``: a real etcd + kube-apiserver, and the scheduler under
test as its own process — ``kubesched run`` or upstream kube-scheduler (both built by
scripts/controlplane.sh), with the same KubeSchedulerConfiguration and client QPS/burst.

The harness plays scheduler_perf's test client: it creates namespaces, nodes (object, then
``status`` with capacity and allocatable) and init pods, and waits for them to be bound; then it
stops the scheduler, creates the measured pods, and starts the scheduler again (see
:func:`run_apiserver` for why), while a watch records when each pod is bound. Both schedulers are
measured the same way, from outside:

* ``pods_per_second``: measured pods bound / (last binding seen on the watch - the restart);
* attempt latency: the scheduler's own ``scheduler_scheduling_attempt_duration_seconds``
  histogram (result ``scheduled``) after the run, quantiles as PromQL's ``histogram_quantile``
  interpolates them;
* ``peak_rss_mb`` and ``cpu_seconds``: the restarted scheduler process's ``VmHWM`` and user +
  system time (``/proc``); ``apiserver_cpu_seconds``: kube-apiserver's CPU time in the same window
  (what the scheduler's requests and watches cost the server, on the same two cores).

Nothing here plays kubelet: bound pods stay Pending and never finish, as in scheduler_perf.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import httpx
import yaml

from kubesched.config.releases import DEFAULT_RELEASE, Release

from .errors import BenchError
from .result import BenchResult, histogram_quantile, process_peak_rss_mb
from .workloads import Obj, Workload, namespace

if TYPE_CHECKING:
    # Imported when a run starts (:func:`_control_plane`): the harness needs an optional extra.
    from kubesched.kube.controlplane import ControlPlane

#: Client QPS/burst of the scheduler under test (both of them): high enough that client-side rate
#: limiting is not what is measured (kube-scheduler's default 50/100 would cap binding at ~50/s).
CLIENT_QPS = 5000.0
CLIENT_BURST = 5000
#: Concurrent requests of the harness when creating objects.
CREATORS = 24
#: Give up when no measured pod was bound for this long.
STALL_SECONDS = 120.0
SCHEDULER_NAME = "default-scheduler"
ATTEMPT_METRIC = "scheduler_scheduling_attempt_duration_seconds_bucket"
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')

Progress = Callable[[int, int], None]


class ApiserverBenchError(BenchError):
    """The control plane or the scheduler under test could not be run."""


#: The one line a plain install (no ``controlplane`` extra, so no ``cryptography``) gets.
MISSING_HARNESS = (
    "kubesched bench --backend apiserver needs the control-plane harness: pip install 'kubesched[controlplane]'"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scheduler_config() -> dict[str, Any]:
    """The configuration both schedulers run with: kube-scheduler's defaults, one profile, no leader
    election, and the client QPS/burst above."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"qps": CLIENT_QPS, "burst": CLIENT_BURST},
        "profiles": [{"schedulerName": SCHEDULER_NAME}],
    }


def api_object(obj: Obj) -> Obj:
    """A workload object as a client creates it: no UID (the API server assigns one), and a pod's
    ``spec.priority`` given as a PriorityClass (:func:`priority_class`): the Priority admission
    plugin rejects a pod that sets the integer itself (scheduler_perf's templates set it because its
    in-process API server runs without admission)."""
    md = {k: v for k, v in obj["metadata"].items() if k != "uid"}
    out = {**obj, "metadata": md}
    spec = obj.get("spec")
    if obj.get("kind") == "Pod" and isinstance(spec, dict) and "priority" in spec:
        spec = dict(spec)
        spec["priorityClassName"] = priority_class(int(spec.pop("priority")))["metadata"]["name"]
        out["spec"] = spec
    return out


def priority_class(value: int) -> Obj:
    """The PriorityClass standing for a workload pod's ``spec.priority`` of ``value``."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": f"kubesched-bench-{value}" if value >= 0 else f"kubesched-bench-minus-{-value}"},
        "value": value,
    }


def priority_classes(pods: Sequence[Obj]) -> list[Obj]:
    """One PriorityClass per distinct ``spec.priority`` among ``pods``."""
    values = {int(p["spec"]["priority"]) for p in pods if "priority" in p.get("spec", {})}
    return [priority_class(v) for v in sorted(values)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (``/proc/PID/stat``); 0 if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def attempt_buckets(metrics_text: str) -> dict[float, float]:
    """Cumulative ``le`` -> count of the attempt-duration histogram for scheduled pods."""
    out: dict[float, float] = {}
    for line in metrics_text.splitlines():
        if not line.startswith(ATTEMPT_METRIC + "{"):
            continue
        series, _, value = line.rpartition(" ")
        if not series.startswith(ATTEMPT_METRIC + "{"):
            continue
        labels = dict(_LABEL.findall(series))
        if "le" not in labels or labels.get("result") != "scheduled" or labels.get("profile") != SCHEDULER_NAME:
            continue
        le = float(labels["le"])  # "+Inf" parses as inf
        out[le] = out.get(le, 0.0) + float(value)
    return out


def window_quantiles(before: dict[float, float], after: dict[float, float], qs: Sequence[float]) -> list[float]:
    """Quantiles (seconds) of the observations made between two scrapes."""
    buckets = sorted((le, after.get(le, 0.0) - before.get(le, 0.0)) for le in after)
    return [histogram_quantile(q, buckets) for q in qs]


# ------------------------------------------------------------------------------------------------
# the scheduler under test


class SchedulerProcess:
    """``kubesched run`` or kube-scheduler, as a child process with a /metrics endpoint."""

    def __init__(
        self,
        kind: str,
        cp: ControlPlane,
        config: dict[str, Any],
        release: Release | None = None,
        feature_gates: Sequence[str] = (),
    ) -> None:
        """``release``: what ``kubesched run`` behaves as (``--emulated-version``; None: its default).
        kube-scheduler is the control plane's own binary, of the release it was built for.
        ``feature_gates``: ``--feature-gates`` values, given to either scheduler as they are."""
        self.kind = kind
        gate_args = [f"--feature-gates={g}" for g in feature_gates]
        work = cp.workdir
        config_path = work / f"{kind}-config.yaml"
        config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        # Both as the admin: the same (short-circuited) authorization for both. (``kubesched run``
        # also lists PriorityClasses, which RBAC's system:kube-scheduler role does not allow.)
        kubeconfig = cp.kubeconfig_path
        self.log_path = work / f"{kind}.log"
        if kind == "kube-scheduler":
            if cp.binaries.kube_scheduler is None:
                raise ApiserverBenchError("kube-scheduler not built: run scripts/controlplane.sh")
            port = _free_port()
            self.proc = cp.start_kube_scheduler(
                config_path, kubeconfig, secure_port=port, log_path=self.log_path, extra_args=gate_args
            )
            self.metrics_url = f"https://127.0.0.1:{port}/metrics"
            self.health_url = f"https://127.0.0.1:{port}/healthz"
        else:
            port = _free_port()
            argv = [
                sys.executable,
                "-c",
                "import sys; from kubesched.cli import main; main(sys.argv[1:])",
                "run",
                f"--config={config_path}",
                f"--kubeconfig={kubeconfig}",
                f"--metrics-bind-address=127.0.0.1:{port}",
                "--secure-port=0",
                *gate_args,
            ]
            if release is not None:
                argv.append(f"--emulated-version={release}")
            with self.log_path.open("ab") as log:
                self.proc = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
            self.metrics_url = f"http://127.0.0.1:{port}/metrics"
            self.health_url = f"http://127.0.0.1:{port}/healthz"
        self._http = httpx.Client(verify=False, timeout=30.0)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ApiserverBenchError(f"{self.kind} exited with {self.proc.returncode}; see {self.log_path}")
            with contextlib.suppress(httpx.HTTPError):
                if self._http.get(self.health_url).status_code == 200:
                    return
            time.sleep(0.2)
        raise ApiserverBenchError(f"{self.kind} not healthy after {timeout:.0f}s; see {self.log_path}")

    def metrics(self) -> str:
        return self._http.get(self.metrics_url).text

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._http.close()


# ------------------------------------------------------------------------------------------------
# the watch


class BindWatch:
    """Watches every pod and notes the first moment each one is seen with ``spec.nodeName``."""

    def __init__(self, cp: ControlPlane) -> None:
        self._cp = cp
        self._lock = threading.Condition()
        self.bound_at: dict[str, float] = {}
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-watch", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> BindWatch:
        self._thread.start()
        if not self._ready.wait(60):
            raise ApiserverBenchError("pod watch did not start")
        return self

    def _run(self) -> None:
        try:
            with self._cp.admin_client(timeout=httpx.Timeout(30.0, read=None)) as c:
                rv = c.get("/api/v1/pods", params={"limit": 1}).json()["metadata"]["resourceVersion"]
                while not self._stop.is_set():
                    params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true"}
                    with c.stream("GET", "/api/v1/pods", params=params) as resp:
                        self._ready.set()
                        for line in resp.iter_lines():
                            if self._stop.is_set():
                                return
                            if not line:
                                continue
                            ev = json.loads(line)
                            obj = ev.get("object") or {}
                            rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                            if ev.get("type") in ("ADDED", "MODIFIED") and (obj.get("spec") or {}).get("nodeName"):
                                md = obj["metadata"]
                                key = f"{md['namespace']}/{md['name']}"
                                now = time.perf_counter()
                                with self._lock:
                                    if key not in self.bound_at:
                                        self.bound_at[key] = now
                                        self._lock.notify_all()
        except BaseException as err:  # reported by wait()
            self.error = err
            self._ready.set()
            with self._lock:
                self._lock.notify_all()

    def wait(self, keys: set[str], progress: Callable[[int], None] | None = None) -> int:
        """Until every key is bound, or nothing got bound for STALL_SECONDS; returns how many are."""
        last_count, last_change = -1, time.monotonic()
        while True:
            with self._lock:
                count = sum(1 for k in keys if k in self.bound_at)
                if count == len(keys) or self.error is not None:
                    return count
                if count != last_count:
                    last_count, last_change = count, time.monotonic()
                    if progress is not None:
                        progress(count)
                elif time.monotonic() - last_change > STALL_SECONDS:
                    return count
                self._lock.wait(0.5)

    def stop(self) -> None:
        self._stop.set()


# ------------------------------------------------------------------------------------------------
# creating objects


class _Creator:
    """Creates objects from a pool of threads (one keep-alive connection each)."""

    def __init__(self, cp: ControlPlane, workers: int = CREATORS) -> None:
        self._local = threading.local()
        self._cp = cp
        self._clients: list[httpx.Client] = []
        self._lock = threading.Lock()
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="bench-create")

    def _client(self) -> httpx.Client:
        c = getattr(self._local, "client", None)
        if c is None:
            c = self._local.client = self._cp.admin_client(timeout=60.0)
            with self._lock:
                self._clients.append(c)
        return c

    def _post(self, path: str, body: Obj) -> None:
        for attempt in range(5):
            resp = self._client().post(path, json=body)
            if resp.status_code in (200, 201, 409):
                return
            if resp.status_code in (429, 500, 503, 504) and attempt < 4:
                time.sleep(0.2 * (attempt + 1))
                continue
            raise ApiserverBenchError(f"POST {path}: {resp.status_code} {resp.text[:300]}")

    def node(self, node: Obj) -> None:
        body = api_object(node)
        status = body.pop("status")
        self._post("/api/v1/nodes", body)
        resp = self._client().patch(
            f"/api/v1/nodes/{node['metadata']['name']}/status", json={"status": status}, headers=MERGE_PATCH
        )
        if resp.status_code != 200:
            raise ApiserverBenchError(f"PATCH node status: {resp.status_code} {resp.text[:300]}")

    def pod(self, pod: Obj) -> None:
        self._post(f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods", api_object(pod))

    def run(self, fn: Callable[[Obj], None], objs: Sequence[Obj]) -> None:
        for f in [self.pool.submit(fn, o) for o in objs]:
            f.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for c in self._clients:
            c.close()


def _key(pod: Obj) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


@contextlib.contextmanager
def _control_plane(release: Release | None = None) -> Iterator[ControlPlane]:
    """A fresh control plane: the default one, or ``release``'s own (its kube-apiserver and
    kube-scheduler, as ``scripts/controlplane.sh --k8s-version`` builds them)."""
    try:
        from kubesched.kube.controlplane import (
            ControlPlane,
            ControlPlaneError,
            ControlPlaneNotBuiltError,
            find_binaries,
        )
    except ImportError as err:
        if err.name != "cryptography":  # set by the harness for its extra; anything else is a bug
            raise
        raise ApiserverBenchError(MISSING_HARNESS) from None
    try:
        cp = ControlPlane(
            find_binaries(f"v{release}") if release is not None else None,
            # The harness's own requests (creating 10^4 pods at once) must not be throttled either.
            extra_apiserver_args=["--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000"],
        )
    except ControlPlaneNotBuiltError as err:
        raise ApiserverBenchError(str(err)) from None
    try:
        cp.start()
    except ControlPlaneError as err:
        raise ApiserverBenchError(f"control plane did not start: {err}") from None
    try:
        yield cp
    finally:
        cp.stop()


def run_apiserver(
    workload: Workload,
    nodes: int,
    init_pods: int,
    pods: int,
    *,
    scheduler: str = "kubesched",
    seed: int = 0,
    progress: Progress | None = None,
    release: Release | None = None,
    feature_gates: Sequence[str] = (),
) -> BenchResult:
    """One run on a fresh control plane (``seed`` is unused: both schedulers draw their own ties);
    with ``release``, that release's control plane and kube-scheduler, and ``kubesched run
    --emulated-version``; ``feature_gates`` to the scheduler's ``--feature-gates``.

    The scheduler schedules the init pods, is stopped while the measured pods are created (on this
    2-core machine the harness and the API server create only a few dozen pods a second, which would
    otherwise be all that is measured), then started again: the measured pods *arrive* at that start,
    so the window includes the scheduler's start-up and its initial list of every pod."""
    if workload.sim_only:
        raise ApiserverBenchError(f"{workload.name} runs on the simulator only (--backend sim)")
    config = scheduler_config()
    with _control_plane(release) as cp:
        creator = _Creator(cp)
        watch = BindWatch(cp).start()
        sched: SchedulerProcess | None = SchedulerProcess(scheduler, cp, config, release, feature_gates)
        try:
            assert sched is not None
            sched.wait_ready()
            ns_objs = [namespace(ns) for ns in workload.namespaces]
            creator.run(lambda o: creator._post("/api/v1/namespaces", o), ns_objs)
            init = list(workload.init_pods(init_pods))
            arrivals = list(workload.measured_pods(pods))
            pcs = priority_classes([*init, *(p for p, _ in arrivals)])
            creator.run(lambda o: creator._post("/apis/scheduling.k8s.io/v1/priorityclasses", o), pcs)
            creator.run(creator.node, list(workload.nodes(nodes)))
            creator.run(creator.pod, init)
            got = watch.wait({_key(p) for p in init})
            if got != len(init):
                raise ApiserverBenchError(f"only {got} of {len(init)} init pods were bound; see {sched.log_path}")
            sched.stop()
            sched = None

            measured = {_key(p) for p, m in arrivals if m}
            creator.run(creator.pod, [p for p, _ in arrivals])  # in arrival order, nothing scheduling them
            t0 = time.perf_counter()
            api_pid = cp.apiserver_pid
            api_cpu0 = cpu_seconds(api_pid) if api_pid is not None else 0.0
            sched = SchedulerProcess(scheduler, cp, config, release, feature_gates)
            bound = watch.wait(measured, (lambda n: progress(n, pods)) if progress is not None else None)
            cpu = cpu_seconds(sched.pid)
            api_cpu = (cpu_seconds(api_pid) - api_cpu0) if api_pid is not None else 0.0
            rss = process_peak_rss_mb(sched.pid)
            after = attempt_buckets(sched.metrics())
            # kube-scheduler observes a scheduled pod's attempt after its binding returns, so
            # the watch can see the last pods bound before the histogram counts them.
            deadline = time.perf_counter() + 5.0
            while max(after.values(), default=0.0) < bound and time.perf_counter() < deadline:
                time.sleep(0.1)
                after = attempt_buckets(sched.metrics())
            if watch.error is not None:
                raise ApiserverBenchError(f"pod watch failed: {watch.error}")
            times = [watch.bound_at[k] for k in measured if k in watch.bound_at]
            end = max(times) if times else time.perf_counter()
        finally:
            watch.stop()
            if sched is not None:
                sched.stop()
            creator.close()
    if progress is not None:
        progress(bound, pods)
    seconds = max(end - t0, 1e-9)
    p50, p99 = window_quantiles({}, after, (0.5, 0.99))
    return BenchResult(
        workload=workload.name,
        backend="apiserver",
        scheduler=scheduler,
        nodes=nodes,
        init_pods=init_pods,
        pods=pods,
        seconds=seconds,
        pods_per_second=bound / seconds,
        attempt_p50_ms=p50 * 1000,
        attempt_p99_ms=p99 * 1000,
        peak_rss_mb=rss,
        bound=bound,
        cpu_seconds=cpu,
        apiserver_cpu_seconds=api_cpu,
        release=str(release or DEFAULT_RELEASE),
    )


__all__ = [
    "MISSING_HARNESS", "ApiserverBenchError", "BindWatch", "SchedulerProcess", "run_apiserver", "scheduler_config",
]
