"""Constraints of PodTopologySpread (upstream ``podtopologyspread/common.go`` and the default
selector of ``plugins/helper/spread.go``).

A pod's explicit constraints are parsed once and cached on its PodInfo. System/List default
constraints get their selector from the Services, ReplicationControllers, ReplicaSets and
StatefulSets that select the pod, which are cluster objects: :class:`WorkloadIndex` reads them
through the handle's client at most once per cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from kubesched.api.errors import InvalidObjectError
from kubesched.api.labels import Selector, selector_from_label_selector, selector_from_set
from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, find_matching_untolerated_taint
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Handle
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo
from kubesched.plugins import names

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "TopologySpreadConstraint",
    "WorkloadIndex",
    "count_pods_match_selector",
    "filter_constraints",
    "node_labels_match_spread_constraints",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

#: plugin.go ``systemDefaultConstraints`` (defaultingType: System).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[JSONObj, ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

WORKLOADS_STATE_KEY = "Workloads" + names.POD_TOPOLOGY_SPREAD


def _is_do_not_schedule_taint(taint: JSONObj) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute taints."""
    return taint.get("effect") in (NO_SCHEDULE, NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """A ``v1.TopologySpreadConstraint`` with its selector parsed and the nil fields defaulted."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def match_node_inclusion_policies(self, pod: PodInfo, node_info: NodeInfo) -> bool:
        """Does the node count as a domain member (nodeAffinityPolicy / nodeTaintsPolicy)?"""
        if self.node_affinity_policy == HONOR and not pod.required_node_affinity.match(node_info.node or {}):
            # Malformed required terms never match (upstream ignores the parse error here).
            return False
        if self.node_taints_policy == HONOR:
            untolerated = find_matching_untolerated_taint(
                node_info.taints, pod.tolerations, _is_do_not_schedule_taint
            )
            if untolerated is not None:
                return False
        return True


def _merge_label_set(match_labels: Mapping[str, str], selector: Selector) -> Selector:
    """``mergeLabelSetWithSelector``: ANDs ``key=value`` pairs into a selector (not into Nothing)."""
    if selector.nothing:
        return selector
    return Selector([*selector_from_set(match_labels).requirements, *selector.requirements])


def filter_constraints(
    constraints: Iterable[JSONObj], pod_labels: Mapping[str, str], action: str
) -> list[TopologySpreadConstraint]:
    """``filterTopologySpreadConstraints``: the constraints with ``whenUnsatisfiable == action``.

    ``matchLabelKeys`` values taken from the pod's labels are ANDed into the selector (the
    MatchLabelKeysInPodTopologySpread gate is on in v1.35); keys the pod lacks are ignored.
    Raises InvalidObjectError for an unparsable labelSelector.
    """
    out: list[TopologySpreadConstraint] = []
    for c in constraints:
        if c.get("whenUnsatisfiable") != action:
            continue
        # The selector's type is checked by selector_from_label_selector; the API server validated the keys.
        selector = selector_from_label_selector(cast("JSONObj | None", c.get("labelSelector")))
        keys = cast("Sequence[str]", c.get("matchLabelKeys") or ())
        match_labels = {k: pod_labels[k] for k in keys if k in pod_labels}
        if match_labels:
            selector = _merge_label_set(match_labels, selector)
        min_domains = c.get("minDomains")
        out.append(TopologySpreadConstraint(
            max_skew=int(cast("int | float | str", c.get("maxSkew") or 0)),
            topology_key=str(c.get("topologyKey") or ""),
            selector=selector,
            min_domains=min_domains if isinstance(min_domains, int) else 1,
            node_affinity_policy=str(c.get("nodeAffinityPolicy") or HONOR),
            node_taints_policy=str(c.get("nodeTaintsPolicy") or IGNORE),
        ))
    return out


def node_labels_match_spread_constraints(
    labels: Mapping[str, str], constraints: Sequence[TopologySpreadConstraint]
) -> bool:
    """Every constraint's topology key is a label of the node."""
    return all(c.topology_key in labels for c in constraints)


