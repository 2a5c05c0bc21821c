"""``kubesched run``: the scheduler against a real cluster, as kube-scheduler's ``Run``.

Order of start-up: serve ``/healthz``, ``/readyz`` and ``/metrics`` (HTTPS on ``--secure-port``
with delegated authentication and authorization, as kube-scheduler; plain HTTP only on an explicit
``--metrics-bind-address``); start the informers and wait
until each has listed once; then campaign for the Lease (when leader election is on) and, only
while leading, run the scheduling loop on the calling thread: ``queue.pop(block=True)`` then
``schedule_one``. Binding cycles run on the backend's thread pool; informers, the event writer,
leader election, timers and the HTTP server on their own threads.

Shutdown (SIGTERM/SIGINT, or :meth:`SchedulerApp.shutdown`): stop popping, let in-flight binding
cycles finish (``shutdown_grace``), flush events, release the Lease, stop informers and the
server; exit code 0. Losing the Lease stops scheduling at once and exits with code 1 (a restart
makes the replica a candidate again), as kube-scheduler does. "At once" means at the renew
deadline (``LeaderElector.is_leading``), even while a renewal is still pending: the loop checks it
before every pod and the backend just before every ``POST pods/binding``.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from types import FrameType

from kubesched.config.feature_gates import FeatureGates
from kubesched.config.types import KubeSchedulerConfiguration, LeaderElectionConfiguration
from kubesched.framework.clock import RealClock
from kubesched.framework.registry import Registry
from kubesched.kube.client import KubeClient
from kubesched.kube.cluster import KubeCluster, KubeOptions
from kubesched.kube.config import connection_config
from kubesched.kube.events import EventRecorder
from kubesched.kube.klog import info_s, v
from kubesched.kube.leaderelection import LeaderElector, LeaseLock, default_identity
from kubesched.kube.metrics import ClientMetrics
from kubesched.kube.process_metrics import register_process_metrics
from kubesched.kube.secure_server import build_secure_server
from kubesched.kube.server import HealthServer
from kubesched.kube.serving import SecureServingOptions
from kubesched.metrics import SchedulerMetrics
from kubesched.scheduler import TIE_BREAK_RANDOM, Scheduler

log = logging.getLogger("kubesched.kube.run")

#: Plain HTTP is off unless ``--metrics-bind-address`` asks for it (kube-scheduler removed its
#: insecure port, 10251, in v1.23).
DEFAULT_METRICS_ADDRESS = ""
#: How long ``/healthz`` tolerates a lease we lead but failed to renew (kube-scheduler: 20 s).
LEADER_HEALTH_TOLERANCE = 20.0
EXIT_OK = 0
EXIT_LEASE_LOST = 1


@dataclass
class RunOptions:
    """Command-line settings that are not part of the KubeSchedulerConfiguration."""

    kubeconfig: str | None = None
    #: ``--master``: the API server's address, overriding the kubeconfig's server.
    master: str | None = None
    #: ``--feature-gates`` as parsed (``feature_gates.HONOURED`` says which change what kubesched does).
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    #: ``HOST:PORT`` for plain-HTTP /metrics, /healthz, /livez, /readyz; empty or ``0``: none.
    metrics_bind_address: str = DEFAULT_METRICS_ADDRESS
    #: HTTPS with delegated auth (``secure_port=0`` disables it).
    serving: SecureServingOptions = field(default_factory=SecureServingOptions)
    #: ``--legacy-metrics``: kube-scheduler v1.14's two deprecated microsecond histograms too.
    legacy_metrics: bool = False
    #: How long a clean shutdown waits for in-flight binding cycles.
    shutdown_grace: float = 30.0
    #: Lease holder identity (default ``<hostname>_<uuid>``, as kube-scheduler).
    identity: str | None = None
    tie_break: str = TIE_BREAK_RANDOM
    backend: KubeOptions | None = None
    #: How long to wait for the informers' first lists before giving up (None = forever).
    sync_timeout: float | None = None


def apply_leader_election_flags(
    le: LeaderElectionConfiguration,
    *,
    leader_elect: bool | None = None,
    lease_duration: float | None = None,
    renew_deadline: float | None = None,
    retry_period: float | None = None,
    resource_lock: str | None = None,
    resource_name: str | None = None,
    resource_namespace: str | None = None,
) -> LeaderElectionConfiguration:
    """kube-scheduler's ``--leader-elect*`` flags override the config file's leaderElection."""
    out = replace(le)
    if leader_elect is not None:
        out.leader_elect = leader_elect
    if lease_duration is not None:
        out.lease_duration = lease_duration
    if renew_deadline is not None:
        out.renew_deadline = renew_deadline
    if retry_period is not None:
        out.retry_period = retry_period
    if resource_lock is not None:
        out.resource_lock = resource_lock
    if resource_name is not None:
        out.resource_name = resource_name
    if resource_namespace is not None:
        out.resource_namespace = resource_namespace
    return out


class SchedulerApp:
    """One ``kubesched run`` process (or, in tests, one replica in a thread)."""

    def __init__(
        self, config: KubeSchedulerConfiguration, registry: Registry, options: RunOptions | None = None
    ) -> None:
        self.config = config
        self.options = options or RunOptions()
        self.registry = registry
        self.clock = RealClock()
        self.metrics = SchedulerMetrics(legacy=self.options.legacy_metrics, release=config.release)
        self.client_metrics = ClientMetrics(self.metrics.registry)
        register_process_metrics(self.metrics.registry)
        cc = config.client_connection
        conn = connection_config(self.options.kubeconfig or cc.kubeconfig or None, master=self.options.master)
        self.client = KubeClient(conn, qps=cc.qps, burst=cc.burst, metrics=self.client_metrics)
        # Events get their own client and rate limit, as kube-scheduler's separate eventClient:
        # a burst of events never delays a binding.
        self.event_client = KubeClient(conn, qps=cc.qps, burst=cc.burst, metrics=self.client_metrics)
        # DRADeviceTaintRules (default on in v1.37): watch the rules DynamicResources applies.
        backend = replace(
            self.options.backend or KubeOptions(),
            device_taint_rules=self.options.feature_gates.enabled("DRADeviceTaintRules"),
        )
        self.cluster = KubeCluster(
            self.client,
            self.clock,
            options=backend,
            recorder=EventRecorder(self.event_client, self.clock),
        )
        self.scheduler = Scheduler(
            config,
            registry,
            self.cluster,
            self.clock,
            tie_break=self.options.tie_break,
            metrics=self.metrics,
            feature_gates=self.options.feature_gates,
        )
        le = config.leader_election
        self.elector: LeaderElector | None = None
        self.lease_client: KubeClient | None = None
        if le.leader_elect:
            if le.resource_lock not in ("leases", ""):
                log.warning("resourceLock %r is not supported; using leases", le.resource_lock)
            identity = self.options.identity or default_identity()
            # Its own client, as kube-scheduler's "leader-election" clientset: renewals never
            # wait behind bindings for the shared rate limiter.
            self.lease_client = KubeClient(conn, qps=cc.qps, burst=cc.burst, metrics=self.client_metrics)
            self.elector = LeaderElector(
                LeaseLock(self.lease_client, le.resource_namespace, le.resource_name, identity),
                self.clock,
                lease_duration=le.lease_duration,
                renew_deadline=le.renew_deadline,
                retry_period=le.retry_period,
                on_started_leading=self._started_leading,
                on_stopped_leading=self._stopped_leading,
            )
            self.client_metrics.leader.labels(le.resource_name).set(0)
            self.cluster.may_bind = self._may_bind
        self.servers: list[HealthServer] = []
        if self.options.serving.secure_port:
            self.servers.append(build_secure_server(self.options.serving, self.metrics.registry))
        addr = self.options.metrics_bind_address
        if addr and addr != "0":
            self.servers.append(HealthServer(addr, self.metrics.registry))
        for server in self.servers:
            server.bind()
            server.add_readiness("sched-handler-sync", self._handlers_synced)
            server.add_readiness("shutdown", lambda: "process is shutting down" if self._stop.is_set() else None)
            if self.elector is not None:
                server.add_liveness("leaderElection", self._leader_health)
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._lost_lock = threading.Lock()
        self.exit_code = EXIT_OK
        #: Scheduling attempts made by this replica (pods popped and scheduled or failed).
        self.attempts = 0

    # -- callbacks -------------------------------------------------------------------------------
    def _leader_health(self) -> str | None:
        return self.elector.check(LEADER_HEALTH_TOLERANCE) if self.elector is not None else None

    def _handlers_synced(self) -> str | None:
        return None if self.cluster.synced() else "informers have not listed every resource yet"

    def _lease_name(self) -> str:
        le = self.config.leader_election
        return f"{le.resource_namespace}/{le.resource_name}"

    def _started_leading(self) -> None:
        self.client_metrics.leader.labels(self.config.leader_election.resource_name).set(1)
        info_s(log, v(0), "Started leading", lease=self._lease_name())

    def _stopped_leading(self) -> None:
        self.client_metrics.leader.labels(self.config.leader_election.resource_name).set(0)
        if self.elector is not None and self.elector.lost:
            self._leadership_lost()

    def _leadership_lost(self) -> None:
        """Stop scheduling for good (exit 1), unless a shutdown was already asked for."""
        with self._lost_lock:
            if self._stop.is_set():
                return
            log.error("leaderelection lost; stopping scheduling")
            self._lost.set()
            self.cluster.refuse_binding_cycles()
            self.exit_code = EXIT_LEASE_LOST
            self._stop.set()
        self.scheduler.queue.close()  # wake the scheduling loop at once

    def _may_bind(self) -> bool:
        """Bindings stop the moment the renew deadline passes (or the lease is known lost)."""
        return self.leading

    def shutdown(self) -> None:
        """Ask the app to stop (thread-safe; what SIGTERM does)."""
        if not self._stop.is_set():
            log.info("shutdown requested")
        self._stop.set()

    @property
    def leading(self) -> bool:
        return self.elector is None or (self.elector.is_leading() and not self._lost.is_set())

    # -- main ------------------------------------------------------------------------------------
    def _install_signals(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("received %s", signal.Signals(signum).name)
            self.shutdown()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def run(self, install_signal_handlers: bool = True) -> int:
        """Run until shutdown or a lost lease; the process exit code."""
        if install_signal_handlers:
            self._install_signals()
        info_s(
            log,
            v(0),
            "Starting kubesched",
            server=self.client.server,
            credentials=self.client.conn.source,
            profiles=",".join(self.scheduler.frameworks),
            leaderElect=self.elector is not None,
        )
        self.scheduler.log_plugins()
        try:
            for server in self.servers:
                server.start()
            self.cluster.start()
            if not self.cluster.wait_for_sync(self.options.sync_timeout, self._stop):
                if not self._stop.is_set():
                    log.error("informers did not sync within %ss", self.options.sync_timeout)
                    self.exit_code = EXIT_LEASE_LOST
                return self.exit_code
            info_s(log, v(0), "Informers synced", resources=len(self.cluster.informers))
            if self.elector is not None:
                self.elector.start()
                while not self._stop.is_set() and not self.elector.leading.wait(0.2):
                    pass
            self._loop()
        finally:
            self._teardown()
        return self.exit_code

    def _loop(self) -> None:
        queue = self.scheduler.queue
        last_gauge = 0.0
        while not self._stop.is_set() and self.leading:
            qpi = queue.pop(block=True, timeout=1.0)
            if self._stop.is_set() or not self.leading:
                break
            if qpi is not None:
                self.attempts += 1
                try:
                    self.scheduler.schedule_one(qpi)
                except Exception:  # never let one pod stop the scheduler
                    log.exception("scheduling %s failed unexpectedly", qpi.pod_info.key)
                    queue.done(qpi.pod_info.uid)
            now = time.monotonic()
            if now - last_gauge >= 1.0:
                last_gauge = now
                self.metrics.set_pending(queue.counts())
        if self.elector is not None and not self._stop.is_set() and not self.leading:
            # The renew deadline passed, or another holder was seen, before the elector's
            # callback ran: the lease is lost all the same.
            self._leadership_lost()

    def _teardown(self) -> None:
        lost = self._lost.is_set()
        # A replica that lost the lease must not finish decisions the new leader may take again.
        self.cluster.stop(timeout=0.0 if lost else self.options.shutdown_grace)
        if self.elector is not None:
            self.elector.stop()  # releases the lease unless it was lost
        for server in self.servers:
            server.stop()
        self.scheduler.queue.close()
        self.clock.stop()
        self.client.close()
        self.event_client.close()
        if self.lease_client is not None:
            self.lease_client.close()
        info_s(log, v(0), "kubesched stopped", exitCode=self.exit_code, attempts=self.attempts)
