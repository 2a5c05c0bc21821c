"""The structured-parameters allocator: devices for a node's claims, as upstream's
k8s.io/dynamic-resource-allocation/structured (internal/stable/allocator_stable.go) searches them.

For one node: the pools whose slices the node can use (``nodeName``, ``nodeSelector``,
``allNodes``; each pool at its newest generation), sorted by driver and pool name; then a
depth-first search over the claims' requests in order, each device taken in pool and slice order
when it is free (not in the allocated state, not taken earlier in this search), its class's and the
request's CEL selectors are all true, and each ``matchAttribute`` constraint on the request still
holds. ``firstAvailable`` tries the subrequests in order. The first complete assignment found is
the result, so equal inputs give upstream's devices.

Partitionable devices share their pool's counters and device taints keep devices from requests
that do not tolerate them, each when its feature is on. With DRAConsumableCapacity (upstream's
experimental allocator, structured/internal/experimental): a device with
``allowMultipleAllocations`` is shared, each request taking a share (a ``shareID``) and consuming
its ``capacity.requests`` rounded by the capacity's ``requestPolicy`` (``consumedCapacity``), next
to the shares of other claims (AllocatedState.aggregated_capacity); a shared device consumes its
counters once; ``distinctAttribute`` constraints want a different value on every device. With
device binding conditions on (``Features.device_binding_and_status``) devices with
``bindingConditions`` are offered, their pools after the others (upstream's GatherPools in
pools_experimental.go), the results carry the conditions, and a ``bindsToNode`` device pins the
allocation to the node; with it off they are not offered. Taints from DeviceTaintRules reach the
allocator already applied to the slices' devices (DynamicResources applies them with
``kubesched.api.dra.taintrules``). Not modelled: multi-host pools (slices of one pool for other
nodes). Conservative every time: a pod may stay
pending that upstream would place, never the other way round.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api.nodeaffinity import NodeSelector
from kubesched.api.quantity import parse_quantity

from .cel import CELCache, CELError, device_variable
from .types import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    DeviceClassLister,
    DeviceID,
    FailedAllocationOnNode,
    Features,
)

__all__ = ["StableAllocator"]

#: Upstream's resource.AllocationResultsMaxSize: at most this many devices in one claim.
MAX_RESULTS = 32


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(slots=True)
class _Device:
    key: DeviceID
    data: Mapping[str, Any]
    #: The slice's (name, resourceVersion or generation), for the CEL result cache.
    version: object
    node_local: str = ""
    selector: Mapping[str, Any] | None = None
    _var: Any = None
    _caps: dict[str, _Capacity] | None = None

    @property
    def capacities(self) -> dict[str, _Capacity]:
        """The device's ``capacity`` entries, parsed once (a malformed value counts as zero)."""
        if self._caps is None:
            self._caps = _parse_capacities(self.data.get("capacity"))
        return self._caps

    @property
    def variable(self) -> Any:
        if self._var is None:
            self._var = device_variable(self.key[0], self.data)
        return self._var

    def has_attribute(self, qualified: str) -> bool:
        """Whether the device lists the attribute at all (with a value or, malformed, without)."""
        attrs = _map(self.data.get("attributes"))
        domain, _, ident = qualified.rpartition("/")
        return qualified in attrs or (domain == self.key[0] and ident in attrs)

    def attribute(self, qualified: str) -> object:
        """A device attribute by its qualified name (``domain/id``); unqualified names in the
        slice are in the driver's domain."""
        attrs = _map(self.data.get("attributes"))
        domain, _, ident = qualified.rpartition("/")
        raw = attrs.get(qualified)
        if raw is None and domain == self.key[0]:
            raw = attrs.get(ident)
        value = _map(raw)
        for kind in ("string", "int", "bool", "version"):
            if kind in value:
                return (kind, value[kind])
        return None


@dataclass(slots=True)
class _Pool:
    driver: str
    name: str
    generation: int
    slice_count: int
    slices: int = 0
    devices: list[_Device] = field(default_factory=list)
    #: Why the pool cannot be used (a device name twice at the newest generation).
    invalid: str = ""
    #: Shared counters of partitionable devices: counter set -> counter -> amount.
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    @property
    def incomplete(self) -> bool:
        return self.slices < self.slice_count


def _amount(value: object) -> Fraction | None:
    try:
        return parse_quantity(str(value)) if value is not None else None
    except ValueError:
        return None


def _consumption(device: Mapping[str, Any]) -> list[tuple[str, dict[str, Fraction]]]:
    """A partition's ``consumesCounters``: (counter set, counter -> amount)."""
    out: list[tuple[str, dict[str, Fraction]]] = []
    for c in _list(device.get("consumesCounters")):
        c = _map(c)
        amounts: dict[str, Fraction] = {}
        for name, counter in _map(c.get("counters")).items():
            amount = _amount(_map(counter).get("value"))
            amounts[str(name)] = amount if amount is not None else Fraction(0)
        out.append((str(c.get("counterSet") or ""), amounts))
    return out


