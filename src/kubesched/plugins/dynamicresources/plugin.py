"""DynamicResources: a pod's ResourceClaims must be allocated, or allocatable, on the node
(upstream ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``, v1.37.2).

PreEnqueue holds pods whose claims do not exist yet; PreFilter gathers the claims, restricts
nodes by the node selectors of allocated ones and builds the structured allocator once per cycle
(``kubesched.api.dra.structured``) over the cluster's ResourceSlices (with the taints of
DeviceTaintRules applied, DRADeviceTaintRules; ``kubesched.api.dra.taintrules``) and DeviceClasses
and the devices already taken; Filter asks it for each node; PostFilter deallocates a claim that
blocks the pod so it can be allocated elsewhere; Score prefers earlier ``firstAvailable``
subrequests; Reserve records the chosen allocations as in flight (the next pod's allocator sees
them taken);
PreBind writes ``status.allocation`` and ``status.reservedFor``, then (DRADeviceBindingConditions)
waits for the binding conditions of the allocated devices; Unreserve undoes both.

Device binding conditions (upstream's ``isClaimReadyForBinding``, ``isClaimTimeout``): Filter
marks an allocated claim unavailable when a binding failure condition is true or its
``bindingTimeout`` passed since ``allocationTimestamp`` (PostFilter then deallocates it). PreBind
polls the claims every 5 s until every binding condition is true, a failure condition is true, or
``bindingTimeout`` passes. The real backend blocks its binding thread; on a virtual clock the wait
is a :class:`~kubesched.framework.prebind_wait.PreBindWait` the binding cycle polls on timers.
The simulator has no driver to set the conditions: a device whose wait timed out there is not
offered again (what the KEP asks of the driver's controller: taint or remove it), so the
simulation ends.

Extended resources backed by DRA (DRAExtendedResource, upstream ``extendeddynamicresources.go``):
a pod requesting an extended resource that a DeviceClass provides gets a special claim, in memory
until PreBind (named ``<extended-resources>``); Filter gives it the node's requests (those the
node's allocatable does not cover), Reserve and PreBind allocate and create it (owned by the pod,
``generateName`` from the pod's name) and write ``status.extendedResourceClaimStatus``; a claim
left from an earlier attempt is deleted by PostFilter (Unreserve deletes one PreBind created).

Filter gives the allocator a deadline of ``filterTimeout`` (upstream's context); the search stops
there and the node gets upstream's timeout status.

Knowingly not done (upstream does): pod-group (workload) claims, node-allocatable mapped
devices, the binding-condition metrics.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.api.dra.extended_resource import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    ContainerExtendedResourceRequest,
    DeviceClassResolver,
    create_requests_and_mappings,
    is_dra_extended_resource_name,
)
from kubesched.api.dra.resourceclaim import can_be_reserved, is_reserved_for_pod
from kubesched.api.dra.structured import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    Allocator,
    CELCache,
    FailedAllocationOnNode,
    Features,
    new_allocator,
)
from kubesched.api.dra.structured import (
    DeviceClassLister as DeviceClassListerProtocol,
)
from kubesched.api.dra.taintrules import apply_device_taint_rules, device_taint_rule_api_version
from kubesched.api.errors import InvalidObjectError
from kubesched.api.nodeaffinity import NodeSelector
from kubesched.api.rfc3339 import parse_time
from kubesched.config.feature_gates import known_feature_gates
from kubesched.config.plugin_args import DynamicResourcesArgs
from kubesched.config.releases import (
    DEFAULT_RELEASE,
    DRA_FILTER_TIMEOUT_IS_ERROR,
    NO_DRA_DEALLOCATE_REASON,
    Release,
)
from kubesched.framework import MAX_NODE_SCORE
from kubesched.framework.clock import RealClock
from kubesched.framework.cluster import ObjectConflictError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    object_event,
)
from kubesched.framework.interfaces import (
    BatchScorePlugin,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    PostFilterPlugin,
    PreBindPreFlightPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
    ScoreExtensions,
)
from kubesched.framework.prebind_wait import PRE_BIND_WAIT, PreBindWait
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    JSONObj,
    JSONValue,
    NodeInfo,
    NodeScore,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.plugins import names
from kubesched.plugins.helper.normalize_score import default_normalize_score, default_normalize_score_batch

from .claims import allocation_of, as_list, as_map, claim_ref, foreach_pod_resource_claim
from .dra_manager import API_VERSION, ClaimTracker, DeviceClassLister, claim_uid, list_resource_slices
from .hints import is_schedulable_after_claim_change, is_schedulable_after_pod_change

__all__ = [
    "FINALIZER",
    "FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE",
    "NO_NEW_CLAIMS_TO_DEALLOCATE",
    "SPECIAL_CLAIM_IN_MEM_NAME",
    "STATE_KEY",
    "AllocatorFactory",
    "DynamicResources",
    "allocator_features",
    "pod_has_resource_claims",
]

#: specialClaimInMemName: the extended-resource claim before PreBind creates it (not a valid name,
#: so it never clashes with a real claim).
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"

STATE_KEY = names.DYNAMIC_RESOURCES
#: What v1.35/v1.36's PostFilter says for a pod without claims (v1.37: no reason).
NO_NEW_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
#: resourceapi.Finalizer: set on a claim before its allocation is written.
FINALIZER = "resource.kubernetes.io/delete-protection"
#: resourceapi.FirstAvailableDeviceRequestMaxSize: the Score of a subrequest counts down from it.
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
#: retry.DefaultRetry: attempts of PreBind's claim update on a conflict.
_BIND_ATTEMPTS = 5
#: PreBind polls the binding conditions this often (upstream's PollUntilContextTimeout interval).
BINDING_CONDITIONS_POLL_INTERVAL = 5.0
#: DynamicResourcesBindingTimeoutDefault: DynamicResourcesArgs.bindingTimeout when unset.
BINDING_TIMEOUT_DEFAULT = 600.0

AllocatorFactory = Callable[
    [Features, AllocatedState, DeviceClassListerProtocol, Sequence[JSONObj], CELCache], Allocator
]


def share_id(key: str) -> str:
    """A shared device's shareID: upstream draws a random UUID; here one derived from the share's
    key (claim uid, request, device, result index), so simulated runs reproduce."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched-share/{key}"))


