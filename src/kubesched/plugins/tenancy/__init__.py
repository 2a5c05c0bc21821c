"""Multi-tenant isolation: TenantIsolation (dedicated nodes); CapacityScheduling lives in
``kubesched.plugins.capacityscheduling``. See docs/tenancy.md."""

from .isolation import TenantIsolation, TenantIsolationArgs
from .tenants import DEFAULT_TENANT_LABEL, TenantResolver

__all__ = ["DEFAULT_TENANT_LABEL", "TenantIsolation", "TenantIsolationArgs", "TenantResolver"]