def count_pods_match_selector(pods: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """Matching pods of ``namespace``; terminating pods do not count (kubernetes#87621).

    An empty selector counts nothing, as upstream's ``countPodsMatchSelector``.
    """
    if selector.empty or selector.nothing:
        return 0
    n = 0
    matches = selector.matches
    for p in pods:
        # Cheapest test first: deletionTimestamp is re-read from the object on every access.
        if p.namespace == namespace and matches(p.labels) and p.deletion_timestamp is None:
            n += 1
    return n


# ----------------------------------------------------------------------------------------------
# Default constraints: the selector from the workloads that own or select the pod
# ----------------------------------------------------------------------------------------------
def _meta(obj: JSONObj) -> JSONObj:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _spec(obj: JSONObj) -> JSONObj:
    s = obj.get("spec")
    return s if isinstance(s, Mapping) else {}


def _namespace(obj: JSONObj) -> str:
    return str(_meta(obj).get("namespace") or "default")


class WorkloadIndex:
    """Services, ReplicationControllers, ReplicaSets and StatefulSets by namespace, listed from the
    handle's client on first use (upstream reads them from informer listers)."""

    __slots__ = ("_handle", "_kinds")

    _KINDS = (
        ("v1", "Service"),
        ("v1", "ReplicationController"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
    )

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._kinds: dict[str, dict[str, list[JSONObj]]] = {}

    def clone(self) -> WorkloadIndex:
        return self

    def _objects(self, kind: str, namespace: str) -> list[JSONObj]:
        by_ns = self._kinds.get(kind)
        if by_ns is None:
            by_ns = {}
            api_version = dict((k, v) for v, k in self._KINDS)[kind]
            for o in self._handle.client().list_objects(api_version, kind):
                by_ns.setdefault(_namespace(o), []).append(o)
            self._kinds[kind] = by_ns
        return by_ns.get(namespace, [])

    def _get(self, kind: str, namespace: str, name: str) -> JSONObj | None:
        for o in self._objects(kind, namespace):
            if _meta(o).get("name") == name:
                return o
        return None

    def default_selector(self, pod: PodInfo) -> Selector:
        """``helper.DefaultSelector``: labels of the Services selecting the pod, merged with the
        selector of its controller when that is a ReplicationController, ReplicaSet or StatefulSet."""
        label_set: dict[str, str] = {}
        for svc in self._objects("Service", pod.namespace):
            sel = _spec(svc).get("selector")
            if not isinstance(sel, Mapping):
                # A Service without a selector selects nothing, not everything.
                continue
            if all(pod.labels.get(k) == v for k, v in sel.items()):
                label_set.update(cast("Mapping[str, str]", sel))
        selector = selector_from_set(label_set)

        owner = _controller_of(pod)
        if owner is None:
            return selector
        group_version = str(owner.get("apiVersion") or "")
        parts = group_version.split("/")
        if len(parts) > 2 or not parts[-1]:
            return selector
        group = parts[0] if len(parts) == 2 else ""
        kind, name = owner.get("kind"), str(owner.get("name") or "")
        if (group, parts[-1], kind) == ("", "v1", "ReplicationController"):
            rc = self._get("ReplicationController", pod.namespace, name)
            if rc is not None:
                rc_sel = _spec(rc).get("selector")
                label_set.update(cast("Mapping[str, str]", rc_sel) if isinstance(rc_sel, Mapping) else {})
                selector = selector_from_set(label_set)
        elif (group, parts[-1], kind) in (("apps", "v1", "ReplicaSet"), ("apps", "v1", "StatefulSet")):
            obj = self._get(str(kind), pod.namespace, name)
            if obj is not None:
                try:
                    other = selector_from_label_selector(cast("JSONObj | None", _spec(obj).get("selector")))
                except InvalidObjectError:
                    return selector
                if not other.nothing:
                    selector = Selector([*selector.requirements, *other.requirements])
        return selector


def _controller_of(pod: PodInfo) -> JSONObj | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``."""
    refs = _meta(pod.pod).get("ownerReferences")
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def workload_index(state: CycleState, handle: Handle) -> WorkloadIndex:
    """The cycle's workload index, created on first request and shared by PreFilter and PreScore."""
    idx = state.get(WORKLOADS_STATE_KEY)
    if isinstance(idx, WorkloadIndex):
        return idx
    idx = WorkloadIndex(handle)
    state.write(WORKLOADS_STATE_KEY, idx)
    return idx


def with_selector(
    constraints: Sequence[TopologySpreadConstraint], selector: Selector
) -> list[TopologySpreadConstraint]:
    return [replace(c, selector=selector) for c in constraints]
