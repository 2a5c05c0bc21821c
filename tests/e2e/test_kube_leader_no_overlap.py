"""Two ``kubesched run`` replicas never lead at once, even when the leader's renewals hang.

The two harnesses of issue 13, with kube-scheduler's timings (15 s lease, 10 s renew deadline,
2 s retry period) and a steady stream of pods:

* **slowed renewals**: a validating admission webhook (an HTTPS server in this test, its CA in
  the ValidatingWebhookConfiguration's ``caBundle``, ``failurePolicy: Ignore``,
  ``timeoutSeconds: 30``) holds every Lease UPDATE whose ``holderIdentity`` is the current
  leader for 25 s;
* **frozen connection**: the leader reaches the API server through a TCP proxy that, on command,
  stops forwarding in both directions without closing anything.

Ground truth is the API server's audit log (this module runs its own control plane with an audit
policy for bindings and Lease writes; each replica has its own client certificate, so the log
names who did what). Asserted, as orderings rather than tight timings:

1. every binding the old leader sent reached the API server before its renew deadline
   (its last successful Lease write + retry period + renew deadline, plus the request's transit)
   and before its own ``stopped leading`` line;
2. the standby's first Lease write as holder comes at least a lease duration after the old
   leader's last successful renewal, and after the old leader stopped leading; the standby binds
   only after that;
3. every pod is bound exactly once (one 201 ``pods/binding`` each, one node ever seen);
4. with slowed renewals, the old leader exits 1 with the ``Scheduled`` event of every pod it bound
   already written (events are flushed on exit).
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_kube_support import (
    Api,
    PodWatch,
    SubprocessScheduler,
    api,
    eventually,
    metric_value,
    ns,
    scheduler_config,
    subprocesses,
    unique,
)

from kubesched.kube.controlplane import (
    _CA,
    NOT_BUILT_MESSAGE,
    ControlPlane,
    ControlPlaneNotBuiltError,
    _cert_pem,
    _key_pem,
    find_binaries,
)

pytestmark = pytest.mark.controlplane
__all__ = ["api", "ns"]  # fixtures

LEASE = ("15s", "10s", "2s")  # kube-scheduler's defaults
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0
#: A binding checked just before the deadline still has to be sent and read by the server (a
#: busy 2-core machine can hold a thread that long); the standby may take over 3 s later at best.
TRANSIT = 1.0
WEBHOOK_DELAY = 25.0

AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update"]
  resources:
  - group: ""
    resources: ["pods/binding"]
  - group: coordination.k8s.io
    resources: ["leases"]
- level: None
"""


@pytest.fixture(scope="module")
def audit_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audit") / "audit.log"


@pytest.fixture(scope="module", name="control_plane")
def audited_control_plane(audit_log: Path) -> Iterator[ControlPlane]:
    """A control plane of our own, writing an audit log of bindings and Lease writes (missing
    binaries skip or fail as for the shared one)."""
    try:
        binaries = find_binaries()
    except ControlPlaneNotBuiltError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc), pytrace=False)
        pytest.skip(NOT_BUILT_MESSAGE)
    policy = audit_log.with_name("policy.yaml")
    policy.write_text(AUDIT_POLICY)
    args = [f"--audit-policy-file={policy}", f"--audit-log-path={audit_log}", "--audit-log-mode=blocking"]
    with ControlPlane(binaries, extra_apiserver_args=args) as cp:
        yield cp


