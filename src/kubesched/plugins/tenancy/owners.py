"""The tenant each node of the snapshot is dedicated to, as a column of codes.

TenantIsolation's batch Filter asks the same question of every node in every cycle, and the answer
changes only when a node object changes. Codes are kept per snapshot row and refreshed only for the
rows whose NodeInfo generation moved (one vector comparison of the snapshot's generation column;
the generation also moves when pods change, which costs a needless but cheap re-read). Code 0 is a
shared node; the others index the distinct tenant names seen.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo

I32 = npt.NDArray[np.int32]


class NodeOwners:
    __slots__ = ("_codes", "_generations", "_ids", "_rows", "key")

    def __init__(self, key: str) -> None:
        self.key = key
        self._ids: dict[str, int] = {}
        self._rows: list[NodeInfo] | None = None
        self._generations: npt.NDArray[np.int64] | None = None
        self._codes: I32 = np.zeros(0, dtype=np.int32)

    def code_of(self, tenant: str | None) -> int:
        """0 for None (shared); a stable positive code per tenant name."""
        if tenant is None:
            return 0
        code = self._ids.get(tenant)
        if code is None:
            code = self._ids[tenant] = len(self._ids) + 1
        return code

    def known(self, tenant: str) -> int:
        """The code of ``tenant``, or -1 when no node has ever been dedicated to it."""
        return self._ids.get(tenant, -1)

    def codes(self, snapshot: Snapshot) -> I32:
        """The owner code of every row of ``snapshot.node_infos``."""
        infos = snapshot.node_infos
        gens = snapshot.table.generation
        if infos is self._rows and self._generations is not None and len(gens) == len(self._codes):
            for i in np.flatnonzero(gens != self._generations):
                self._codes[i] = self.code_of(infos[int(i)].labels.get(self.key))
        else:
            key = self.key
            self._codes = np.fromiter(
                (self.code_of(ni.labels.get(key)) for ni in infos), dtype=np.int32, count=len(infos)
            )
        self._rows = infos
        self._generations = gens.copy()
        return self._codes
