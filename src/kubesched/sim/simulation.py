"""One factory builds a simulation, one loop runs it (issue 12).

:func:`new_simulation` wires a :class:`VirtualClock`, a :class:`SimCluster` (or a subclass, given
as ``cluster_factory``) and a :class:`Scheduler`, which registers its event handlers with the
cluster in its constructor. :meth:`Simulation.run` holds the simulator's stop rule, so
``kubesched simulate``, ``explain``, ``trace``, ``bench`` and the test kit cannot drift apart: a
copy of the loop once lacked ``skip_futile_early_pops`` and would have spun at one instant on a
pod retried at once forever.

The loop alternates between firing what is due now (arrivals, bindings, completions, timers) and
scheduling every pod the queue can pop, then jumps the clock to the next pending timer. It stops
when nothing left could change (only housekeeping timers remain, and no backing-off pod could
fare differently on a retry), at ``until``, or when ``done()`` says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from kubesched.config.feature_gates import FeatureGates
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import VirtualClock
from kubesched.framework.registry import Registry
from kubesched.scheduler import TIE_BREAK_RANDOM, Scheduler
from kubesched.scheduler.story import PodStories
from kubesched.sim import claim_controller, pv_controller
from kubesched.sim.cluster import SimCluster

#: The default start of the virtual clock: 2026-01-01T00:00:00Z (documented in the CLI help).
DEFAULT_START = 1767225600.0

ClusterT = TypeVar("ClusterT", bound=SimCluster)

#: Called after a scheduling attempt (and what it made due) with the scheduler.
Progress = Callable[[Scheduler], None]


@dataclass
class Simulation(Generic[ClusterT]):
    """The clock, the cluster and the scheduler of one simulated world."""

    clock: VirtualClock
    cluster: ClusterT
    scheduler: Scheduler

    def run(
        self,
        *,
        until: float | None = None,
        done: Callable[[], bool] | None = None,
        attempts: list[float] | None = None,
        progress: Progress | None = None,
        progress_every: int = 1,
    ) -> None:
        """Run until nothing left could change the simulation, until ``until``, or ``done()``.

        A virtual clock only moves when every pod that can be popped now has been tried, so a pod
        that is retried at once forever (a backoffQ pod popped early, a failure that requeues
        itself) would hold time still: the queue does not pop early a pod whose retry starts from
        the state of its last attempt, and the loop stops when no backing-off pod's retry may help
        (:meth:`SchedulingQueue.retry_may_help`). Pods left are pending with their last failure.

        Hooks, for ``kubesched bench``: ``done`` is checked before each round and after each
        attempt; ``attempts`` gets each attempt's wall time, with what it made due (its binding);
        ``progress`` is called after every ``progress_every`` attempts. Without hooks the inner
        loop does nothing but schedule and fire timers.
        """
        sched, clock, queue = self.scheduler, self.clock, self.scheduler.queue
        queue.skip_futile_early_pops = True
        hooked = done is not None or attempts is not None or progress is not None
        perf = time.perf_counter
        n = 0
        while done is None or not done():
            clock.run_due()
            if not hooked:
                while sched.schedule_one():
                    clock.run_due()
            else:
                while True:
                    t = perf()
                    if not sched.schedule_one():
                        break
                    clock.run_due()
                    if attempts is not None:
                        attempts.append(perf() - t)
                    n += 1
                    if progress is not None and n % progress_every == 0:
                        progress(sched)
                    if done is not None and done():
                        return
            clock.run_due()
            if queue.has_active():
                continue
            nxt = clock.next_time()
            if nxt is None or not (clock.has_live_timers() or queue.retry_may_help()):
                return
            if until is not None and nxt > until:
                clock.advance_to(until)
                return
            clock.advance_to(nxt)


@overload
def new_simulation(
    config: KubeSchedulerConfiguration,
    registry: Registry,
    *,
    start: float = ...,
    seed: int | None = ...,
    tie_break: str = ...,
    clock: VirtualClock | None = ...,
    feature_gates: FeatureGates | None = ...,
    stories: bool = ...,
) -> Simulation[SimCluster]: ...


@overload
def new_simulation(
    config: KubeSchedulerConfiguration,
    registry: Registry,
    *,
    start: float = ...,
    seed: int | None = ...,
    tie_break: str = ...,
    clock: VirtualClock | None = ...,
    cluster_factory: Callable[[VirtualClock], ClusterT],
    feature_gates: FeatureGates | None = ...,
    stories: bool = ...,
) -> Simulation[ClusterT]: ...


def new_simulation(
    config: KubeSchedulerConfiguration,
    registry: Registry,
    *,
    start: float = DEFAULT_START,
    seed: int | None = None,
    tie_break: str = TIE_BREAK_RANDOM,
    clock: VirtualClock | None = None,
    cluster_factory: Callable[[VirtualClock], Any] = SimCluster,
    feature_gates: FeatureGates | None = None,
    stories: bool = True,
) -> Simulation[Any]:
    """A virtual clock at ``start`` (or ``clock``), an empty cluster on it (with a simulated PV
    controller, :mod:`kubesched.sim.pv_controller`) and the scheduler.

    ``seed`` seeds the scheduler's tie-breaks; None (the Scheduler's default) draws a fresh one.
    ``feature_gates``: ``--feature-gates`` (every gate at its release's default when None).
    ``stories``: keep each pod's story (``simulate``'s report); off for benchmarks.

    The only place a SimCluster is built (tests/sim/test_simulation.py checks it): a caller that
    needs more from the cluster passes a subclass as ``cluster_factory``. Raises FrameworkError
    when a profile cannot be built. Load objects into ``cluster`` before :meth:`Simulation.run`.
    """
    clock = clock if clock is not None else VirtualClock(start)
    cluster = cluster_factory(clock)
    if isinstance(cluster, SimCluster):
        pv_controller.install(cluster)  # binds and provisions claims, as kube-controller-manager
        claim_controller.install(cluster)  # DRA claims from templates, as kube-controller-manager
    sched = Scheduler(
        config, registry, cluster, clock, seed=seed, tie_break=tie_break, feature_gates=feature_gates
    )
    if stories:  # every pod's story (attempts, why it waited) for the report; benchmarks go without
        kept = sched.stories = PodStories()
        sched.queue.on_gated = lambda uid, plugin, message: kept.waited(uid, clock.now(), "gated", (plugin,), message)
    return Simulation(clock, cluster, sched)