@dataclass(frozen=True, slots=True)
class _Capacity:
    """One entry of a device's ``capacity`` with its ``requestPolicy`` (upstream DeviceCapacity)."""

    value: Fraction
    text: str
    default: tuple[Fraction, str] | None = None
    valid_values: tuple[tuple[Fraction, str], ...] = ()
    has_range: bool = False
    minimum: tuple[Fraction, str] | None = None
    maximum: Fraction | None = None
    step: Fraction | None = None
    step_text: str = ""


def _quantity(value: object) -> tuple[Fraction, str] | None:
    """A quantity with its canonical text (as upstream writes a parsed resource.Quantity back)."""
    amount = _amount(value)
    return None if amount is None else (amount, _format(amount, binary=str(value).strip().endswith("i")))


def _parse_capacities(raw: object) -> dict[str, _Capacity]:
    out: dict[str, _Capacity] = {}
    for name, entry in _map(raw).items():
        entry = _map(entry)
        value = _quantity(entry.get("value")) or (Fraction(0), "0")
        policy = _map(entry.get("requestPolicy"))
        valid_range = policy.get("validRange")
        rng = _map(valid_range)
        step = _quantity(rng.get("step"))
        maximum = _quantity(rng.get("max"))
        out[str(name)] = _Capacity(
            value=value[0],
            text=value[1],
            default=_quantity(policy.get("default")),
            valid_values=tuple(q for q in map(_quantity, _list(policy.get("validValues"))) if q is not None),
            has_range=isinstance(valid_range, Mapping),
            minimum=_quantity(rng.get("min")),
            maximum=maximum[0] if maximum else None,
            step=step[0] if step and step[0] > 0 else None,
            step_text=step[1] if step else "",
        )
    return out


def _consumed(requested: tuple[Fraction, str] | None, cap: _Capacity) -> tuple[Fraction, str]:
    """upstream ``calculateConsumedCapacity``: no request takes the policy's default, else the
    whole capacity; a request is rounded up to the valid range (min, then min + n * step) or to
    the next valid value."""
    if requested is None:
        return cap.default or (cap.value, cap.text)
    if cap.has_range and cap.minimum is not None:
        low = cap.minimum
        if requested[0] < low[0]:
            return low
        if cap.step is None:
            return requested
        steps = math.ceil((requested[0] - low[0]) / cap.step)
        amount = low[0] + steps * cap.step
        return amount, _format(amount, binary=cap.step_text.endswith("i"))
    if cap.valid_values:
        for valid in cap.valid_values:
            if requested[0] <= valid[0]:
                return valid
    return requested


def _violates(amount: Fraction, cap: _Capacity) -> bool:
    """upstream ``violatesPolicy``: the default is always fine; otherwise within max and on a
    step from min, or one of the valid values."""
    if cap.default is not None and amount == cap.default[0]:
        return False
    if cap.has_range:
        if cap.maximum is not None and amount > cap.maximum:
            return True
        if cap.step is not None:
            low = cap.minimum[0] if cap.minimum is not None else Fraction(0)
            return (amount - low) % cap.step != 0
        return False
    if cap.valid_values:
        return all(amount != valid[0] for valid in cap.valid_values)
    return False


def _format(amount: Fraction, binary: bool = False) -> str:
    """A computed quantity's canonical text (resource.Quantity's String) in the step's format:
    binary (``Ki`` .. ``Ei``) or decimal (``k`` .. ``E``) suffixes for whole multiples, milli units
    for fractions."""
    if amount.denominator != 1:
        milli = amount * 1000
        return f"{milli.numerator}m" if milli.denominator == 1 else str(float(amount))
    value, base = amount.numerator, 1024 if binary else 1000
    suffixes = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei") if binary else ("k", "M", "G", "T", "P", "E")
    suffix = ""
    for next_suffix in suffixes:
        if value == 0 or value % base:
            break
        value //= base
        suffix = next_suffix
    return f"{value}{suffix}"


