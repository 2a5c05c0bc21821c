"""NodeResourcesFit's queueing hints (upstream ``fit.go``: ``isSchedulableAfterPodEvent``,
``isSchedulableAfterPodScaleDown``, ``isSchedulableAfterNodeChange``).

With InPlacePodVerticalScaling GA in v1.35 a scale-down of a placed pod frees resources too, so pod
updates of that kind are hinted as well as deletions. With DRAExtendedResource a DeviceClass
that starts providing one of the pod's extended resources is hinted too
(``isSchedulableAfterDeviceClassEvent``), and the node hint leaves resources a class provides to
DRA on nodes without them (``shouldDelegateResourceToDRA``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.dra.extended_resource import RESOURCE_DEVICE_CLASS_PREFIX
from kubesched.framework.events import QueueingHint
from kubesched.framework.types import JSONObj, NodeInfo, PodInfo, pod_uid, spec
from kubesched.plugins.jsonview import as_object

from .fits_request import fits_request


def _nominated(pod: JSONObj) -> str:
    status = pod.get("status")
    return str(status.get("nominatedNodeName") or "") if isinstance(status, Mapping) else ""


def is_schedulable_after_pod_event(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """A deleted pod that was placed (or nominated), or a scale-down that frees what this pod needs."""
    original = as_object(old, "Pod")
    modified = as_object(new, "Pod")
    if modified is None:
        if original is None or (not spec(original).get("nodeName") and not _nominated(original)):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
    if original is None:
        return QueueingHint.QUEUE_SKIP
    if is_schedulable_after_pod_scale_down(pod, original, modified):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_scale_down(
    target: JSONObj, original: JSONObj, modified: JSONObj
) -> bool:
    if pod_uid(modified) == pod_uid(target):
        return True
    if not spec(modified).get("nodeName"):
        return False
    before, after = PodInfo(dict(original)).requests, PodInfo(dict(modified)).requests
    want = PodInfo(dict(target)).requests
    if want.milli_cpu and before.milli_cpu > after.milli_cpu:
        return True
    if want.memory and before.memory > after.memory:
        return True
    if want.ephemeral_storage and before.ephemeral_storage > after.ephemeral_storage:
        return True
    return any(
        q and before.scalar_resources.get(name, 0) > after.scalar_resources.get(name, 0)
        for name, q in want.scalar_resources.items()
    )


def is_schedulable_after_node_change(
    pod: JSONObj, old: object, new: object, dra_backed: frozenset[str] = frozenset()
) -> QueueingHint:
    """The pod must fit the changed node when empty, and (for an update) something it needs grew.

    ``dra_backed``: the pod's requested resources a DeviceClass provides (DRAExtendedResource),
    left to DynamicResources on a node without them (upstream ``shouldDelegateResourceToDRA``)."""
    original = as_object(old, "Node")
    modified = as_object(new, "Node")
    if modified is None:
        return QueueingHint.QUEUE_SKIP
    request = PodInfo(dict(pod)).requests
    insufficient = fits_request(request, NodeInfo(dict(modified)), dra_backed=dra_backed)
    if insufficient:  # the pod would not fit even the empty node
        return QueueingHint.QUEUE_SKIP
    if original is None:
        return QueueingHint.QUEUE
    if have_any_requested_resources_increased(pod, original, modified, dra_backed):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def have_any_requested_resources_increased(
    pod: JSONObj, original: JSONObj, modified: JSONObj, dra_backed: frozenset[str] = frozenset()
) -> bool:
    """Upstream ``haveAnyRequestedResourcesIncreased``: more pods allowed, more of a resource the
    pod requests, or a requested resource the modified node leaves to DRA."""
    request = PodInfo(dict(pod)).requests
    before, after = NodeInfo(dict(original)).allocatable, NodeInfo(dict(modified)).allocatable
    return (
        after.allowed_pod_number > before.allowed_pod_number
        or (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
        or any(
            q
            and (
                after.scalar_resources.get(n, 0) > before.scalar_resources.get(n, 0)
                or (n in dra_backed and after.scalar_resources.get(n, 0) <= 0)
            )
            for n, q in request.scalar_resources.items()
        )
    )


def is_schedulable_after_device_class_event(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Upstream ``isSchedulableAfterDeviceClassEvent``: a class added whose implicit name
    (``deviceclass.resource.kubernetes.io/<class>``) the pod requests, or a class whose
    ``extendedResourceName`` changed to one the pod requests."""
    original = as_object(old, "DeviceClass")
    modified = as_object(new, "DeviceClass")
    if modified is None:
        return QueueingHint.QUEUE_SKIP
    requested = PodInfo(dict(pod)).requests.scalar_resources

    def extended_name(obj: JSONObj) -> str:
        spec = obj.get("spec")
        name = spec.get("extendedResourceName") if isinstance(spec, Mapping) else None
        return name if isinstance(name, str) else ""

    if original is not None:
        if extended_name(original) == extended_name(modified):
            return QueueingHint.QUEUE_SKIP
    else:
        md = modified.get("metadata")
        class_name = md.get("name") if isinstance(md, Mapping) else None
        if isinstance(class_name, str) and f"{RESOURCE_DEVICE_CLASS_PREFIX}{class_name}" in requested:
            return QueueingHint.QUEUE
    name = extended_name(modified)
    if name and name in requested:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
