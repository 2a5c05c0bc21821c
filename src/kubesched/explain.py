"""``kubesched explain``: one scheduling cycle for one pod, with every plugin's verdict on every node.

Unlike a real cycle it evaluates all nodes (no sampling) and runs every Filter plugin on every node
(not stopping at the first failure), so a user sees all the reasons at once; nothing is bound and
PostFilter (preemption) is not run. The FailedScheduling message is built exactly as upstream's
from each node's first failing plugin, i.e. what the real scheduler would report. Nodes a
PreFilter result leaves out carry upstream's status (``node(s) didn't satisfy plugin(s) [...]``);
each PreScore plugin's status says why a Score is missing (Skip); with one feasible node nothing
is scored, as in kube-scheduler.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.filtering import all_filter_statuses
from kubesched.framework.status import Code, Status
from kubesched.framework.types import Diagnosis, FitError, PodInfo
from kubesched.scheduler import Scheduler


def _code(s: Status) -> str:
    return s.code.upstream_name


class InvalidPodError(ValueError):
    """The pod to explain has field problems: the scheduler would never run a plugin on it."""


def explain(sched: Scheduler, pod: dict[str, Any]) -> dict[str, Any]:
    pi = PodInfo(pod)
    if pi.problems:
        raise InvalidPodError(f"pod {pi.key}: {pi.invalid_message}")
    fw = sched.frameworks.get(pi.scheduler_name)
    if fw is None:
        raise ValueError(
            f"pod {pi.key}: spec.schedulerName {pi.scheduler_name!r} matches no profile "
            f"(profiles: {', '.join(sched.frameworks)})"
        )
    sched.cache.update_snapshot(sched.snapshot)
    snap = sched.snapshot
    state = CycleState()
    out: dict[str, Any] = {
        "pod": pi.key,
        "profile": fw.profile_name,
        "preFilter": {},
        "preScore": {},
        "nodes": {},
        "feasible": [],
        "scored": False,
        "selected": None,
        "message": None,
        "note": None,
    }

    # PreFilter, plugin by plugin, with upstream's merge of node-name results.
    allowed: set[str] | None = None
    narrowing: set[str] = set()  # plugins whose node-name result left some node out
    skip: set[str] = set()
    rejected: Status | None = None
    for p in fw.points["pre_filter"]:
        result = None

        def call(p: Any = p) -> Any:
            nonlocal result
            result, st = p.pre_filter(state, pi, snap.node_infos)
            return st

        st = fw._call(p, "PreFilter", call)
        st.plugin = p.name
        out["preFilter"][p.name] = {"code": _code(st), "message": st.message()}
        if st.is_skip():
            skip.add(p.name)
        elif not st.is_success() and rejected is None:
            rejected = st
        elif result is not None and not result.all_nodes():
            names = set(result.node_names or ())
            if any(n.name not in names for n in snap.node_infos):
                narrowing.add(p.name)
            allowed = names if allowed is None else allowed & names
    state.skip_filter_plugins = frozenset(skip)
    # Upstream's status of the nodes a PreFilter result leaves out (schedule_one.go).
    excluded = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"
    )

    diagnosis = Diagnosis()
    feasible = []
    for ni in snap.node_infos:
        entry: dict[str, Any] = {"filter": {}, "scores": {}, "total": None}
        out["nodes"][ni.name] = entry
        if rejected is not None:
            continue
        if allowed is not None and ni.name not in allowed:
            diagnosis.node_to_status[ni.name] = excluded
            entry["excluded"] = {"code": _code(excluded), "message": excluded.message(), "plugins": sorted(narrowing)}
            continue
        # Upstream's RunFilterPluginsWithNominatedPods: pods nominated to the node with at least
        # the pod's priority count as if they were there (the filters then run without them too).
        nominated = [
            n for n in sched.queue.nominated_pods_for_node(ni.name) if n.uid != pi.uid and n.priority >= pi.priority
        ]
        outcome = None
        if nominated:
            st2, ni2 = state.clone(), ni.clone()
            for n in nominated:
                ni2.add_pod(n)
                fw.run_pre_filter_extension_add_pod(st2, pi, n, ni2)
            with_nominated = all_filter_statuses(fw.filter_plugins, st2, pi, ni2)
            entry["nominatedPods"] = sorted(n.key for n in nominated)
            if with_nominated.first_failure() is not None:
                outcome = with_nominated
        if outcome is None:
            outcome = all_filter_statuses(fw.filter_plugins, state, pi, ni)
        for name, s in outcome.statuses.items():
            entry["filter"][name] = {"code": _code(s), "reasons": list(s.reasons)}
        first = outcome.first_failure()
        if first is None:
            feasible.append(ni)
        else:
            diagnosis.node_to_status[ni.name] = first

    if rejected is not None:
        diagnosis.pre_filter_msg = rejected.message()
        out["message"] = str(FitError(pi, snap.num_nodes(), diagnosis))
        return out
    out["feasible"] = [n.name for n in feasible]
    if not feasible:
        out["message"] = (
            str(FitError(pi, snap.num_nodes(), diagnosis))
            if snap.num_nodes()
            else "no nodes available to schedule pods"
        )
        return out

    if len(feasible) == 1:
        # schedule_one.go: with one feasible node kube-scheduler neither runs PreScore nor Score.
        out["scored"] = False
        out["selected"] = feasible[0].name
        out["note"] = "only one node passes the filters: kube-scheduler takes it without scoring"
        return out
    out["scored"] = True
    # PreScore plugin by plugin (Skip spares the plugin's Score), then the framework's run.
    pre_score_state = state.clone()
    for p in fw.points["pre_score"]:
        ps = fw._call(p, "PreScore", p.pre_score, pre_score_state, pi, feasible)  # type: ignore[attr-defined]
        out["preScore"][p.name] = {"code": _code(ps), "message": ps.message()}
    st = fw.run_pre_score_plugins(state, pi, feasible)
    if not st.is_success():
        out["message"] = st.message()
        return out
    idx = np.array([snap.index[n.name] for n in feasible], dtype=np.intp)
    res = fw.run_score_plugins(state, pi, feasible, snap, idx)
    if isinstance(res, Status):
        out["message"] = res.message()
        return out
    for i, name in enumerate(res.nodes):
        entry = out["nodes"][name]
        for plugin, raw in res.raw.items():
            norm = int(res.normalized[plugin][i])
            entry["scores"][plugin] = {"raw": int(raw[i]), "normalized": norm, "weighted": norm * res.weights[plugin]}
        entry["total"] = int(res.total[i])
    best = int(res.total.max())
    winners = [res.nodes[i] for i in np.flatnonzero(res.total == best).tolist()]
    out["selected"] = winners[0] if len(winners) == 1 else sched.select_host(res)
    return out
