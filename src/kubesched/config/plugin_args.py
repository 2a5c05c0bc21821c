"""Args types of the in-tree plugins, with upstream defaults and validation.

Types: ``staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go``.
Defaults: ``pkg/scheduler/apis/config/v1/defaults.go`` (``SetDefaults_*Args``).
Validation: ``pkg/scheduler/apis/config/validation/validation_pluginargs.go``.
Field defaults are the *defaulted* values, so ``NodeResourcesFitArgs()`` is what a profile
without a pluginConfig entry gets. ``validate()`` returns errors with paths relative to
the args object; ``args.decode_args`` prefixes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .errors import (
    FieldError,
    child_path,
    duplicate,
    forbidden,
    index_path,
    invalid,
    not_supported,
    required,
)
from .names import is_qualified_name, is_valid_label_value
from .releases import DEFAULT_RELEASE, FIT_ARGS_SCORING_STRATEGY_CHECKS, STORAGE_CAPACITY_SCORING, Release

__all__ = [
    "IN_TREE_ARGS",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PodTopologySpreadArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
]

#: ``config.MaxCustomPriorityScore``: shape scores range 0..10.
MAX_CUSTOM_PRIORITY_SCORE = 10

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SUPPORTED_SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


@dataclass
class ResourceSpec:
    """``v1.ResourceSpec``: a resource name and its scoring weight (0 defaults to 1)."""

    name: str
    weight: int = 0


def _default_resources() -> list[ResourceSpec]:
    # defaults.go ``defaultResourceSpec``
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


@dataclass
class UtilizationShapePoint:
    """``v1.UtilizationShapePoint``: utilization 0..100 -> score 0..10."""

    utilization: int = field(default=0, metadata={"int32": True})
    score: int = field(default=0, metadata={"int32": True})


@dataclass
class RequestedToCapacityRatioParam:
    """``v1.RequestedToCapacityRatioParam``."""

    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass
class ScoringStrategy:
    """``v1.ScoringStrategy`` of NodeResourcesFit."""

    type: str = ""
    resources: list[ResourceSpec] = field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


def _default_scoring_strategy() -> ScoringStrategy:
    return ScoringStrategy(type=LEAST_ALLOCATED, resources=_default_resources())


# --------------------------------------------------------------------------------------------
# shared validation helpers (validation_pluginargs.go)


def _label_name_errors(path: str, value: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in is_qualified_name(value)]


def validate_function_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[FieldError]:
    """``validateFunctionShape``: non-empty, strictly increasing utilization, values in range."""
    errs: list[FieldError] = []
    if not shape:
        return [required(path, "at least one point must be specified")]
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                invalid(
                    child_path(index_path(path, i), "utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(
                invalid(
                    child_path(index_path(path, i), "utilization"),
                    point.utilization,
                    "not in valid range [0, 100]",
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                invalid(
                    child_path(index_path(path, i), "score"),
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def validate_resources(resources: Sequence[ResourceSpec], path: str) -> list[FieldError]:
    """``validateResources``: every weight in (0, 100]."""
    errs: list[FieldError] = []
    for i, res in enumerate(resources):
        if res.weight <= 0 or res.weight > 100:
            errs.append(
                invalid(
                    child_path(index_path(path, i), "weight"),
                    res.weight,
                    f"resource weight of {res.name} not in valid range (0, 100]",
                )
            )
    return errs


def _default_weights(resources: list[ResourceSpec]) -> None:
    for res in resources:
        if res.weight == 0:
            res.weight = 1


# --------------------------------------------------------------------------------------------
# args types


@dataclass
class DefaultPreemptionArgs:
    """Candidates for preemption dry-run ≈ max(numNodes × percentage / 100, absolute)."""

    min_candidate_nodes_percentage: int = field(default=10, metadata={"int32": True})
    min_candidate_nodes_absolute: int = field(default=100, metadata={"int32": True})

    def validate(self) -> list[FieldError]:
        errs: list[FieldError] = []
        pct, absolute = "minCandidateNodesPercentage", "minCandidateNodesAbsolute"
        if not 0 <= self.min_candidate_nodes_percentage <= 100:
            errs.append(invalid(pct, self.min_candidate_nodes_percentage, "not in valid range [0, 100]"))
        if self.min_candidate_nodes_absolute < 0:
            errs.append(invalid(absolute, self.min_candidate_nodes_absolute, "not in valid range [0, inf)"))
        if self.min_candidate_nodes_percentage == 0 and self.min_candidate_nodes_absolute == 0:
            errs.append(invalid(pct, 0, "cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(
                invalid(absolute, 0, "cannot be zero at the same time as minCandidateNodesPercentage")
            )
        return errs


@dataclass
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = field(default=1, metadata={"int32": True})
    ignore_preferred_terms_of_existing_pods: bool = False

    def validate(self) -> list[FieldError]:
        if not 0 <= self.hard_pod_affinity_weight <= 100:
            return [
                invalid("hardPodAffinityWeight", self.hard_pod_affinity_weight, "not in valid range [0, 100]")
            ]
        return []


_DECIMAL = re.compile(r"[+-]?[0-9]+")
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")


def _check_keys(raw: Mapping[str, Any], allowed: Sequence[str], path: str) -> list[FieldError]:
    return [FieldError(child_path(path, str(k)), "unknown field") for k in raw if k not in allowed]


def _is_int32(value: Any) -> bool:
    """A JSON number Go decodes into an ``int32`` (raw fields are ``corev1`` types upstream)."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _validate_requirement(expr: Any, path: str, *, fields: bool) -> list[FieldError]:
    """One ``NodeSelectorRequirement``, as ``labels.NewRequirement`` / the field selector parse it."""
    if not isinstance(expr, Mapping):
        return [invalid(path, expr, "must be a mapping {key, operator, values}")]
    errs = _check_keys(expr, ("key", "operator", "values"), path)
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
    if not isinstance(key, str):
        return [*errs, invalid(child_path(path, "key"), key, "must be a string")]
    if not _is_str_list(values):
        return [*errs, invalid(child_path(path, "values"), values, "must be a list of strings")]
    vpath = child_path(path, "values")
    if fields:
        if op not in _FIELD_SELECTOR_OPERATORS:
            errs.append(not_supported(child_path(path, "operator"), op, _FIELD_SELECTOR_OPERATORS))
        elif len(values) != 1:
            errs.append(invalid(vpath, values, "must have one element"))
        return errs
    if op not in _NODE_SELECTOR_OPERATORS:
        errs.append(not_supported(child_path(path, "operator"), op, _NODE_SELECTOR_OPERATORS))
        return errs
    errs.extend(_label_name_errors(child_path(path, "key"), key))
    if op in ("In", "NotIn") and not values:
        errs.append(invalid(vpath, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(invalid(vpath, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(invalid(vpath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            try:
                number = int(v) if _DECIMAL.fullmatch(v) else None  # int() also takes " 1" and "1_0"
            except ValueError:  # more digits than Python converts
                number = None
            if number is None or not -(2**63) <= number < 2**63:  # strconv.ParseInt(v, 10, 64)
                errs.append(
                    invalid(index_path(vpath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    for i, v in enumerate(values):
        errs.extend(invalid(index_path(vpath, i), v, msg) for msg in is_valid_label_value(v))
    return errs


def _validate_term(term: Any, path: str) -> list[FieldError]:
    if not isinstance(term, Mapping):
        return [invalid(path, term, "must be a mapping {matchExpressions, matchFields}")]
    errs = _check_keys(term, ("matchExpressions", "matchFields"), path)
    for key, is_fields in (("matchExpressions", False), ("matchFields", True)):
        exprs = term.get(key) or []
        if not isinstance(exprs, list):
            errs.append(invalid(child_path(path, key), exprs, "must be a list"))
            continue
        for i, expr in enumerate(exprs):
            errs.extend(_validate_requirement(expr, index_path(child_path(path, key), i), fields=is_fields))
    return errs


def validate_node_affinity(affinity: Mapping[str, Any], path: str) -> list[FieldError]:
    """Shape checks of a ``corev1.NodeAffinity`` (``nodeaffinity.NewNodeSelector`` and
    ``NewPreferredSchedulingTerms`` parse errors). Empty terms and weight-0 preferred terms
    are skipped, as upstream does."""
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    errs = _check_keys(affinity, (req_key, pref_key), path)
    ns = affinity.get(req_key)
    if ns is not None:
        npath = child_path(path, req_key)
        if not isinstance(ns, Mapping):
            errs.append(invalid(npath, ns, "must be a mapping {nodeSelectorTerms}"))
        else:
            errs.extend(_check_keys(ns, ("nodeSelectorTerms",), npath))
            terms = ns.get("nodeSelectorTerms") or []
            if not isinstance(terms, list):
                errs.append(invalid(child_path(npath, "nodeSelectorTerms"), terms, "must be a list"))
            else:
                for i, term in enumerate(terms):
                    errs.extend(_validate_term(term, index_path(child_path(npath, "nodeSelectorTerms"), i)))
    prefs = affinity.get(pref_key)
    if prefs is not None:
        ppath = child_path(path, pref_key)
        if not isinstance(prefs, list):
            errs.append(invalid(ppath, prefs, "must be a list"))
        else:
            for i, pref in enumerate(prefs):
                ipath = index_path(ppath, i)
                if not isinstance(pref, Mapping):
                    errs.append(invalid(ipath, pref, "must be a mapping {weight, preference}"))
                    continue
                errs.extend(_check_keys(pref, ("weight", "preference"), ipath))
                weight = pref.get("weight", 0)
                if not _is_int32(weight):
                    errs.append(invalid(child_path(ipath, "weight"), weight, "must be an int32"))
                    continue
                if weight == 0:
                    continue
                # upstream reports preference errors under the term's index, without ".preference"
                errs.extend(_validate_term(pref.get("preference") or {}, ipath))
    return errs


@dataclass
class NodeAffinityArgs:
    """``addedAffinity`` is a raw ``corev1.NodeAffinity`` mapping; it is ANDed with every pod's."""

    added_affinity: dict[str, Any] | None = None

    def validate(self) -> list[FieldError]:
        if self.added_affinity is None:
            return []
        return validate_node_affinity(self.added_affinity, "addedAffinity")


@dataclass
class NodeResourcesFitArgs:
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy = field(default_factory=_default_scoring_strategy)

    def set_defaults(self) -> None:
        # SetDefaults_NodeResourcesFitArgs
        if not self.scoring_strategy.resources:
            self.scoring_strategy.resources = _default_resources()
        _default_weights(self.scoring_strategy.resources)

    def validate(self, release: Release = DEFAULT_RELEASE) -> list[FieldError]:
        errs: list[FieldError] = []
        for i, res in enumerate(self.ignored_resources):
            errs.extend(_label_name_errors(index_path("ignoredResources", i), res))
        for i, group in enumerate(self.ignored_resource_groups):
            gpath = index_path("ignoredResourceGroups", i)
            if "/" in group:
                errs.append(invalid(gpath, group, "resource group name can't contain '/'"))
            errs.extend(_label_name_errors(gpath, group))
        strategy = self.scoring_strategy
        spath = "scoringStrategy"
        if strategy.type not in SUPPORTED_SCORING_STRATEGY_TYPES:
            errs.append(
                not_supported(
                    child_path(spath, "type"), strategy.type, sorted(SUPPORTED_SCORING_STRATEGY_TYPES)
                )
            )
        errs.extend(validate_resources(strategy.resources, child_path(spath, "resources")))
        rpath = child_path(spath, "requestedToCapacityRatio")
        if not release.has(FIT_ARGS_SCORING_STRATEGY_CHECKS):
            # v1.35's ValidateNodeResourcesFitArgs: the shape is checked when given (its errors
            # under scoringStrategy.shape); a RequestedToCapacityRatio block is ignored with the
            # other types. Without one, RequestedToCapacityRatio makes v1.35.4's NewFit
            # dereference nil (kube-scheduler panics): kubesched reports v1.36's error instead.
            ratio = strategy.requested_to_capacity_ratio
            if ratio is not None:
                errs.extend(validate_function_shape(ratio.shape, child_path(spath, "shape")))
            elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
                errs.append(required(rpath, "must be specified when type is RequestedToCapacityRatio"))
            return errs
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            if strategy.requested_to_capacity_ratio is None:
                errs.append(required(rpath, "must be specified when type is RequestedToCapacityRatio"))
            else:
                errs.extend(
                    validate_function_shape(
                        strategy.requested_to_capacity_ratio.shape, child_path(rpath, "shape")
                    )
                )
        elif strategy.requested_to_capacity_ratio is not None:
            errs.append(forbidden(rpath, "must be nil when type is not RequestedToCapacityRatio"))
        return errs


@dataclass
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = field(default_factory=_default_resources)

    def set_defaults(self) -> None:
        # SetDefaults_NodeResourcesBalancedAllocationArgs
        if not self.resources:
            self.resources = _default_resources()
        _default_weights(self.resources)

    def validate(self) -> list[FieldError]:
        errs: list[FieldError] = []
        seen: set[str] = set()
        for i, res in enumerate(self.resources):
            rpath = index_path("resources", i)
            if res.name in seen:
                errs.append(duplicate(child_path(rpath, "name"), res.name))
            seen.add(res.name)
            if res.weight != 1:
                errs.append(invalid(child_path(rpath, "weight"), res.weight, "must be 1"))
        return errs


_TOPOLOGY_SPREAD_CONSTRAINT_KEYS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


def _constraint_field_types(c: Mapping[str, Any], path: str) -> list[FieldError]:
    """Types of the fields ``ValidatePodTopologySpreadArgs`` does not look at, which upstream's
    strict decoding into ``corev1.TopologySpreadConstraint`` checks (the plugin reads them)."""
    errs: list[FieldError] = []
    min_domains = c.get("minDomains")
    if min_domains is not None and not _is_int32(min_domains):
        errs.append(invalid(child_path(path, "minDomains"), min_domains, "must be an int32"))
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = c.get(key)
        if value is not None and not isinstance(value, str):
            errs.append(invalid(child_path(path, key), value, "must be a string"))
    keys = c.get("matchLabelKeys")
    if keys is not None and not _is_str_list(keys):
        errs.append(invalid(child_path(path, "matchLabelKeys"), keys, "must be a list of strings"))
    return errs


@dataclass
class PodTopologySpreadArgs:
    """``defaultConstraints`` are raw ``corev1.TopologySpreadConstraint`` mappings."""

    SYSTEM: ClassVar[str] = SYSTEM_DEFAULTING
    LIST: ClassVar[str] = LIST_DEFAULTING

    default_constraints: list[dict[str, Any]] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING

    def set_defaults(self) -> None:
        if not self.defaulting_type:
            self.defaulting_type = SYSTEM_DEFAULTING

    def validate(self) -> list[FieldError]:
        """``ValidatePodTopologySpreadArgs``."""
        errs: list[FieldError] = []
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(
                not_supported("defaultingType", self.defaulting_type, (SYSTEM_DEFAULTING, LIST_DEFAULTING))
            )
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(
                invalid("defaultingType", self.defaulting_type, "when .defaultConstraints are not empty")
            )
        seen: list[tuple[Any, Any]] = []
        for i, c in enumerate(self.default_constraints):
            p = index_path("defaultConstraints", i)
            errs.extend(_check_keys(c, _TOPOLOGY_SPREAD_CONSTRAINT_KEYS, p))
            max_skew = c.get("maxSkew", 0)
            if not _is_int32(max_skew) or max_skew <= 0:
                errs.append(invalid(child_path(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
            key = c.get("topologyKey", "")
            if not key:
                errs.append(required(child_path(p, "topologyKey"), "can not be empty"))
            elif not isinstance(key, str):
                errs.append(invalid(child_path(p, "topologyKey"), key, "must be a string"))
            else:
                errs.extend(_label_name_errors(child_path(p, "topologyKey"), key))
            when = c.get("whenUnsatisfiable", "")
            if not when:
                errs.append(required(child_path(p, "whenUnsatisfiable"), "can not be empty"))
            elif when not in _WHEN_UNSATISFIABLE:
                errs.append(not_supported(child_path(p, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE))
            errs.extend(_constraint_field_types(c, p))
            if c.get("labelSelector") is not None:
                errs.append(
                    forbidden(
                        child_path(p, "labelSelector"),
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            if (key, when) in seen:
                errs.append(duplicate(p, f"{{{key}, {when}}}"))
            seen.append((key, when))
        return errs


@dataclass
class VolumeBindingArgs:
    """``shape`` is only allowed with the StorageCapacityScoring feature gate (on from v1.37).

    Defaults and validation follow the release (``SetDefaults_VolumeBindingArgs`` and
    ``ValidateVolumeBindingArgsWithOptions`` see the gate); without one, the default release."""

    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] | None = None

    @staticmethod
    def _scoring(release: Release | None) -> bool:
        return (release or DEFAULT_RELEASE).has(STORAGE_CAPACITY_SCORING)

    def set_defaults(self, release: Release | None = None) -> None:
        # SetDefaults_VolumeBindingArgs: with StorageCapacityScoring, prefer the least-used node.
        if not self.shape and self._scoring(release):
            self.shape = [UtilizationShapePoint(0, MAX_CUSTOM_PRIORITY_SCORE), UtilizationShapePoint(100, 0)]

    def validate(self, release: Release | None = None) -> list[FieldError]:
        errs: list[FieldError] = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                invalid(
                    "bindTimeoutSeconds",
                    self.bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if self._scoring(release):
            errs.extend(validate_function_shape(self.shape or [], "shape"))
        elif self.shape is not None:
            errs.append(
                FieldError(
                    "shape",
                    "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
                )
            )
        return errs


@dataclass
class DynamicResourcesArgs:
    """``filterTimeout`` (default 10s, 0 disables) and ``bindingTimeout`` (default 600s, ≥ 1s).

    Defaults assume the DRA gates that enable both timeouts are on, as upstream's
    ``TestSchedulerDefaults`` expects (``DynamicResourcesFilterTimeoutDefault``,
    ``DynamicResourcesBindingTimeoutDefault``).
    """

    filter_timeout: float | None = field(default=10.0, metadata={"duration": True})
    binding_timeout: float | None = field(default=600.0, metadata={"duration": True})

    def validate(self) -> list[FieldError]:
        errs: list[FieldError] = []
        if self.filter_timeout is not None and self.filter_timeout < 0:
            errs.append(invalid("filterTimeout", self.filter_timeout, "must be zero or positive"))
        if self.binding_timeout is not None and self.binding_timeout < 1:
            errs.append(invalid("bindingTimeout", self.binding_timeout, "must be at least 1 second"))
        return errs


#: plugin name -> args type (upstream registers each as kind ``<Plugin>Args``).
IN_TREE_ARGS: dict[str, type] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "VolumeBinding": VolumeBindingArgs,
}
