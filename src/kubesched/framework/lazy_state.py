"""Plugin states filled on first read, for plugins with a batch form.

A batch Filter decides every node from data it computed once at PreFilter (a mask over the node
table); only the per-node paths — nominated pods, preemption's dry runs, the reasons of rejected
nodes — read the reference state, so they build it when they first read it. InterPodAffinity and
PodTopologySpread use this for their PreFilter (and PreScore) states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo

Bools = npt.NDArray[np.bool_]


class Pending(Protocol):
    """A state with a ``pending`` fill function (a slot of the concrete class)."""

    pending: Callable[[Any], None] | None


def fill_pending(state: Pending) -> None:
    """Run the state's fill function once."""
    fill = state.pending
    if fill is not None:
        state.pending = None
        fill(state)


def lazy_slot(slot: Any) -> property:
    """A property over ``slot`` (a ``__slots__`` member of the reference state class) that fills the
    state before the first read; writes go straight to the slot (the fill function writes them)."""

    def get(self: Pending) -> Any:
        fill_pending(self)
        return slot.__get__(self, type(self))

    def set_(self: Pending, value: Any) -> None:
        slot.__set__(self, value)

    return property(get, set_)


class ReferenceFilter(Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None: ...


def filter_by_batch_mask(
    plugin: ReferenceFilter,
    state: CycleState,
    pod: PodInfo,
    snapshot: Snapshot,
    indices: npt.NDArray[np.intp],
    mask: Bools | None,
) -> Bools:
    """``filter_batch`` from the mask PreFilter computed over the whole node table; without one (a
    state built elsewhere, or moved by AddPod/RemovePod) the per-node reference decides."""
    if mask is None or len(mask) != snapshot.table.size:
        infos = snapshot.node_infos
        ok = (plugin.filter(state, pod, infos[i]) is None for i in indices.tolist())
        return np.fromiter(ok, dtype=np.bool_, count=len(indices))
    out: Bools = snapshot.table.take(mask, indices)
    return out


__all__ = ["Pending", "fill_pending", "filter_by_batch_mask", "lazy_slot"]