def _ts(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _audit(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _replica(cp: ControlPlane, user: str, tmp_path: Path, server: str | None = None) -> Path:
    """A kubeconfig with its own client certificate (the audit log's ``user.username``)."""
    kc = cp.kubeconfig_for_user(user, groups=["system:masters"], path=tmp_path / f"{user}.kubeconfig")
    if server is not None:
        kc.write_text(kc.read_text().replace(cp.url, server))
    return kc


def _leading(s: SubprocessScheduler, lease: str) -> bool:
    assert s.alive(), f"replica exited:\n{s.log()[-3000:]}"
    try:
        return metric_value(s.metrics(), "leader_election_master_status", name=lease) == 1
    except Exception:  # not serving yet
        return False


class PodStream:
    """Creates a pod every ``interval`` until stopped (the load a takeover happens under)."""

    def __init__(self, api: Api, ns: str, sched: str, interval: float = 0.3) -> None:
        self.api, self.ns, self.sched, self.interval = api, ns, sched, interval
        self.names: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            name = f"s-{len(self.names):04d}"
            with contextlib.suppress(Exception):
                self.api.pod(self.ns, name, scheduler=self.sched, cpu="10m")
                self.names.append(name)
            self._stop.wait(self.interval)

    def __enter__(self) -> PodStream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


class DelayLeaderWebhook:
    """A validating webhook that holds the Lease UPDATEs of one holder for ``delay`` seconds."""

    def __init__(self, workdir: Path, delay: float) -> None:
        self.delay = delay
        self.holder = ""
        self.delayed = 0
        self.seen = 0
        self._release = threading.Event()
        ca = _CA.create("delay-webhook-ca")
        key, cert = ca.issue("delay-webhook", server_ips=["127.0.0.1"])
        (workdir / "wh.crt").write_bytes(_cert_pem(cert))
        (workdir / "wh.key").write_bytes(_key_pem(key))
        self.ca_pem = _cert_pem(ca.cert)
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                req = review.get("request") or {}
                holder = ((req.get("object") or {}).get("spec") or {}).get("holderIdentity", "")
                hook.seen += 1
                if hook.holder and holder == hook.holder and req.get("operation") == "UPDATE":
                    hook.delayed += 1
                    hook._release.wait(hook.delay)
                out = {
                    "apiVersion": "admission.k8s.io/v1",
                    "kind": "AdmissionReview",
                    "response": {"uid": req.get("uid", ""), "allowed": True},
                }
                data = json.dumps(out).encode()
                with contextlib.suppress(OSError):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(workdir / "wh.crt"), str(workdir / "wh.key"))
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def configuration(self, name: str, ns: str) -> dict[str, Any]:
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": "delay-leader.kubesched.test",
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{self.port}/validate",
                        "caBundle": base64.b64encode(self.ca_pem).decode(),
                    },
                    "rules": [
                        {
                            "apiGroups": ["coordination.k8s.io"],
                            "apiVersions": ["v1"],
                            "operations": ["UPDATE"],
                            "resources": ["leases"],
                            "scope": "Namespaced",
                        }
                    ],
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                    "failurePolicy": "Ignore",
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "timeoutSeconds": 30,
                }
            ],
        }

    def __enter__(self) -> DelayLeaderWebhook:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


