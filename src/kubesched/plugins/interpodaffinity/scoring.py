"""InterPodAffinity PreScore/Score/NormalizeScore state (upstream ``interpodaffinity/scoring.go``).

PreScore sums, per topology value, the weights of every preferred term (the incoming pod's and
the existing pods') and of existing pods' required affinity terms (``hardPodAffinityWeight``)
that match; Score then adds up the node's topology values, O(topology keys) per node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo

from .memo import NodeMemo
from .terms import AffinityTerm, WeightedAffinityTerm, pod_affinity_terms

__all__ = ["PreScoreState", "ScoreContribution", "normalize"]

#: One node's (topologyKey, value, summed weight) entries from the incoming pod's preferred terms.
ScoreContribution = tuple[tuple[str, str, int], ...]


@dataclass(slots=True)
class PreScoreState:
    pod: PodInfo
    #: The incoming pod's preferred terms with namespaceSelector unrolled into namespaces.
    preferred_affinity: tuple[WeightedAffinityTerm, ...]
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...]
    namespace_labels: Mapping[str, str]
    hard_pod_affinity_weight: int
    #: topologyKey -> topology value -> summed weight.
    topology_score: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Whether any term matched anywhere (upstream skips scoring otherwise).
    matched: bool = False

    def clone(self) -> PreScoreState:
        return self

    def _process_term(
        self, term: AffinityTerm, weight: int, pod: PodInfo, ns_labels: Mapping[str, str] | None,
        node_labels: Mapping[str, str],
    ) -> None:
        if term.matches(pod, ns_labels):
            value = node_labels.get(term.topology_key)
            if value is not None:
                self._add(term.topology_key, value, weight)

    def process_nodes(
        self, nodes: Iterable[NodeInfo], all_pods: bool, memo: NodeMemo[ScoreContribution] | None = None
    ) -> None:
        """Every existing pod (or, without incoming preferences, every pod with affinity).

        The incoming pod's preferred terms against a node's pods give a contribution that only
        depends on those terms and the node, so ``memo`` keeps it across cycles.
        """
        incoming, ns_labels = self.pod, self.namespace_labels
        hard = self.hard_pod_affinity_weight
        preferred = all_pods and bool(self.preferred_affinity or self.preferred_anti_affinity)
        table = (
            memo.table((self.preferred_affinity, self.preferred_anti_affinity))
            if preferred and memo is not None else {}
        )
        for ni in nodes:
            labels = ni.labels
            if not labels:
                continue
            if preferred:
                for key, value, weight in NodeMemo.get(table, ni, self._incoming_contribution):
                    self._add(key, value, weight)
            # Pods without (anti-)affinity have no terms of their own.
            for existing in ni.pods_with_affinity:
                terms = pod_affinity_terms(existing)
                if hard > 0:
                    for t in terms.required_affinity:
                        self._process_term(t, hard, incoming, ns_labels, labels)
                for w in terms.preferred_affinity:
                    self._process_term(w.term, w.weight, incoming, ns_labels, labels)
                for w in terms.preferred_anti_affinity:
                    self._process_term(w.term, -w.weight, incoming, ns_labels, labels)

    def _incoming_contribution(self, ni: NodeInfo) -> ScoreContribution:
        labels = ni.labels
        sums: dict[tuple[str, str], int] = {}
        weighted = [(w.term, w.weight) for w in self.preferred_affinity]
        weighted += [(w.term, -w.weight) for w in self.preferred_anti_affinity]
        for existing in ni.pods:
            for term, weight in weighted:
                value = labels.get(term.topology_key)
                if value is not None and term.matches(existing, None):
                    key = (term.topology_key, value)
                    sums[key] = sums.get(key, 0) + weight
        return tuple((k, v, n) for (k, v), n in sums.items())

    def _add(self, key: str, value: str, weight: int) -> None:
        self.matched = True
        inner = self.topology_score.setdefault(key, {})
        inner[value] = inner.get(value, 0) + weight

    def score(self, node_labels: Mapping[str, str]) -> int:
        total = 0
        for key, values in self.topology_score.items():
            value = node_labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total


def normalize(scores: list[NodeScore]) -> None:
    """Min-max scaling to [0, 100], truncated as Go's int64(float64) conversion."""
    if not scores:
        return
    lo = min(s.score for s in scores)
    hi = max(s.score for s in scores)
    diff = hi - lo
    for s in scores:
        s.score = int(float(MAX_NODE_SCORE) * ((s.score - lo) / diff)) if diff > 0 else 0
