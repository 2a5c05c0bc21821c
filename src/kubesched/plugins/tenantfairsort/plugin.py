"""TenantFairSort: a QueueSort that takes pods of the tenant with the smallest dominant share first.

``less(a, b)``, in order:

1. **higher pod priority first**, as upstream's PrioritySort. Fair share never overrides priority:
   preemption assumes the queue yields more important pods first (a pod that preempted must not
   find its room taken by a less important one popped before it), and PriorityClasses are the
   cluster administrator's explicit ranking, which a tenant's usage must not invert. Fairness
   only reorders pods of equal priority.
2. **lower weighted dominant share of the pod's tenant first** (Dominant Resource Fairness,
   shares.py): ``max over resources r of used_r(tenant) / allocatable_r(cluster)``, divided by the
   tenant's weight.
3. **earlier queue timestamp first** (upstream's order among equals);
4. ``namespace/name``, then UID: a total order, so the result never depends on heap history.

The plugin is also a **PreFilter** (reconcile allocations, capacity and tenants with the cycle's
snapshot: bound pods of any scheduler, deletions, completions, node changes) and a **Reserve**
plugin (count a placed pod at once, release it on Unreserve). Enable it with ``multiPoint`` and
as the only QueueSort (docs/tenancy.md); at QueueSort alone it never sees an allocation and
orders as PrioritySort does.

Shares change as pods are placed, but a heap only compares a pod when it is pushed or sifted.
The order is therefore evaluated when pods enter activeQ (first added, or moved back from the
unschedulable pool or backoffQ by an event) and as the heap is sifted at each pop, as with any
QueueSort whose key depends on cluster state; it uses the allocations of the last cycle's
snapshot plus the pods reserved since.

All profiles share one queue, so every profile's instance of the plugin shares one ledger of
shares (keyed by the scheduler's snapshot): a pod placed by one profile counts for the order
every profile's pods are compared in.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence

from kubesched.config.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interfaces import EnqueueExtensions, Handle, PreFilterPlugin, QueueSortPlugin, ReservePlugin
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, PreFilterResult, QueuedPodInfo
from kubesched.plugins import names

from .args import TenantFairSortArgs
from .shares import Namespaces, TenantShares

_LedgerKey = tuple[str, tuple[str, ...], tuple[tuple[str, float], ...]]

#: Scheduler snapshot -> args -> the shares every profile's instance reads and updates.
_LEDGERS: weakref.WeakKeyDictionary[Snapshot, dict[_LedgerKey, TenantShares]] = weakref.WeakKeyDictionary()


def _namespace_lister(handle: Handle | None) -> Namespaces | None:
    """Lists the cluster's Namespaces through the handle's client. Holds the handle weakly: the
    ledger lives as long as the snapshot it is keyed by, which the handle's scheduler owns."""
    if handle is None:
        return None
    try:
        ref: Callable[[], Handle | None] = weakref.ref(handle)
    except TypeError:  # a test double without weak references

        def ref() -> Handle | None:
            return handle

    def namespaces() -> Iterable[JSONObj]:
        h = ref()
        if h is None:
            return ()
        objs: Iterable[JSONObj] = h.client().list_objects("v1", "Namespace")
        return objs

    return namespaces


class TenantFairSort(QueueSortPlugin, EnqueueExtensions, PreFilterPlugin, ReservePlugin):
    name = names.TENANT_FAIR_SORT
    args_type = TenantFairSortArgs

    def __init__(self, args: TenantFairSortArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args or TenantFairSortArgs()
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.handle = handle
        self.shares = self._ledger()

    def _snapshot(self) -> Snapshot | None:
        if self.handle is None:
            return None
        snap = self.handle.snapshot_shared_lister()
        return snap if isinstance(snap, Snapshot) else None

    def _ledger(self) -> TenantShares:
        a = self.args
        key: _LedgerKey = (a.tenant_label, tuple(a.resources), tuple(sorted(a.tenant_weights.items())))

        def new() -> TenantShares:
            return TenantShares(a.resources, a.tenant_weights, a.tenant_label, _namespace_lister(self.handle))

        snap = self._snapshot()
        if snap is None:
            return new()
        ledgers = _LEDGERS.setdefault(snap, {})
        if key not in ledgers:
            ledgers[key] = new()
        return ledgers[key]

    # -- QueueSort --------------------------------------------------------------------------------
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info, b.pod_info
        if pa.priority != pb.priority:
            return pa.priority > pb.priority
        if pa.namespace != pb.namespace:
            sa = self.shares.share_of_namespace(pa.namespace)
            sb = self.shares.share_of_namespace(pb.namespace)
            if sa != sb:
                return sa < sb
        if a.timestamp != b.timestamp:
            return a.timestamp < b.timestamp
        if pa.key != pb.key:
            return pa.key < pb.key
        return pa.uid < pb.uid

    def tenant_share(self, tenant: str) -> float:
        """The tenant's weighted dominant share as the queue sees it now (reports, tests)."""
        return self.shares.shares.get(tenant, 0.0)

    # -- PreFilter: reconcile with the cycle's snapshot -------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        self.shares.refresh(self._snapshot())
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Reserve ----------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.shares.reserve(pod, node_name)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.shares.unreserve(pod)

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """None: the plugin never rejects a pod, so no event can make a retry succeed."""
        return []
