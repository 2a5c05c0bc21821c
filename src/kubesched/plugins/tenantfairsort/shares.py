"""Each tenant's dominant share, kept current so that QueueSort reads it with one dict lookup.

Dominant Resource Fairness (Ghodsi et al., NSDI'11): a tenant's share of resource ``r`` is what its
placed pods request of ``r`` over what the cluster's nodes offer of ``r``; its *dominant* share is
the largest of those, divided by its weight. The queue compares pods many times per push and pop,
so nothing is computed there: shares are recomputed when their inputs change, for the tenants
they changed for.

Inputs, all from the scheduler's own view:

* **allocations** — the requests of every bound or assumed pod, by namespace, kept by
  CapacityScheduling's :class:`~kubesched.plugins.capacityscheduling.usage.Usage`: reconciled from
  the snapshot at each PreFilter (only nodes whose NodeInfo changed), and updated at once by
  Reserve/Unreserve, so the next pod popped already sees the pod just placed;
* **capacity** — the sum of ``status.allocatable`` over the snapshot's nodes (numpy column sums);
* **tenants** — the namespaces' tenant label, read through the handle's client at each PreFilter
  (and once more for a namespace seen for the first time). A namespace without the label, or
  that does not exist, is its own tenant, as for TenantIsolation.

A resource the cluster has none of is left out (no share can be taken of it). Shares are exact
fractions rounded once to float, so equal shares reached by different sums compare equal and
fall through to the next criterion.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction

import numpy as np

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubesched.framework.snapshot import NodeTable, Snapshot
from kubesched.framework.types import JSONObj, PodInfo
from kubesched.plugins.capacityscheduling.usage import Usage
from kubesched.plugins.tenancy.tenants import namespace_tenant

log = logging.getLogger("kubesched.plugins.tenantfairsort")

Namespaces = Callable[[], Iterable[JSONObj]]


def _name(obj: JSONObj) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name", "")) if isinstance(meta, Mapping) else ""


def cluster_allocatable(table: NodeTable, resource: str) -> int:
    """What the snapshot's nodes offer of ``resource`` in total (cpu in milli-units)."""
    if resource == CPU:
        col = table.alloc_cpu
    elif resource == MEMORY:
        col = table.alloc_mem
    elif resource == EPHEMERAL_STORAGE:
        col = table.alloc_eph
    else:
        found = table.alloc_scalar.get(resource)
        if found is None:
            return 0
        col = found
    return int(np.sum(col, dtype=np.int64))


class TenantShares:
    """Tenant -> dominant share, from pod allocations, node capacity and namespace labels."""

    def __init__(
        self,
        resources: Sequence[str],
        weights: Mapping[str, float],
        key: str,
        namespaces: Namespaces | None = None,
    ) -> None:
        self.resources = tuple(resources)
        self.key = key
        self._weights = {t: Fraction(w) for t, w in weights.items()}
        self._namespaces = namespaces
        self.usage = Usage()
        # Reserve/Unreserve may run on the binding cycle's thread, a namespace lookup on an
        # event handler's; readers (QueueSort) only do dict lookups and take no lock.
        self._lock = threading.RLock()
        self._ns_tenant: dict[str, str] = {}
        self._tenant_ns: dict[str, set[str]] = {}
        self._totals: tuple[int, ...] = (0,) * len(self.resources)
        #: Tenant -> weighted dominant share; absent means 0.
        self.shares: dict[str, float] = {}

    # -- reads (QueueSort) ------------------------------------------------------------------------
    def share_of_namespace(self, namespace: str) -> float:
        tenant = self._ns_tenant.get(namespace)
        if tenant is None:
            tenant = self.tenant_of(namespace)
        return self.shares.get(tenant, 0.0)

    def tenant_of(self, namespace: str) -> str:
        """The namespace's tenant; a namespace not seen yet is looked up once (if that fails, it
        counts as its own tenant until the next PreFilter lists the namespaces again)."""
        tenant = self._ns_tenant.get(namespace)
        if tenant is not None:
            return tenant
        with self._lock:
            if namespace not in self._ns_tenant and self._namespaces is not None:
                try:
                    self.sync_namespaces(self._namespaces())
                except Exception:  # called inside heap operations: never raise there
                    log.warning("listing namespaces for tenant of %s failed", namespace, exc_info=True)
            if namespace not in self._ns_tenant:
                dirty: set[str] = set()
                self._assign(namespace, namespace, dirty)  # no such namespace: its own tenant
                self._recompute(dirty)
            return self._ns_tenant[namespace]

    @property
    def totals(self) -> dict[str, int]:
        return dict(zip(self.resources, self._totals, strict=True))

    # -- updates ----------------------------------------------------------------------------------
    def refresh(self, snapshot: Snapshot | None) -> None:
        """Namespaces, capacity and allocations as of ``snapshot`` (PreFilter, once per cycle)."""
        with self._lock:
            if self._namespaces is not None:
                self.sync_namespaces(self._namespaces())
            if snapshot is not None:
                self.sync_capacity(snapshot)
                self.usage.reconcile(snapshot)
                self._recompute(self._tenants_of(self.usage.take_changed()))

    def sync_namespaces(self, objs: Iterable[JSONObj]) -> None:
        with self._lock:
            dirty: set[str] = set()
            seen: set[str] = set()
            for obj in objs:
                name = _name(obj)
                if name:
                    seen.add(name)
                    self._assign(name, namespace_tenant(obj, name, self.key), dirty)
            for name in [n for n, t in self._ns_tenant.items() if n not in seen and t != n]:
                self._assign(name, name, dirty)  # label gone with the namespace: its own tenant
            self._recompute(dirty)

    def sync_capacity(self, snapshot: Snapshot) -> None:
        with self._lock:
            totals = tuple(cluster_allocatable(snapshot.table, r) for r in self.resources)
            if totals != self._totals:
                self._totals = totals
                self._recompute(set(self._tenant_ns))

    def reserve(self, pod: PodInfo, node_name: str) -> None:
        with self._lock:
            if self.usage.add(pod, node_name):
                self._recompute(self._tenants_of(self.usage.take_changed()))

    def unreserve(self, pod: PodInfo) -> None:
        with self._lock:
            if self.usage.remove(pod.uid):
                self._recompute(self._tenants_of(self.usage.take_changed()))

    # -- internals --------------------------------------------------------------------------------
    def _assign(self, namespace: str, tenant: str, dirty: set[str]) -> None:
        old = self._ns_tenant.get(namespace)
        if old == tenant:
            return
        if old is not None:
            members = self._tenant_ns[old]
            members.discard(namespace)
            if not members:
                del self._tenant_ns[old]
                self.shares.pop(old, None)
            else:
                dirty.add(old)
        self._ns_tenant[namespace] = tenant
        self._tenant_ns.setdefault(tenant, set()).add(namespace)
        dirty.add(tenant)

    def _tenants_of(self, namespaces: Iterable[str]) -> set[str]:
        return {self.tenant_of(ns) for ns in namespaces}

    def _recompute(self, tenants: Iterable[str]) -> None:
        used = self.usage.used
        for tenant in tenants:
            members = [used[ns] for ns in self._tenant_ns.get(tenant, ()) if ns in used]
            dominant = Fraction(0)
            for r, total in zip(self.resources, self._totals, strict=True):
                if total <= 0:
                    continue
                amount = sum(res.get(r) for res in members)
                if amount > 0:
                    dominant = max(dominant, Fraction(amount, total))
            share = dominant / self._weights.get(tenant, Fraction(1))
            if share:
                self.shares[tenant] = float(share)
            else:
                self.shares.pop(tenant, None)
