"""The handle a profile's plugins receive, and the event recorder it hands out."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.config.releases import Release
from kubesched.framework.clock import Clock
from kubesched.framework.cluster import ClusterBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEvent
from kubesched.framework.pods_in_pre_bind import PodInPreBind
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.metrics import SchedulerMetrics
from kubesched.scheduler.base import SchedulerBase


class FrameworkHandle:
    """The handle a profile's plugins receive (upstream ``framework.Handle``)."""

    def __init__(self, scheduler: SchedulerBase, profile_name: str) -> None:
        self._s = scheduler
        self._profile_name = profile_name
        self.framework: Framework | None = None

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> Clock:
        return self._s.clock

    def snapshot_shared_lister(self) -> Snapshot:
        return self._s.snapshot

    def event_recorder(self) -> _Recorder:
        return _Recorder(self._s.cluster, self._profile_name)

    def client(self) -> ClusterBackend:
        return self._s.cluster

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        assert self.framework is not None
        return self.framework.get_waiting_pod(uid)

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        assert self.framework is not None
        return self.framework.pods_in_pre_bind.get(uid)

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        assert self.framework is not None
        self.framework.waiting_pods.iterate(fn)

    def reject_waiting_pod(self, uid: str) -> bool:
        assert self.framework is not None
        return self.framework.reject_waiting_pod(uid)

    def activate(self, pods: Sequence[Mapping[str, Any]]) -> None:
        self._s.queue.activate(pods)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._s.queue.nominated_pods_for_node(node_name)

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        """Upstream ``PodNominator.DeleteNominatedPodIfExists`` (an empty nomination clears it)."""
        self._s.queue.add_nominated_pod(pod, "")

    @property
    def metrics(self) -> SchedulerMetrics:
        return self._s.metrics

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded random source (host tie-breaks, preemption's candidate offset)."""
        return self._s.rng

    def move_pods_on_event(self, event: ClusterEvent, old: Any = None, new: Any = None) -> None:
        self._s.queue.move_all_to_active_or_backoff(event, old, new)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status:
        assert self.framework is not None
        return self.framework.run_filter_plugins_with_nominated_pods(
            state, pod, node_info, self._s.queue.nominated_pods_for_node(node_info.name)
        )

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        assert self.framework is not None
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        assert self.framework is not None
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node_info)

    @property
    def parallelism(self) -> int:
        return self._s.config.parallelism

    @property
    def release(self) -> Release:
        return self._s.config.release


class _Recorder:
    """Upstream ``events.EventRecorder``: a plugin's events go to the cluster under its profile's name."""

    def __init__(self, cluster: ClusterBackend, controller: str) -> None:
        self._cluster = cluster
        self._controller = controller

    def eventf(
        self,
        regarding: Mapping[str, Any],
        related: Mapping[str, Any] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
    ) -> None:
        self._cluster.record_event(regarding, related, type_, reason, action, note, self._controller)
