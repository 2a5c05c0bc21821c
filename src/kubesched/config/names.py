"""Name validation used by configuration checks: the API object model's implementations
(upstream ``k8s.io/apimachinery/pkg/util/validation``), re-exported under the names config uses."""

from kubesched.api.resources import is_extended_resource_name
from kubesched.api.validation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value

__all__ = ["is_dns1123_subdomain", "is_extended_resource_name", "is_qualified_name", "is_valid_label_value"]
