"""Parsed pod (anti-)affinity terms (upstream ``AffinityTerm`` in ``pkg/scheduler/framework/types.go``).

A pod's four term lists are parsed once and cached on its ``PodInfo``: every cycle that looks at
an existing pod's terms, and every node that checks them, reuses that parse.

``matchLabelKeys``/``mismatchLabelKeys`` (KEP-3633, GA in v1.33) are not read here, exactly as in
kube-scheduler: kube-apiserver merges them into ``labelSelector`` when the pod is created
(``mutatePodAffinity`` in ``pkg/registry/core/pod/strategy.go``). :func:`apply_match_label_keys`
is that admission step, for backends that create pods without an API server.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from kubesched.api.errors import InvalidObjectError
from kubesched.api.labels import Selector, selector_from_label_selector
from kubesched.framework.types import JSONObj, JSONValue, PodInfo
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_list, get_obj, get_objs

_T = TypeVar("_T")
_Pod = TypeVar("_Pod", bound=JSONObj)

__all__ = [
    "AffinityTerm",
    "PodAffinityTerms",
    "WeightedAffinityTerm",
    "apply_match_label_keys",
    "parse_pod_affinity_terms",
    "pod_affinity_terms",
]

_EMPTY: Mapping[str, str] = {}
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_NOTHING = Selector.nothing_selector()


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One ``PodAffinityTerm``: which pods (namespaces + selector) in which topology domain."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    #: ``labels.Nothing()`` when the term has no namespaceSelector.
    namespace_selector: Selector
    #: The hash of the fields, computed once: terms key the per-row counts of every node that
    #: changed, each cycle (batch.py), and hashing the selectors each time was most of that.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fields_ = (self.namespaces, self.selector, self.topology_key, self.namespace_selector)
        object.__setattr__(self, "_hash", hash(fields_))

    def __hash__(self) -> int:
        return self._hash

    def matches(self, pod: PodInfo, ns_labels: Mapping[str, str] | None) -> bool:
        """Upstream ``AffinityTerm.Matches``: namespace listed or namespace labels selected, then labels."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or _EMPTY):
            return self.selector.matches(pod.labels)
        return False

    def with_namespaces(self, extra: frozenset[str]) -> AffinityTerm:
        """The term with ``extra`` namespaces unrolled in and no namespace selector left."""
        return AffinityTerm(self.namespaces | extra, self.selector, self.topology_key, _NOTHING)


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodAffinityTerms:
    """A pod's required and preferred (anti-)affinity terms; ``error`` is upstream's parse error text.

    As upstream (``PodInfo.Update``), a list that fails to parse is empty and the others are kept.
    """

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    error: str = ""


_NO_TERMS = PodAffinityTerms()


def _new_term(namespace: str, raw: JSONObj) -> AffinityTerm:
    # The selectors' types are checked by selector_from_label_selector (an InvalidObjectError).
    selector = selector_from_label_selector(cast("JSONObj | None", raw.get("labelSelector")))
    ns_list = get_list(raw, "namespaces")
    ns_selector_raw = cast("JSONObj | None", raw.get("namespaceSelector"))
    if not ns_list and ns_selector_raw is None:
        namespaces = frozenset((namespace,))
    else:
        namespaces = frozenset(str(n) for n in ns_list)
    ns_selector = selector_from_label_selector(ns_selector_raw)
    return AffinityTerm(namespaces, selector, str(raw.get("topologyKey") or ""), ns_selector)


def _terms(namespace: str, raw: JSONValue) -> tuple[AffinityTerm, ...]:
    if not isinstance(raw, Sequence):
        return ()
    return tuple(_new_term(namespace, t if isinstance(t, Mapping) else {}) for t in raw)


def _weighted(namespace: str, raw: JSONValue) -> tuple[WeightedAffinityTerm, ...]:
    if not isinstance(raw, Sequence):
        return ()
    out: list[WeightedAffinityTerm] = []
    for t in raw:
        t = t if isinstance(t, Mapping) else {}
        term = t.get("podAffinityTerm")
        weight = t.get("weight")
        out.append(WeightedAffinityTerm(
            _new_term(namespace, term if isinstance(term, Mapping) else {}),
            weight if isinstance(weight, int) else 0,
        ))
    return tuple(out)


