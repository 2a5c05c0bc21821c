"""The ElasticQuota custom resource and its in-memory form (scheduler-plugins
``apis/scheduling/v1alpha1/types.go`` and ``pkg/capacityscheduling/elasticquota.go``).

An ElasticQuota (``scheduling.x-k8s.io/v1alpha1``, one per namespace) has ``spec.min``, the
resources guaranteed to the namespace, and ``spec.max``, the most it may use; ``status.used`` is
the sum of the requests of its placed pods. ``ElasticQuotaInfo`` keeps the three as ``Resource``
values and answers upstream's questions (``usedOverMinWith``, ``usedOverMaxWith``...) with
upstream's comparison ``cmp2``: a request is over a bound as soon as one resource is.

Defaults, per resource as KEP 9 states them: a resource missing from ``min`` is guaranteed 0, one
missing from ``max`` is unlimited (MaxInt64). scheduler-plugins applies the unlimited default to
cpu, memory and ephemeral-storage only when ``max`` is absent altogether (a ``max`` naming only
cpu caps memory at 0: issue #424's symptom); we apply it to each resource.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from kubesched.api.errors import InvalidObjectError, field_invalid
from kubesched.api.quantity import QuantityError, nano_value
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, Resource
from kubesched.framework.types import JSONObj, JSONValue, PodInfo

API_GROUP = "scheduling.x-k8s.io"
API_VERSION = f"{API_GROUP}/v1alpha1"
KIND = "ElasticQuota"

#: Upstream's bounds: an unspecified max is infinite, an unspecified min is zero.
UPPER_BOUND_OF_MAX = 2**63 - 1
LOWER_BOUND_OF_MIN = 0


def over(x1: Resource, x2: Resource, y: Resource, bound: int) -> bool:
    """Upstream ``cmp2``: is ``x1 + x2 > y`` in any resource?

    cpu, memory, ephemeral-storage and pods always count; extended resources count when ``x1``
    has them, compared with ``bound`` when ``y`` does not name them."""
    if x1.milli_cpu + x2.milli_cpu > y.milli_cpu:
        return True
    if x1.memory + x2.memory > y.memory:
        return True
    if x1.ephemeral_storage + x2.ephemeral_storage > y.ephemeral_storage:
        return True
    if x1.allowed_pod_number + x2.allowed_pod_number > y.allowed_pod_number:
        return True
    x2s, ys = x2.scalar_resources, y.scalar_resources
    return any(q + x2s.get(name, 0) > ys.get(name, bound) for name, q in x1.scalar_resources.items())


_ZERO = Resource()


def pod_request(pod: PodInfo) -> Resource:
    """What a pod counts against its quota: its effective requests (zero for an unparsable pod,
    which NodeInfo also counts at zero)."""
    try:
        return pod.requests
    except ValueError:
        return Resource()


@dataclass
class ElasticQuotaInfo:
    """One namespace's quota: bounds, usage and the pods counted in it (by UID)."""

    namespace: str
    min: Resource
    max: Resource
    used: Resource = field(default_factory=Resource)
    pods: set[str] = field(default_factory=set)
    #: The ElasticQuota object's name (for messages and status updates).
    name: str = ""

    @classmethod
    def new(
        cls,
        namespace: str,
        min_: JSONObj | None,
        max_: JSONObj | None,
        used: JSONObj | None = None,
        name: str = "",
    ) -> ElasticQuotaInfo:
        """``newElasticQuotaInfo`` from ResourceLists (raises InvalidObjectError for a bad quantity)."""
        return cls(namespace, parse_min(min_), parse_max(max_), Resource.from_resource_list(used), set(), name)

    def clone(self) -> ElasticQuotaInfo:
        return ElasticQuotaInfo(
            self.namespace, self.min.clone(), self.max.clone(), self.used.clone(), set(self.pods), self.name
        )

    def reserve_resource(self, request: Resource) -> None:
        _add(self.used, request, 1)

    def unreserve_resource(self, request: Resource) -> None:
        _add(self.used, request, -1)

    def used_over_min_with(self, request: Resource) -> bool:
        """Would ``used + request`` exceed min (borrow from other quotas' guarantees)?"""
        return over(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Resource) -> bool:
        return over(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        """Is the namespace borrowing now?"""
        return over(self.used, _ZERO, self.min, LOWER_BOUND_OF_MIN)

    def add_pod_if_not_present(self, pod: PodInfo) -> None:
        if pod.uid in self.pods:
            return
        self.pods.add(pod.uid)
        self.reserve_resource(pod_request(pod))

    def delete_pod_if_present(self, pod: PodInfo) -> None:
        if pod.uid not in self.pods:
            return
        self.pods.discard(pod.uid)
        self.unreserve_resource(pod_request(pod))


def _add(into: Resource, r: Resource, sign: int) -> None:
    into.milli_cpu += sign * r.milli_cpu
    into.memory += sign * r.memory
    into.ephemeral_storage += sign * r.ephemeral_storage
    into.allowed_pod_number += sign * r.allowed_pod_number
    for name, v in r.scalar_resources.items():
        into.scalar_resources[name] = into.scalar_resources.get(name, 0) + sign * v


class ElasticQuotaInfos(dict[str, ElasticQuotaInfo]):
    """Namespace -> its quota."""

    def clone(self) -> ElasticQuotaInfos:
        return ElasticQuotaInfos({ns: info.clone() for ns, info in self.items()})

    def aggregated_used_over_min_with(self, request: Resource) -> bool:
        """Would the sum of every quota's used, plus ``request``, exceed the sum of their mins?"""
        used, min_ = Resource(), Resource()
        for info in self.values():
            used.add(info.used)
            min_.add(info.min)
        used.add(request)
        return over(used, _ZERO, min_, LOWER_BOUND_OF_MIN)


def parse_min(rl: JSONObj | None, path: str = "spec.min") -> Resource:
    return Resource.from_resource_list(rl, path)


def parse_max(rl: JSONObj | None, path: str = "spec.max") -> Resource:
    r = Resource.from_resource_list(rl, path)
    named = rl or {}
    if CPU not in named:
        r.milli_cpu = UPPER_BOUND_OF_MAX
    if MEMORY not in named:
        r.memory = UPPER_BOUND_OF_MAX
    if EPHEMERAL_STORAGE not in named:
        r.ephemeral_storage = UPPER_BOUND_OF_MAX
    return r


# -------------------------------------------------------------------------------------------------
# the object
# -------------------------------------------------------------------------------------------------
class InvalidElasticQuotaError(InvalidObjectError):
    """An ElasticQuota that cannot be honoured, reported as the API server reports invalid objects:
    ``ElasticQuota.scheduling.x-k8s.io "quota1" is invalid: spec.min.cpu: Invalid value: ...``."""

    def __init__(self, namespace: str, name: str, errors: Sequence[InvalidObjectError]) -> None:
        super().__init__(errors[0].field, errors[0].message)
        self.namespace = namespace
        self.name = name
        self._errors = tuple(e for err in errors for e in err.errors)

    @property
    def errors(self) -> tuple[InvalidObjectError, ...]:
        return self._errors

    def __str__(self) -> str:
        inner = str(self._errors[0]) if len(self._errors) == 1 else "[" + ", ".join(map(str, self._errors)) + "]"
        return f'{KIND}.{API_GROUP} "{self.name}" is invalid: {inner}'

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.namespace, self.name, self._errors))


