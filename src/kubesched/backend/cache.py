"""The scheduler cache: nodes, bound pods and assumed pods (upstream ``backend/cache/cache.go``).

The scheduling cycle *assumes* a pod on its node before binding, so the next cycle already sees
its resources; the informer's confirmation turns the assumed pod into a bound one, and a failed
binding *forgets* it. ``update_snapshot`` copies only the nodes that changed since the last cycle.

A node that :func:`~kubesched.api.objects_validation.validate_node` finds problems in (an
allocatable quantity that does not parse or does not fit int64, taints of the wrong shape...) is
kept here, so pods bound to it stay accounted and its update or deletion is handled, but it is
left out of the node tree and so out of every snapshot: it is never a candidate, no plugin ever
reads it, and ``0/N nodes are available`` counts only the nodes that can be scheduled on. A
WARNING names it and the fields once per new set of problems; an update that fixes it brings it
back. This is the one place nodes enter the scheduler, for the simulator and a real cluster alike.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo

from .node_tree import NodeTree, zone_key

log = logging.getLogger("kubesched.cache")
#: Invalid objects are reported on their own logger, so a front end that has already reported
#: them with their file and line (kubesched simulate) can leave these lines out.
invalid_log = logging.getLogger("kubesched.invalid")


def _node_name(node: Mapping[str, Any]) -> str:
    m = node.get("metadata")
    name = m.get("name") if isinstance(m, Mapping) else None
    return name if isinstance(name, str) else ""


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
        #: Nodes with problems (kept out of the tree), with the problems last warned about.
        self._invalid: dict[str, tuple[str, ...]] = {}

    # -- nodes ----------------------------------------------------------------------------------
    def add_node(self, node: dict[str, Any]) -> NodeInfo:
        """Add or update a node; one with problems is kept out of the snapshots (module docstring)."""
        with self._lock:
            name = _node_name(node)
            if not name:
                detached = NodeInfo(node)
                invalid_log.warning(
                    "node without a name is invalid and will not be used: %s", "; ".join(detached.problems))
                return detached
            known = self._nodes.get(name)
            if known is None:
                known = self._nodes[name] = NodeInfo()
            ni = known
            was_usable = ni.node is not None and name not in self._invalid
            old_zone = zone_key(ni.node) if was_usable and ni.node is not None else None
            ni.set_node(node)
            self._dirty.add(name)
            if ni.problems:
                if self._invalid.get(name) != ni.problems:
                    invalid_log.warning('node "%s" is invalid and will not be used: %s', name, "; ".join(ni.problems))
                self._invalid[name] = ni.problems
                if was_usable:
                    self._tree.remove(name)
                    self._structure_changed = True
                return ni
            if self._invalid.pop(name, None) is not None:
                log.info('node "%s" is valid again and will be used', name)
            if not was_usable or old_zone != zone_key(node):
                # A new (or newly valid) node, or one only known so far from pods bound to it, or a
                # zone change: the list changes.
                self._structure_changed = True
            self._tree.add(node)
            return ni

    def update_node(self, node: dict[str, Any]) -> NodeInfo:
        return self.add_node(node)

    def invalid_nodes(self) -> dict[str, tuple[str, ...]]:
        """The nodes kept out of the snapshots, with their problems."""
        with self._lock:
            return dict(self._invalid)

    def remove_node(self, name: str) -> None:
        with self._lock:
            ni = self._nodes.get(name)
            if ni is None:
                return
            self._invalid.pop(name, None)
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
                    ni = self._nodes.get(node_name)
                    if ni is not None and ni.replace_pod(ps.pod_info, pi):
                        self._dirty.add(node_name)  # the usual confirmation: same sums, new object
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
