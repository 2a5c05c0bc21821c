"""An honest stand-in for DynamicResources, the DRA plugin of the default profile that kubesched
does not implement yet (upstream ``pkg/scheduler/framework/plugins/dynamicresources``; issue 18).

It exists so that upstream's default profile, and configurations naming the plugin at its usual
extension points, load unchanged. A pod without ``spec.resourceClaims`` is not concerned: PreFilter
returns Skip, as upstream does for such pods, and every other point is a no-op. A pod with claims is
rejected at PreFilter with UnschedulableAndUnresolvable and a message saying kubesched does not
support them yet, rather than being placed on a node whose devices were never checked.

Knowingly not done (upstream does): all of DRA (claims, allocation, device taints, extended
resources backed by devices). The plugin registers no cluster events: a pod it rejected can only
become schedulable once kubesched supports DRA, so it waits for the periodic flush.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from kubesched.config.plugin_args import DynamicResourcesArgs
from kubesched.config.releases import DEFAULT_RELEASE, NO_DRA_DEALLOCATE_REASON
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PostFilterPlugin,
    PreBindPreFlightPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
)
from kubesched.framework.signature import SignFragment
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, PostFilterResult, PreFilterResult
from kubesched.plugins import names

__all__ = [
    "DynamicResources",
    "pod_has_resource_claims",
]

#: What upstream's DynamicResources PostFilter says for a pod without claims.
NO_NEW_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"


def pod_has_resource_claims(pod: PodInfo) -> bool:
    return bool(pod.spec.get("resourceClaims"))


class DynamicResources(
    PreEnqueuePlugin,
    EnqueueExtensions,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    ReservePlugin,
    PreBindPreFlightPlugin,
):
    """DRA stand-in at upstream's points: PreEnqueue, PreFilter, Filter, PostFilter, Reserve, PreBind."""

    name = names.DYNAMIC_RESOURCES
    args_type = DynamicResourcesArgs

    def __init__(self, args: DynamicResourcesArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or DynamicResourcesArgs()
        self.handle = handle
        release = handle.release if handle is not None else DEFAULT_RELEASE
        self._post_filter_reason = () if release.has(NO_DRA_DEALLOCATE_REASON) else (NO_NEW_CLAIMS_TO_DEALLOCATE,)

    @staticmethod
    def _unsupported() -> Status:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pod has resource claims (dynamic resource allocation), which kubesched does not support yet "
            "(DynamicResources is a stand-in)",
        )

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        return None

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Upstream cannot tell whether claims are local to a node: pods with claims are not signable."""
        if pod_has_resource_claims(pod):
            return [], Status(Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
        return [], None

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod_has_resource_claims(pod):
            return None, Status(Code.SKIP)
        return None, self._unsupported()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._unsupported() if pod_has_resource_claims(pod) else None

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        # Upstream deallocates claims that block the pod; with none to deallocate (every pod without
        # claims, and ours, whose claims are never allocated) it says so, and that reason is in every
        # FailedScheduling message of v1.35 ("... no new claims to deallocate, preemption: ..."; seen
        # from the v1.35.4 and v1.36.3 binaries). v1.37 rejects without a reason (kubernetes#140222,
        # dynamicresources.go at v1.37.2), so the message goes straight on to preemption's.
        return None, Status(Code.UNSCHEDULABLE, *self._post_filter_reason)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        # Nothing to bind: pods with claims never get this far (rejected at PreFilter).
        return Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return Status(Code.SKIP)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return []
