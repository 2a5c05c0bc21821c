"""ImageLocality: favours nodes that already hold the pod's images
(upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``, v1.35.4, v1.36.3, v1.37.2).

Each image the node has scores its size scaled by its spread (the fraction of nodes holding it),
to avoid piling pods onto the few nodes with a large image. The sum is clamped to
[23 MiB, 1000 MiB x number of images] and mapped linearly onto 0..100.

What counts as the pod's images depends on the release:

- v1.35: the images of init containers and containers; image volumes are ignored.
- v1.36 (:data:`~kubesched.config.releases.IMAGE_LOCALITY_IMAGE_VOLUMES`, kubernetes#130231): the
  images of image volumes (``spec.volumes[].image.reference``) add to the sum too, but the upper
  threshold still counts containers only, so a volume image outweighs the same image in a container.
- v1.37 (:data:`~kubesched.config.releases.IMAGE_LOCALITY_IMAGE_VOLUME_THRESHOLD`, kubernetes#138951):
  every image volume also raises the threshold, as a container does.

The per-cycle image counts come from :class:`ImageStateIndex`, refreshed once per scheduling cycle
(memoised in the CycleState) from the snapshot the handle serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.config.releases import (
    DEFAULT_RELEASE,
    IMAGE_LOCALITY_IMAGE_VOLUME_THRESHOLD,
    IMAGE_LOCALITY_IMAGE_VOLUMES,
)
from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE, BatchScorePlugin, Handle
from kubesched.framework.signature import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_list

from .image_states import ImageStateIndex

MB = 1024 * 1024
#: The score is 0 below this sum of scaled image sizes.
MIN_THRESHOLD = 23 * MB
#: Per image: the score is 100 above this times the image count (containers; from v1.37 image volumes too).
MAX_CONTAINER_THRESHOLD = 1000 * MB

_STATE_KEY = "Score" + names.IMAGE_LOCALITY
_POD_CACHE_KEY = names.IMAGE_LOCALITY + "/images"
#: One memo per way of reading the pod (see :func:`pod_images`).
_POD_CACHE_KEYS = {(v, c): f"{_POD_CACHE_KEY}/{int(v)}{int(c)}" for v in (False, True) for c in (False, True)}
#: The same by ``PodInfo.spec_key``, for new pods of a spec seen before.
_BY_SPEC: dict[tuple[bool, bool], dict[str, tuple[list[str], int]]] = {k: {} for k in _POD_CACHE_KEYS}
_BY_SPEC_MAX = 1024


def normalized_image_name(name: str) -> str:
    """Upstream ``normalizedImageName``: append ``:latest`` when the reference has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def pod_images(pod: PodInfo, *, volumes: bool = False, volumes_in_count: bool = False) -> tuple[list[str], int]:
    """(normalised image references, the image count of the threshold), parsed once per pod.

    ``volumes``: image volumes' references are among the images (v1.36+); ``volumes_in_count``:
    each image volume also counts towards the threshold (v1.37+)."""
    cache_key = _POD_CACHE_KEYS[volumes, volumes_in_count]
    cached: tuple[list[str], int] | None = pod.cache.get(cache_key)
    if cached is not None:
        return cached
    # The spec alone decides: new pods of a known spec (and status) reuse its answer.
    spec_key = pod.spec_key
    by_spec = _BY_SPEC[volumes, volumes_in_count]
    cached = by_spec.get(spec_key) if spec_key is not None else None
    if cached is None:
        spec = pod.spec
        inits = [c for c in get_list(spec, "initContainers") if isinstance(c, Mapping)]
        containers = [c for c in get_list(spec, "containers") if isinstance(c, Mapping)]
        images = [normalized_image_name(str(c.get("image") or "")) for c in (*inits, *containers)]
        count = len(images)
        if volumes:
            for vol in get_list(spec, "volumes"):
                image = vol.get("image") if isinstance(vol, Mapping) else None
                if isinstance(image, Mapping):
                    images.append(normalized_image_name(str(image.get("reference") or "")))
                    count += volumes_in_count
        cached = (images, count)
        if spec_key is not None:
            if len(by_spec) >= _BY_SPEC_MAX:
                by_spec.clear()
            by_spec[spec_key] = cached
    pod.cache[cache_key] = cached
    return cached


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """Upstream ``scaledImageScore``: ``int64(float64(size) * spread)`` in float64, as Go does."""
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def calculate_priority(sum_scores: int, image_count: int) -> int:
    """Upstream ``calculatePriority``, clamping in Go's order: with no image (threshold 0, below
    the minimum) a sum under the minimum scores 0 and any other 100, as upstream."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # The numerator is 0 or has the denominator's sign, so floor division is Go's truncation.
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def calculate_priority_batch(sum_scores: npt.NDArray[np.int64], image_count: int) -> npt.NDArray[np.int64]:
    """:func:`calculate_priority` on an array."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if max_threshold >= MIN_THRESHOLD:
        clamped = np.clip(sum_scores, MIN_THRESHOLD, max_threshold)
    else:
        clamped = np.where(sum_scores < MIN_THRESHOLD, MIN_THRESHOLD, max_threshold)
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
        release = handle.release if handle is not None else DEFAULT_RELEASE
        self._volumes = release.has(IMAGE_LOCALITY_IMAGE_VOLUMES)
        self._volumes_in_count = release.has(IMAGE_LOCALITY_IMAGE_VOLUME_THRESHOLD)

    #: sign_pod reads only the spec and status (the framework keeps its answer per spec template).
    signs_by_spec: ClassVar[bool] = True

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Its score depends on the containers' images (upstream signs the containers' and init
        containers' images only, in every release)."""
        names = [normalized_image_name(str(c.get("image") or "")) for c in sign.containers(pod)]
        return [SignFragment(sign.IMAGE_NAMES_SIGNER, sign.images(names))], None

    def _pod_images(self, pod: PodInfo) -> tuple[list[str], int]:
        return pod_images(pod, volumes=self._volumes, volumes_in_count=self._volumes_in_count)

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
        images, image_count = self._pod_images(pod)
        if index.total_nodes == 0:
            return 0, None
        sizes = index.sizes(node_info.name)
        total = 0
        for image in images:
            size = sizes.get(image)
            if size is not None:
                total += scaled_image_score(size, index.num_nodes(image), index.total_nodes)
        return calculate_priority(total, image_count), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, indices: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.int64]:
        index = self._states(state)
        images, image_count = self._pod_images(pod)
        if index.total_nodes == 0:
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
            return np.full(len(indices), calculate_priority(0, image_count), dtype=np.int64)
        return calculate_priority_batch(total, image_count)

    def score_extensions(self) -> None:
        return None
