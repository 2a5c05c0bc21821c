"""Pod signatures for OpportunisticBatching (upstream ``k8s.io/kube-scheduler/framework/signers.go``).

Two pods with the same signature get the same Filter and Score results on the same nodes, so a
profile may reuse one pod's sorted candidates for the next (``framework/batch.py``). A plugin that
takes part (``sign_pod``) contributes fragments: a key naming the pod field it depends on and a
canonical value of that field. Plugins that share a key (NodeResourcesFit and
BalancedAllocation both read the requests) write the same fragment.

Only equality between signatures matters, never their bytes: the values here are canonical JSON
values, ordered as upstream's signers order them (sorted host ports, tolerations sorted by key
and value, node selector requirements with sorted values, ...), so two pods compare equal exactly
when upstream's would.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .types import JSONObj, PodInfo

# Signer names: the fragments' keys (upstream's constants, kept for their meaning).
DYNAMIC_RESOURCES_SIGNER = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER = "v1.Pod.Labels"
NODE_NAME_SIGNER = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME_SIGNER = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER = "v1.Pod.Spec.RequiredFeatures()"


class SignFragment(NamedTuple):
    """One part of a pod's signature (upstream ``SignFragment``)."""

    key: str
    value: object


#: A pod's signature: canonical JSON of every fragment; None when a plugin cannot sign the pod.
PodSignature = str


def encode(fragments: Mapping[str, Any]) -> PodSignature:
    """The signature of the merged fragments (upstream marshals the map; keys sorted)."""
    return json.dumps(fragments, sort_keys=True, separators=(",", ":"), default=str)


def get_list(obj: Any, key: str) -> list[Any]:
    v = obj.get(key) if isinstance(obj, Mapping) else None
    return v if isinstance(v, list) else []


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def containers(pod: PodInfo) -> Iterable[Mapping[str, Any]]:
    spec = pod.spec
    for c in (*get_list(spec, "containers"), *get_list(spec, "initContainers")):
        if isinstance(c, Mapping):
            yield c


def host_ports(pod: PodInfo) -> list[int]:
    """Upstream ``HostPortsSigner``: the distinct non-zero host ports of every container, sorted."""
    ports: set[int] = set()
    for c in containers(pod):
        for p in get_list(c, "ports"):
            hp = p.get("hostPort") if isinstance(p, Mapping) else None
            if isinstance(hp, int) and hp:
                ports.add(hp)
    return sorted(ports)


def _go_json(value: Any) -> str:
    """``json.Marshal`` of a value built in Go's field order (no spaces, keys as given)."""
    return json.dumps(value, separators=(",", ":"), default=str)


def _requirements(reqs: Any) -> list[str]:
    """Upstream ``NodeSelectorRequirementsSigner``: each requirement with its values sorted, as
    Go marshals a ``NodeSelectorRequirement``; the strings sorted."""
    out = []
    for r in reqs if isinstance(reqs, list) else ():
        if not isinstance(r, Mapping):
            continue
        t: dict[str, Any] = {"key": r.get("key", ""), "operator": r.get("operator", "")}
        values = r.get("values")
        if isinstance(values, list) and values:
            t["values"] = sorted(str(v) for v in values)
        out.append(_go_json(t))
    return sorted(out)


def _term(term: Any) -> dict[str, list[str]]:
    t = term if isinstance(term, Mapping) else {}
    return {
        "MatchExpressions": _requirements(t.get("matchExpressions")),
        "MatchFields": _requirements(t.get("matchFields")),
    }


def node_affinity(pod: PodInfo) -> dict[str, list[str]] | None:
    """Upstream ``NodeAffinitySigner``: the required terms and the weighted preferred terms, each
    canonical and sorted; None when the pod has no node affinity."""
    na = pod.affinity.get("nodeAffinity")
    if not isinstance(na, Mapping):
        return None
    preferred = sorted(
        _go_json({"Weight": p.get("weight", 0), "Preference": _term(p.get("preference"))})
        for p in get_list(na, "preferredDuringSchedulingIgnoredDuringExecution")
        if isinstance(p, Mapping)
    )
    required_sel = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required_sel.get("nodeSelectorTerms") if isinstance(required_sel, Mapping) else None
    required = sorted(_go_json(_term(t)) for t in (terms if isinstance(terms, list) else ()))
    return {"Required": required, "Preferred": preferred}


def tolerations(pod: PodInfo) -> list[JSONObj]:
    """Upstream ``TolerationsSigner``: the tolerations ordered by key, then value."""
    return sorted(
        (t for t in pod.tolerations if isinstance(t, Mapping)),
        key=lambda t: (str(t.get("key") or ""), str(t.get("value") or "")),
    )


def volumes(pod: PodInfo) -> list[str]:
    """Upstream ``VolumesSigner``: the sources of every volume but ConfigMaps and Secrets (which
    never change where a pod fits and differ between pods), canonical and sorted."""
    out = []
    for v in get_list(pod.spec, "volumes"):
        if not isinstance(v, Mapping) or "configMap" in v or "secret" in v:
            continue
        out.append(_dump({k: x for k, x in v.items() if k != "name"}))
    return sorted(out)


def resources(pod: PodInfo) -> list[Any]:
    """The requests NodeResourcesFit and BalancedAllocation read (upstream
    ``computePodResourceRequest``)."""
    r = pod.requests
    return [r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, sorted(r.scalar_resources.items())]


def images(names: Sequence[str]) -> list[str]:
    """Upstream ImageLocality's fragment: the distinct normalised image names, sorted."""
    return sorted(set(names))
