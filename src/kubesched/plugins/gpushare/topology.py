"""Where a node's GPUs sit: NVLink/PCIe groups and NUMA zones, and packing a job into them.

Two sources, both optional:

* the node annotation ``kubesched.io/gpu-groups``: groups of GPU indexes that talk over NVLink (or
  one PCIe switch), ``;`` between groups, ``,`` or ``a-b`` ranges inside one, e.g.
  ``"0,1,2,3;4,5,6,7"`` or ``"0-3;4-7"``; it must name every GPU of the node exactly once;
* a NodeResourceTopology object (``topology.node.k8s.io/v1alpha2``, named after the node): its zones
  of type ``Node`` are the NUMA zones, each holding ``capacity`` of ``nvidia.com/gpu``; GPU indexes
  are dealt to the zones in zone-name order (``node-0`` gets the first ones), the order in which the
  device plugin enumerates GPUs by PCI address.

The *groups* a policy packs into are the annotation's groups when there are some, else the NUMA
zones; with both, the NUMA zones break ties between placements spanning as many groups. A node
with neither is one flat group.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubesched.framework.types import JSONObj
from kubesched.plugins.jsonview import get_list, get_obj

from .requests import ANNOTATION_GPU_GROUPS, RESOURCE_GPU

__all__ = [
    "NRT_API_VERSION",
    "NRT_KIND",
    "GpuTopology",
    "TopologyError",
    "node_topology",
    "pack",
    "parse_gpu_groups",
    "zones_from_nrt",
]

NRT_API_VERSION = "topology.node.k8s.io/v1alpha2"
NRT_KIND = "NodeResourceTopology"

Groups = tuple[tuple[int, ...], ...]
#: (groups spanned, NUMA zones spanned) of a placement: lower is better, (1, 1) is one group.
Span = tuple[int, int]


class TopologyError(ValueError):
    """A malformed topology description (the node is then treated as one flat group)."""


@dataclass(frozen=True, slots=True)
class GpuTopology:
    """A node's GPU groups (what packing minimises) and NUMA zones (the tie-breaker)."""

    groups: Groups
    zones: Groups

    @classmethod
    def flat(cls, gpu_count: int) -> GpuTopology:
        everything = (tuple(range(gpu_count)),) if gpu_count else ()
        return cls(everything, everything)

    @property
    def is_flat(self) -> bool:
        return len(self.groups) <= 1 and len(self.zones) <= 1

    @property
    def largest_group(self) -> int:
        return max((len(g) for g in self.groups), default=0)


def _check_partition(groups: Groups, gpu_count: int, what: str) -> Groups:
    seen = sorted(i for g in groups for i in g)
    if seen != list(range(gpu_count)):
        raise TopologyError(f"{what} must name each of the node's {gpu_count} GPU indexes (0..{gpu_count - 1}) once")
    return groups


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_gpu_groups(text: str, gpu_count: int) -> Groups:
    """``"0,1,2,3;4,5,6,7"`` (or ``"0-3;4-7"``) -> ((0, 1, 2, 3), (4, 5, 6, 7))."""
    groups: list[tuple[int, ...]] = []
    for part in str(text).split(";"):
        if not part.strip():
            continue
        members: list[int] = []
        for item in part.split(","):
            m = _RANGE.match(item.strip())
            if m is None:
                raise TopologyError(f"annotation {ANNOTATION_GPU_GROUPS}: {item.strip()!r} is not an index or a range")
            lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
            if hi < lo:
                raise TopologyError(f"annotation {ANNOTATION_GPU_GROUPS}: empty range {item.strip()!r}")
            members.extend(range(lo, hi + 1))
        groups.append(tuple(members))
    return _check_partition(tuple(groups), gpu_count, f"annotation {ANNOTATION_GPU_GROUPS}")


