"""DefaultBinder: binds through the cluster backend (``pods/binding`` on a real API server)
(upstream ``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``)."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin, Handle
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins import names


class DefaultBinder(BindPlugin):
    name = names.DEFAULT_BINDER

    def __init__(self, args: object, handle: Handle) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        try:
            self.handle.client().bind(pod.pod, node_name)
        except Exception as err:
            return Status.as_status(err)
        return None