def pod_has_resource_claims(pod: PodInfo) -> bool:
    return bool(pod.spec.get("resourceClaims"))


def _gate(release: Release, name: str) -> bool:
    spec = known_feature_gates(str(release)).get(name)
    return spec is not None and spec.default


def allocator_features(release: Release) -> Features:
    """Upstream ``AllocatorFeatures`` from the release's default feature gates."""
    gates = known_feature_gates(str(release))

    def on(name: str) -> bool:
        spec = gates.get(name)
        return spec is not None and spec.default

    return Features(
        admin_access=on("DRAAdminAccess"),
        prioritized_list=on("DRAPrioritizedList"),
        partitionable_devices=on("DRAPartitionableDevices"),
        device_taints=on("DRADeviceTaints"),
        device_binding_and_status=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
        consumable_capacity=on("DRAConsumableCapacity"),
    )


@dataclass
class _ClaimInfo:
    #: The node selector of the claim's allocation (None: any node).
    available_on_nodes: NodeSelector | None = None
    #: Set by Reserve, written by PreBind.
    allocation: JSONObj | None = None


@dataclass
class StateData:
    """Upstream ``stateData``: shared by reference across the cycle (``clone`` is itself)."""

    claims: list[JSONObj] = field(default_factory=list)
    allocator: Allocator | None = None
    unavailable_claims: set[int] = field(default_factory=set)
    informations: list[_ClaimInfo] = field(default_factory=list)
    #: Filter's allocation results per node name, one per unallocated claim in order.
    node_allocations: dict[str, list[dict[str, JSONValue]]] = field(default_factory=dict)
    #: The index of the extended-resource claim in ``claims`` (the last one), None without.
    extended_index: int | None = None
    #: Its UID before PreBind created it (what Reserve signalled as in flight).
    extended_initial_uid: str = ""
    #: The pod's requests (draExtendedResource.podScalarResources).
    pod_scalar_resources: dict[str, int] = field(default_factory=dict)
    #: Filter's node-specific extended-resource claim and its request mappings, per node.
    node_extended: dict[str, tuple[JSONObj, list[ContainerExtendedResourceRequest]]] = field(default_factory=dict)
    #: The DeviceClass mapping PreFilter saw.
    resolver: DeviceClassResolver | None = None

    def extended_claim(self) -> JSONObj | None:
        return self.claims[self.extended_index] if self.extended_index is not None else None

    def no_user_claim(self) -> bool:
        return len(self.claims) == (1 if self.extended_index is not None else 0)

    def clone(self) -> StateData:
        return self


