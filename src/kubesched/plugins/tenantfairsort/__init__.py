"""TenantFairSort: fair share between tenants in the scheduling queue (Dominant Resource Fairness).
See docs/tenancy.md, "Fair-share queue order"."""

from .args import DEFAULT_RESOURCES, TenantFairSortArgs
from .plugin import TenantFairSort
from .shares import TenantShares

__all__ = ["DEFAULT_RESOURCES", "TenantFairSort", "TenantFairSortArgs", "TenantShares"]
