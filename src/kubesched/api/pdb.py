"""What preemption reads of a policy/v1 PodDisruptionBudget: its namespace, selector and status.

Pure object logic over the API server's JSON (upstream reads the typed object through the PDB
lister), so it lives at the bottom layer; the preemption evaluator and the plugins that pick
victims (DefaultPreemption, CapacityScheduling) use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.errors import InvalidObjectError
from kubesched.api.labels import Selector, selector_from_label_selector

__all__ = ["PodDisruptionBudget", "parse_pdbs"]


class _Pod(Protocol):
    """What matching reads of a pod (``PodInfo`` has both)."""

    @property
    def namespace(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """What preemption reads of a policy/v1 PodDisruptionBudget."""

    namespace: str
    #: None for an invalid selector, which matches no pod (upstream skips the PDB).
    selector: Selector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> PodDisruptionBudget:
        md = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        try:
            selector: Selector | None = selector_from_label_selector(spec.get("selector"), "spec.selector")
        except InvalidObjectError:
            selector = None
        allowed = status.get("disruptionsAllowed")
        disrupted = status.get("disruptedPods") or {}
        return cls(
            namespace=str(md.get("namespace") or "default"),
            selector=selector,
            disruptions_allowed=int(allowed) if isinstance(allowed, int) else 0,
            disrupted_pods=frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset(),
        )

    def matches(self, pod: _Pod) -> bool:
        """Same namespace and a selector that selects the pod; a nil or empty selector selects nothing."""
        if self.namespace != pod.namespace or self.selector is None:
            return False
        return not self.selector.empty and self.selector.matches(pod.labels)


def parse_pdbs(objs: Iterable[Mapping[str, Any]]) -> list[PodDisruptionBudget]:
    """Every PDB object as a :class:`PodDisruptionBudget`, in the order given."""
    return [PodDisruptionBudget.from_object(o) for o in objs]