def parse_pod_affinity_terms(namespace: str, affinity: JSONObj) -> PodAffinityTerms:
    """Parse ``spec.affinity``'s pod (anti-)affinity of a pod in ``namespace`` (no caching)."""
    pa_raw = affinity.get("podAffinity")
    paa_raw = affinity.get("podAntiAffinity")
    pa: JSONObj = pa_raw if isinstance(pa_raw, Mapping) else _EMPTY
    paa: JSONObj = paa_raw if isinstance(paa_raw, Mapping) else _EMPTY
    if not pa and not paa:
        return _NO_TERMS
    errors: list[str] = []
    required = _collect(errors, "requiredAffinityTerms", lambda: _terms(namespace, pa.get(_REQUIRED)))
    required_anti = _collect(errors, "requiredAntiAffinityTerms", lambda: _terms(namespace, paa.get(_REQUIRED)))
    preferred = _collect(errors, "preferredAffinityTerms", lambda: _weighted(namespace, pa.get(_PREFERRED)))
    preferred_anti = _collect(errors, "preferredAntiAffinityTerms", lambda: _weighted(namespace, paa.get(_PREFERRED)))
    # utilerrors.NewAggregate: the lone message, or "[a, b]".
    error = errors[0] if len(errors) == 1 else ("[" + ", ".join(errors) + "]" if errors else "")
    return PodAffinityTerms(required, required_anti, preferred, preferred_anti, error)


def _collect(errors: list[str], label: str, parse: Callable[[], tuple[_T, ...]]) -> tuple[_T, ...]:
    """``parse()``, or no terms with its error appended to ``errors`` under ``label``."""
    try:
        return parse()
    except InvalidObjectError as err:
        errors.append(f"{label}: {err}")
        return ()


def pod_affinity_terms(pod: PodInfo) -> PodAffinityTerms:
    """The pod's parsed terms, cached on the PodInfo (they only change with a new pod object)."""
    cached = pod.cache.get(names.INTER_POD_AFFINITY)
    if isinstance(cached, PodAffinityTerms):
        return cached
    if not pod.has_affinity:
        terms = _NO_TERMS
    else:
        # The parse reads the namespace and the spec: new pods of a known spec reuse it.
        key = (pod.namespace, pod.spec_key) if pod.spec_key is not None else None
        found = _by_spec.get(key) if key is not None else None
        if found is None:
            found = parse_pod_affinity_terms(pod.namespace, pod.affinity)
            if key is not None:
                if len(_by_spec) >= _BY_SPEC_MAX:
                    _by_spec.clear()
                _by_spec[key] = found
        terms = found
    pod.cache[names.INTER_POD_AFFINITY] = terms
    return terms


#: Parsed terms by (namespace, ``PodInfo.spec_key``).
_by_spec: dict[tuple[str, str], PodAffinityTerms] = {}
_BY_SPEC_MAX = 1024


def apply_match_label_keys(pod: _Pod) -> _Pod:
    """kube-apiserver's pod-creation mutation for ``matchLabelKeys``/``mismatchLabelKeys``.

    Returns a copy of ``pod`` where every pod (anti-)affinity term with a labelSelector gets
    ``key In (value)`` per matchLabelKey and ``key NotIn (value)`` per mismatchLabelKey whose key
    the pod carries (``applyMatchLabelKeysAndMismatchLabelKeys``). A term without a labelSelector
    is left alone: it selects nothing anyway.
    """
    out = copy.deepcopy(pod)
    labels = get_obj(get_obj(out, "metadata"), "labels")
    affinity = get_obj(get_obj(out, "spec"), "affinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        section = get_obj(affinity, kind)
        terms = list(get_objs(section, _REQUIRED))
        terms += [get_obj(w, "podAffinityTerm") for w in get_objs(section, _PREFERRED)]
        for term in terms:
            sel = term.get("labelSelector")
            if sel is None or not (term.get("matchLabelKeys") or term.get("mismatchLabelKeys")):
                continue
            # A deep copy of decoded JSON: its objects are dicts and its arrays lists.
            exprs = cast("list[JSONValue]", cast("dict[str, JSONValue]", sel).setdefault("matchExpressions", []))
            for keys, op in ((get_list(term, "matchLabelKeys"), "In"), (get_list(term, "mismatchLabelKeys"), "NotIn")):
                for key in cast("Sequence[str]", keys):
                    if key in labels:
                        exprs.append({"key": key, "operator": op, "values": [labels[key]]})
    return out
