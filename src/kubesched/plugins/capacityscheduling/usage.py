"""What each namespace's placed pods request: the ``used`` side of every ElasticQuota.

Upstream CapacityScheduling keeps it from a pod informer (assigned pods added, deleted pods
released) plus Reserve/Unreserve. A kubesched plugin has no informer of its own, but it has the
snapshot, which already holds every bound and assumed pod. So usage is reconciled from the
snapshot at each PreFilter, node by node and only for nodes whose NodeInfo generation changed
(a pod added, removed or resized, a node replaced); Reserve and Unreserve update it at once, so
the next pod of the same cycle sees it. Pods are keyed by UID, so the same pod seen by Reserve and
then in the snapshot counts once, and a pod that disappears from its node (deleted, completed,
preempted, forgotten after a failed binding) is released.

Every namespace is tracked, with or without a quota, so a quota created later starts from the
namespace's real usage (upstream starts it at zero until its controller catches up).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.api.resources import Resource
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo

from .elasticquota import _add, pod_request


@dataclass(slots=True)
class _Entry:
    namespace: str
    node: str
    request: Resource
    pod: PodInfo


class Usage:
    """Pod requests by namespace, kept by UID; ``changed`` names the namespaces whose sum moved."""

    def __init__(self) -> None:
        self._pods: dict[str, _Entry] = {}
        self._by_node: dict[str, set[str]] = {}
        self._by_namespace: dict[str, set[str]] = {}
        self._generations: dict[str, int] = {}
        #: The snapshot's row list and generation column as last reconciled: while the rows stay
        #: the same, one vector comparison finds the nodes that changed.
        self._rows: list[NodeInfo] | None = None
        self._row_generations: npt.NDArray[np.int64] | None = None
        self.used: dict[str, Resource] = {}
        self.changed: set[str] = set()

    def __contains__(self, uid: str) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def pods_of(self, namespace: str) -> set[str]:
        """UIDs of the namespace's counted pods (a live view: copy before keeping it)."""
        return self._by_namespace.get(namespace, set())

    def add(self, pod: PodInfo, node: str) -> bool:
        """Count ``pod`` on ``node``; False when it was already counted there, unchanged."""
        entry = self._pods.get(pod.uid)
        if entry is not None:
            if entry.node == node and (entry.pod is pod or entry.pod.pod is pod.pod):
                return False
            request = pod_request(pod)
            if entry.node == node and entry.namespace == pod.namespace and entry.request == request:
                entry.pod = pod
                return False
            self.remove(pod.uid)
        request = pod_request(pod)
        self._pods[pod.uid] = _Entry(pod.namespace, node, request, pod)
        self._by_node.setdefault(node, set()).add(pod.uid)
        self._by_namespace.setdefault(pod.namespace, set()).add(pod.uid)
        _add(self.used.setdefault(pod.namespace, Resource()), request, 1)
        self.changed.add(pod.namespace)
        return True

    def remove(self, uid: str) -> bool:
        """Release a pod; False when it was not counted."""
        entry = self._pods.pop(uid, None)
        if entry is None:
            return False
        self._by_node.get(entry.node, set()).discard(uid)
        self._by_namespace.get(entry.namespace, set()).discard(uid)
        _add(self.used[entry.namespace], entry.request, -1)
        self.changed.add(entry.namespace)
        return True

    def reconcile(self, snapshot: Snapshot) -> None:
        """Bring the counts in line with the snapshot's nodes, visiting only nodes that changed."""
        infos = snapshot.node_infos
        gens = snapshot.table.generation
        if infos is self._rows and self._row_generations is not None and len(gens) == len(self._row_generations):
            # Same rows as last time (nodes replaced in place only): compare the columns.
            for i in np.flatnonzero(gens != self._row_generations):
                self._sync_node(infos[int(i)])
        else:
            seen: set[str] = set()
            for ni in infos:
                seen.add(ni.name)
                if self._generations.get(ni.name) != ni.generation:
                    self._sync_node(ni)
            for name in [n for n in self._generations if n not in seen]:
                del self._generations[name]
                for uid in list(self._by_node.pop(name, ())):
                    self.remove(uid)
        self._rows = infos
        self._row_generations = gens.copy()

    def _sync_node(self, ni: NodeInfo) -> None:
        name = ni.name
        self._generations[name] = ni.generation
        here = {p.uid for p in ni.pods}
        for uid in [u for u in self._by_node.get(name, ()) if u not in here]:
            self.remove(uid)
        for p in ni.pods:
            self.add(p, name)

    def take_changed(self) -> set[str]:
        out, self.changed = self.changed, set()
        return out
