"""DRAGpuScore: the GPU policies of :mod:`kubesched.plugins.gpu` (FGD, BestFit, ...) for GPUs claimed
through Dynamic Resource Allocation.

DynamicResources decides which nodes can satisfy a pod's claims and which devices it gets; upstream
ranks those nodes only by its prioritized-list preference, so a pod asking for one GPU lands on a
node without regard to the GPUs it strands. This Score plugin ranks the feasible nodes as GpuShare
does for extended resources: each node's GPUs are the devices its ResourceSlices publish for the
configured drivers, a GPU is taken when a claim's ``status.allocation`` holds it (or when a pod
reserved on the node in this scheduler is still being bound), and the pod's shape is its CPU and
memory with the whole GPUs its unallocated claims ask for. The device choice stays the allocator's.

Claims are whole devices: DRA devices are not split here (sharing a GPU through DRA's consumable
capacity is not modelled), so every GPU has 1000 or 0 milli-GPU left.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.api.dra.structured import gather_allocated_state
from kubesched.config.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Handle,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo
from kubesched.gorand import GoRand
from kubesched.plugins import names
from kubesched.plugins.gpu import MILLI, NodeGpuState, PodShape, Policy, make_policy
from kubesched.plugins.jsonview import get_obj

from .args import DRAGpuScoreArgs
from .devices import DeviceKey, GpuInventory, claim_gpu_request, gpus_by_node, pod_claim_names

__all__ = ["NAME", "DRAGpuScore"]

NAME = names.DRA_GPU_SCORE
RESOURCE_API = "resource.k8s.io/v1"
_STATE_KEY = f"PreScore{NAME}"

log = logging.getLogger("kubesched.plugins.dragpuscore")


@dataclass(slots=True)
class _ScoreState:
    shape: PodShape
    #: Each node's GPUs, from the slices once per cycle.
    gpus: dict[str, GpuInventory]
    held: set[DeviceKey]
    #: GPUs of pods reserved here whose claims do not show their allocation yet, by node.
    in_flight: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Reserved:
    node: str
    gpus: int
    claims: tuple[tuple[str, str], ...]


class DRAGpuScore(PreScorePlugin, ScorePlugin, ReservePlugin):
    """Score nodes for a pod's DRA GPU claims with a GPU placement policy (PreScore, Score, Reserve)."""

    name = NAME
    Args = DRAGpuScoreArgs

    def __init__(self, args: DRAGpuScoreArgs | None, handle: Handle) -> None:
        self.args = args or DRAGpuScoreArgs()
        errs = self.args.validate()
        if errs:
            raise ConfigError(errs)
        self.handle = handle
        self.policy: Policy = make_policy(
            self.args.scoring_policy, typical=self.args.typical(), rng=GoRand(self.args.random_seed)
        )
        #: Pods reserved by this scheduler, until their claims show the allocation.
        self._reserved: dict[str, _Reserved] = {}

    # ---- PreScore ------------------------------------------------------------------------------

    def _claims(self, pod: PodInfo) -> list[tuple[str, JSONObj]]:
        client = self.handle.client()
        out: list[tuple[str, JSONObj]] = []
        for name in pod_claim_names(pod.pod):
            claim = client.get_object(RESOURCE_API, "ResourceClaim", pod.namespace, name)
            if claim is not None:
                out.append((name, claim))
        return out

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        count, exact = 0, True
        for _, claim in self._claims(pod):
            req = claim_gpu_request(claim, self.args.device_class_names)
            count += req.count
            exact = exact and req.exact
        if count == 0 or not exact:
            return Status(Code.SKIP)
        client = self.handle.client()
        all_claims = client.list_objects(RESOURCE_API, "ResourceClaim")
        requests = pod.requests
        state.write(
            _STATE_KEY,
            _ScoreState(
                shape=PodShape(cpu=requests.milli_cpu, memory=requests.memory, gpu_milli=MILLI, gpu_count=count),
                gpus=gpus_by_node(
                    client.list_objects(RESOURCE_API, "ResourceSlice"), self.args.drivers, self.args.model_attribute
                ),
                held=gather_allocated_state(all_claims).allocated_devices,
                in_flight=self._in_flight(all_claims),
            ),
        )
        return None

    def _in_flight(self, claims: Sequence[JSONObj]) -> dict[str, int]:
        """GPUs of reserved pods whose claims are not all allocated in the API yet; entries whose
        claims are allocated are dropped, since the allocations now count them."""
        allocated = {
            (str(get_obj(c, "metadata").get("namespace", "")), str(get_obj(c, "metadata").get("name", "")))
            for c in claims
            if isinstance(c.get("status"), Mapping) and get_obj(c, "status").get("allocation")
        }
        out: dict[str, int] = {}
        for uid, r in list(self._reserved.items()):
            if all(key in allocated for key in r.claims):
                del self._reserved[uid]
                continue
            out[r.node] = out.get(r.node, 0) + r.gpus
        return out

    # ---- Score ---------------------------------------------------------------------------------

    def _node_state(self, s: _ScoreState, node_info: NodeInfo) -> NodeGpuState:
        inventory = s.gpus.get(node_info.name, GpuInventory())
        left = [0 if key in s.held else MILLI for key in inventory.devices]
        pending = s.in_flight.get(node_info.name, 0)
        for i in range(len(left)):
            if pending == 0:
                break
            if left[i]:
                left[i], pending = 0, pending - 1
        model = next((m for m in inventory.models if m), "")
        a, r = node_info.allocatable, node_info.requested
        return NodeGpuState(
            name=node_info.name,
            model=model,
            gpu_left=tuple(left),
            cpu_left=a.milli_cpu - r.milli_cpu,
            memory_left=a.memory - r.memory,
            pods=len(node_info.pods),
        )

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(_STATE_KEY)
        if not isinstance(s, _ScoreState):
            return 0, Status(Code.ERROR, f"reading {_STATE_KEY!r} from cycleState: not found")
        node = self._node_state(s, node_info)
        if sum(1 for g in node.gpu_left if g == MILLI) < s.shape.gpu_count:
            # DynamicResources found devices here that this view does not count as GPUs (another
            # driver or class): nothing to rank by.
            return MIN_NODE_SCORE, None
        value = self.policy.score(node, s.shape, None)
        return int(min(max(value, MIN_NODE_SCORE), MAX_NODE_SCORE)), None

    def score_extensions(self) -> None:
        return None

    # ---- Reserve / Unreserve -------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(_STATE_KEY)
        if isinstance(s, _ScoreState):
            claims = tuple((pod.namespace, name) for name in pod_claim_names(pod.pod))
            self._reserved[pod.uid] = _Reserved(node_name, s.shape.gpu_count, claims)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._reserved.pop(pod.uid, None)