class FreezableProxy:
    """A TCP proxy to the API server that, once frozen, forwards nothing and closes nothing."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.frozen = threading.Event()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self._sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                if self.frozen.is_set():  # hold everything, new connections included
                    self._closed.wait()
                    return
                data = src.recv(65536)
                if not data or self._closed.is_set():
                    return
                while self.frozen.is_set() and not self._closed.is_set():
                    self._closed.wait(0.5)  # received while freezing: never delivered
                if self._closed.is_set():
                    return
                dst.sendall(data)
        except OSError:
            return

    def __enter__(self) -> FreezableProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        self.listener.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.close()


def _first_lease_write(audit_log: Path, lease: str, user: str) -> float:
    """When ``user`` first wrote the Lease successfully (the takeover, for the standby)."""
    return min(
        _ts(r["requestReceivedTimestamp"])
        for r in _audit(audit_log)
        if r["user"]["username"] == user
        and (r.get("objectRef") or {}).get("name") == lease
        and (r.get("responseStatus") or {}).get("code") in (200, 201)
    )


def _all_bound(api: Api, ns: str, names: list[str]) -> bool:
    bound = {p["metadata"]["name"] for p in api.pods(ns) if (p.get("spec") or {}).get("nodeName")}
    return set(names) <= bound


@contextlib.contextmanager
def _reaped(*scheds: SubprocessScheduler) -> Iterator[None]:
    """Kill replicas started later in the test (``subprocesses`` starts its own at once)."""
    try:
        yield
    finally:
        for s in scheds:
            s.kill()


def _stopped_leading_wall_time(s: SubprocessScheduler) -> float:
    m = re.search(r"stopped leading: .*wallTime=([0-9.]+)", s.log())
    assert m, f"no 'stopped leading' line:\n{s.log()[-3000:]}"
    return float(m.group(1))


def _assert_no_overlap(audit_log: Path, ns: str, lease: str, names: list[str], watch: PodWatch) -> None:
    """The orderings of the module docstring, from the audit log."""
    records = _audit(audit_log)
    bindings = [
        r
        for r in records
        if (r.get("objectRef") or {}).get("subresource") == "binding"
        and (r.get("objectRef") or {}).get("namespace") == ns
    ]
    lease_writes = [
        r
        for r in records
        if (r.get("objectRef") or {}).get("resource") == "leases"
        and (r.get("objectRef") or {}).get("name") == lease
        and (r.get("responseStatus") or {}).get("code") in (200, 201)
    ]

    def by(user: str, rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rs if r["user"]["username"] == user]

    ok_bindings = [r for r in bindings if (r.get("responseStatus") or {}).get("code") == 201]
    per_pod: dict[str, int] = {}
    for r in ok_bindings:
        per_pod[r["objectRef"]["name"]] = per_pod.get(r["objectRef"]["name"], 0) + 1
    assert sorted(per_pod) == sorted(names), "every pod bound"
    assert all(n == 1 for n in per_pod.values()), {p: n for p, n in per_pod.items() if n != 1}
    watch.wait_seen(names)
    assert all(len(watch.nodes.get(n, ())) == 1 for n in names), "a pod was seen on two nodes"

    a_renewals = by("replica-a", lease_writes)
    b_writes = by("replica-b", lease_writes)
    assert a_renewals and b_writes, "both replicas wrote the Lease"
    a_last_renewal = max(_ts(r["requestReceivedTimestamp"]) for r in a_renewals)
    a_last_commit = max(_ts(r["stageTimestamp"]) for r in a_renewals)
    a_deadline = a_last_renewal + RETRY_PERIOD + RENEW_DEADLINE
    b_takeover = min(_ts(r["requestReceivedTimestamp"]) for r in b_writes)
    a_sent = [_ts(r["requestReceivedTimestamp"]) for r in by("replica-a", bindings)]
    b_sent = [_ts(r["requestReceivedTimestamp"]) for r in by("replica-b", bindings)]
    assert a_sent and b_sent, "both replicas bound pods"
    # 1. The old leader bound nothing after its renew deadline.
    assert max(a_sent) < a_deadline + TRANSIT, (max(a_sent), a_deadline)
    # 2. The standby took over only after the lease duration, after the old leader stopped.
    assert b_takeover >= a_last_commit + LEASE_DURATION - TRANSIT, (b_takeover, a_last_commit)
    assert b_takeover > a_deadline
    assert min(b_sent) > b_takeover
    assert max(a_sent) < min(b_sent)


def test_slowed_renewals_never_overlap_and_events_are_flushed(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path, audit_log: Path
) -> None:
    sched, lease = unique("sched"), unique("lease")
    config = scheduler_config(sched, leader_elect=True, lease_namespace=ns, lease_name=lease, lease=LEASE)
    api.node("n-1", cpu="64", pods="1000")  # the stream may outgrow the default 110
    a = SubprocessScheduler(config, _replica(control_plane, "replica-a", tmp_path), tmp_path)
    b = SubprocessScheduler(config, _replica(control_plane, "replica-b", tmp_path), tmp_path)
    with DelayLeaderWebhook(tmp_path, WEBHOOK_DELAY) as hook, PodWatch(control_plane, ns) as watch:
        name = unique("delay-leader")
        cfg_path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
        api.ok(api.c.post(cfg_path, json=hook.configuration(name, ns)))
        try:
            with subprocesses(a), _reaped(b), PodStream(api, ns, sched) as stream:
                eventually(lambda: _leading(a, lease), "replica A to lead", timeout=90)
                b.start()
                eventually(b.ready, "replica B ready while standing by", timeout=90)
                eventually(lambda: hook.seen > 0, "the webhook to see the Lease renewals", timeout=60)
                eventually(
                    lambda: len(api.pods(ns)) > 10 and all(api.node_of(ns, n) for n in stream.names[:10]),
                    "A binds the first pods",
                    timeout=60,
                )
                held = api.lease(ns, lease)
                assert held is not None
                hook.holder = held["spec"]["holderIdentity"]  # from now on A's renewals hang 25 s
                assert a.proc is not None
                assert a.proc.wait(90) == 1  # lost the lease: exits 1, events flushed
                assert "stopped leading" in a.log() and "leaderelection lost" in a.log()
                a_bound = {
                    r["objectRef"]["name"]
                    for r in _audit(audit_log)
                    if r["user"]["username"] == "replica-a"
                    and (r.get("objectRef") or {}).get("namespace") == ns
                    and (r.get("objectRef") or {}).get("subresource") == "binding"
                    and (r.get("responseStatus") or {}).get("code") == 201
                }
                assert a_bound
                # 4. Every pod A bound has its Scheduled event, written before A exited.
                scheduled = {e["regarding"]["name"] for e in api.events(ns, reason="Scheduled")}
                assert a_bound <= scheduled, sorted(a_bound - scheduled)
                eventually(lambda: _leading(b, lease), "replica B to take over", timeout=90)
                time.sleep(3)  # B binds a few pods of the stream under load
                stream.stop()
                names = list(stream.names)
                eventually(lambda: _all_bound(api, ns, names), "every pod bound", timeout=120)
                assert hook.delayed > 0
                _assert_no_overlap(audit_log, ns, lease, names, watch)
                assert _stopped_leading_wall_time(a) < _first_lease_write(audit_log, lease, "replica-b")
                eventually(
                    lambda: sorted(e["regarding"]["name"] for e in api.events(ns, reason="Scheduled")) == sorted(names),
                    "exactly one Scheduled event per pod",
                )
        finally:
            api.c.delete(f"{cfg_path}/{name}")


def test_frozen_connection_never_overlaps(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path, audit_log: Path
) -> None:
    sched, lease = unique("sched"), unique("lease")
    config = scheduler_config(sched, leader_elect=True, lease_namespace=ns, lease_name=lease, lease=LEASE)
    api.node("n-1", cpu="64", pods="1000")  # the stream may outgrow the default 110
    with FreezableProxy(control_plane.port) as proxy, PodWatch(control_plane, ns) as watch:
        a_kc = _replica(control_plane, "replica-a", tmp_path, server=f"https://127.0.0.1:{proxy.port}")
        a = SubprocessScheduler(config, a_kc, tmp_path)
        b = SubprocessScheduler(config, _replica(control_plane, "replica-b", tmp_path), tmp_path)
        with subprocesses(a), _reaped(b), PodStream(api, ns, sched) as stream:
            eventually(lambda: _leading(a, lease), "replica A to lead", timeout=90)
            b.start()
            eventually(b.ready, "replica B ready while standing by", timeout=90)
            eventually(
                lambda: all(api.node_of(ns, n) for n in stream.names[:10]) and len(stream.names) > 10,
                "A binds the first pods",
                timeout=60,
            )
            proxy.frozen.set()  # A's connections hang: nothing in, nothing out, nothing closed
            assert a.proc is not None
            assert a.proc.wait(90) == 1
            assert "stopped leading" in a.log()
            eventually(lambda: _leading(b, lease), "replica B to take over", timeout=90)
            time.sleep(3)
            stream.stop()
            names = list(stream.names)
            eventually(lambda: _all_bound(api, ns, names), "every pod bound", timeout=120)
            _assert_no_overlap(audit_log, ns, lease, names, watch)
            b_first = _first_lease_write(audit_log, lease, "replica-b")
            assert _stopped_leading_wall_time(a) < b_first
