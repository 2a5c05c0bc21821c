"""Feasible nodes as rows of the snapshot, without building lists on the hot path.

The scheduling cycle finds feasible nodes as positions in the snapshot's node table; most cycles
never need them as a Python list (batch Score plugins take the rows). :class:`NodeRows` is the
``Sequence[NodeInfo]`` the framework hands to PreScore and per-node Score plugins anyway, and
:class:`NodeNames` the node names of a score result, both materialised only where read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

from .types import NodeInfo

Rows = npt.NDArray[np.intp]


class NodeRows(Sequence[NodeInfo]):
    __slots__ = ("infos", "rows")

    def __init__(self, infos: Sequence[NodeInfo], rows: Rows) -> None:
        self.infos = infos
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        if isinstance(i, slice):
            return NodeRows(self.infos, self.rows[i])
        return self.infos[int(self.rows[i])]

    def __iter__(self) -> Iterator[NodeInfo]:
        infos = self.infos
        return (infos[r] for r in self.rows.tolist())

    def names(self) -> NodeNames:
        return NodeNames(self)


class NodeNames(Sequence[str]):
    __slots__ = ("_nodes",)

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self._nodes = nodes

    def __len__(self) -> int:
        return len(self._nodes)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return [n.name for n in self._nodes[i]]
        return self._nodes[i].name

    def __iter__(self) -> Iterator[str]:
        return (n.name for n in self._nodes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(list(self))


def names_of(nodes: Sequence[NodeInfo]) -> Sequence[str]:
    """The nodes' names: a lazy view for :class:`NodeRows`, a list otherwise."""
    if isinstance(nodes, NodeRows):
        return nodes.names()
    return [n.name for n in nodes]