def _mapping(obj: JSONObj, key: str) -> JSONObj:
    v = obj.get(key)
    return v if isinstance(v, Mapping) else {}


def quota_key(obj: JSONObj) -> tuple[str, str]:
    md = _mapping(obj, "metadata")
    return str(md.get("namespace") or "default"), str(md.get("name", ""))


def parse_elastic_quota(obj: JSONObj) -> ElasticQuotaInfo:
    """The quota of an ElasticQuota object, or InvalidElasticQuotaError naming every bad field:
    unparsable or negative quantities, and a min above the max of the same resource."""
    namespace, name = quota_key(obj)
    spec = _mapping(obj, "spec")
    errors: list[InvalidObjectError] = []
    lists: dict[str, JSONObj] = {}
    for part in ("min", "max"):
        raw = spec.get(part)
        if raw is not None and not isinstance(raw, Mapping):
            errors.append(field_invalid(f"spec.{part}", raw, "must be a map of resource names to quantities"))
            continue
        lists[part] = raw or {}
        for res, value in lists[part].items():
            try:
                if _amount(res, value, f"spec.{part}") < 0:
                    errors.append(field_invalid(f"spec.{part}.{res}", value, "must be greater than or equal to 0"))
            except InvalidObjectError as err:
                errors.append(err)
    if not errors:
        min_l, max_l = lists.get("min", {}), lists.get("max", {})
        for res in min_l:
            if res in max_l and _amount(res, min_l[res], "spec.min") > _amount(res, max_l[res], "spec.max"):
                errors.append(
                    field_invalid(f"spec.min.{res}", min_l[res], f"must be less than or equal to spec.max.{res}")
                )
    if errors:
        raise InvalidElasticQuotaError(namespace, name, errors)
    # Both are objects or unset (checked above).
    return ElasticQuotaInfo.new(
        namespace, cast("JSONObj | None", spec.get("min")), cast("JSONObj | None", spec.get("max")), None, name
    )


def _amount(name: str, value: JSONValue, path: str) -> int:
    """One quantity, exactly, in nano-units (any resource name, as the API server compares them)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise field_invalid(f"{path}.{name}", value, "must be a quantity")
    try:
        return nano_value(value.strip() if isinstance(value, str) else value)
    except QuantityError as err:
        raise InvalidObjectError(f"{path}.{name}", str(err)) from None


# -------------------------------------------------------------------------------------------------
# status.used
# -------------------------------------------------------------------------------------------------
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def format_quantity(name: str, amount: int) -> str:
    """A quantity as a ResourceList string: cpu from milli-units (``1500m``, ``2``); byte amounts
    with the largest exact binary suffix, else decimal suffix (``1Gi``, ``1G``); counts as integers."""
    if name == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount and (name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith("hugepages-")):
        for table in (_BINARY, _DECIMAL):
            for suffix, unit in table:
                if amount % unit == 0:
                    return f"{amount // unit}{suffix}"
    return str(amount)


def used_resource_list(used: Resource, named: Iterable[str]) -> dict[str, str]:
    """``status.used``: every resource named in min or max (zero if unused), plus every resource
    the namespace's pods request (the scheduler-plugins controller's ``newZeroUsed`` + sums)."""
    amounts: dict[str, int] = dict.fromkeys(named, 0)
    for res in (CPU, MEMORY, EPHEMERAL_STORAGE):
        if used.get(res) or res in amounts:
            amounts[res] = used.get(res)
    for res, v in used.scalar_resources.items():
        if v or res in amounts:
            amounts[res] = v
    return {res: format_quantity(res, v) for res, v in sorted(amounts.items())}