def _natural(name: str) -> tuple[int | str, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _gpu_capacity(zone: JSONObj) -> int:
    for res in get_list(zone, "resources"):
        if isinstance(res, Mapping) and res.get("name") == RESOURCE_GPU:
            value = res.get("capacity", res.get("allocatable", 0))
            try:
                return int(str(value))
            except ValueError:
                raise TopologyError(
                    f"zone {zone.get('name')!r}: {RESOURCE_GPU} capacity {value!r} is not a count"
                ) from None
    return 0


def zones_from_nrt(nrt: JSONObj, gpu_count: int) -> Groups:
    """NUMA zones of a NodeResourceTopology as groups of GPU indexes (zones without GPUs dropped)."""
    zones = [z for z in get_list(nrt, "zones") if isinstance(z, Mapping) and z.get("type", "Node") == "Node"]
    zones.sort(key=lambda z: _natural(str(z.get("name", ""))))
    out: list[tuple[int, ...]] = []
    start = 0
    for z in zones:
        n = _gpu_capacity(z)
        if n > 0:
            out.append(tuple(range(start, start + n)))
            start += n
    return _check_partition(tuple(out), gpu_count, f"{NRT_KIND} zones' {RESOURCE_GPU} capacities")


def node_topology(
    node: JSONObj, gpu_count: int, nrt: JSONObj | None
) -> tuple[GpuTopology, list[str]]:
    """The node's topology and the problems found (each makes its source be ignored)."""
    problems: list[str] = []
    flat = GpuTopology.flat(gpu_count)
    groups, zones = flat.groups, flat.zones
    annotations = get_obj(get_obj(node, "metadata"), "annotations")
    text = annotations.get(ANNOTATION_GPU_GROUPS)
    annotated = False
    if text and gpu_count:
        try:
            groups = parse_gpu_groups(str(text), gpu_count)
            annotated = True
        except TopologyError as err:
            problems.append(str(err))
    if nrt is not None and gpu_count:
        try:
            zones = zones_from_nrt(nrt, gpu_count)
        except TopologyError as err:
            problems.append(str(err))
    if not annotated:  # NUMA zones only (or nothing): the zones are the groups
        groups = zones
    return GpuTopology(groups, zones), problems


_PACK_MEMO: dict[tuple[GpuTopology, int, int], tuple[Span, tuple[int, ...]] | None] = {}


def _spread(chosen: Sequence[int], groups: Groups) -> int:
    return sum(1 for g in groups if any(i in g for i in chosen))


def pack(topology: GpuTopology, free: Sequence[int], k: int) -> tuple[Span, tuple[int, ...]] | None:
    """The ``k`` GPUs among ``free`` that span the fewest groups, then the fewest NUMA zones, then
    have the lowest indexes; with the span they achieve. None when fewer than ``k`` are free.

    Exact: it tries every set of groups of the smallest sufficient size (a node has a handful).
    """
    mask = 0
    for i in free:
        mask |= 1 << i
    key = (topology, mask, k)
    if key in _PACK_MEMO:
        return _PACK_MEMO[key]
    result = _pack(topology, sorted(free), k)
    if len(_PACK_MEMO) > 100_000:
        _PACK_MEMO.clear()
    _PACK_MEMO[key] = result
    return result


def _pack(topology: GpuTopology, free: list[int], k: int) -> tuple[Span, tuple[int, ...]] | None:
    if k <= 0:
        return (0, 0), ()
    if len(free) < k:
        return None
    free_set = set(free)
    per_group = [[i for i in g if i in free_set] for g in topology.groups]
    best: tuple[Span, tuple[int, ...]] | None = None
    for m in range(1, len(per_group) + 1):
        for combo in itertools.combinations(range(len(per_group)), m):
            pool = sorted(i for c in combo for i in per_group[c])
            if len(pool) < k or any(not per_group[c] for c in combo):
                continue
            chosen = _fewest_zones(pool, k, topology.zones)
            # every group of the combination must be used, else a smaller m would have found it
            span = (_spread(chosen, topology.groups), _spread(chosen, topology.zones))
            cand = (span, chosen)
            if best is None or cand < best:
                best = cand
        if best is not None:
            return best
    return best


def _fewest_zones(pool: list[int], k: int, zones: Groups) -> tuple[int, ...]:
    """``k`` GPUs of ``pool`` in the fewest NUMA zones, lowest indexes first."""
    per_zone = [[i for i in z if i in pool] for z in zones]
    per_zone = [z for z in per_zone if z]
    for m in range(1, len(per_zone) + 1):
        options = []
        for combo in itertools.combinations(per_zone, m):
            members = sorted(i for z in combo for i in z)
            if len(members) >= k:
                options.append(tuple(members[:k]))
        if options:
            return min(options)
    return tuple(pool[:k])
