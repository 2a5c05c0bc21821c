"""Drive a simulation: load manifests into a SimCluster, run the scheduler on the virtual clock.

The loop alternates between firing what is due now (arrivals, bindings, completions, timers) and
scheduling every pod the queue can pop, then jumps the clock to the next pending timer. It stops
when nothing left could change (only housekeeping timers remain, and no backing-off pod could
fare differently on a retry) or at ``until``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import VirtualClock, rfc3339
from kubesched.framework.registry import Registry
from kubesched.scheduler import TIE_BREAK_RANDOM, Scheduler
from kubesched.sim.cluster import RecordedEvent, SimCluster
from kubesched.sim.manifests import (
    ARRIVAL_ANNOTATION,
    DURATION_ANNOTATION,
    ClusterObjects,
    parse_duration,
    parse_time_or_offset,
)

#: The default start of the virtual clock: 2026-01-01T00:00:00Z (documented in the CLI help).
DEFAULT_START = 1767225600.0


@dataclass
class SimResult:
    start: float
    end: float
    pods: list[dict[str, Any]]
    events: list[RecordedEvent]
    scheduler: Scheduler = field(repr=False)
    cluster: SimCluster = field(repr=False)

    def summary(self) -> dict[str, int]:
        """Counts by :func:`pod_state`; ``bound`` is the pods still bound at the end, so the five
        states add up to ``pods``."""
        counts = dict.fromkeys(POD_STATES, 0)
        for p in self.pods:
            counts[pod_state(p)] += 1
        return {"pods": len(self.pods), **counts}

    def to_json(self) -> dict[str, Any]:
        return {
            "pods": [
                {
                    "namespace": p["namespace"],
                    "name": p["name"],
                    "state": pod_state(p),
                    "node": p["node"],
                    "boundAt": rfc3339(p["boundAt"]) if p["boundAt"] is not None else None,
                    "message": p["message"],
                }
                for p in self.pods
            ],
            "summary": self.summary(),
        }


#: A pod's state at the end of a simulation, in the order the summary lists them.
POD_STATES = ("bound", "pending", "preempted", "completed", "deleted")


def pod_state(p: dict[str, Any]) -> str:
    """``bound`` (on its node at the end), ``pending`` (never bound), ``preempted`` (deleted as a
    victim), ``completed`` (ran its ``sim.kubesched.io/duration``), ``deleted`` (any other
    deletion). ``node`` stays the node it was last bound to, so a victim still names it."""
    reason = p.get("deletedReason")
    if reason == "Preempted":
        return "preempted"
    if reason == "Completed":
        return "completed"
    if reason:
        return "deleted"
    return "bound" if p["node"] is not None else "pending"


class ArrivalError(ValueError):
    """A simulator annotation (arrival or duration) that cannot be used, naming pod and field."""


def check_durations(pods: list[dict[str, Any]]) -> None:
    """Refuse an unusable ``sim.kubesched.io/duration`` before the run starts, as arrivals are,
    rather than finding it when the pod is bound."""
    for pod in pods:
        ann = (pod.get("metadata") or {}).get("annotations") or {}
        if DURATION_ANNOTATION not in ann:
            continue
        try:
            parse_duration(str(ann[DURATION_ANNOTATION]))
        except ValueError as err:
            raise _annotation_error(pod, DURATION_ANNOTATION, err) from None


def _annotation_error(pod: dict[str, Any], annotation: str, err: ValueError) -> ArrivalError:
    md = pod.get("metadata") or {}
    return ArrivalError(
        f"pod {md.get('namespace', 'default')}/{md.get('name')}: metadata.annotations[{annotation}]: {err}"
    )


def arrival_time(start: float) -> Any:
    def arrival(pod: dict[str, Any]) -> float | None:
        ann = (pod.get("metadata") or {}).get("annotations") or {}
        value = ann.get(ARRIVAL_ANNOTATION)
        if value is None:
            return None
        try:
            return parse_time_or_offset(str(value), start)
        except ValueError as err:
            raise _annotation_error(pod, ARRIVAL_ANNOTATION, err) from None

    return arrival


def simulate(
    objects: ClusterObjects,
    config: KubeSchedulerConfiguration,
    registry: Registry,
    *,
    seed: int = 0,
    start: float = DEFAULT_START,
    until: float | None = None,
    tie_break: str = TIE_BREAK_RANDOM,
    progress: Any = None,
) -> SimResult:
    check_durations(objects.pods)
    clock = VirtualClock(start)
    cluster = SimCluster(clock)
    sched = Scheduler(config, registry, cluster, clock, seed=seed, tie_break=tie_break)
    cluster.load(objects, arrival_time(start))
    run(sched, cluster, clock, until=until, progress=progress)
    return collect(sched, cluster, start, clock.now())


def run(
    sched: Scheduler, cluster: SimCluster, clock: VirtualClock, *, until: float | None = None, progress: Any = None
) -> None:
    """Run until nothing left could change the simulation, or until ``until``.

    A virtual clock only moves when every pod that can be popped now has been tried, so a pod
    that is retried at once forever (a backoffQ pod popped early, a failure that requeues itself)
    would hold time still: the queue does not pop early a pod whose retry starts from the state
    of its last attempt, and the loop stops when no backing-off pod's retry may help
    (:meth:`SchedulingQueue.retry_may_help`). Pods left are reported pending with their last
    failure."""
    sched.queue.skip_futile_early_pops = True
    while True:
        clock.run_due()
        while sched.schedule_one():
            clock.run_due()
            if progress is not None:
                progress(sched)
        clock.run_due()
        if sched.queue.has_active():
            continue
        nxt = clock.next_time()
        if nxt is None or not (clock.has_live_timers() or sched.queue.retry_may_help()):
            break
        if until is not None and nxt > until:
            clock.advance_to(until)
            break
        clock.advance_to(nxt)


def collect(sched: Scheduler, cluster: SimCluster, start: float, end: float) -> SimResult:
    pending = {qpi.pod_info.key: qpi for qpi, _ in sched.queue.pending_pods()}
    pods: list[dict[str, Any]] = []
    for key, h in cluster.history.items():
        entry = dict(h)
        if entry["message"] is None and key in pending and pending[key].last_failure and entry["node"] is None:
            entry["message"] = pending[key].last_failure
        pods.append(entry)
    return SimResult(start, end, pods, cluster.events, sched, cluster)
