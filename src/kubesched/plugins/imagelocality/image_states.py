"""How many nodes of a snapshot hold each container image (the data behind upstream's
``ImageStateSummary``), kept up to date incrementally.

Upstream's cache computes ``NumNodes`` when a node is added or updated, so other nodes' summaries
go stale until they are updated in turn (kubernetes/kubernetes#116673); ``cache.NewSnapshot``
(what upstream's tests use) counts over the whole snapshot. We do the latter, always: ``refresh``
walks the snapshot's NodeInfos, re-reads ``status.images`` only of nodes whose object changed
(by identity: informers hand out new objects) and forgets removed nodes, so a cycle costs one
pass over the node list plus the images of changed nodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import JSONObj
from kubesched.plugins.jsonview import get_list


def node_image_sizes(node: JSONObj | None) -> dict[str, int]:
    """Every name in ``status.images`` -> that image's ``sizeBytes`` on this node."""
    status = (node or {}).get("status")
    images = status.get("images") if isinstance(status, Mapping) else None
    out: dict[str, int] = {}
    if not isinstance(images, list):
        return out
    for image in images:
        if not isinstance(image, Mapping):
            continue
        size = int(image.get("sizeBytes") or 0)
        for name in get_list(image, "names"):
            out[str(name)] = size
    return out


class ImageStateIndex:
    """Image name -> number of nodes in the snapshot that have it, plus each node's image sizes."""

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[object, dict[str, int]]] = {}
        self._counts: Counter[str] = Counter()
        self.total_nodes = 0
        #: The node table's ``node_epoch`` at the last refresh: unchanged means no node object
        #: changed and no node came or went, so neither did any image.
        self._epoch = -1
        #: Image -> sizes per node-table row, for the batch Score; valid for ``_epoch``.
        self._columns: dict[str, npt.NDArray[np.int64]] = {}

    def refresh(self, snapshot: Snapshot) -> None:
        epoch = snapshot.table.node_epoch
        if epoch == self._epoch and self.total_nodes == len(snapshot.node_infos):
            return
        self._epoch = epoch
        self._columns.clear()
        seen: set[str] = set()
        for ni in snapshot.node_infos:
            seen.add(ni.name)
            rec = self._nodes.get(ni.name)
            if rec is not None and rec[0] is ni.node:
                continue
            if rec is not None:
                self._counts.subtract(rec[1].keys())
            sizes = node_image_sizes(ni.node)
            self._counts.update(sizes.keys())
            self._nodes[ni.name] = (ni.node, sizes)
        if len(seen) != len(self._nodes):
            for name in [n for n in self._nodes if n not in seen]:
                self._counts.subtract(self._nodes.pop(name)[1].keys())
        self.total_nodes = len(snapshot.node_infos)

    def num_nodes(self, image: str) -> int:
        return self._counts.get(image, 0)

    def column(self, image: str, snapshot: Snapshot) -> npt.NDArray[np.int64]:
        """The size of ``image`` on every node of ``snapshot`` in table order (0: not there)."""
        col = self._columns.get(image)
        if col is None:
            col = np.fromiter(
                (self.sizes(ni.name).get(image, 0) for ni in snapshot.node_infos),
                dtype=np.int64,
                count=len(snapshot.node_infos),
            )
            self._columns[image] = col
        return col

    def sizes(self, node_name: str) -> Mapping[str, int]:
        rec = self._nodes.get(node_name)
        return rec[1] if rec is not None else {}
