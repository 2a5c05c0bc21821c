"""``kubesched simulate``: load manifests into a new simulation, run it, collect the pods' fates.

The simulation and its loop (the stop rule) are :mod:`kubesched.sim.simulation`'s, shared with
``explain``, ``trace``, ``bench`` and the test kit; ``DEFAULT_START`` is importable from here too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.config.feature_gates import FeatureGates
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.clock import rfc3339
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
from kubesched.sim.simulation import DEFAULT_START, Progress, new_simulation

__all__ = [
    "DEFAULT_START",
    "POD_STATES",
    "ArrivalError",
    "SimResult",
    "arrival_time",
    "check_durations",
    "collect",
    "pod_state",
    "simulate",
]


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
        """The JSON document of ``simulate -o json``: per pod its state and story (times are
        RFC 3339 on the virtual clock, null when they did not happen), and the summary."""
        return {"pods": [pod_json(p) for p in self.pods], "summary": self.summary()}


def _time(t: float | None) -> str | None:
    return rfc3339(t) if t is not None else None


def pod_json(p: dict[str, Any]) -> dict[str, Any]:
    """One pod of ``simulate -o json`` (docs/running.md pins the shape)."""
    state = pod_state(p)
    return {
        "namespace": p["namespace"],
        "name": p["name"],
        "state": state,
        "node": p["node"],
        "boundAt": _time(p["boundAt"]),
        "message": p["message"],
        "arrivedAt": _time(p.get("createdAt")),
        "attempts": p.get("attempts", 0),
        "firstAttemptAt": _time(p.get("firstAttemptAt")),
        "lastAttemptAt": _time(p.get("lastAttemptAt")),
        "endedAt": _time(p.get("deletedAt")),
        "preemptedBy": p.get("preemptedBy"),
        "waited": [
            {"at": rfc3339(w.at), "kind": w.kind, "plugins": list(w.plugins), "message": w.message,
             "times": w.times}
            for w in p.get("waits", ())
        ],
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
    progress: Progress | None = None,
    feature_gates: FeatureGates | None = None,
) -> SimResult:
    """Schedule ``objects`` from ``start`` until nothing could change or ``until``;
    ``progress(scheduler)`` after each attempt."""
    check_durations(objects.pods)
    sim = new_simulation(
        config, registry, start=start, seed=seed, tie_break=tie_break, feature_gates=feature_gates
    )
    sim.cluster.load(objects, arrival_time(start))
    sim.run(until=until, progress=progress)
    return collect(sim.scheduler, sim.cluster, start, sim.clock.now())


def collect(sched: Scheduler, cluster: SimCluster, start: float, end: float) -> SimResult:
    pending = {qpi.pod_info.key: qpi for qpi, _ in sched.queue.pending_pods()}
    names = {h["uid"]: key for key, h in cluster.history.items() if h.get("uid")}
    preemptors = _preemptors(cluster.events, names)
    pods: list[dict[str, Any]] = []
    for key, h in cluster.history.items():
        entry = dict(h)
        if entry["message"] is None and key in pending and pending[key].last_failure and entry["node"] is None:
            entry["message"] = pending[key].last_failure
        story = sched.stories.get(h.get("uid", "")) if sched.stories is not None else None
        if story is not None:
            entry["attempts"] = story.attempts
            entry["firstAttemptAt"] = story.first_attempt_at
            entry["lastAttemptAt"] = story.last_attempt_at
            entry["waits"] = list(story.waits)
            entry["nodeStatuses"] = dict(story.node_statuses)
            entry["scores"] = list(story.scores)
        if entry.get("deletedReason") == "Preempted":
            entry["preemptedBy"] = preemptors.get(key)
        pods.append(entry)
    return SimResult(start, end, pods, cluster.events, sched, cluster)


def _preemptors(events: list[RecordedEvent], names: dict[str, str]) -> dict[str, str]:
    """Victim ``ns/name`` -> preemptor ``ns/name``, from the ``Preempted`` events (``Preempted by pod
    <uid> on node <node>``) and every pod the simulation ever had (the preemptor may be gone too);
    an unknown UID is kept as it is."""
    out: dict[str, str] = {}
    for e in events:
        if e.reason != "Preempted" or not e.note.startswith("Preempted by pod "):
            continue
        uid = e.note[len("Preempted by pod ") :].split(" on node ")[0]
        out[f"{e.namespace or 'default'}/{e.name}"] = names.get(uid, uid)
    return out
