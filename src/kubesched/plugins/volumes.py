"""Where the DRA stand-in used to live: DynamicResources is now
:mod:`kubesched.plugins.dynamicresources`; these names stay importable from here."""

from kubesched.plugins.dynamicresources import NO_NEW_CLAIMS_TO_DEALLOCATE, DynamicResources, pod_has_resource_claims

__all__ = ["NO_NEW_CLAIMS_TO_DEALLOCATE", "DynamicResources", "pod_has_resource_claims"]
