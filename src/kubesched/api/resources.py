"""Resource accounting for pods and nodes.

Ports:
* ``Resource`` from pkg/scheduler/framework/types.go (milli-CPU, bytes, pod count, scalars);
* ``PodRequests``/``AggregateContainerRequests`` from
  staging/src/k8s.io/component-helpers/resource/helpers.go (sidecars, init containers,
  overhead, pod-level resources, in-place resize status);
* ``PodInfo.CalculateResource``/``getNonMissingContainerRequests`` from
  pkg/scheduler/framework/types.go (the non-zero cpu/memory used for scoring);
* ``IsScalarResourceName`` and friends from pkg/apis/core/v1/helper/helpers.go.

Quantities are summed exactly (as integer nano-units) and converted to milli-CPU/bytes only at
the end, as upstream sums ``resource.Quantity`` values before calling ``MilliValue``/``Value``.

API defaulting: the API server copies a container's limits into its requests for every
resource that has a limit but no request, and derives pod-level requests from pod-level
limits (``SetDefaults_Pod``/``defaultPodRequests`` in pkg/apis/core/v1/defaults.go). Pods
built for a simulation never went through the API server, so both defaultings are applied
here when reading a pod; for pods that did, they change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kubesched.api.errors import InvalidObjectError
from kubesched.api.quantity import QuantityError, int_value, milli_value, nano_value
from kubesched.api.validation import is_qualified_name

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "PodResources",
    "Resource",
    "compute_pod_resources",
    "is_attachable_volume_resource_name",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_native_resource",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "pod_non_zero_requests",
    "pod_requests",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# pkg/scheduler/util/pod_resources.go: used only for scoring/spreading, never written to pods.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_DEFAULT_RESOURCE_NAMESPACE_PREFIX = "kubernetes.io/"
_DEFAULT_RESOURCE_REQUESTS_PREFIX = "requests."
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

# ResourceList as exact values in nano-units (every Kubernetes quantity is a whole number of
# them), keyed by resource name (key presence matters upstream).
_Quantities = dict[str, int]
_NANO = 10**9
_NANO_PER_MILLI = 10**6


# --- resource names -----------------------------------------------------------------------


def is_prefixed_native_resource(name: str) -> bool:
    """IsPrefixedNativeResource: the name contains ``kubernetes.io/``."""
    return _DEFAULT_RESOURCE_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    """IsNativeResource: unprefixed names and ``kubernetes.io/`` names."""
    return "/" not in name or is_prefixed_native_resource(name)


def is_hugepage_resource_name(name: str) -> bool:
    return name.startswith(_HUGEPAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    return name.startswith(_ATTACHABLE_VOLUMES_PREFIX)


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """IsExtendedResourceName: domain-prefixed, not native, valid as a quota name ``requests.<name>``."""
    if is_native_resource(name) or name.startswith(_DEFAULT_RESOURCE_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_DEFAULT_RESOURCE_REQUESTS_PREFIX + name)


@lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """IsScalarResourceName: extended, hugepages, prefixed native or attachable-volumes resources."""
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource_name(name)
    )


def is_supported_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-* may be set in ``spec.resources``."""
    return name in (CPU, MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


# --- Resource -----------------------------------------------------------------------------


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _quantity(value: Any, path: str) -> int:
    """A quantity read from an object, as ``Quantity.UnmarshalJSON`` reads it (surrounding space
    trimmed; JSON ``null`` is a zero quantity there, so it is here)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidObjectError(path, f"invalid quantity {value!r}")
    if isinstance(value, str) and value != value.strip():
        value = value.strip()
    try:
        return nano_value(value)
    except QuantityError as exc:
        raise InvalidObjectError(path, str(exc)) from None


@dataclass(slots=True)
class Resource:
    """Amounts of compute resources (upstream ``framework.Resource``).

    ``milli_cpu`` is in thousandths of a core, ``memory``/``ephemeral_storage`` in bytes,
    ``allowed_pod_number`` is a node's pod capacity, ``scalar_resources`` holds extended
    resources, hugepages and attachable volumes by name.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    def add(self, other: Resource) -> None:
        """Add ``other`` into this resource in place."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        if other.scalar_resources:
            scalars = self.scalar_resources
            for name, value in other.scalar_resources.items():
                scalars[name] = scalars.get(name, 0) + value

    def sub(self, other: Resource) -> None:
        """Subtract ``other`` from this resource in place (results may go negative)."""
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        if other.scalar_resources:
            scalars = self.scalar_resources
            for name, value in other.scalar_resources.items():
                scalars[name] = scalars.get(name, 0) - value

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar_resources),
        )

    def get(self, name: str) -> int:
        """The amount of one resource by its API name (cpu in milli-units)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)

    def set(self, name: str, value: int) -> None:
        """Set one resource by its API name (cpu in milli-units)."""
        if name == CPU:
            self.milli_cpu = value
        elif name == MEMORY:
            self.memory = value
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = value
        elif name == PODS:
            self.allowed_pod_number = value
        else:
            self.scalar_resources[name] = value

    def is_zero(self) -> bool:
        return (
            self.milli_cpu == 0
            and self.memory == 0
            and self.ephemeral_storage == 0
            and self.allowed_pod_number == 0
            and not any(self.scalar_resources.values())
        )

    def _add_quantity(self, name: str, nanos: int) -> None:
        if name == CPU:
            self.milli_cpu += _ceil_away(nanos, _NANO_PER_MILLI)
        elif name == MEMORY:
            self.memory += _ceil_away(nanos, _NANO)
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage += _ceil_away(nanos, _NANO)
        elif name == PODS:
            self.allowed_pod_number += _ceil_away(nanos, _NANO)
        elif is_scalar_resource_name(name):
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + _ceil_away(nanos, _NANO)

    @classmethod
    def from_resource_list(cls, rl: Mapping[str, Any] | None, path: str = "") -> Resource:
        """Build from a ResourceList such as ``status.allocatable`` (upstream ``NewResource``)."""
        res = cls()
        if not rl:
            return res
        for name, value in rl.items():
            if isinstance(value, str):
                # Fast path for the common case: conversions are cached per string.
                try:
                    if name == CPU:
                        res.milli_cpu += milli_value(value)
                    elif name == MEMORY:
                        res.memory += int_value(value)
                    elif name == EPHEMERAL_STORAGE:
                        res.ephemeral_storage += int_value(value)
                    elif name == PODS:
                        res.allowed_pod_number += int_value(value)
                    else:
                        # Parsed even when ignored: the API server rejects any bad quantity.
                        v = int_value(value)
                        if is_scalar_resource_name(name):
                            res.scalar_resources[name] = res.scalar_resources.get(name, 0) + v
                    continue
                except QuantityError:
                    pass  # surrounding whitespace, or a real error reported below
            res._add_quantity(name, _quantity(value, _join(path, name)))
        return res


