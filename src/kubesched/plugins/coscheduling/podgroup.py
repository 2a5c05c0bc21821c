"""The PodGroup custom resource (scheduler-plugins ``apis/scheduling/v1alpha1/types.go``).

A PodGroup names a gang: ``spec.minMember`` pods must be placed together, optionally with
``spec.minResources`` free in the cluster, within ``spec.scheduleTimeoutSeconds``. Pods join it
with the label ``scheduling.x-k8s.io/pod-group: <name>`` in the PodGroup's namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.api.errors import InvalidObjectError
from kubesched.api.resources import Resource
from kubesched.api.rfc3339 import parse_time
from kubesched.framework.types import JSONObj
from kubesched.plugins.jsonview import get_obj

GROUP = "scheduling.x-k8s.io"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "PodGroup"
#: ``v1alpha1.PodGroupLabel``.
POD_GROUP_LABEL = f"{GROUP}/pod-group"

# ``PodGroupPhase`` values (v1alpha1, with the PreScheduling and Scheduled phases of its status).
PENDING = "Pending"
PRE_SCHEDULING = "PreScheduling"
SCHEDULING = "Scheduling"
SCHEDULED = "Scheduled"
RUNNING = "Running"
FINISHED = "Finished"
FAILED = "Failed"
UNKNOWN = "Unknown"


def pod_group_name(pod: JSONObj) -> str:
    """``util.GetPodGroupLabel``: the value of the pod-group label, or ``""``."""
    labels = get_obj(get_obj(pod, "metadata"), "labels")
    return str(labels.get(POD_GROUP_LABEL) or "")


def pod_group_full_name(pod: JSONObj) -> str:
    """``util.GetPodGroupFullName``: ``namespace/name`` of the pod's group, or ``""``."""
    name = pod_group_name(pod)
    if not name:
        return ""
    return f"{get_obj(pod, 'metadata').get('namespace') or 'default'}/{name}"


@dataclass(frozen=True)
class PodGroupInfo:
    """A PodGroup's spec, parsed once; ``obj`` is the object as listed."""

    namespace: str
    name: str
    min_member: int
    #: ``spec.minResources`` (None when unset) and the resource names it lists.
    min_resources: Resource | None
    min_resource_names: tuple[str, ...]
    schedule_timeout_seconds: int | None
    creation_timestamp: float | None
    obj: JSONObj

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def status(self) -> JSONObj:
        s = self.obj.get("status")
        return s if isinstance(s, Mapping) else {}


def parse_pod_group(obj: JSONObj) -> PodGroupInfo:
    """Read a PodGroup; an ill-typed spec is an :class:`InvalidObjectError` naming the field."""
    md = get_obj(obj, "metadata")
    ns = str(md.get("namespace") or "default")
    name = str(md.get("name") or "")
    where = f"{KIND} {ns}/{name}: spec"
    spec = get_obj(obj, "spec")
    if not isinstance(spec, Mapping):
        raise InvalidObjectError(where, "must be an object")
    min_member = spec.get("minMember", 0)
    if min_member is None:
        min_member = 0
    if not isinstance(min_member, int) or isinstance(min_member, bool) or min_member < 0:
        raise InvalidObjectError(f"{where}.minMember", f"must be a non-negative integer, got {min_member!r}")
    timeout = spec.get("scheduleTimeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 0):
        raise InvalidObjectError(f"{where}.scheduleTimeoutSeconds", f"must be a non-negative integer, got {timeout!r}")
    raw = spec.get("minResources")
    min_resources: Resource | None = None
    names: tuple[str, ...] = ()
    if raw is not None:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError(f"{where}.minResources", "must be a resource list")
        min_resources = Resource.from_resource_list(raw, f"{where}.minResources")
        names = tuple(sorted(str(k) for k in raw))
    return PodGroupInfo(
        ns, name, min_member, min_resources, names, timeout, parse_time(md.get("creationTimestamp")), obj
    )
