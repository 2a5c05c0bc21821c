"""TenantIsolation: nodes dedicated to a tenant take only that tenant's pods.

A node labelled ``<tenantLabel>: <tenant>`` is dedicated to that tenant: a pod of another tenant is
rejected there. Nodes without the label are shared by every tenant, unless ``allowSharedNodes`` is
false, in which case a pod may only run on its own tenant's nodes. A pod's tenant is the label of
its namespace (tenants.py). Both rejections are UnschedulableAndUnresolvable: evicting pods cannot
change a node's labels, so preemption does not try.

Filter has a batch form (vector operations over a column of node owners kept per snapshot row,
owners.py); the per-node form is the reference and gives the reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.api.validation import is_qualified_name
from kubesched.config.errors import ConfigError, FieldError, invalid
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import BatchFilterPlugin, EnqueueExtensions, Handle, PreFilterPlugin
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.jsonview import require_object

from .owners import NodeOwners
from .tenants import DEFAULT_TENANT_LABEL, TenantResolver, namespace_tenant, node_tenant

PRE_FILTER_STATE_KEY = "PreFilter" + names.TENANT_ISOLATION

#: A node dedicated to a tenant other than the pod's.
ERR_REASON_OTHER_TENANT = "node(s) are dedicated to another tenant"
#: A shared node, with ``allowSharedNodes: false``.
ERR_REASON_SHARED = "node(s) are not dedicated to the pod's tenant"


@dataclass
class TenantIsolationArgs:
    """``pluginConfig`` args of TenantIsolation."""

    #: Label key naming a namespace's tenant, and the tenant a node is dedicated to.
    tenant_label: str = DEFAULT_TENANT_LABEL
    #: Whether nodes without the label take pods of every tenant.
    allow_shared_nodes: bool = True

    def validate(self) -> list[FieldError]:
        errs = is_qualified_name(self.tenant_label)
        if errs:
            return [invalid("tenantLabel", self.tenant_label, "must be a valid label key: " + "; ".join(errs))]
        return []


@dataclass(slots=True)
class _PreFilterState:
    tenant: str

    def clone(self) -> _PreFilterState:
        return self


class TenantIsolation(EnqueueExtensions, PreFilterPlugin, BatchFilterPlugin):
    name = names.TENANT_ISOLATION
    args_type = TenantIsolationArgs

    def __init__(self, args: TenantIsolationArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or TenantIsolationArgs()
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.key = self.args.tenant_label
        self.allow_shared = self.args.allow_shared_nodes
        self.tenants = TenantResolver(handle, self.key)
        self.owners = NodeOwners(self.key)

    # -- PreFilter --------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(self.tenants.tenant_of(pod.namespace)))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def _tenant(self, state: CycleState, pod: PodInfo) -> str:
        s = state.get(PRE_FILTER_STATE_KEY)
        # Without PreFilter (a caller running Filter alone) ask the cluster now.
        return s.tenant if isinstance(s, _PreFilterState) else self.tenants.tenant_of(pod.namespace)

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        owner = node_info.labels.get(self.key)
        if owner is None:
            return None if self.allow_shared else Status.unresolvable(ERR_REASON_SHARED)
        if owner == self._tenant(state, pod):
            return None
        return Status.unresolvable(ERR_REASON_OTHER_TENANT)

    def filter_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        owners = self.owners.codes(snapshot)[indices]
        mine: npt.NDArray[np.bool_] = owners == self.owners.known(self._tenant(state, pod))
        if self.allow_shared:
            mine |= owners == 0
        return mine

    def accepts(self, node: JSONObj | None, tenant: str) -> bool:
        """Would Filter pass on this node object for a pod of ``tenant``?"""
        owner = node_tenant(node, self.key)
        return self.allow_shared if owner is None else owner == tenant

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), self.node_hint
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NAMESPACE, ActionType.ADD | ActionType.UPDATE), self.namespace_hint
            ),
        ]

    def node_hint(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Queue when a node now takes the pod's tenant and did not before (added or relabelled)."""
        node = require_object(new, "Node")
        tenant = self.tenants.tenant_of(_namespace(pod))
        if not self.accepts(node, tenant):
            return QueueingHint.QUEUE_SKIP
        if isinstance(old, Mapping) and self.accepts(old, tenant):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def namespace_hint(self, pod: JSONObj, old: object, new: object) -> QueueingHint:
        """Queue when the pod's own namespace changed tenant (its tenant label was set or changed)."""
        namespace = require_object(new, "Namespace")
        ns = _namespace(pod)
        meta = namespace.get("metadata")
        if not isinstance(meta, Mapping) or meta.get("name") != ns:
            return QueueingHint.QUEUE_SKIP
        before = namespace_tenant(old if isinstance(old, Mapping) else None, ns, self.key)
        if namespace_tenant(namespace, ns, self.key) == before:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _namespace(pod: JSONObj) -> str:
    meta = pod.get("metadata")
    return str((meta.get("namespace") if isinstance(meta, Mapping) else None) or "default")
