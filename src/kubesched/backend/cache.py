"""The scheduler cache: nodes, bound pods and assumed pods (upstream ``backend/cache/cache.go``).

The scheduling cycle *assumes* a pod on its node before binding, so the next cycle already sees
its resources; the informer's confirmation turns the assumed pod into a bound one, and a failed
binding *forgets* it. ``update_snapshot`` copies only the nodes that changed since the last cycle.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo

from .node_tree import NodeTree


class CacheError(RuntimeError):
    pass


@dataclass(slots=True)
class _PodState:
    pod_info: PodInfo
    node_name: str
    assumed: bool
    binding_finished: bool = False


class Cache:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._nodes: dict[str, NodeInfo] = {}
        self._pod_states: dict[str, _PodState] = {}
        self._assumed: set[str] = set()
        self._tree = NodeTree()
        self._dirty: set[str] = set()
        self._structure_changed = True

    # -- nodes ----------------------------------------------------------------------------------
    def add_node(self, node: dict[str, Any]) -> NodeInfo:
        with self._lock:
            name = node["metadata"]["name"]
            ni = self._nodes.get(name)
            if ni is None:
                ni = NodeInfo()
                self._nodes[name] = ni
            if ni.node is None:
                # A new node, or one only known so far from pods bound to it: the list changes.
                self._structure_changed = True
            ni.set_node(node)
            self._tree.add(node)
            self._dirty.add(name)
            return ni

    def update_node(self, node: dict[str, Any]) -> NodeInfo:
        with self._lock:
            name = node["metadata"]["name"]
            old = self._nodes.get(name)
            if old is not None and old.node is not None:
                from .node_tree import zone_key

                if zone_key(old.node) != zone_key(node):
                    self._structure_changed = True
            return self.add_node(node)

    def remove_node(self, name: str) -> None:
        with self._lock:
            ni = self._nodes.get(name)
            if ni is None:
                return
            self._tree.remove(name)
            if ni.pods:
                # Pods still on a deleted node stay accounted until their own deletion arrives.
                ni.node = None
            else:
                del self._nodes[name]
            self._structure_changed = True

    def node_count(self) -> int:
        return len(self._tree)

    def get_node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    # -- pods -----------------------------------------------------------------------------------
    def _node_info_for(self, name: str) -> NodeInfo:
        ni = self._nodes.get(name)
        if ni is None:  # a pod bound to a node we have not seen yet
            ni = NodeInfo()
            ni.name = name
            self._nodes[name] = ni
        return ni

    def _add_to_node(self, pi: PodInfo, node_name: str) -> None:
        self._node_info_for(node_name).add_pod(pi)
        self._dirty.add(node_name)

    def _remove_from_node(self, pi: PodInfo, node_name: str) -> None:
        ni = self._nodes.get(node_name)
        if ni is not None:
            ni.remove_pod(pi)
            self._dirty.add(node_name)
            if ni.node is None and not ni.pods:
                del self._nodes[node_name]

    def assume_pod(self, pi: PodInfo, node_name: str) -> None:
        with self._lock:
            if pi.uid in self._pod_states:
                raise CacheError(f"pod {pi.key} is in the cache, so can't be assumed")
            self._add_to_node(pi, node_name)
            self._pod_states[pi.uid] = _PodState(pi, node_name, assumed=True)
            self._assumed.add(pi.uid)

    def finish_binding(self, pi: PodInfo) -> None:
        with self._lock:
            ps = self._pod_states.get(pi.uid)
            if ps is not None and ps.assumed:
                ps.binding_finished = True

    def forget_pod(self, pi: PodInfo) -> None:
        with self._lock:
            ps = self._pod_states.get(pi.uid)
            if ps is None or not ps.assumed:
                return
            self._remove_from_node(ps.pod_info, ps.node_name)
            del self._pod_states[pi.uid]
            self._assumed.discard(pi.uid)

    def is_assumed(self, uid: str) -> bool:
        return uid in self._assumed

    def add_pod(self, pi: PodInfo) -> None:
        """A bound pod seen by the informer: confirms an assumed pod or adds a new one."""
        with self._lock:
            node_name = pi.node_name
            ps = self._pod_states.get(pi.uid)
            if ps is not None and ps.assumed:
                if ps.node_name != node_name:
                    self._remove_from_node(ps.pod_info, ps.node_name)
                    self._add_to_node(pi, node_name)
                else:
                    self._remove_from_node(ps.pod_info, node_name)
                    self._add_to_node(pi, node_name)
                self._assumed.discard(pi.uid)
                self._pod_states[pi.uid] = _PodState(pi, node_name, assumed=False)
                return
            if ps is not None:
                self._remove_from_node(ps.pod_info, ps.node_name)
            self._add_to_node(pi, node_name)
            self._pod_states[pi.uid] = _PodState(pi, node_name, assumed=False)

    def update_pod(self, pi: PodInfo) -> None:
        self.add_pod(pi)

    def remove_pod(self, pi: PodInfo) -> None:
        with self._lock:
            ps = self._pod_states.pop(pi.uid, None)
            if ps is None:
                return
            self._assumed.discard(pi.uid)
            self._remove_from_node(ps.pod_info, ps.node_name)

    def get_pod(self, uid: str) -> PodInfo | None:
        ps = self._pod_states.get(uid)
        return ps.pod_info if ps else None

    def pod_count(self) -> int:
        return len(self._pod_states)

    def assumed_count(self) -> int:
        return len(self._assumed)

    # -- snapshot -------------------------------------------------------------------------------
    def update_snapshot(self, snapshot: Snapshot) -> None:
        """Refresh ``snapshot`` in place: changed nodes are cloned, the rest are shared."""
        with self._lock:
            if self._structure_changed or snapshot.generation == 0:
                names = self._tree.list()
                infos = [self._nodes[n].clone() for n in names]
                fresh = Snapshot(infos)
                snapshot.node_infos = fresh.node_infos
                snapshot.node_info_map = fresh.node_info_map
                snapshot.index = fresh.index
                snapshot.table = fresh.table
                snapshot.invalidate()
                self._structure_changed = False
            else:
                for name in self._dirty:
                    ni = self._nodes.get(name)
                    if ni is not None and ni.node is not None and name in snapshot.index:
                        snapshot.replace_node(ni.clone())
            self._dirty.clear()
            snapshot.generation += 1
