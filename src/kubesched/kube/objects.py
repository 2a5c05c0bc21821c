"""Helpers on API objects: keys, MicroTime, object references, and trimming what informers keep.

A pod as the API server returns it is about 2.5 KB of JSON and about 15 KiB once parsed; most of
it (managedFields, env, probes, volume mounts, container states) is never read by a scheduler.
The informers keep trimmed copies: what remains is every field kube-scheduler's plugins and
ours read (labels, requests, ports, images, affinity, tolerations, volumes by kind, conditions,
allocated resources for in-place resize, startTime for preemption), so memory grows with
what scheduling needs, not with what the workloads carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: Container fields no scheduler plugin reads.
_CONTAINER_DROP = frozenset(
    {
        "command",
        "args",
        "env",
        "envFrom",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "volumeMounts",
        "volumeDevices",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "securityContext",
        "workingDir",
        "stdin",
        "stdinOnce",
        "tty",
        "imagePullPolicy",
    }
)
#: Volume sources whose contents (items, sources, keys) no scheduler plugin reads; the volume
#: keeps its name and its kind, so "has a configMap volume" stays answerable.
_VOLUME_HOLLOW = frozenset({"configMap", "secret", "projected", "downwardAPI", "emptyDir"})
#: Pod status fields kept; container statuses keep only what in-place resize accounting reads.
_POD_STATUS_KEEP = frozenset(
    {
        "phase",
        "conditions",
        "nominatedNodeName",
        "qosClass",
        "startTime",
        "resize",
        "resourceClaimStatuses",
        "containerStatuses",
        "initContainerStatuses",
        "reason",
    }
)
_CONTAINER_STATUS_KEEP = ("name", "allocatedResources", "resources")
_NODE_STATUS_DROP = frozenset({"volumesInUse", "volumesAttached", "daemonEndpoints", "config", "nodeInfo"})


def namespaced_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name`` for namespaced objects, ``name`` otherwise (client-go's
    ``MetaNamespaceKeyFunc``)."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return f"{ns}/{md.get('name')}" if ns else str(md.get("name", ""))


def resource_version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def micro_time(ts: float) -> str:
    """Kubernetes ``MicroTime`` (``2006-01-02T15:04:05.000000Z``), required by events.k8s.io
    ``eventTime`` and Lease ``acquireTime``/``renewTime``."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> float:
    """RFC 3339 / MicroTime to epoch seconds."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def object_reference(obj: Mapping[str, Any], default_kind: str = "Pod") -> dict[str, Any]:
    """``v1.ObjectReference`` of ``obj`` as client-go's ``reference.GetReference`` builds it."""
    md = obj.get("metadata") or {}
    ref: dict[str, Any] = {
        "apiVersion": obj.get("apiVersion") or "v1",
        "kind": obj.get("kind") or default_kind,
        "name": md.get("name", ""),
    }
    for src, dst in (("namespace", "namespace"), ("uid", "uid"), ("resourceVersion", "resourceVersion")):
        if md.get(src):
            ref[dst] = md[src]
    return ref


def _trim_metadata(md: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in md.items() if k != "managedFields"}
    ann = out.get("annotations")
    if isinstance(ann, Mapping) and LAST_APPLIED in ann:
        out["annotations"] = {k: v for k, v in ann.items() if k != LAST_APPLIED}
    return out


def _trim_containers(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [{k: v for k, v in c.items() if k not in _CONTAINER_DROP} if isinstance(c, Mapping) else c for c in items]


def _trim_volume(v: Any) -> Any:
    if not isinstance(v, Mapping):
        return v
    return {k: ({} if k in _VOLUME_HOLLOW else val) for k, val in v.items()}


def _trim_container_statuses(items: Any) -> Any:
    if not isinstance(items, list):
        return items
    return [{k: c[k] for k in _CONTAINER_STATUS_KEEP if k in c} if isinstance(c, Mapping) else c for c in items]


def trim_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod with only what scheduling reads (see the module docstring)."""
    out: dict[str, Any] = {k: v for k, v in pod.items()}
    md = pod.get("metadata")
    if isinstance(md, Mapping):
        out["metadata"] = _trim_metadata(md)
    spec = pod.get("spec")
    if isinstance(spec, Mapping):
        s = dict(spec)
        for key in ("containers", "initContainers"):
            if key in s:
                s[key] = _trim_containers(s[key])
        s.pop("ephemeralContainers", None)
        if isinstance(s.get("volumes"), list):
            s["volumes"] = [_trim_volume(v) for v in s["volumes"]]
        out["spec"] = s
    status = pod.get("status")
    if isinstance(status, Mapping):
        st = {k: v for k, v in status.items() if k in _POD_STATUS_KEEP}
        for key in ("containerStatuses", "initContainerStatuses"):
            if key in st:
                st[key] = _trim_container_statuses(st[key])
        out["status"] = st
    return out


def trim_node(node: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in node.items()}
    md = node.get("metadata")
    if isinstance(md, Mapping):
        out["metadata"] = _trim_metadata(md)
    status = node.get("status")
    if isinstance(status, Mapping):
        out["status"] = {k: v for k, v in status.items() if k not in _NODE_STATUS_DROP}
    return out


def trim_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Any other kind: only managedFields and the last-applied annotation go."""
    out: dict[str, Any] = {k: v for k, v in obj.items()}
    md = obj.get("metadata")
    if isinstance(md, Mapping):
        out["metadata"] = _trim_metadata(md)
    return out