def _new_share_id(key: str) -> str:
    """upstream ``GenerateShareID``: a random UUID (``key`` names the share; unused here)."""
    return str(uuid.uuid4())


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """upstream resourceclaim.ToleratesTaint: effect (empty matches all), key (empty with Exists
    matches all), and for Equal the value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")


def _selector(raw: object) -> tuple[Mapping[str, Any] | None, NodeSelector | None]:
    """A node selector as given and parsed; a malformed one selects nothing (parsed None)."""
    if not isinstance(raw, Mapping):
        return None, None
    try:
        return raw, NodeSelector(raw)
    except Exception:  # InvalidObjectError and its aggregate
        return raw, None


@dataclass(slots=True)
class _Placement:
    """Where a slice (or, with per-device node selection, a device) may be used."""

    node_name: str = ""
    all_nodes: bool = False
    selector: Mapping[str, Any] | None = None
    parsed: NodeSelector | None = None

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> _Placement:
        node_name = spec.get("nodeName")
        if isinstance(node_name, str) and node_name:
            return cls(node_name=node_name)
        if spec.get("allNodes") is True:
            return cls(all_nodes=True)
        raw, parsed = _selector(spec.get("nodeSelector"))
        return cls(selector=raw, parsed=parsed)

    def usable_on(self, node: Mapping[str, Any] | None, name: str) -> bool:
        if self.node_name:
            return self.node_name == name
        if self.all_nodes:
            return True
        return self.parsed is not None and node is not None and self.parsed.match(node)


@dataclass(slots=True)
class _Slice:
    """One ResourceSlice, parsed once per allocator (each node's search reuses it)."""

    driver: str
    pool: str
    generation: int
    slice_count: int
    placement: _Placement
    per_device: bool
    counter_sets: list[tuple[str, dict[str, Fraction]]]
    #: With per-device node selection, each device's own placement.
    devices: list[tuple[_Device, _Placement | None]]


def _parse_slice(s: Mapping[str, Any]) -> _Slice:
    spec = _map(_map(s).get("spec"))
    per_device = spec.get("perDeviceNodeSelection") is True
    placement = _Placement() if per_device else _Placement.of(spec)
    driver = str(spec.get("driver") or "")
    pool = _map(spec.get("pool"))
    pool_name = str(pool.get("name") or "")
    gen = pool.get("generation")
    generation = gen if isinstance(gen, int) and not isinstance(gen, bool) else 0
    count = pool.get("resourceSliceCount")
    slice_count = count if isinstance(count, int) and not isinstance(count, bool) else 1
    counter_sets: list[tuple[str, dict[str, Fraction]]] = []
    for cs in _list(spec.get("sharedCounters")):
        cs = _map(cs)
        counters: dict[str, Fraction] = {}
        for cname, counter in _map(cs.get("counters")).items():
            amount = _amount(_map(counter).get("value"))
            if amount is not None:
                counters[str(cname)] = amount
        counter_sets.append((str(cs.get("name") or ""), counters))
    md = _map(_map(s).get("metadata"))
    version = (md.get("name"), md.get("resourceVersion"), generation)
    devices: list[tuple[_Device, _Placement | None]] = []
    for d in _list(spec.get("devices")):
        if not isinstance(d, Mapping) or not isinstance(d.get("name"), str):
            continue
        own = _Placement.of(d) if per_device else None
        where = own or placement
        devices.append((_Device((driver, pool_name, d["name"]), d, version, where.node_name, where.selector), own))
    return _Slice(driver, pool_name, generation, slice_count, placement, per_device, counter_sets, devices)


def _gather_pools(slices: Iterable[_Slice], node: Mapping[str, Any] | None, partitionable: bool = False) -> list[_Pool]:
    """upstream ``GatherPools``: the pools ``node`` can use, each at its newest generation, in
    driver and pool order. Slices with per-device node selection and the pool's counter sets are
    DRAPartitionableDevices' (without it, such a slice is ignored)."""
    name = str(_map(_map(node).get("metadata")).get("name", "")) if node is not None else ""
    pools: dict[tuple[str, str], _Pool] = {}
    counter_set_names: dict[tuple[str, str], list[str]] = {}
    for sl in slices:
        if sl.per_device and not partitionable:
            continue
        if not sl.per_device and not sl.placement.usable_on(node, name):
            continue
        key = (sl.driver, sl.pool)
        current = pools.get(key)
        if current is None or sl.generation > current.generation:
            current = pools[key] = _Pool(sl.driver, sl.pool, sl.generation, sl.slice_count)
        elif sl.generation < current.generation:
            continue
        current.slices += 1
        for cs_name, counters in sl.counter_sets:
            current.counter_sets.setdefault(cs_name, {}).update(counters)
        if current.slices == 1:
            counter_set_names[key] = []
        counter_set_names[key] += [cs_name for cs_name, _ in sl.counter_sets]
        for device, own in sl.devices:
            if own is None or own.usable_on(node, name):
                current.devices.append(device)
    for gathered in pools.values():
        seen: set[str] = set()
        for device in gathered.devices:
            if device.key[2] in seen:
                gathered.invalid = f"duplicate device name {device.key[2]}"
            seen.add(device.key[2])
        if partitionable:
            gathered.invalid = gathered.invalid or _invalid_counters(
                gathered, counter_set_names.get((gathered.driver, gathered.name), [])
            )
    return [pools[k] for k in sorted(pools)]


def _invalid_counters(pool: _Pool, set_names: list[str]) -> str:
    """upstream's pool validation for partitionable devices: each counter set once in the pool,
    and every counter a device consumes in one of the pool's counter sets."""
    seen: set[str] = set()
    for set_name in set_names:
        if set_name in seen:
            return f"duplicate counter set name {set_name}"
        seen.add(set_name)
    for device in pool.devices:
        for set_name, amounts in _consumption(device.data):
            counters = pool.counter_sets.get(set_name)
            if counters is None:
                return f"device {device.key[2]} consumes counters of unknown counter set {set_name}"
            for counter in amounts:
                if counter not in counters:
                    return f"device {device.key[2]} consumes unknown counter {counter} of counter set {set_name}"
    return ""


@dataclass(slots=True)
class _Request:
    """One request (or the subrequest chosen for it) of one claim."""

    claim: int
    claim_ref: str
    name: str
    parent: str
    class_name: str
    class_selectors: tuple[str, ...]
    selectors: tuple[str, ...]
    all_devices: bool
    count: int
    admin_access: bool
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: ``capacity.requests`` (DRAConsumableCapacity): capacity name -> amount and its text.
    capacity: Mapping[str, tuple[Fraction, str]] | None = None


@dataclass(slots=True)
class _Constraint:
    claim: int
    requests: frozenset[str]
    attribute: str
    value: object = None
    users: int = 0
    #: A ``distinctAttribute`` constraint: the values taken so far, each device's different.
    distinct: bool = False
    taken: list[object] = field(default_factory=list)

    def applies(self, req: _Request) -> bool:
        return req.claim == self.claim and (
            not self.requests or req.parent in self.requests or req.name in self.requests
        )


def _cel_expressions(selectors: object, where: str) -> tuple[str, ...]:
    out = []
    for sel in _list(selectors):
        expr = _map(_map(sel).get("cel")).get("expression")
        if not isinstance(expr, str) or not expr:
            raise AllocationError(f"{where}: CEL expression empty (unsupported selector type?)")
        out.append(expr)
    return tuple(out)


def _kobj(md: Mapping[str, Any]) -> str:
    """klog.KObj's text: ``namespace/name``, or ``name`` without a namespace."""
    ns, name = md.get("namespace"), md.get("name")
    return f"{ns}/{name}" if ns else str(name or "")


class StableAllocator:
    """upstream ``internal/stable.Allocator`` for the features in :class:`Features`' defaults."""

    def __init__(
        self,
        features: Features,
        allocated_state: AllocatedState,
        classes: DeviceClassLister,
        slices: Sequence[Mapping[str, Any]],
        cel_cache: CELCache,
        share_id: Callable[[str], str] = _new_share_id,
    ) -> None:
        self.features = features
        self.allocated = allocated_state.allocated_devices
        #: DRAConsumableCapacity: capacity other claims' shares of a device consume, and every
        #: device they share (whose counters are taken, upstream's IsDeviceAllocated).
        self.aggregated = allocated_state.aggregated_capacity
        self.in_use = self.allocated | {d[:3] for d in allocated_state.allocated_shared_device_ids}
        self.in_use |= set(self.aggregated)
        #: Makes a result's shareID from a key naming the share (claim, request, device, result
        #: index): injectable, so the simulation draws reproducible ones and tests fixed ones.
        self.share_id = share_id
        self.classes = classes
        #: Every slice parsed once; node-local ones indexed by node (each node's search reads
        #: its own and the others, not all of them).
        #: In name order (stable), as upstream's buildPool takes a pool's slices, so a node's
        #: indices in ascending order are its slices in name order.
        by_name = sorted(slices, key=lambda sl: str(_map(_map(sl).get("metadata")).get("name") or ""))
        self._slices = [_parse_slice(sl) for sl in by_name]
        self._by_node: dict[str, list[int]] = {}
        self._elsewhere: list[int] = []
        for i, sl in enumerate(self._slices):
            if sl.placement.node_name:
                self._by_node.setdefault(sl.placement.node_name, []).append(i)
            else:
                self._elsewhere.append(i)
        self.cel = cel_cache

    # -- requests --------------------------------------------------------------------------------

    def _class(self, claim_ref: str, request: str, name: object) -> tuple[str, tuple[str, ...], Mapping[str, Any]]:
        if not isinstance(name, str) or not name:
            raise AllocationError(
                f"claim {claim_ref}, request {request}: missing device class name (unsupported request type?)"
            )
        cls = self.classes.get(name)
        if cls is None:
            raise AllocationError(f"claim {claim_ref}, request {request}: could not retrieve device class {name}")
        spec = _map(cls.get("spec"))
        return name, _cel_expressions(spec.get("selectors"), f"device class {name}"), cls

    def _exact(self, claim_index: int, claim_ref: str, name: str, parent: str, body: Mapping[str, Any]) -> _Request:
        cls_name, cls_selectors, _ = self._class(claim_ref, name, body.get("deviceClassName"))
        admin = body.get("adminAccess") is True
        if admin and not self.features.admin_access:
            raise AllocationError(
                f"claim {claim_ref}, request {name}: admin access is requested, but the feature is disabled"
            )
        capacity = self._capacity_requests(claim_ref, name, parent, body.get("capacity"))
        mode = body.get("allocationMode") or "ExactCount"
        count = body.get("count", 1)
        if mode == "ExactCount":
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise AllocationError(f"claim {claim_ref}, request {name}: invalid count {count!r}")
        elif mode != "All":
            raise AllocationError(f"claim {claim_ref}, request {name}: unsupported count mode {mode}")
        return _Request(
            claim=claim_index,
            claim_ref=claim_ref,
            name=name,
            parent=parent,
            class_name=cls_name,
            class_selectors=cls_selectors,
            selectors=_cel_expressions(body.get("selectors"), f"claim {claim_ref}, request {name}"),
            tolerations=tuple(_map(t) for t in _list(body.get("tolerations"))),
            all_devices=mode == "All",
            count=count if mode == "ExactCount" else 0,
            admin_access=admin,
            capacity=capacity,
        )

    def _capacity_requests(
        self, claim_ref: str, name: str, parent: str, raw: object
    ) -> Mapping[str, tuple[Fraction, str]] | None:
        """A request's ``capacity.requests``; with DRAConsumableCapacity off, upstream's error."""
        if raw is None:
            return None
        if not self.features.consumable_capacity:
            what = f"request {name}" if name == parent else f"subrequest {name.partition('/')[2]}"
            raise AllocationError(
                f"claim {claim_ref}, {what}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
            )
        out: dict[str, tuple[Fraction, str]] = {}
        for cname, value in _map(_map(raw).get("requests")).items():
            amount = _quantity(value)
            if amount is None:
                raise AllocationError(f"claim {claim_ref}, request {name}: invalid capacity request {cname}: {value!r}")
            out[str(cname)] = amount
        return out

    def _requests(self, claims: Sequence[Mapping[str, Any]]) -> tuple[list[list[_Request]], list[_Constraint]]:
        """Per request of every claim, the alternatives to try in order (one unless firstAvailable)."""
        options: list[list[_Request]] = []
        constraints: list[_Constraint] = []
        for ci, claim in enumerate(claims):
            md = _map(claim.get("metadata"))
            ref = _kobj(md)
            devices = _map(_map(claim.get("spec")).get("devices"))
            for r in _list(devices.get("requests")):
                r = _map(r)
                name = str(r.get("name") or "")
                if r.get("exactly") is not None:
                    options.append([self._exact(ci, ref, name, name, _map(r.get("exactly")))])
                elif r.get("firstAvailable") is not None:
                    if not self.features.prioritized_list:
                        raise AllocationError(
                            f"claim {ref}, request {name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled"
                        )
                    alternatives = [
                        self._exact(ci, ref, f"{name}/{_map(sub).get('name', '')}", name, _map(sub))
                        for sub in _list(r.get("firstAvailable"))
                    ]
                    if not alternatives:
                        raise AllocationError(f"claim {ref}, request {name}: no subrequests")
                    options.append(alternatives)
                else:
                    raise AllocationError(f"claim {ref}, request {name}: neither exactly nor firstAvailable")
            # upstream: the claim's devices at least (the fewest of each firstAvailable) within the
            # limit of an allocation result.
            least = sum(min(a.count for a in opts) for opts in options if opts and opts[0].claim == ci)
            if least > MAX_RESULTS:
                raise AllocationError(
                    f"claim {ref}: number of requested devices {least} exceeds the claim limit of {MAX_RESULTS}"
                )
            for index, c in enumerate(_list(devices.get("constraints"))):
                c = _map(c)
                attribute = c.get("matchAttribute")
                distinct = c.get("distinctAttribute") if attribute is None else None
                if distinct is not None:
                    if not self.features.consumable_capacity:
                        raise AllocationError(f"claim {ref}: distinctAttribute constraints are not supported")
                    attribute = distinct
                if not isinstance(attribute, str) or not attribute:
                    raise AllocationError(
                        f"claim {ref}, constraint #{index}: empty constraint (unsupported constraint type?)"
                    )
                names = frozenset(str(n) for n in _list(c.get("requests")))
                constraints.append(_Constraint(ci, names, attribute, distinct=distinct is not None))
        return options, constraints

    # -- search ----------------------------------------------------------------------------------

    def _selected(self, req: _Request, dev: _Device) -> bool:
        """The class's selectors, then the request's (upstream ``isSelectable``)."""
        if dev.data.get("consumesCounters") and not self.features.partitionable_devices:
            return False  # a partition of a device: only with DRAPartitionableDevices
        if dev.data.get("bindingConditions") and not self.features.device_binding_and_status:
            return False  # binding conditions: only with DRADeviceBindingConditions (and device status)
        if self.features.device_taints:
            for taint in _list(dev.data.get("taints")):
                taint = _map(taint)
                if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
                    _tolerates(t, taint) for t in req.tolerations
                ):
                    return False
        for owner, exprs in (
            (f"class {req.class_name}", req.class_selectors),
            (f"claim {req.claim_ref}", req.selectors),
        ):
            for i, expr in enumerate(exprs):
                try:
                    if not self.cel.matches(expr, (dev.key, dev.version), dev.variable):
                        return False
                except CELError as err:
                    raise AllocationError(f"{owner}: selector #{i}: CEL {err}") from None
        return True

    def allocate(
        self, node: Mapping[str, Any] | None, claims: Sequence[Mapping[str, Any]], *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """``deadline`` (time.monotonic()): the search gives up with AllocationTimeout once it
        passes, as upstream's allocator stops when the Filter's context expires (filterTimeout)."""
        options, constraints = self._requests(claims)
        name = str(_map(_map(node).get("metadata")).get("name", "")) if node is not None else ""
        indices = sorted(self._by_node.get(name, []) + self._elsewhere)
        pools = _gather_pools((self._slices[i] for i in indices), node, self.features.partitionable_devices)
        if self.features.device_binding_and_status:
            # upstream GatherPools: pools with binding conditions last, so devices usable without
            # waiting for a driver come first (both groups in pool order; the sort is stable).
            pools.sort(key=_has_binding_conditions)
        # Pools being updated (not every slice of the newest generation seen) and invalid pools
        # give no devices, as upstream's search skips them.
        devices = [d for p in pools if not p.incomplete and not p.invalid for d in p.devices]
        incomplete = [p for p in pools if p.incomplete]
        #: Devices taken in this search, with the claims that took them (upstream allocatingDevices).
        picked: dict[DeviceID, set[int]] = {}
        pool_of = {(p.driver, p.name): p for p in pools}
        #: Counters left per pool (counter set -> counter -> amount), after allocated devices and
        #: those taken in this search (upstream checkAvailableCounters).
        left: dict[tuple[str, str], dict[str, dict[str, Fraction]]] = {}

        def counters_left(pool: _Pool) -> dict[str, dict[str, Fraction]]:
            key = (pool.driver, pool.name)
            if key not in left:
                avail = {cs: dict(counters) for cs, counters in pool.counter_sets.items()}
                for d in pool.devices:
                    if d.key in self.in_use:
                        for cs, amounts in _consumption(d.data):
                            for name, amount in amounts.items():
                                if name in avail.get(cs, {}):
                                    avail[cs][name] -= amount
                left[key] = avail
            return left[key]

        def counters_fit(dev: _Device) -> bool:
            pool = pool_of.get((dev.key[0], dev.key[1]))
            if pool is None:
                return False
            avail = counters_left(pool)
            for cs, amounts in _consumption(dev.data):
                for name, amount in amounts.items():
                    if name in avail.get(cs, {}) and avail[cs][name] < amount:
                        return False
            return True

        def consume(dev: _Device, sign: int) -> None:
            pool = pool_of.get((dev.key[0], dev.key[1]))
            if pool is None:
                return
            avail = counters_left(pool)
            for cs, amounts in _consumption(dev.data):
                for name, amount in amounts.items():
                    if name in avail.get(cs, {}):
                        avail[cs][name] -= sign * amount

        order: list[tuple[_Request, _Device]] = []
        #: DRAConsumableCapacity: per entry of ``order``, the capacity its share of a device
        #: consumes (None for a device given whole); per device, the shares and capacity this
        #: search takes (upstream allocatingCapacity).
        consumed: list[dict[str, tuple[Fraction, str]] | None] = []
        shares: dict[DeviceID, int] = {}
        allocating: dict[DeviceID, dict[str, Fraction]] = {}

        def shared(dev: _Device) -> bool:
            """A device several requests and claims may each take a share of."""
            return self.features.consumable_capacity and dev.data.get("allowMultipleAllocations") is True

        def new_counters(dev: _Device) -> bool:
            """Whether taking ``dev`` consumes its counters: a shared device consumes them once."""
            if not dev.data.get("consumesCounters"):
                return False
            return not shared(dev) or (not shares.get(dev.key) and dev.key not in self.in_use)

        def capacity_fits(
            req: _Request, dev: _Device, in_search: bool = True
        ) -> dict[str, tuple[Fraction, str]] | None:
            """upstream ``CmpRequestOverCapacity``: the capacity ``req`` consumes of ``dev``, or None
            when the device lacks a requested capacity, a policy refuses the amount or what others
            hold (and, ``in_search``, what this search takes) leaves too little."""
            caps = dev.capacities
            requested = req.capacity or {}
            if any(name not in caps for name in requested):
                return None
            held = self.aggregated.get(dev.key, {})
            taking = allocating.get(dev.key, {}) if in_search else {}
            out: dict[str, tuple[Fraction, str]] = {}
            for name, cap in caps.items():
                amount = _consumed(requested.get(name), cap)
                if _violates(amount[0], cap):
                    return None
                if held.get(name, Fraction(0)) + amount[0] + taking.get(name, Fraction(0)) > cap.value:
                    return None
                out[name] = amount
            return out

        def free(dev: _Device, req: _Request) -> bool:
            """Admin access may share a device with other claims (and allocated ones), not within
            its own claim; anything else needs a device nobody holds or is taking."""
            takers = picked.get(dev.key, set())
            if req.admin_access:
                return req.claim not in takers
            return not takers and dev.key not in self.allocated

        def fits_constraints(req: _Request, dev: _Device) -> list[_Constraint] | None:
            used = []
            for c in constraints:
                if not c.applies(req):
                    continue
                value = dev.attribute(c.attribute)
                if c.distinct:
                    if value is None and dev.has_attribute(c.attribute):
                        raise AllocationError(
                            f"claim {req.claim_ref}, request {req.name}: device {'/'.join(dev.key)}, "
                            f"attribute {c.attribute}: unsupported attribute value"
                        )
                    if value is None or value in c.taken:
                        return None
                elif value is None or (c.users and value != c.value):
                    return None
                used.append(c)
            return used

        def take(
            req: _Request, dev: _Device, used: list[_Constraint], share: dict[str, tuple[Fraction, str]] | None = None
        ) -> None:
            if new_counters(dev):
                consume(dev, +1)
            if shared(dev):
                shares[dev.key] = shares.get(dev.key, 0) + 1
                taking = allocating.setdefault(dev.key, {})
                for name, (amount, _) in (share or {}).items():
                    taking[name] = taking.get(name, Fraction(0)) + amount
                consumed.append(share or {})
            else:
                picked.setdefault(dev.key, set()).add(req.claim)
                consumed.append(None)
            order.append((req, dev))
            for c in used:
                if c.distinct:
                    c.taken.append(dev.attribute(c.attribute))
                    continue
                if c.users == 0:
                    c.value = dev.attribute(c.attribute)
                c.users += 1

        def give_back(req: _Request, dev: _Device, used: list[_Constraint]) -> None:
            share = consumed.pop()
            if share is not None:
                shares[dev.key] -= 1
                for name, (amount, _) in share.items():
                    allocating[dev.key][name] -= amount
            else:
                picked[dev.key].discard(req.claim)
            if new_counters(dev):
                consume(dev, -1)
            order.pop()
            for c in used:
                if c.distinct:
                    c.taken.pop()
                    continue
                c.users -= 1

        def place(ri: int) -> bool:
            if ri == len(options):
                return True
            for req in options[ri]:
                candidates = [d for d in devices if self._selected(req, d)]
                if self.features.consumable_capacity:
                    # upstream: devices whose capacity cannot serve the request are not
                    # candidates ("all" of them are those that can, given other claims' shares).
                    candidates = [d for d in candidates if capacity_fits(req, d, in_search=False) is not None]
                if req.all_devices:
                    if incomplete:
                        raise AllocationError(
                            f"claim {req.claim_ref}, request {req.name}: asks for all devices, but resource pool "
                            f"{incomplete[0].driver}/{incomplete[0].name} is currently being updated"
                        )
                    if not candidates or not all(free(d, req) for d in candidates):
                        continue
                    need = len(candidates)
                else:
                    need = req.count
                if pick(ri, req, candidates, need, 0):
                    return True
            return False

        def pick(ri: int, req: _Request, candidates: list[_Device], need: int, start: int) -> bool:
            if need == 0:
                return place(ri + 1)
            for i in range(start, len(candidates)):
                if deadline is not None and time.monotonic() > deadline:
                    raise AllocationTimeout("timed out trying to allocate devices")
                if len(candidates) - i < need and (req.all_devices or not any(shared(d) for d in candidates[i:])):
                    return False
                dev = candidates[i]
                if not free(dev, req):
                    continue
                if new_counters(dev) and not counters_fit(dev):
                    continue
                used = fits_constraints(req, dev)
                if used is None:
                    if req.all_devices:
                        raise AllocationError(
                            f"claim {req.claim_ref}, request {req.name}: cannot add device "
                            f"{'/'.join(dev.key)} because a claim constraint would not be satisfied"
                        )
                    continue
                share = capacity_fits(req, dev) if self.features.consumable_capacity else None
                if self.features.consumable_capacity and share is None:
                    continue
                take(req, dev, used, share)
                # upstream searches every device again for a request's next device: a shared one
                # may serve the same request twice (not with "all", where each is taken once).
                again = i if shared(dev) and not req.all_devices else i + 1
                if pick(ri, req, candidates, need - 1, again):
                    return True
                give_back(req, dev, used)
            return False

        if not place(0):
            if any(p.invalid for p in pools):
                # Not fatal: other nodes may do; reported only if every node fails.
                raise FailedAllocationOnNode("invalid resource pools were encountered")
            return []
        return self._results(claims, options, order, node, consumed)

    def _results(
        self,
        claims: Sequence[Mapping[str, Any]],
        options: list[list[_Request]],
        order: list[tuple[_Request, _Device]],
        node: Mapping[str, Any] | None,
        consumed: Sequence[Mapping[str, tuple[Fraction, str]] | None] = (),
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        node_name = str(_map(_map(node).get("metadata")).get("name", "")) if node is not None else ""
        for ci, claim in enumerate(claims):
            results: list[dict[str, Any]] = []
            local_first = ""
            selectors: list[Mapping[str, Any]] = []
            chosen: dict[str, _Request] = {}
            for index, (req, dev) in enumerate(order):
                if req.claim != ci:
                    continue
                chosen[req.parent] = req
                entry: dict[str, Any] = {
                    "request": req.name,
                    "driver": dev.key[0],
                    "pool": dev.key[1],
                    "device": dev.key[2],
                }
                if req.admin_access:
                    entry["adminAccess"] = True
                share = consumed[index] if index < len(consumed) else None
                if share is not None:
                    md = _map(claim.get("metadata"))
                    owner = md.get("uid") or _kobj(md)
                    entry["shareID"] = self.share_id(f"{owner}/{req.name}/{'/'.join(dev.key)}/{len(results)}")
                    if share:
                        entry["consumedCapacity"] = {name: text for name, (_, text) in share.items()}
                binds_to_node = False
                if self.features.device_binding_and_status:
                    for key in ("bindingConditions", "bindingFailureConditions"):
                        if dev.data.get(key):
                            entry[key] = list(_list(dev.data.get(key)))
                    binds_to_node = dev.data.get("bindsToNode") is True
                results.append(entry)
                if dev.node_local:
                    local_first = local_first or dev.node_local
                elif binds_to_node and node_name:
                    # bindsToNode: the allocation is pinned to the node it was made for.
                    local_first = local_first or node_name
                elif dev.selector is not None:
                    selectors.append(dev.selector)
            config: list[dict[str, Any]] = []
            # Class configuration once per class, for the requests that used it (upstream's order:
            # the claim's requests in order), then the claim's own for the requests allocated.
            by_class: dict[str, list[str]] = {}
            for alternatives in options:
                used = chosen.get(alternatives[0].parent) if alternatives and alternatives[0].claim == ci else None
                if used is not None:
                    by_class.setdefault(used.class_name, []).append(used.name)
            for class_name, names in by_class.items():
                cls = self.classes.get(class_name) or {}
                for cfg in _list(_map(cls.get("spec")).get("config")):
                    config.append({"source": "FromClass", "requests": list(names), **_map(cfg)})
            allocated = {r.name for r in chosen.values()} | set(chosen)
            for cfg in _list(_map(_map(claim.get("spec")).get("devices")).get("config")):
                cfg = _map(cfg)
                wanted = _list(cfg.get("requests"))
                if not wanted or any(w in allocated for w in wanted):
                    config.append({"source": "FromClaim", **dict(cfg)})
            devices: dict[str, Any] = {"results": results}
            if config:
                devices["config"] = config
            allocation: dict[str, Any] = {"devices": devices}
            selector = _node_selector(local_first, selectors)
            if selector is not None:
                allocation["nodeSelector"] = selector
            out.append(allocation)
        return out


def _has_binding_conditions(pool: _Pool) -> bool:
    """upstream poolHasBindingConditions: some device of the pool sets bindingConditions."""
    return any(d.data.get("bindingConditions") is not None for d in pool.devices)


def _node_selector(node_name: str, selectors: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """upstream ``createNodeSelector``: a node-local device pins the claim to its node; otherwise
    the requirements of the devices' one-term node selectors, each once, in one term; none when
    every device is available everywhere."""
    if node_name:
        return {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
        }
    fields: list[Any] = []
    expressions: list[Any] = []
    for sel in selectors:
        terms = _list(sel.get("nodeSelectorTerms"))
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        for raw in terms:
            for key, into in (("matchFields", fields), ("matchExpressions", expressions)):
                for req in _list(_map(raw).get(key)):
                    if req not in into:
                        into.append(req)
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if fields:
        term["matchFields"] = fields
    if expressions:
        term["matchExpressions"] = expressions
    return {"nodeSelectorTerms": [term]}
