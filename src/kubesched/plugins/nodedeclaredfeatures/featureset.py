"""Sets of declared features and the framework that infers a pod's (component-helpers
``nodedeclaredfeatures/framework.go``, ``featureset.go``, ``bitmap.go``).

Upstream keeps a set as a bitmap over the registry's feature names, sorted; a node's
``status.declaredFeatures`` is mapped onto it ignoring names the registry does not know (``TryMap``),
so a pod's requirements are a subset test of two integers here. Only what kube-scheduler uses is
ported: inference for scheduling, the mapper, the set operations (discovery and update inference
belong to the kubelet and the API server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kubesched.framework.types import JSONObj

__all__ = ["DeclaredFeature", "FeatureFramework", "FeatureMapper", "FeatureSet", "Version", "parse_version"]

#: A Kubernetes version as ``(major, minor, patch)``; compared as upstream's semantic versions are
#: for released versions (kubesched's releases carry no pre-release part).
Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    """``v1.37.2`` or ``1.37.2`` (a release's ``binary``) as a :data:`Version`."""
    major, minor, patch = (int(part) for part in text.strip().lstrip("v").split(".")[:3])
    return (major, minor, patch)


@dataclass(frozen=True, slots=True)
class FeatureSet:
    """Upstream ``FeatureSet`` (a ``bitmap``): bit ``i`` is the registry's ``i``-th name, sorted."""

    bits: int
    size: int

    def get(self, i: int) -> bool:
        if not 0 <= i < self.size:
            raise IndexError(f"bitmap index out of range: {i}")
        return bool(self.bits >> i & 1)

    def is_empty(self) -> bool:
        return self.bits == 0

    def is_subset(self, other: FeatureSet) -> bool:
        """Upstream ``IsSubset``: an error for sets of two registries (sizes differ)."""
        if self.size != other.size:
            raise ValueError(f"bitmap size mismatch; {self.size} != {other.size}")
        return self.bits & ~other.bits == 0

    def __str__(self) -> str:
        """Upstream ``String``: one character per feature, the first feature leftmost."""
        return "".join("1" if self.bits >> i & 1 else "0" for i in range(self.size))


class FeatureMapper:
    """Upstream ``FeatureMapper``: feature names to bit positions, over the sorted names."""

    def __init__(self, features: Iterable[str]) -> None:
        self.registered: tuple[str, ...] = tuple(sorted(features))

    def new_feature_set(self, bits: int = 0) -> FeatureSet:
        return FeatureSet(bits, len(self.registered))

    def map_sorted(self, sorted_features: Sequence[str]) -> FeatureSet:
        """Upstream ``MapSorted``: a ``ValueError`` names the first unknown feature."""
        return self._map_sorted(sorted_features, ignore_unknown=False)

    def try_map(self, sorted_features: Sequence[str]) -> FeatureSet:
        """Upstream ``TryMap``, how a node's ``status.declaredFeatures`` is read: unknown names are
        dropped (the API server keeps the list sorted; the walk below relies on it, as upstream's)."""
        return self._map_sorted(sorted_features, ignore_unknown=True)

    def _map_sorted(self, sorted_features: Sequence[str], *, ignore_unknown: bool) -> FeatureSet:
        registered = self.registered
        bits = 0
        i = j = 0
        while i < len(sorted_features) and j < len(registered):
            name = sorted_features[i]
            if name == registered[j]:
                bits |= 1 << j
                i += 1
                j += 1
            elif name < registered[j]:
                if not ignore_unknown:
                    raise ValueError(f"unknown feature {name}")
                i += 1
            else:
                j += 1
        if not ignore_unknown and i < len(sorted_features):
            raise ValueError(f"unknown feature {sorted_features[i]}")
        return self.new_feature_set(bits)

    def unmap(self, fs: FeatureSet) -> list[str]:
        """Upstream ``Unmap``: the names of the set's features, sorted."""
        if fs.size != len(self.registered):
            raise ValueError(
                f"feature size mismatch! s.size={fs.size}; len(m.registeredFeatures)={len(self.registered)}"
            )
        return [name for i, name in enumerate(self.registered) if fs.bits >> i & 1]


@dataclass(frozen=True, slots=True)
class DeclaredFeature:
    """One entry of component-helpers' feature registry, as far as scheduling reads it: its name
    (the node declares it), whether a pod spec needs it (``InferForScheduling``), and the last
    version for which it still matters (``MaxVersion``; None: no bound)."""

    name: str
    infer_for_scheduling: Callable[[JSONObj], bool]
    max_version: Version | None = None


class FeatureFramework(FeatureMapper):
    """Upstream ``Framework``: a registry of features, sorted by name, and its mapper."""

    def __init__(self, registry: Iterable[DeclaredFeature]) -> None:
        self.registry: tuple[DeclaredFeature, ...] = tuple(sorted(registry, key=lambda f: f.name))
        super().__init__(f.name for f in self.registry)

    def infer_for_pod_scheduling(self, pod_spec: JSONObj, target_version: Version | None) -> FeatureSet:
        """Upstream ``InferForPodScheduling``: the features the pod spec needs on its node, leaving
        out those whose ``max_version`` the target version is past (every node has them)."""
        if target_version is None:
            raise ValueError("target version cannot be nil")
        bits = 0
        for i, feature in enumerate(self.registry):
            if feature.max_version is not None and target_version > feature.max_version:
                continue
            if feature.infer_for_scheduling(pod_spec):
                bits |= 1 << i
        return self.new_feature_set(bits)
