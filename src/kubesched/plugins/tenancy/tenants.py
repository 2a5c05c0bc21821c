"""Which tenant a pod belongs to: a label on its namespace, or the namespace itself.

Tenancy is a property of namespaces, not of pods, so a pod cannot claim another tenant's nodes by
labelling itself. A namespace without the label is its own tenant, named after the namespace: a
node labelled ``<tenantLabel>: <namespace>`` is then dedicated to that namespace alone.

Namespaces are read from the handle's client (an informer lister upstream, a list here), once per
question: the answer must follow label changes, which the queue announces as Namespace events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from kubesched.framework.interfaces import Handle
from kubesched.framework.types import JSONObj

#: The default label key, on namespaces (their tenant) and on nodes (the tenant they serve).
DEFAULT_TENANT_LABEL = "kubesched.io/tenant"


def _labels(obj: JSONObj | None) -> Mapping[str, str]:
    meta = (obj or {}).get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    # Label values are strings (the API server validated them).
    return cast("Mapping[str, str]", labels) if isinstance(labels, Mapping) else {}


def _name(obj: JSONObj) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name", "")) if isinstance(meta, Mapping) else ""


def namespace_tenant(namespace: JSONObj | None, name: str, key: str) -> str:
    """The tenant of the namespace ``name`` whose object is ``namespace`` (None: not found)."""
    value = _labels(namespace).get(key)
    return str(value) if value is not None else name


def node_tenant(node: JSONObj | None, key: str) -> str | None:
    """The tenant a node is dedicated to, or None for a shared node."""
    value = _labels(node).get(key)
    return None if value is None else str(value)


class TenantResolver:
    """Answers ``tenant_of(namespace)`` from the cluster's Namespace objects."""

    __slots__ = ("_handle", "key")

    def __init__(self, handle: Handle | None, key: str) -> None:
        self._handle = handle
        self.key = key

    def namespace(self, name: str) -> JSONObj | None:
        if self._handle is None:
            return None
        for ns in self._handle.client().list_objects("v1", "Namespace"):
            if _name(ns) == name:
                return ns
        return None

    def tenant_of(self, namespace: str) -> str:
        return namespace_tenant(self.namespace(namespace), namespace, self.key)
