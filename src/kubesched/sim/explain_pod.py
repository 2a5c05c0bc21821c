"""``kubesched explain PATH... --pod NAMESPACE/NAME [--at TIME]``: explain a pod of the scenario
itself, in the cycle where the scheduler last tried it (by TIME when given).

The simulation is deterministic for a seed, so it runs twice: once to find how many attempts the
pod had by then, and again up to that attempt, where the explanation is taken from the scheduler's
own state just before the cycle runs (its snapshot, queue and nominated pods). The random
generator is put back afterwards, so the cycle that follows, whose outcome (bound, or the
FailedScheduling message with preemption's verdict, and the victims) is reported too, is the one
the plain simulation has.

``--pod FILE --at TIME`` explains a pod that is not in the scenario against the cluster the
scenario has at TIME (its pods scheduled, bound or pending, by then).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.config.feature_gates import FeatureGates
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.explain import explain
from kubesched.framework.clock import rfc3339
from kubesched.framework.registry import Registry
from kubesched.framework.types import QueuedPodInfo
from kubesched.sim.manifests import ClusterObjects
from kubesched.sim.runner import arrival_time, check_durations
from kubesched.sim.simulation import Simulation, new_simulation

__all__ = ["ScenarioPodError", "explain_pod_at", "explain_scenario_pod"]


class ScenarioPodError(ValueError):
    """A pod that is not in the scenario, or was never attempted by the time asked for."""


@dataclass
class _Run:
    start: float
    seed: int
    gates: FeatureGates | None

    def simulation(self, objects: ClusterObjects, config: KubeSchedulerConfiguration, reg: Registry) -> Simulation[Any]:
        check_durations(objects.pods)
        sim = new_simulation(config, reg, start=self.start, seed=self.seed, feature_gates=self.gates)
        sim.cluster.load(objects, arrival_time(self.start))
        return sim


def explain_scenario_pod(
    objects: ClusterObjects,
    config: KubeSchedulerConfiguration,
    registry: Registry,
    key: str,
    *,
    start: float,
    at: float | None = None,
    attempt: int | None = None,
    seed: int = 0,
    feature_gates: FeatureGates | None = None,
) -> dict[str, Any]:
    """Explain the scenario pod ``key`` (``namespace/name``) at its last attempt by ``at``, or at
    its ``attempt``-th (1-based)."""
    run = _Run(start, seed, feature_gates)
    first = run.simulation(objects, config, registry)
    first.run(until=at)
    history = first.cluster.history.get(key)
    if history is None:
        when = f" by {rfc3339(at)}" if at is not None else ""
        raise ScenarioPodError(f"pod {key}: not in the scenario{when} (arrived pods: {len(first.cluster.history)})")
    stories = first.scheduler.stories
    story = stories.get(history["uid"]) if stories is not None else None
    if story is None or story.attempts == 0:
        when = f"by {rfc3339(at)}" if at is not None else "in the simulation"
        raise ScenarioPodError(f"pod {key}: never attempted {when} (it arrived at {rfc3339(history['createdAt'])})")
    if attempt is not None and not 1 <= attempt <= story.attempts:
        raise ScenarioPodError(f"pod {key}: --attempt {attempt}: it had {story.attempts} attempt(s)")
    target, uid = attempt or story.attempts, history["uid"]

    second = run.simulation(objects, config, registry)
    sched = second.scheduler
    captured: dict[str, Any] = {}
    seen = 0

    def before(qpi: QueuedPodInfo) -> None:
        nonlocal seen
        if captured and "nominated" not in captured:
            # The next attempt of any pod: the explained cycle's PostFilter is over.
            captured["nominated"] = sched.queue.nominated_node_of(uid)
        if qpi.pod_info.uid != uid or captured:
            return
        seen += 1
        if seen < target:
            return
        state = sched.rng.getstate()
        try:
            captured["out"] = explain(sched, qpi.pod_info.pod)
        finally:
            sched.rng.setstate(state)
        captured["at"] = second.clock.now()
        captured["events"] = len(second.cluster.events)

    sched.before_attempt = before
    second.run(until=at)
    if not captured:  # the runs diverged: a bug, never the user's input
        raise ScenarioPodError(f"pod {key}: attempt {target} was not seen again in the second run")
    out: dict[str, Any] = captured["out"]
    out["at"] = rfc3339(captured["at"])
    out["attempt"] = target
    nominated = captured.get("nominated", sched.queue.nominated_node_of(uid))
    out["outcome"] = _outcome(second, key, uid, captured["at"], captured["events"], nominated)
    return out


def _outcome(
    sim: Simulation[Any], key: str, uid: str, at: float, first_event: int, nominated: str
) -> dict[str, Any]:
    """What the explained cycle did: bound (node), or its FailedScheduling message (with
    preemption's verdict), the node it was nominated to and the victims its preemption deleted."""
    ns, _, name = key.partition("/")
    out: dict[str, Any] = {"result": "pending", "node": None, "message": None, "nominatedNode": None, "victims": []}
    for e in sim.cluster.events[first_event:]:
        if e.time != at:
            break
        mine = (e.namespace or "default", e.name) == (ns, name)
        if mine and e.reason == "Scheduled":
            out["result"] = "bound"
            out["node"] = e.note.rsplit(" to ", 1)[-1]
            break
        if mine and e.reason == "FailedScheduling":  # after PostFilter: the cycle is over
            out["result"] = "unschedulable"
            out["message"] = e.note
            break
        if e.reason == "Preempted" and f"Preempted by pod {uid} " in e.note:
            out["victims"].append(f"{e.namespace or 'default'}/{e.name}")
    if out["result"] != "bound":
        out["nominatedNode"] = nominated or None
    return out


def explain_pod_at(
    objects: ClusterObjects,
    config: KubeSchedulerConfiguration,
    registry: Registry,
    pod: dict[str, Any],
    *,
    start: float,
    at: float,
    seed: int = 0,
    feature_gates: FeatureGates | None = None,
) -> dict[str, Any]:
    """Explain ``pod`` (not part of the scenario) on the cluster the scenario has at ``at``."""
    sim = _Run(start, seed, feature_gates).simulation(objects, config, registry)
    sim.run(until=at)
    out = explain(sim.scheduler, pod)
    out["at"] = rfc3339(at)
    return out
