"""``pluginConfig`` args of TenantFairSort, with validation by field path."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubesched.api.validation import is_qualified_name, is_valid_label_value
from kubesched.config.errors import FieldError, duplicate, index_path, invalid, required
from kubesched.plugins.tenancy.tenants import DEFAULT_TENANT_LABEL

#: The resources a tenant's dominant share is taken over when the args do not say.
DEFAULT_RESOURCES = (CPU, MEMORY, "nvidia.com/gpu")

_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE)
_RESOURCE_HINT = "must be cpu, memory, ephemeral-storage or an extended resource name (such as nvidia.com/gpu)"


def _default_resources() -> list[str]:
    return list(DEFAULT_RESOURCES)


def resource_name_errors(path: str, name: str) -> list[FieldError]:
    """A resource a pod can request and a node can offer: the native ones a share makes sense
    for, or a scalar (extended, hugepages, ``kubernetes.io/``) resource with a valid name."""
    if name in _NATIVE:
        return []
    errs = is_qualified_name(name)
    if errs:
        return [invalid(path, name, "must be a valid resource name: " + "; ".join(errs))]
    if not is_scalar_resource_name(name):
        return [invalid(path, name, _RESOURCE_HINT)]
    return []


@dataclass
class TenantFairSortArgs:
    """``pluginConfig`` args of TenantFairSort."""

    #: Label key naming a namespace's tenant (the same key, and default, as TenantIsolation's).
    tenant_label: str = DEFAULT_TENANT_LABEL
    #: The resources the dominant share is the maximum over.
    resources: list[str] = field(default_factory=_default_resources)
    #: Tenant -> weight (default 1): a tenant's share is divided by its weight, so a tenant of
    #: weight 2 is entitled to twice the resources before it queues behind others.
    tenant_weights: dict[str, float] = field(default_factory=dict)

    def validate(self) -> list[FieldError]:
        errs: list[FieldError] = []
        label_errs = is_qualified_name(self.tenant_label)
        if label_errs:
            detail = "must be a valid label key: " + "; ".join(label_errs)
            errs.append(invalid("tenantLabel", self.tenant_label, detail))
        if not self.resources:
            errs.append(required("resources", "at least one resource name"))
        seen: set[str] = set()
        for i, name in enumerate(self.resources):
            path = index_path("resources", i)
            if name in seen:
                errs.append(duplicate(path, name))
                continue
            seen.add(name)
            errs.extend(resource_name_errors(path, name))
        for tenant, weight in self.tenant_weights.items():
            path = f"tenantWeights[{tenant}]"
            value_errs = is_valid_label_value(tenant) if tenant else ["must not be empty"]
            if value_errs:
                errs.append(invalid(path, tenant, "tenant must be a valid label value: " + "; ".join(value_errs)))
            if not (weight > 0 and math.isfinite(weight)):
                errs.append(invalid(path, weight, "weight must be a finite number greater than 0"))
        return errs
