"""InterPodAffinity PreFilter/Filter state (upstream ``interpodaffinity/filtering.go``).

PreFilter counts, per topology value, the existing pods that an affinity term matches; Filter then
only looks the node's label values up in those counts, so it costs O(terms) per node no matter how
many pods the cluster runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.framework.types import NodeInfo, PodInfo

from .memo import NodeMemo
from .terms import AffinityTerm, pod_affinity_terms

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PreFilterState",
    "TopologyCounts",
    "pod_matches_all_terms",
]

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

#: topologyKey -> topology value -> number of matching (pod, term) pairs. Zero entries are removed.
TopologyCounts = dict[str, dict[str, int]]
#: One node's (affinity, anti-affinity) counts as (topologyKey, value, count) entries.
NodeContribution = tuple[tuple[tuple[str, str, int], ...], tuple[tuple[str, str, int], ...]]


def _flatten(counts: TopologyCounts) -> tuple[tuple[str, str, int], ...]:
    return tuple((k, v, n) for k, inner in counts.items() for v, n in inner.items())


def add_count(counts: TopologyCounts, key: str, value: str, delta: int) -> None:
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    n = inner.get(value, 0) + delta
    if n == 0:
        inner.pop(value, None)
        if not inner:
            del counts[key]
    else:
        inner[value] = n


def count_of(counts: TopologyCounts, key: str, value: str) -> int:
    inner = counts.get(key)
    return inner.get(value, 0) if inner is not None else 0


def pod_matches_all_terms(terms: Iterable[AffinityTerm], pod: PodInfo) -> bool:
    """True when ``terms`` is not empty and the pod matches every one (the incoming pod's terms
    have their namespaceSelector unrolled, so no namespace labels are needed)."""
    any_term = False
    for t in terms:
        any_term = True
        if not t.matches(pod, None):
            return False
    return any_term


@dataclass(slots=True)
class PreFilterState:
    """Counts computed at PreFilter; AddPod/RemovePod keep them current for preemption dry runs."""

    pod: PodInfo
    #: The incoming pod's required terms with namespaceSelector unrolled into namespaces.
    affinity_terms: tuple[AffinityTerm, ...]
    anti_affinity_terms: tuple[AffinityTerm, ...]
    namespace_labels: Mapping[str, str]
    #: Existing pods' required anti-affinity terms that the incoming pod matches.
    existing_anti_affinity_counts: TopologyCounts = field(default_factory=dict)
    #: Existing pods matching all of the incoming pod's affinity terms (one count per term).
    affinity_counts: TopologyCounts = field(default_factory=dict)
    #: Existing pods matching the incoming pod's anti-affinity terms (one count per term matched).
    anti_affinity_counts: TopologyCounts = field(default_factory=dict)
    #: Whether the incoming pod matches all its own affinity terms (the "first pod" exception).
    matches_own_affinity: bool = False

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.pod,
            self.affinity_terms,
            self.anti_affinity_terms,
            self.namespace_labels,
            {k: dict(v) for k, v in self.existing_anti_affinity_counts.items()},
            {k: dict(v) for k, v in self.affinity_counts.items()},
            {k: dict(v) for k, v in self.anti_affinity_counts.items()},
            self.matches_own_affinity,
        )

    # -- building -------------------------------------------------------------------------------
    def count_existing_anti_affinity(self, nodes: Iterable[NodeInfo]) -> None:
        """Existing pods whose required anti-affinity terms match the incoming pod."""
        counts = self.existing_anti_affinity_counts
        pod, ns_labels = self.pod, self.namespace_labels
        for ni in nodes:
            labels = ni.labels
            for existing in ni.pods_with_required_anti_affinity:
                for t in pod_affinity_terms(existing).required_anti_affinity:
                    value = labels.get(t.topology_key)
                    if value is not None and t.matches(pod, ns_labels):
                        add_count(counts, t.topology_key, value, 1)

    def count_incoming(self, nodes: Iterable[NodeInfo], memo: NodeMemo[NodeContribution] | None = None) -> None:
        """Existing pods matching the incoming pod's affinity (all terms) / anti-affinity (each term).

        A node's contribution depends only on the terms and the node, so ``memo`` keeps it across
        cycles until the node changes.
        """
        if not self.affinity_terms and not self.anti_affinity_terms:
            return
        table = memo.table((self.affinity_terms, self.anti_affinity_terms)) if memo is not None else {}
        get = NodeMemo.get
        for ni in nodes:
            aff, anti = get(table, ni, self._node_contribution)
            for key, value, n in aff:
                add_count(self.affinity_counts, key, value, n)
            for key, value, n in anti:
                add_count(self.anti_affinity_counts, key, value, n)

    def _node_contribution(self, ni: NodeInfo) -> NodeContribution:
        labels = ni.labels
        aff_values = [labels.get(t.topology_key) for t in self.affinity_terms]
        anti_values = [labels.get(t.topology_key) for t in self.anti_affinity_terms]
        if all(v is None for v in aff_values) and all(v is None for v in anti_values):
            return (), ()
        aff: TopologyCounts = {}
        anti: TopologyCounts = {}
        for existing in ni.pods:
            self._count_pod(existing, aff_values, anti_values, 1, aff, anti)
        return _flatten(aff), _flatten(anti)

    def _count_pod(
        self, pod: PodInfo, aff_values: list[str | None], anti_values: list[str | None], delta: int,
        aff: TopologyCounts, anti: TopologyCounts,
    ) -> None:
        if any(v is not None for v in aff_values) and pod_matches_all_terms(self.affinity_terms, pod):
            for t, v in zip(self.affinity_terms, aff_values, strict=True):
                if v is not None:
                    add_count(aff, t.topology_key, v, delta)
        for t, v in zip(self.anti_affinity_terms, anti_values, strict=True):
            if v is not None and t.matches(pod, None):
                add_count(anti, t.topology_key, v, delta)

    # -- PreFilterExtensions --------------------------------------------------------------------
    def update_with_pod(self, other: PodInfo, node_labels: Mapping[str, str], delta: int) -> None:
        """Upstream ``updateWithPod``: account for ``other`` being added (+1) to or removed (-1)
        from the node with ``node_labels``."""
        for t in pod_affinity_terms(other).required_anti_affinity:
            value = node_labels.get(t.topology_key)
            if value is not None and t.matches(self.pod, self.namespace_labels):
                add_count(self.existing_anti_affinity_counts, t.topology_key, value, delta)
        self._count_pod(
            other,
            [node_labels.get(t.topology_key) for t in self.affinity_terms],
            [node_labels.get(t.topology_key) for t in self.anti_affinity_terms],
            delta,
            self.affinity_counts,
            self.anti_affinity_counts,
        )

    # -- Filter ---------------------------------------------------------------------------------
    def satisfies_pod_affinity(self, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for t in self.affinity_terms:
            value = labels.get(t.topology_key)
            if value is None:
                # Every topology label must exist on the node.
                return False
            if count_of(self.affinity_counts, t.topology_key, value) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself: allowed anywhere the topology exists
        # as long as no pod in the cluster matches the terms yet.
        return not self.affinity_counts and self.matches_own_affinity

    def satisfies_pod_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        if not self.anti_affinity_counts:
            return True
        for t in self.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and count_of(self.anti_affinity_counts, t.topology_key, value) > 0:
                return False
        return True

    def satisfies_existing_pods_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        for key, values in self.existing_anti_affinity_counts.items():
            value = labels.get(key)
            if value is not None and values.get(value, 0) > 0:
                return False
        return True
