"""The binding cycle: WaitOnPermit → PreBind → Bind → PostBind, run asynchronously (upstream ``bindingCycle``).

The scheduling cycle hands it to ``backend.submit``; a pod waiting at Permit registers a
continuation instead of blocking a thread (docs/architecture.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from kubesched.config.releases import PREEMPTED_PRE_BIND_PODS_BACK_OFF
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ASSIGNED_POD_DELETE
from kubesched.framework.pods_in_pre_bind import PodInPreBind
from kubesched.framework.prebind_wait import PRE_BIND_WAIT, PreBindWait
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, QueuedPodInfo
from kubesched.scheduler.base import ScheduleResult
from kubesched.scheduler.failure import _CLEAR, FailureHandlingMixin

log = logging.getLogger("kubesched.scheduler")

#: CycleState key: whether some PreBind plugin's PreBindPreFlight said it will work for the pod.
PRE_BIND_WORK = "kubesched/PreBindPreFlightSuccess"


class BindingCycleMixin(FailureHandlingMixin):
    """The binding cycle, and its error handling (Unreserve, forget, the pod back to the queue)."""

    def _binding_cycle_entry(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        start: float,
    ) -> None:
        # Upstream counts the binding goroutine from its start, WaitOnPermit included.
        self.metrics.binding_goroutines(1)
        flight = self._pre_bind_pre_flight(state, fw, assumed, result.suggested_host)
        wp = fw.get_waiting_pod(assumed.uid)
        if not flight.is_success():
            if wp is not None:  # nothing will wait for it: stop its timers
                fw.waiting_pods.remove(assumed.uid)
                wp.reject(flight.plugin, flight.message())
            self._binding_cycle(state, fw, result, qpi, assumed, start, flight)
            return
        if wp is None:
            self._binding_cycle(state, fw, result, qpi, assumed, start, Status(Code.SUCCESS))
            return

        def resume(permit: Status) -> None:
            fw.waiting_pods.remove(assumed.uid)
            self.cluster.submit(lambda: self._binding_cycle(state, fw, result, qpi, assumed, start, permit))

        wp.on_done(resume)

    def _pre_bind_pre_flight(self, state: CycleState, fw: Framework, assumed: PodInfo, host: str) -> Status:
        """The start of upstream's ``bindingCycle`` (NominatedNodeNameForExpectation, on since
        v1.35): PreBindPreFlight; a failure (Error, or a rejection, which it does not support) ends
        the cycle; when some PreBind plugin will work or the pod waits at Permit, the pod's
        ``status.nominatedNodeName`` is set to the node first, for the components that watch it
        (a failed write is only logged, as upstream)."""
        flight = fw.run_pre_bind_pre_flights(state, assumed, host)
        if flight.code == Code.ERROR or flight.is_rejected():
            return flight
        state.write(PRE_BIND_WORK, flight.is_success())
        if flight.is_success() or fw.will_wait_on_permit(assumed):
            try:
                self.cluster.patch_pod_status(assumed.pod, {"nominatedNodeName": host})
            except Exception as err:
                log.warning("failed to update the nominated node name of %s in the binding cycle: %s",
                            assumed.key, err)
        return Status(Code.SUCCESS)

    def _binding_cycle(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        start: float,
        permit: Status,
    ) -> None:
        try:
            status = self.binding_cycle(
                state, fw, result, qpi, assumed, permit,
                resume=lambda st: self._binding_cycle_done(state, fw, result, qpi, assumed, start, st),
            )
        except Exception as err:  # never lose a pod to a bug in a binding path
            log.error("binding cycle of %s failed: %s", assumed.key, err)
            log.debug("binding cycle of %s failed", assumed.key, exc_info=True)
            status = Status.as_status(err)
        if status is None:  # a PreBind plugin waits on the clock: resume finishes the cycle
            return
        self._binding_cycle_done(state, fw, result, qpi, assumed, start, status)

    def _binding_cycle_done(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        start: float,
        status: Status,
    ) -> None:
        host = result.suggested_host
        self.metrics.binding_goroutines(-1)
        if status.is_success():
            # Upstream metrics.PodScheduled: the attempt from the cycle's start to the binding.
            self.metrics.observe_attempt("scheduled", fw.profile_name, time.perf_counter() - start)
            return
        self.handle_binding_cycle_error(state, fw, qpi, assumed, host, start, status)

    def binding_cycle(
        self,
        state: CycleState,
        fw: Framework,
        result: ScheduleResult,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        permit: Status,
        resume: Callable[[Status], None] | None = None,
    ) -> Status | None:
        """The cycle's status, or None when a PreBind plugin left a :class:`PreBindWait` (virtual
        clock): the wait then polls on timers and ``resume`` gets the status at its end."""
        host = result.suggested_host
        # WaitOnPermit
        if not permit.is_success():
            return self._single_node_failure(qpi.pod_info, host, permit)
        # Failures after this point are never "unschedulable": the pod goes to backoff.
        self.queue.done(assumed.uid)
        # v1.36+: a pod with PreBind work is registered, so a preemption cancels its binding
        # instead of deleting it (schedule_one.go bindingCycle, pods_in_prebind_map.go).
        in_pre_bind = (
            fw.pods_in_pre_bind.add(assumed.uid)
            if state.get(PRE_BIND_WORK) is True and self.config.release.has(PREEMPTED_PRE_BIND_PODS_BACK_OFF)
            else None
        )
        waiting = False
        try:
            st = fw.run_pre_bind_plugins(state, assumed, host)
            if not st.is_success():
                return self._single_node_failure(qpi.pod_info, host, st)
            wait = state.get(PRE_BIND_WAIT)
            if isinstance(wait, PreBindWait) and resume is not None:
                state.delete(PRE_BIND_WAIT)
                waiting = True

                def finish(waited: Status) -> None:
                    try:
                        if not waited.is_success():
                            final: Status = self._single_node_failure(qpi.pod_info, host, waited)
                        elif in_pre_bind is not None and not in_pre_bind.mark_prebound():
                            final = Status(Code.ERROR, in_pre_bind.cause)
                        else:
                            final = self._bind_and_post_bind(state, fw, result, qpi, assumed)
                    except Exception as err:  # never lose a pod to a bug in a binding path
                        log.error("binding cycle of %s failed: %s", assumed.key, err)
                        final = Status.as_status(err)
                    finally:
                        if in_pre_bind is not None:
                            fw.pods_in_pre_bind.remove(assumed.uid)
                    resume(final)

                self._poll_pre_bind_wait(wait, finish, in_pre_bind)
                return None
            if in_pre_bind is not None and not in_pre_bind.mark_prebound():
                return Status(Code.ERROR, in_pre_bind.cause)
        finally:
            if in_pre_bind is not None and not waiting:
                fw.pods_in_pre_bind.remove(assumed.uid)
        return self._bind_and_post_bind(state, fw, result, qpi, assumed)

    def _poll_pre_bind_wait(
        self, wait: PreBindWait, finish: Callable[[Status], None], in_pre_bind: PodInPreBind | None
    ) -> None:
        """Poll a PreBind plugin's wait every ``interval`` on the clock (as PollUntilContextTimeout
        after its immediate check, which the plugin made) until ready, an error, or the deadline.
        A preemption that cancels the binding ends the wait at the next poll (upstream cancels
        PreBind's context); ``finish`` then fails the cycle with its cause."""

        def tick() -> None:
            if in_pre_bind is not None and in_pre_bind.canceled:
                finish(Status(Code.SUCCESS))
                return
            try:
                ready, err = wait.poll()
            except Exception as e:  # a bug in the plugin's poll ends the wait, not the simulation
                ready, err = False, str(e)
            if err is not None:
                finish(self._pre_bind_wait_error(wait, err))
            elif ready:
                finish(Status(Code.SUCCESS))
            elif self.clock.now() >= wait.deadline:
                finish(self._pre_bind_wait_error(wait, wait.timeout_message))
            else:
                self.clock.call_later(min(wait.interval, wait.deadline - self.clock.now()), tick)

        self.clock.call_later(min(wait.interval, max(0.0, wait.deadline - self.clock.now())), tick)

    @staticmethod
    def _pre_bind_wait_error(wait: PreBindWait, message: str) -> Status:
        return Status(Code.ERROR, f'running PreBind plugin "{wait.plugin}": {message}', plugin=wait.plugin)

    def _bind_and_post_bind(
        self, state: CycleState, fw: Framework, result: ScheduleResult, qpi: QueuedPodInfo, assumed: PodInfo
    ) -> Status:
        host = result.suggested_host
        st = self.bind(fw, state, assumed, host)
        if not st.is_success():
            return st
        now = self.clock.now()
        self.stats.bound(assumed.uid, now)
        if self.metrics is not None:
            first = qpi.initial_attempt_timestamp
            self.metrics.observe_scheduled(qpi.attempts, (now - first) if first is not None else None)
            if qpi.was_flushed_from_unschedulable:
                log.debug("pod %s scheduled after flush from unschedulable pods (unschedulable plugins %s)",
                          assumed.key, sorted(qpi.unschedulable_plugins))
                self.metrics.observe_scheduled_after_flush()
        log.debug(
            "successfully bound pod %s to node %s (evaluated %d, feasible %d)",
            assumed.key,
            host,
            result.evaluated_nodes,
            result.feasible_nodes,
        )
        fw.run_post_bind_plugins(state, assumed, host)
        return Status(Code.SUCCESS)

    def bind(self, fw: Framework, state: CycleState, assumed: PodInfo, host: str) -> Status:
        with self._lock:
            if assumed.uid in self._bound_uids:  # belt and braces: never bind a pod twice
                return Status(Code.ERROR, f"pod {assumed.key} was already bound")
        st = fw.run_bind_plugins(state, assumed, host)
        self.cache.finish_binding(assumed)
        if st.is_success():
            with self._lock:
                self._bound_uids.add(assumed.uid)
            self.cluster.record_event(
                assumed.pod,
                None,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
                fw.profile_name,
            )
        elif st.is_skip():
            st = Status(Code.ERROR, "no bind plugin bound the pod")
        return st

    def handle_binding_cycle_error(
        self,
        state: CycleState,
        fw: Framework,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        host: str,
        start: float,
        status: Status,
    ) -> None:
        fw.run_reserve_plugins_unreserve(state, assumed, host)
        self._forget(assumed)
        uid = assumed.uid
        # Forgetting the pod frees what it held: an AssignedPodDelete for the other pods, which
        # undoes the assumption rather than changing the cluster (see the queue's retry_may_help).
        if status.is_rejected():
            self.handle_scheduling_failure(fw, qpi, status, _CLEAR, start)
            self.queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, assumed.pod, None, lambda q: q.pod_info.uid != uid, undo_of_assume=True
            )
        else:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed.pod, None, undo_of_assume=True)
            self.handle_scheduling_failure(fw, qpi, status, _CLEAR, start)
