"""DynamicResources, the DRA plugin of the default profile (upstream
``pkg/scheduler/framework/plugins/dynamicresources``)."""

from .plugin import NO_NEW_CLAIMS_TO_DEALLOCATE, DynamicResources, pod_has_resource_claims

__all__ = ["NO_NEW_CLAIMS_TO_DEALLOCATE", "DynamicResources", "pod_has_resource_claims"]