def _ceil_away(nanos: int, unit: int) -> int:
    """nanos / unit rounded away from zero, as Quantity.Value/MilliValue round."""
    if nanos >= 0:
        return -(-nanos // unit)
    return nanos // unit  # floor is away from zero for negatives


# --- pod requests -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodResources:
    """A pod's effective requests plus the non-zero cpu/memory used for scoring.

    Upstream ``PodResource`` returned by ``PodInfo.CalculateResource``.
    """

    requests: Resource
    non_zero_milli_cpu: int
    non_zero_memory: int


def _add_into(into: _Quantities, other: Mapping[str, int]) -> None:
    for name, q in other.items():
        into[name] = into.get(name, 0) + q


def _max_into(into: _Quantities, other: Mapping[str, int]) -> None:
    for name, q in other.items():
        cur = into.get(name)
        if cur is None or q > cur:
            into[name] = q


def _parse_list(rl: Any, path: str) -> _Quantities:
    if rl is None:
        return {}
    if not isinstance(rl, Mapping):
        raise InvalidObjectError(path, f"expected a map of quantities, got {type(rl).__name__}")
    return {str(name): _quantity(value, f"{path}.{name}") for name, value in rl.items()}


def _mapping(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise InvalidObjectError(path, f"expected an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, path: str) -> Sequence[Any]:
    if obj is None:
        return ()
    if not isinstance(obj, list | tuple):
        raise InvalidObjectError(path, f"expected a list, got {type(obj).__name__}")
    return obj


def _container_spec_requests(container: Mapping[str, Any], path: str) -> _Quantities:
    """Requests of one container, with limits defaulted into missing requests (API defaulting)."""
    resources = _mapping(container.get("resources"), f"{path}.resources")
    reqs = _parse_list(resources.get("requests"), f"{path}.resources.requests")
    limits = resources.get("limits")
    if limits:
        for name, q in _parse_list(limits, f"{path}.resources.limits").items():
            if name not in reqs:
                reqs[name] = q
    return reqs


@dataclass(frozen=True, slots=True)
class _Container:
    name: str
    restartable: bool
    spec: _Quantities
    # Status-derived requests (in-place resize); None when the status says nothing.
    allocated: _Quantities | None
    actuated: _Quantities | None


def _apply_non_missing(reqs: Mapping[str, int], non_missing: Mapping[str, int]) -> _Quantities:
    out = dict(reqs)
    for name, q in non_missing.items():
        if name not in reqs:
            out[name] = q
    return out


def _aggregate(
    containers: Sequence[_Container],
    init_containers: Sequence[_Container],
    pick: Callable[[_Container], Mapping[str, int]],
    non_missing: Mapping[str, int] | None,
) -> _Quantities:
    """Sum of containers and sidecars, at least the peak of any init container's start-up."""
    result: _Quantities = {}
    for c in containers:
        reqs = pick(c)
        if non_missing:
            reqs = _apply_non_missing(reqs, non_missing)
        _add_into(result, reqs)
    sidecars: _Quantities = {}
    init_peak: _Quantities = {}
    for c in init_containers:
        reqs = pick(c)
        if non_missing:
            reqs = _apply_non_missing(reqs, non_missing)
        if c.restartable:
            _add_into(result, reqs)
            _add_into(sidecars, reqs)
            _max_into(init_peak, sidecars)
        else:
            combined = dict(reqs)
            _add_into(combined, sidecars)
            _max_into(init_peak, combined)
    _max_into(result, init_peak)
    return result


_EMPTY: _Quantities = {}


def _spec(c: _Container) -> _Quantities:
    return c.spec


@dataclass(frozen=True, slots=True)
class _ParsedPod:
    containers: tuple[_Container, ...]
    init_containers: tuple[_Container, ...]
    has_status_resources: bool
    resize_infeasible: bool
    pod_level_requests: _Quantities | None  # after API defaulting; None when not set
    overhead: _Quantities


def _parse_pod(pod: Mapping[str, Any]) -> _ParsedPod:
    spec = _mapping(pod.get("spec"), "spec")
    status = _mapping(pod.get("status"), "status")

    statuses: dict[str, Mapping[str, Any]] = {}
    resize_infeasible = False
    if status:
        # findContainerStatus looks at containerStatuses first, then initContainerStatuses.
        for key in ("initContainerStatuses", "containerStatuses"):
            for i, cs in enumerate(_list(status.get(key), f"status.{key}")):
                cs = _mapping(cs, f"status.{key}[{i}]")
                statuses[str(cs.get("name", ""))] = cs
        for cond in _list(status.get("conditions"), "status.conditions"):
            if isinstance(cond, Mapping) and cond.get("type") == "PodResizePending":
                resize_infeasible = cond.get("reason") == "Infeasible"
                break

    has_status = False

    def parse_containers(key: str) -> tuple[_Container, ...]:
        nonlocal has_status
        out = []
        for i, c in enumerate(_list(spec.get(key), f"spec.{key}")):
            path = f"spec.{key}[{i}]"
            c = _mapping(c, path)
            name = str(c.get("name", ""))
            allocated: _Quantities | None = None
            actuated: _Quantities | None = None
            cs = statuses.get(name)
            if cs is not None:
                spath = f"status.containerStatuses[{name}]"
                if cs.get("allocatedResources") is not None:
                    allocated = _parse_list(cs["allocatedResources"], f"{spath}.allocatedResources")
                res = cs.get("resources")
                if isinstance(res, Mapping) and res.get("requests") is not None:
                    actuated = _parse_list(res["requests"], f"{spath}.resources.requests")
                has_status = has_status or allocated is not None or actuated is not None
            out.append(
                _Container(
                    name=name,
                    restartable=key == "initContainers" and c.get("restartPolicy") == "Always",
                    spec=_container_spec_requests(c, path),
                    allocated=allocated,
                    actuated=actuated,
                )
            )
        return tuple(out)

    containers = parse_containers("containers")
    init_containers = parse_containers("initContainers")
    overhead = _parse_list(spec.get("overhead"), "spec.overhead")

    pod_level: _Quantities | None = None
    pod_res = _mapping(spec.get("resources"), "spec.resources")
    if pod_res:
        explicit = _parse_list(pod_res.get("requests"), "spec.resources.requests")
        limits = _parse_list(pod_res.get("limits"), "spec.resources.limits")
        reqs = dict(explicit)
        if limits:
            # defaultPodRequests: missing pod-level requests come from the containers'
            # aggregate (overcommittable resources), else from the pod-level limit.
            aggregate = _aggregate(containers, init_containers, _spec, None)
            for name, q in aggregate.items():
                if name not in reqs and is_supported_pod_level_resource(name) and not is_hugepage_resource_name(name):
                    reqs[name] = q
            for name, q in limits.items():
                if name not in reqs and is_supported_pod_level_resource(name):
                    reqs[name] = q
        if any(is_supported_pod_level_resource(n) for n in reqs):
            pod_level = reqs

    return _ParsedPod(
        containers=containers,
        init_containers=init_containers,
        has_status_resources=has_status,
        resize_infeasible=resize_infeasible,
        pod_level_requests=pod_level,
        overhead=overhead,
    )


def _pod_requests(parsed: _ParsedPod, non_missing: Mapping[str, int] | None) -> _Quantities:
    """PodRequests with UseStatusResources (InPlacePodVerticalScaling is GA) and pod-level resources."""
    cs, ics = parsed.containers, parsed.init_containers
    if not parsed.has_status_resources and not parsed.resize_infeasible:
        reqs = _aggregate(cs, ics, _spec, non_missing)
    else:
        infeasible = parsed.resize_infeasible

        def allocated(c: _Container) -> _Quantities:
            if c.allocated is not None:
                return c.allocated
            return _EMPTY if infeasible else c.spec

        def actuated(c: _Container) -> _Quantities:
            if c.actuated is not None:
                return c.actuated
            if c.allocated is not None:
                return c.allocated
            return _EMPTY if infeasible else c.spec

        alloc = _aggregate(cs, ics, allocated, non_missing)
        act = _aggregate(cs, ics, actuated, non_missing)
        if infeasible:
            reqs = act
        else:
            reqs = _aggregate(cs, ics, _spec, non_missing)
            _max_into(reqs, act)
        _max_into(reqs, alloc)
    if parsed.pod_level_requests is not None:
        for name, q in parsed.pod_level_requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = q
    if parsed.overhead:
        _add_into(reqs, parsed.overhead)
    return reqs


_DEFAULT_NON_ZERO: _Quantities = {
    CPU: DEFAULT_MILLI_CPU_REQUEST * _NANO_PER_MILLI,
    MEMORY: DEFAULT_MEMORY_REQUEST * _NANO,
}


# The last pod computed, by identity, with its result: callers typically ask for the requests
# and the non-zero requests of the same pod object one after the other.
_last: tuple[Mapping[str, Any], PodResources] | None = None


def _compute(pod: Mapping[str, Any]) -> PodResources:
    parsed = _parse_pod(pod)
    reqs = _pod_requests(parsed, None)

    if parsed.pod_level_requests is None:
        non_missing: _Quantities = _DEFAULT_NON_ZERO
    else:
        non_missing = {name: q for name, q in _DEFAULT_NON_ZERO.items() if name not in reqs}
    non_zero = _pod_requests(parsed, non_missing) if non_missing else reqs

    res = Resource()
    for name, q in reqs.items():
        if name != PODS:
            res._add_quantity(name, q)
    return PodResources(
        requests=res,
        non_zero_milli_cpu=_ceil_away(non_zero.get(CPU, 0), _NANO_PER_MILLI),
        non_zero_memory=_ceil_away(non_zero.get(MEMORY, 0), _NANO),
    )


def compute_pod_resources(pod: Mapping[str, Any]) -> PodResources:
    """Parse a pod once and compute both its requests and its non-zero cpu/memory.

    Follows ``PodInfo.CalculateResource``: without pod-level requests every container missing
    a cpu/memory request counts the default; with pod-level requests the default applies only
    to a resource that neither the pod level nor any container (nor the overhead) sets.

    The last result is remembered by the pod object's identity, so asking again for the same
    (unmodified) dict is free; pods are treated as immutable, as the API server's objects are.
    Each call returns its own ``Resource`` copy, safe to modify.
    """
    global _last
    last = _last
    if last is not None and last[0] is pod:
        result = last[1]
    else:
        key = _inputs_key(pod)
        hit = _by_inputs.get(key) if key is not None else None
        if hit is None:
            hit = _compute(pod)
            if key is not None:
                if len(_by_inputs) >= _BY_INPUTS_MAX:
                    _by_inputs.clear()
                _by_inputs[key] = hit
        result = hit
        _last = (pod, result)
    return PodResources(result.requests.clone(), result.non_zero_milli_cpu, result.non_zero_memory)


# Results by the text of everything _parse_pod reads: pods of one workload mostly share a few shapes
# (a Deployment's replicas, a trace's pod types), so a new pod object is usually a shape seen before.
_by_inputs: dict[str, PodResources] = {}
_BY_INPUTS_MAX = 4096


def _inputs_key(pod: Mapping[str, Any]) -> str | None:
    """``repr`` of the fields the requests depend on (None when they are not the JSON shapes the
    parser accepts, which it then reports). Equal keys mean equal inputs: repr tells ``"1"`` from
    ``1`` and nests exactly; a different field order only costs a miss."""
    spec = pod.get("spec")
    status = pod.get("status")
    if not isinstance(spec, dict) or not (status is None or isinstance(status, dict)):
        return None
    st = status or {}
    return repr((spec.get("containers"), spec.get("initContainers"), spec.get("overhead"), spec.get("resources"),
                 st.get("initContainerStatuses"), st.get("containerStatuses"), st.get("conditions")))


def pod_requests(pod: Mapping[str, Any]) -> Resource:
    """Effective requests of a pod (upstream ``PodRequests`` + ``Resource.Add``)."""
    return compute_pod_resources(pod).requests


def pod_non_zero_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(milli_cpu, memory) with the scheduler's defaults for containers that request neither."""
    r = compute_pod_resources(pod)
    return r.non_zero_milli_cpu, r.non_zero_memory
