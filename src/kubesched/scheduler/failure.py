"""What happens when an attempt fails: the pod back to the queue, a FailedScheduling event, its status.

Upstream ``handleSchedulingFailure`` and its helpers (in ``schedule_one.go``); both the scheduling
cycle and the binding cycle end here when they fail.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from kubesched.config.releases import FAILURE_HANDLER_RECREATED_POD, FAILURE_HANDLER_REPORTS_CACHED_POD
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    Diagnosis,
    FitError,
    NominatingInfo,
    NominatingMode,
    PodInfo,
    QueuedPodInfo,
    pod_uid,
)
from kubesched.scheduler.base import SchedulerBase

log = logging.getLogger("kubesched.scheduler")

NOTE_LENGTH_LIMIT = 1024


def truncate_message(msg: str) -> str:
    """Upstream ``truncateMessage``: events.k8s.io notes are limited to 1024 characters."""
    if len(msg) <= NOTE_LENGTH_LIMIT:
        return msg
    suffix = " ..."
    return msg[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


class _NoNodes(Exception):
    """The snapshot has no node: the pod waits, logged as "no nodes are registered", not as an error."""


def _generation(pod: Mapping[str, Any]) -> int:
    """``metadata.generation`` as an int (0 when absent or not a number, as Go's zero value)."""
    value = (pod.get("metadata") or {}).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


#: The nominating info of a failure that clears the pod's nomination.
_CLEAR = NominatingInfo("", NominatingMode.OVERRIDE)


class FailureHandlingMixin(SchedulerBase):
    """Failure handling and the cleanup helpers every exit of a cycle shares."""

    def _forget(self, assumed: PodInfo) -> None:
        """Forget an assumed pod, telling the queue (its fingerprint of the assumed pods)."""
        was_assumed = self.cache.is_assumed(assumed.uid)
        self.cache.forget_pod(assumed)
        if was_assumed:
            self.queue.toggle_assumed(assumed.uid)

    def _single_node_failure(self, pi: PodInfo, host: str, sts: Status) -> Status:
        """Reserve/Permit/WaitOnPermit/PreBind rejections become a FitError with one node."""
        if not sts.is_rejected():
            return sts
        d = Diagnosis()
        d.node_to_status[host] = sts
        if sts.plugin:
            d.unschedulable_plugins.add(sts.plugin)
        return Status(sts.code, error=FitError(pi, 1, d))

    def handle_scheduling_failure(
        self, fw: Framework, qpi: QueuedPodInfo, status: Status, nominating: NominatingInfo | None, start: float
    ) -> None:
        pi = qpi.pod_info
        release = self.config.release
        # The pod this cycle scheduled, before the informer's copy replaces it below: v1.35's
        # event and condition are about it (its generation is the condition's observedGeneration,
        # CalculatePodConditionObservedGeneration, pod.Generation since PodObservedGenerationTracking
        # went GA); v1.36+ reports the informer's copy.
        attempted = qpi.attempted_pod if qpi.attempted_pod is not None else pi.pod
        rejected = status.is_rejected()
        reason = "Unschedulable" if rejected else "SchedulerError"
        self.stats.failed(rejected)
        self.metrics.observe_attempt(
            "unschedulable" if rejected else "error", fw.profile_name, time.perf_counter() - start
        )
        err = status.error
        msg = status.message()
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            log.debug("unable to schedule pod %s; no fit; waiting: %s", pi.key, msg)
        elif isinstance(err, _NoNodes):
            log.debug("unable to schedule pod %s; no nodes are registered to the cluster; waiting", pi.key)
        else:
            log.warning("error scheduling pod %s; retrying: %s", pi.key, msg)
        if status.code == Code.PENDING and status.plugin:
            qpi.pending_plugins.add(status.plugin)
        elif rejected and status.plugin and not isinstance(err, FitError):
            qpi.unschedulable_plugins.add(status.plugin)
        qpi.last_failure = msg
        if self.stories is not None:
            plugins = tuple(sorted(qpi.unschedulable_plugins | qpi.pending_plugins))
            self.stories.waited(pi.uid, self.clock.now(), "unschedulable" if rejected else "error", plugins, msg)
            if isinstance(err, FitError):
                self.stories.rejected_on(pi.uid, {
                    node: f"{st.plugin}: {', '.join(st.reasons)}" if st.plugin else ", ".join(st.reasons)
                    for node, st in err.diagnosis.node_to_status.items()
                })

        cached = self.cluster.get_pod(pi.namespace, pi.name)
        if cached is None:
            log.info("pod %s doesn't exist in informer cache", pi.key)
            self.queue.done(pi.uid)
        elif (cached.get("spec") or {}).get("nodeName"):
            log.info("pod %s has been assigned to node; abort adding it back to queue", pi.key)
            self.queue.done(pi.uid)
        else:
            if release.has(FAILURE_HANDLER_RECREATED_POD) and pod_uid(cached) != pi.uid:
                log.debug("pod %s was recreated while handling scheduling failure (old UID %s, new UID %s); "
                          "skip requeueing and status updates", pi.key, pi.uid, pod_uid(cached))
                self.queue.done(pi.uid)
                return
            if cached is not pi.pod:
                pi.update(cached)
            self.queue.add_unschedulable_if_not_present(qpi, error=not rejected)

        if nominating is not None and nominating.mode == NominatingMode.OVERRIDE:
            self.queue.add_nominated_pod(pi, nominating.nominated_node_name)
        note = truncate_message(msg)
        reported = pi.pod if release.has(FAILURE_HANDLER_REPORTS_CACHED_POD) else attempted
        self.cluster.record_event(reported, None, "Warning", "FailedScheduling", "Scheduling", note, fw.profile_name)
        condition: dict[str, Any] = {"type": "PodScheduled", "status": "False", "reason": reason, "message": msg}
        generation = _generation(reported)
        if generation:  # Go's omitempty: 0 (no generation) is left out
            condition["observedGeneration"] = generation
        patch: dict[str, Any] = {"conditions": [condition]}
        if nominating is not None and (nominating.mode == NominatingMode.OVERRIDE):
            patch["nominatedNodeName"] = nominating.nominated_node_name or None
        if cached is not None:
            try:
                self.cluster.patch_pod_status(pi.pod, patch)
            except Exception as e:
                log.warning("error updating pod %s status: %s", pi.key, e)
