"""ImageLocality: favours nodes that already hold the pod's images
(upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``, v1.35).

Each image the node has scores its size scaled by its spread (the fraction of nodes holding it),
to avoid piling pods onto the few nodes with a large image. The sum is clamped to
[23 MiB, 1000 MiB x number of containers] and mapped linearly onto 0..100.

Images are those of init containers, containers and, since v1.34
(kubernetes/kubernetes#130231), image volumes; as in v1.35 the image volumes add to the sum but
not to the container count of the upper threshold (fixed upstream later by #138951).

The per-cycle image counts come from :class:`ImageStateIndex`, refreshed once per scheduling cycle
(memoised in the CycleState) from the snapshot the handle serves.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE, BatchScorePlugin, Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_list

from .image_states import ImageStateIndex

MB = 1024 * 1024
#: The score is 0 below this sum of scaled image sizes.
MIN_THRESHOLD = 23 * MB
#: Per container: the score is 100 above this times the number of containers.
MAX_CONTAINER_THRESHOLD = 1000 * MB

_STATE_KEY = "Score" + names.IMAGE_LOCALITY
_POD_CACHE_KEY = names.IMAGE_LOCALITY + "/images"


def normalized_image_name(name: str) -> str:
    """Upstream ``normalizedImageName``: append ``:latest`` when the reference has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def pod_images(pod: PodInfo) -> tuple[list[str], int]:
    """(normalised image references, number of containers), parsed once per pod."""
    cached = pod.cache.get(_POD_CACHE_KEY)
    if cached is None:
        spec = pod.spec
        inits = [c for c in get_list(spec, "initContainers") if isinstance(c, Mapping)]
        containers = [c for c in get_list(spec, "containers") if isinstance(c, Mapping)]
        images = [normalized_image_name(str(c.get("image") or "")) for c in (*inits, *containers)]
        for vol in get_list(spec, "volumes"):
            image = vol.get("image") if isinstance(vol, Mapping) else None
            if isinstance(image, Mapping):
                images.append(normalized_image_name(str(image.get("reference") or "")))
        cached = pod.cache[_POD_CACHE_KEY] = (images, len(inits) + len(containers))
    return cached


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """Upstream ``scaledImageScore``: ``int64(float64(size) * spread)`` in float64, as Go does."""
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Upstream ``calculatePriority``."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = max(MIN_THRESHOLD, min(sum_scores, max_threshold))
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def calculate_priority_batch(sum_scores: npt.NDArray[np.int64], num_containers: int) -> npt.NDArray[np.int64]:
    """:func:`calculate_priority` on an array."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.clip(sum_scores, MIN_THRESHOLD, max_threshold)
    out: npt.NDArray[np.int64] = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
    return out


class _CycleData:
    __slots__ = ("index",)

    def __init__(self, index: ImageStateIndex) -> None:
        self.index = index

    def clone(self) -> _CycleData:
        return self


class ImageLocality(BatchScorePlugin):
    name = names.IMAGE_LOCALITY
    args_type = None

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self._index = ImageStateIndex()

    def _states(self, state: CycleState) -> ImageStateIndex:
        data = state.get(_STATE_KEY)
        if isinstance(data, _CycleData):
            return data.index
        if self.handle is None:
            raise RuntimeError(f"{self.name} reads the scheduler's snapshot: it needs a handle")
        snapshot: Snapshot = self.handle.snapshot_shared_lister()
        self._index.refresh(snapshot)
        state.write(_STATE_KEY, _CycleData(self._index))
        return self._index

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        index = self._states(state)
        images, num_containers = pod_images(pod)
        if num_containers == 0 or index.total_nodes == 0:
            return 0, None
        sizes = index.sizes(node_info.name)
        total = 0
        for image in images:
            size = sizes.get(image)
            if size is not None:
                total += scaled_image_score(size, index.num_nodes(image), index.total_nodes)
        return calculate_priority(total, num_containers), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        index = self._states(state)
        images, num_containers = pod_images(pod)
        if num_containers == 0 or index.total_nodes == 0:
            return np.zeros(len(indices), dtype=np.int64)
        total: npt.NDArray[np.int64] | None = None
        for image in images:
            num_nodes = index.num_nodes(image)
            if num_nodes == 0:
                continue
            if total is None:
                total = np.zeros(len(indices), dtype=np.int64)
            spread = float(num_nodes) / float(index.total_nodes)
            sizes = snapshot.table.take(index.column(image, snapshot), indices)
            # int64(float64(size) * spread) truncates toward zero, as Go's conversion does.
            total += (sizes.astype(np.float64) * spread).astype(np.int64)
        if total is None:  # no node has any of the images: below the threshold everywhere
            return np.full(len(indices), calculate_priority(0, num_containers), dtype=np.int64)
        return calculate_priority_batch(total, num_containers)

    def score_extensions(self) -> None:
        return None