def _unresolvable(reason: str) -> Status:
    """Upstream ``statusUnschedulable``: UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def _error(message: str) -> Status:
    return Status(Code.ERROR, message)


def _pod_ref(pod: PodInfo) -> dict[str, JSONValue]:
    """The ResourceClaimConsumerReference of a pod in ``status.reservedFor``."""
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


class DynamicResources(
    PreEnqueuePlugin,
    EnqueueExtensions,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    BatchScorePlugin,
    ScoreExtensions,
    ReservePlugin,
    PreBindPreFlightPlugin,
):
    """Dynamic Resource Allocation with structured parameters (see the module)."""

    name = names.DYNAMIC_RESOURCES
    args_type = DynamicResourcesArgs
    #: sign_pod reads only the spec (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def __init__(
        self,
        args: DynamicResourcesArgs | None = None,
        handle: Handle | None = None,
        *,
        allocator_factory: AllocatorFactory | None = None,
    ) -> None:
        self.args = args or DynamicResourcesArgs()
        self.handle = handle
        self.release: Release = handle.release if handle is not None else DEFAULT_RELEASE
        self.features = allocator_features(self.release)
        self.enable_extended_resource = _gate(self.release, "DRAExtendedResource")
        self.allocator_factory: AllocatorFactory = allocator_factory or functools.partial(
            new_allocator, share_id=share_id
        )
        self.cel_cache = CELCache()
        self._tracker: ClaimTracker | None = ClaimTracker(handle.client()) if handle is not None else None
        self._post_filter_reason = () if self.release.has(NO_DRA_DEALLOCATE_REASON) else (NO_NEW_CLAIMS_TO_DEALLOCATE,)
        #: Blocking waits (time.sleep) only on the real backend; a virtual clock gets a PreBindWait.
        self._real_clock = handle is not None and isinstance(handle.clock, RealClock)
        #: Simulator only: devices whose binding conditions timed out, no longer offered.
        self._unbindable: set[tuple[str, str, str]] = set()
        gates = known_feature_gates(str(self.release))
        taint_rules = gates.get("DRADeviceTaintRules")
        #: DRADeviceTaintRules: the API version DeviceTaintRules are read in (None: gate off).
        rules_on = taint_rules is not None and taint_rules.default
        self.device_taint_rules_api = device_taint_rule_api_version(self.release.minor) if rules_on else None
        timeout = self.args.binding_timeout
        self.binding_timeout = float(timeout) if timeout is not None else BINDING_TIMEOUT_DEFAULT

    @property
    def tracker(self) -> ClaimTracker | None:
        """The claims, in-flight allocations and assumed writes (None without a handle)."""
        return self._tracker

    # -- OpportunisticBatching ---------------------------------------------------------------
    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Upstream cannot tell whether claims are local to a node: pods with claims are not signable."""
        if pod_has_resource_claims(pod):
            return [], Status(Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
        return [], None

    # -- events --------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        def claim_hint(pod: JSONObj, old: object, new: object) -> QueueingHint:
            if self._tracker is None:
                return QueueingHint.QUEUE
            return is_schedulable_after_claim_change(self._tracker, pod, old, new, self.release)

        def pod_hint(pod: JSONObj, old: object, new: object) -> QueueingHint:
            if self._tracker is None:
                return QueueingHint.QUEUE
            return is_schedulable_after_pod_change(self._tracker, pod, old, new, self.release)

        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(object_event("ResourceClaim", add_update | ActionType.DELETE), claim_hint),
            # Upstream's UpdatePodGeneratedResourceClaim: kubesched reports a status change of
            # the pod's resourceClaimStatuses as a plain pod update, so the hint checks the UID.
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_OTHER), pod_hint),
            ClusterEventWithHint(object_event("DeviceClass", add_update)),
            ClusterEventWithHint(object_event("ResourceSlice", add_update)),
        ]

    # -- PreEnqueue ----------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if self._tracker is None or not pod_has_resource_claims(pod):
            return None
        _, err = foreach_pod_resource_claim(pod.pod, self._tracker, self.release)
        return _unresolvable(err) if err is not None else None

    # -- PreFilter -----------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        s = StateData()
        state.write(STATE_KEY, s)
        claims: list[JSONObj] = []
        if pod_has_resource_claims(pod):
            if self._tracker is None or self.handle is None:
                return None, _error("DynamicResources needs a handle to read ResourceClaims")
            found, err = foreach_pod_resource_claim(pod.pod, self._tracker, self.release)
            if err is not None:
                return None, _unresolvable(err)
            claims = [c for _, c in found]
        extended = self._pre_filter_extended_resources(pod, s)
        if extended is not None:
            s.extended_index = len(claims)
            s.extended_initial_uid = claim_uid(extended)
            claims.append(extended)
        if not claims:
            return None, Status(Code.SKIP)
        assert self._tracker is not None and self.handle is not None

        to_allocate = 0
        s.informations = [_ClaimInfo() for _ in claims]
        for index, claim in enumerate(claims):
            allocation = allocation_of(claim)
            if allocation is not None and not can_be_reserved(claim) and not is_reserved_for_pod(pod.pod, claim):
                return None, _unresolvable("resourceclaim in use")
            if allocation is not None:
                selector = allocation.get("nodeSelector")
                if selector is not None:
                    try:
                        s.informations[index].available_on_nodes = NodeSelector(as_map(selector))
                    except InvalidObjectError as e:
                        return None, _error(str(e))
                continue
            to_allocate += 1
            if self._tracker.get_pending_allocation(claim_uid(claim)) is not None:
                return None, _unresolvable(f"resource claim {claim_ref(claim)} is in the process of being allocated")
            if index == s.extended_index:
                continue  # no spec yet (or one from an earlier attempt: Filter refuses it)
            status = self._check_requests(claim)
            if status is not None:
                return None, status

        if to_allocate:
            client = self.handle.client()
            try:
                allocated = self._tracker.gather_allocated_state(self.features.consumable_capacity)
                if self._unbindable:
                    allocated = AllocatedState(
                        allocated.allocated_devices | self._unbindable,
                        allocated.allocated_shared_device_ids,
                        allocated.aggregated_capacity,
                    )
                classes = DeviceClassLister(client)
                slices: Sequence[JSONObj] = list_resource_slices(client)
                if self.device_taint_rules_api is not None:
                    rules = client.list_objects(self.device_taint_rules_api, "DeviceTaintRule")
                    slices = apply_device_taint_rules(slices, rules, classes, self.cel_cache)
                s.allocator = self.allocator_factory(
                    self.features,
                    allocated,
                    classes,
                    slices,
                    self.cel_cache,
                )
            except AllocationError as e:
                return None, _error(str(e))
            except Exception as e:  # a bug in the allocator must not escape the cycle
                return None, _error(f"structured allocator: {e!r}")
        s.claims = claims
        return None, None

    def _pre_filter_extended_resources(self, pod: PodInfo, s: StateData) -> JSONObj | None:
        """Upstream ``preFilterExtendedResources``: the pod's extended-resource claim when it requests
        an extended resource some DeviceClass provides: the one an earlier attempt created (owned by
        the pod, annotated), else a new one in memory with a temporary UID and no requests."""
        if not self.enable_extended_resource or self.handle is None or self._tracker is None:
            return None
        requests = pod.requests.scalar_resources
        if not any(q and is_dra_extended_resource_name(n) for n, q in requests.items()):
            return None
        resolver = DeviceClassResolver(self.handle.client().list_objects(API_VERSION, "DeviceClass"))
        mapped = (q and is_dra_extended_resource_name(n) and resolver.get_device_class(n) for n, q in requests.items())
        if not any(mapped):
            return None
        s.pod_scalar_resources = dict(requests)
        s.resolver = resolver
        for claim in self._tracker.list_claims():
            md = as_map(claim.get("metadata"))
            if as_map(md.get("annotations")).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
                continue
            for owner in as_list(md.get("ownerReferences")):
                owner = as_map(owner)
                if owner.get("name") == pod.name and owner.get("controller") is True and owner.get("uid") == pod.uid:
                    return claim
        return {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaim",
            "metadata": {
                "namespace": pod.namespace,
                "name": SPECIAL_CLAIM_IN_MEM_NAME,
                "uid": str(uuid.uuid4()),
                "generateName": f"{pod.name}-extended-resources-",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid, "controller": True}
                ],
                "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            },
            "spec": {},
        }

    def _filter_extended_resources(
        self, s: StateData, pod: PodInfo, node_info: NodeInfo
    ) -> tuple[JSONObj | None, list[ContainerExtendedResourceRequest], Status | None]:
        """Upstream ``filterExtendedResources``: the claim's requests for this node (the DRA-backed
        resources its allocatable does not have), None when there is nothing to allocate."""
        claim = s.extended_claim()
        if claim is None or s.resolver is None:
            return None, [], None
        if as_map(as_map(claim.get("spec")).get("devices")).get("requests") is not None:
            # From an earlier attempt: PostFilter deletes it, then the pod is retried anew.
            return None, [], _unresolvable("cannot schedule extended resource claim")
        allocatable = node_info.allocatable.scalar_resources
        needed: list[str] = []
        for name, quantity in s.pod_scalar_resources.items():
            if not quantity or not is_dra_extended_resource_name(name):
                continue
            have = allocatable.get(name)
            if s.resolver.get_device_class(name) is not None and not have:
                needed.append(name)
            elif have is None:
                return None, [], _unresolvable("cannot fit resource")
        if (s.no_user_claim() and not needed) or allocation_of(claim) is not None:
            return None, [], None
        requests, mappings = create_requests_and_mappings(pod.pod, needed, s.resolver)
        node_claim = {**claim, "spec": {"devices": {"requests": requests}}}
        return node_claim, mappings, None

    def _check_requests(self, claim: JSONObj) -> Status | None:
        """Each request names an existing DeviceClass (upstream's loop over Devices.Requests)."""
        devices = as_map(as_map(claim.get("spec")).get("devices"))
        requests = devices.get("requests") or []
        if not isinstance(requests, list):
            return _unresolvable(f"resource claim {claim_ref(claim)}: spec.devices.requests: expected a list")
        for request in requests:
            request = as_map(request)
            name = str(request.get("name") or "")
            exactly, first = request.get("exactly"), request.get("firstAvailable")
            if isinstance(exactly, Mapping):
                status = self._validate_device_class(exactly.get("deviceClassName"), name)
            elif isinstance(first, list) and first:
                if not self.features.prioritized_list:
                    return _unresolvable(
                        f"resource claim {claim_ref(claim)}, request {name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                status = None
                for sub in first:
                    sub = as_map(sub)
                    status = status or self._validate_device_class(
                        sub.get("deviceClassName"), f"{name}/{sub.get('name') or ''}"
                    )
            else:
                return _unresolvable(f"resource claim {claim_ref(claim)}, request {name}: unknown request type")
            if status is not None:
                return status
        return None

    def _validate_device_class(self, class_name: object, request_name: str) -> Status | None:
        if not isinstance(class_name, str) or not class_name:
            return _error(f"request {request_name}: unsupported request type")
        assert self.handle is not None
        if self.handle.client().get_object(API_VERSION, "DeviceClass", "", class_name) is None:
            return _unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    def pre_filter_extensions(self) -> None:
        return None

    @staticmethod
    def _state(state: CycleState) -> StateData | None:
        data = state.get(STATE_KEY)
        return data if isinstance(data, StateData) else None

    # -- Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return _error(f'reading "{STATE_KEY}" from cycleState: not found')
        if not s.claims:
            return None
        node_claim, mappings, status = self._filter_extended_resources(s, pod, node_info)
        if status is not None:
            return status
        if node_claim is None and s.no_user_claim():
            return None  # extended resources all from the node's allocatable (device plugins)
        node = node_info.node or {}
        unavailable: list[int] = []
        for index, info in enumerate(s.informations):
            if info.available_on_nodes is not None and not info.available_on_nodes.match(node):
                unavailable.append(index)
                continue
            claim = s.claims[index]
            if allocation_of(claim) is None or not self.features.device_binding_and_status:
                continue
            # Allocated: a failed or timed-out binding makes PostFilter deallocate it, so that
            # other devices can be tried.
            ready, failed = is_claim_ready_for_binding(claim)
            if failed is not None or (not ready and self._is_claim_timeout(claim)):
                unavailable.append(index)
        allocations: list[dict[str, JSONValue]] = []
        if s.allocator is not None:
            pending = [
                node_claim if i == s.extended_index and node_claim is not None else c
                for i, c in enumerate(s.claims)
                if allocation_of(c) is None
            ]
            started = time.monotonic()
            timeout = self.args.filter_timeout
            timed_out = False
            try:
                allocations = s.allocator.allocate(node, pending, deadline=started + timeout if timeout else None)
            except AllocationTimeout:  # the search stopped at the deadline (upstream: ctx expired)
                timed_out = True
            except FailedAllocationOnNode as e:  # upstream ErrFailedAllocationOnNode: this node only
                return Status(Code.UNSCHEDULABLE, str(e))
            except AllocationError as e:
                return _error(str(e))
            except Exception as e:  # a bug in the allocator must not escape the cycle
                return _error(f"node {node_info.name}: structured allocator: {e!r}")
            # An allocator that does not look at the deadline is judged when it returns.
            if timed_out or (timeout and time.monotonic() - started > timeout):
                if self.release.has(DRA_FILTER_TIMEOUT_IS_ERROR):
                    return _error(f"node {node_info.name}: timed out trying to allocate devices")
                return _unresolvable("timed out trying to allocate devices")
            if not isinstance(allocations, list) or len(allocations) != len(pending):
                return _unresolvable("cannot allocate all claims")
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return _unresolvable("resourceclaim not available on the node")
        if s.allocator is not None:
            s.node_allocations[node_info.name] = allocations
            if node_claim is not None:
                s.node_extended[node_info.name] = (node_claim, mappings)
        return None

    # -- PostFilter ----------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        s = self._state(state)
        if s is None or not s.claims:
            # v1.35/v1.36: "no new claims to deallocate", in every FailedScheduling message;
            # v1.37 rejects without a reason (kubernetes#140222).
            return None, Status(Code.UNSCHEDULABLE, *self._post_filter_reason)
        assert self.handle is not None
        extended = s.extended_claim()
        for index in sorted(s.unavailable_claims):
            if index == s.extended_index:
                if _is_special(extended):
                    continue
                break  # handled below
            claim = s.claims[index]
            reserved = as_map(claim.get("status")).get("reservedFor") or []
            if not isinstance(reserved, list):
                continue
            if not reserved or (len(reserved) == 1 and as_map(reserved[0]).get("uid") == pod.uid):
                status = {
                    k: v
                    for k, v in as_map(claim.get("status")).items()
                    if k not in ("reservedFor", "allocation", "devices")
                }
                try:
                    self.handle.client().update_object_status(claim, status)
                except Exception as e:  # an API error of the write: the cycle's Error
                    return None, _error(str(e))
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if extended is not None and not _is_special(extended):
            # Allocated or reserved in an earlier attempt: delete it, the pod starts over.
            try:
                self._delete_claim(extended)
            except Exception as e:  # an API error of the write: the cycle's Error
                return None, _error(str(e))
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        still = () if self.release.has(NO_DRA_DEALLOCATE_REASON) else ("still not schedulable",)
        return None, Status(Code.UNSCHEDULABLE, *still)

    # -- Score ---------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Upstream ``computeScore``: each allocated ``firstAvailable`` subrequest scores
        ``8 - its index``, so nodes that can satisfy earlier (preferred) alternatives win."""
        if not self.features.prioritized_list:
            return 0, None
        s = self._state(state)
        if s is None or not s.claims:
            return 0, None
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0, None
        score, unallocated = 0, 0
        for claim in s.claims:
            allocation = allocation_of(claim)
            if allocation is None:
                if unallocated >= len(allocations):
                    return 0, _error(
                        f"number of allocations {len(allocations)} is smaller than number of claims needing allocation"
                    )
                allocation = allocations[unallocated]
                unallocated += 1
            results = as_list(as_map(allocation.get("devices")).get("results"))
            chosen = {
                str(r.get("request")) for r in results if isinstance(r, Mapping) and "/" in str(r.get("request") or "")
            }
            for raw in as_list(as_map(as_map(claim.get("spec")).get("devices")).get("requests")):
                request = as_map(raw)
                if isinstance(request.get("exactly"), Mapping):
                    continue
                for i, sub in enumerate(as_list(request.get("firstAvailable"))):
                    if f"{request.get('name')}/{as_map(sub).get('name')}" in chosen:
                        score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
        return score, None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> IntArray:
        """Zero everywhere for a pod without claims to allocate (every pod reaches Score: upstream
        has no PreScore here); per node otherwise."""
        out = np.zeros(len(indices), dtype=np.int64)
        s = self._state(state)
        if s is None or not s.node_allocations or not self.features.prioritized_list:
            return out
        infos = snapshot.node_infos
        for k, i in enumerate(indices):
            out[k] = self.score(state, pod, infos[int(i)])[0]
        return out

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_batch(
        self, state: CycleState, pod: PodInfo, scores: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        return default_normalize_score_batch(scores, False)

    # -- Reserve / Unreserve -------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return _error(f'reading "{STATE_KEY}" from cycleState: not found')
        pending = [i for i, c in enumerate(s.claims) if allocation_of(c) is None]
        if not pending or s.allocator is None or self._tracker is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if all(i == s.extended_index for i in pending):
                return None  # only the extended-resource claim, satisfied by device plugins here
            return _error("claim allocation not found for node")
        if len(allocations) != len(pending):
            return _error(
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims to allocate, "
                f"want {len(pending)} claims"
            )
        for allocation, index in zip(allocations, pending, strict=True):
            s.informations[index].allocation = allocation
            claim = s.claims[index]
            if index == s.extended_index and node_name in s.node_extended:
                claim = s.node_extended[node_name][0]  # the claim as instantiated for the node
            md = dict(as_map(claim.get("metadata")))
            finalizers = [f for f in as_list(md.get("finalizers")) if isinstance(f, str)]
            md["finalizers"] = finalizers if FINALIZER in finalizers else [*finalizers, FINALIZER]
            allocated = {**claim, "metadata": md, "status": {**as_map(claim.get("status")), "allocation": allocation}}
            self._tracker.signal_claim_pending_allocation(claim_uid(claim), allocated)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s = self._state(state)
        if s is None or self._tracker is None or self.handle is None:
            return
        for index, claim in enumerate(s.claims):
            if index == s.extended_index:
                continue  # below
            md = as_map(claim.get("metadata"))
            if self._tracker.maybe_remove_claim_pending_allocation(claim_uid(claim), False):
                self._tracker.assumed_claim_restore(str(md.get("namespace") or ""), str(md.get("name") or ""))
            if allocation_of(claim) is not None and is_reserved_for_pod(pod.pod, claim):
                status = dict(as_map(claim.get("status")))
                status["reservedFor"] = [
                    r for r in as_list(status.get("reservedFor")) if as_map(r).get("uid") != pod.uid
                ]
                try:
                    self.handle.client().update_object_status(claim, status)
                except Exception:  # upstream logs the failed patch and goes on
                    continue
        self._unreserve_extended_resource_claim(s)

    def _unreserve_extended_resource_claim(self, s: StateData) -> None:
        """Upstream ``unreserveExtendedResourceClaim``: no longer in flight, and deleted when
        PreBind had created it already."""
        claim = s.extended_claim()
        if claim is None or self._tracker is None:
            return
        md = as_map(claim.get("metadata"))
        if self._tracker.maybe_remove_claim_pending_allocation(s.extended_initial_uid, False):
            self._tracker.assumed_claim_restore(str(md.get("namespace") or ""), str(md.get("name") or ""))
        if _is_special(claim):
            return
        try:
            self._delete_claim(claim)
        except Exception:  # upstream logs the failed delete and goes on
            return

    def _delete_claim(self, claim: JSONObj) -> None:
        """Upstream ``deleteClaim``: drop the finalizer (re-reading after a conflict), then delete."""
        assert self.handle is not None
        client = self.handle.client()
        md = as_map(claim.get("metadata"))
        namespace, name = str(md.get("namespace") or ""), str(md.get("name") or "")
        last: Exception | None = None
        for attempt in range(_BIND_ATTEMPTS):
            if attempt:
                current = client.get_object(API_VERSION, "ResourceClaim", namespace, name)
                if current is None:
                    raise _BindError(
                        f'get resourceclaim {namespace}/{name}: resourceclaims.resource.k8s.io "{name}" not found'
                    )
                claim = current
            finalizers = [f for f in as_list(as_map(claim.get("metadata")).get("finalizers")) if f != FINALIZER]
            try:
                client.update_object({**claim, "metadata": {**as_map(claim.get("metadata")), "finalizers": finalizers}})
            except ObjectConflictError as e:
                last = e
                continue
            except Exception as e:
                raise _BindError(f"update resourceclaim {namespace}/{name}: {e}") from e
            break
        else:
            raise _BindError(f"update resourceclaim {namespace}/{name}: {last}")
        client.delete(claim)

    # -- PreBind -------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return _error(f'reading "{STATE_KEY}" from cycleState: not found')
        return Status(Code.SKIP) if not s.claims else None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return _error(f'reading "{STATE_KEY}" from cycleState: not found')
        bound: list[int] = []
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod.pod, claim):
                continue
            try:
                if index == s.extended_index:
                    s.claims[index] = self._bind_extended_claim(s, index, pod, node_name)
                else:
                    s.claims[index] = self._bind_claim(s, index, pod)
            except _BindError as e:  # in flight until Unreserve, as for any claim
                return _error(str(e))
            bound.append(index)
        if self._tracker is not None:
            for index in bound:
                if s.informations[index].allocation is not None:
                    uid = s.extended_initial_uid if index == s.extended_index else claim_uid(s.claims[index])
                    self._tracker.maybe_remove_claim_pending_allocation(uid, True)
        if not self.features.device_binding_and_status or not has_binding_conditions(s.claims):
            return None
        # Wait for the devices to be attached (upstream: PollUntilContextTimeout, 5 s, immediate).
        if self.handle is not None:
            self.handle.event_recorder().eventf(
                pod.pod,
                None,
                "Normal",
                "BindingConditionsPending",
                "Scheduling",
                f"waiting for binding conditions for device on node {node_name}",
            )
        deadline = self._clock_now() + self.binding_timeout
        ready, err = self._is_pod_ready_for_binding(s)
        if err is not None:
            return _error(err)
        if ready:
            return None
        if self._real_clock:
            while self._clock_now() < deadline:
                time.sleep(min(BINDING_CONDITIONS_POLL_INTERVAL, max(0.0, deadline - self._clock_now())))
                ready, err = self._is_pod_ready_for_binding(s)
                if err is not None:
                    return _error(err)
                if ready:
                    return None
            return _error("device binding timeout")

        def poll() -> tuple[bool, str | None]:
            ready, err = self._is_pod_ready_for_binding(s)
            if not ready and err is None and self._clock_now() >= deadline:
                self._give_up_binding(s)
            return ready, err

        state.write(
            PRE_BIND_WAIT,
            PreBindWait(self.name, BINDING_CONDITIONS_POLL_INTERVAL, deadline, poll, "device binding timeout"),
        )
        return None


    def _bind_extended_claim(self, s: StateData, index: int, pod: PodInfo, node_name: str) -> JSONObj:
        """Upstream ``bindClaim`` for the extended-resource claim: create it (PreBind is where it
        reaches the API server), then allocate and reserve it as any claim, then write the pod's
        ``status.extendedResourceClaimStatus``."""
        assert self.handle is not None
        claim = s.claims[index]
        allocation = s.informations[index].allocation
        if allocation is None and as_map(as_map(claim.get("spec")).get("devices")).get("requests") is None:
            return claim  # extended resources satisfied by device plugins
        client = self.handle.client()
        created: JSONObj | None = None
        if _is_special(claim):
            node = s.node_extended.get(node_name)
            if node is None:
                raise _BindError(f"extended resource claim not found for node {node_name}")
            md = {k: v for k, v in as_map(node[0].get("metadata")).items() if k not in ("name", "uid")}
            new = {k: v for k, v in node[0].items() if k != "status"}
            new["metadata"] = md
            try:
                created = client.create(new)
            except Exception as e:
                raise _BindError(f"create claim for extended resources {md.get('namespace') or ''}/: {e}") from e
            s.claims[index] = created
        claim = self._bind_claim(s, index, pod, created=created)
        node = s.node_extended.get(node_name)
        mappings = node[1] if node is not None else []
        if not mappings:
            raise _BindError(
                "nil or empty request mappings, no update of pod "
                f"{pod.namespace}/{pod.name} ExtendedResourceClaimStatus"
            )
        name = str(as_map(claim.get("metadata")).get("name") or "")
        patch: JSONObj = {
            "extendedResourceClaimStatus": {
                "requestMappings": [m.to_json() for m in mappings],
                "resourceClaimName": name,
            }
        }
        try:
            client.patch_pod_status(pod.pod, patch)
        except Exception as e:
            raise _BindError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {e}") from e
        return claim

    def _give_up_binding(self, s: StateData) -> None:
        """Simulator only: no driver will ever attach these devices; stop offering them."""
        for claim in s.claims:
            for r in as_list(as_map(as_map(allocation_of(claim)).get("devices")).get("results")):
                r = as_map(r)
                if r.get("bindingConditions"):
                    self._unbindable.add((str(r.get("driver")), str(r.get("pool")), str(r.get("device"))))

    def _is_pod_ready_for_binding(self, s: StateData) -> tuple[bool, str | None]:
        """Upstream ``isPodReadyForBinding``: every claim (re-read) ready; an error when a
        binding failed or a claim's binding timed out."""
        for index, claim in enumerate(s.claims):
            if self._tracker is not None:
                md = as_map(claim.get("metadata"))
                current = self._tracker.get(str(md.get("namespace") or ""), str(md.get("name") or ""))
                if current is None:
                    return False, f'resourceclaim.resource.k8s.io "{md.get("name") or ""}" not found'
                s.claims[index] = claim = current
            ready, err = is_claim_ready_for_binding(claim)
            if err is not None:
                return False, err
            if not ready:
                if self._is_claim_timeout(claim):
                    return False, f"claim {as_map(claim.get('metadata')).get('name') or ''} binding timeout"
                return False, None
        return True, None

    def _is_claim_timeout(self, claim: JSONObj) -> bool:
        """Upstream ``isClaimTimeout``: a result with binding conditions, allocated more than
        ``bindingTimeout`` ago (a missing or malformed ``allocationTimestamp`` never times out)."""
        if not self.features.device_binding_and_status:
            return False
        allocation = allocation_of(claim)
        if allocation is None:
            return False
        stamp = parse_time(allocation.get("allocationTimestamp"))
        if stamp is None:
            return False
        results = as_list(as_map(allocation.get("devices")).get("results"))
        if not any(as_map(r).get("bindingConditions") is not None for r in results):
            return False
        return stamp + self.binding_timeout < self._clock_now()

    def _clock_now(self) -> float:
        return self.handle.clock.now() if self.handle is not None else time.time()

    def _bind_claim(self, s: StateData, index: int, pod: PodInfo, created: JSONObj | None = None) -> JSONObj:
        """Upstream ``bindClaim``: add the allocation (with the finalizer first) and the pod's
        reservation, re-reading the claim after a conflict, at most five times."""
        assert self.handle is not None and self._tracker is not None
        client = self.handle.client()
        claim = s.claims[index]
        allocation = s.informations[index].allocation
        ref = claim_ref(claim)
        last: Exception | None = None
        what = "add allocation and reservation to" if allocation is not None else "add reservation to"
        md = as_map(claim.get("metadata"))
        namespace, name = str(md.get("namespace") or ""), str(md.get("name") or "")
        for _ in range(_BIND_ATTEMPTS):
            # Our clients write status unconditionally; the API server would refuse a stale copy
            # (409) and RetryOnConflict re-reads it: do the same when the store has moved on.
            current = client.get_object(API_VERSION, "ResourceClaim", namespace, name)
            if current is None and created is not None:
                current = created  # just created: the informer may not have it yet
            if current is None:
                raise _BindError(f'{what} claim {ref}: resourceclaims.resource.k8s.io "{name}" not found')
            if _resource_version(current) != _resource_version(claim):
                claim = current
            if as_map(claim.get("metadata")).get("deletionTimestamp"):
                raise _BindError(f"claim {ref} got deleted in the meantime")
            status = dict(as_map(claim.get("status")))
            try:
                if allocation is not None:
                    if allocation_of(claim) is not None:
                        raise _BindError(f"claim {ref} got allocated elsewhere in the meantime")
                    finalizers = list(as_list(as_map(claim.get("metadata")).get("finalizers")))
                    if FINALIZER not in finalizers:
                        md = {**as_map(claim.get("metadata")), "finalizers": [*finalizers, FINALIZER]}
                        try:
                            claim = client.update_object({**claim, "metadata": md})
                        except ObjectConflictError:
                            raise
                        except Exception as e:
                            raise _BindError(f"add finalizer to claim {ref}: {e}") from e
                    status["allocation"] = dict(allocation)
                reserved = status.get("reservedFor")
                status["reservedFor"] = [*(reserved if isinstance(reserved, list) else []), _pod_ref(pod)]
                if self.features.device_binding_and_status:
                    alloc = status.get("allocation")
                    if not isinstance(alloc, Mapping):
                        raise _BindError(f"claim {ref} got deallocated elsewhere in the meantime")
                    if not alloc.get("allocationTimestamp"):
                        status["allocation"] = {**alloc, "allocationTimestamp": self._now()}
                try:
                    client.update_object_status(claim, status)
                except ObjectConflictError:
                    raise
                except Exception as e:
                    raise _BindError(f"{what} claim {ref}: {e}") from e
            except ObjectConflictError as e:
                last = e
                continue
            written = {**claim, "status": status}
            self._tracker.assume_claim_after_api_call(written, claim)
            return written
        raise _BindError(f"{what} claim {ref}: {last}")

    def _now(self) -> str:
        """metav1.Now() as RFC 3339 (seconds), from the handle's clock."""
        now = self.handle.clock.now() if self.handle is not None else time.time()
        return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _is_special(claim: JSONObj | None) -> bool:
    """The extended-resource claim still in memory (``isSpecialClaimName``)."""
    return claim is not None and as_map(claim.get("metadata")).get("name") == SPECIAL_CLAIM_IN_MEM_NAME
def has_binding_conditions(claims: Sequence[JSONObj]) -> bool:
    """Upstream ``hasBindingConditions``: some allocated device of the claims has binding conditions."""
    for claim in claims:
        for r in as_list(as_map(as_map(allocation_of(claim)).get("devices")).get("results")):
            if as_map(r).get("bindingConditions"):
                return True
    return False


def _condition(conditions: object, type_: str) -> Mapping[str, JSONValue] | None:
    """apimeta.FindStatusCondition."""
    for c in as_list(conditions):
        if isinstance(c, Mapping) and c.get("type") == type_:
            return c
    return None


def is_claim_ready_for_binding(claim: JSONObj) -> tuple[bool, str | None]:
    """Upstream ``isClaimReadyForBinding``: ready when, for every result with binding conditions,
    the device's entry in ``status.devices`` has them all True; an error when one of its binding
    failure conditions is True. Without an allocation: not ready."""
    allocation = allocation_of(claim)
    if allocation is None:
        return False, None
    status_devices = as_list(as_map(claim.get("status")).get("devices"))
    for raw in as_list(as_map(allocation.get("devices")).get("results")):
        result = as_map(raw)
        conditions = [c for c in as_list(result.get("bindingConditions")) if isinstance(c, str)]
        if not conditions:
            continue
        device = next(
            (
                as_map(d)
                for d in status_devices
                if as_map(d).get("device") == result.get("device")
                and as_map(d).get("driver") == result.get("driver")
                and as_map(d).get("pool") == result.get("pool")
            ),
            None,
        )
        if device is None:
            return False, None
        for name in as_list(result.get("bindingFailureConditions")):
            failed = _condition(device.get("conditions"), str(name))
            if failed is not None and failed.get("status") == "True":
                claim_name = as_map(claim.get("metadata")).get("name") or ""
                return False, (
                    f"claim {claim_name} binding failed: reason={failed.get('reason') or ''}, "
                    f"message={_go_quote(str(failed.get('message') or ''))}"
                )
        for name in conditions:
            cond = _condition(device.get("conditions"), name)
            if cond is None or cond.get("status") != "True":
                return False, None
    return True, None


def _go_quote(text: str) -> str:
    """Go's %q for the usual printable text (JSON string escaping is the same there)."""
    return json.dumps(text, ensure_ascii=False)


def _resource_version(obj: JSONObj) -> str:
    return str(as_map(obj.get("metadata")).get("resourceVersion") or "")


class _BindError(Exception):
    """A claim could not be bound: PreBind's Error, with upstream's message."""
