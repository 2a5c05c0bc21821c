"""Kubernetes name syntax checks used by config validation.

Ported rules from ``k8s.io/apimachinery/pkg/util/validation/validation.go``
(``IsQualifiedName``, ``IsDNS1123Subdomain``, ``IsValidLabelValue``) and
``pkg/apis/core/v1/helper`` (``IsExtendedResourceName``). Each check returns a list of
problem descriptions (empty = valid), like upstream.
"""

from __future__ import annotations

import re

__all__ = [
    "is_dns1123_subdomain",
    "is_extended_resource_name",
    "is_qualified_name",
    "is_valid_label_value",
]

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_QUALIFIED_NAME_MAX = 63
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_SUBDOMAIN_MAX = 253
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {_DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character"
        )
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``[prefix/]name``: optional DNS-subdomain prefix, name of at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            f"a qualified name {_QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {_QUALIFIED_NAME_MAX} characters")
    if not _QUALIFIED_NAME.match(name):
        errs.append("name part " + _QUALIFIED_NAME_MSG)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > _QUALIFIED_NAME_MAX:
        errs.append(f"must be no more than {_QUALIFIED_NAME_MAX} characters")
    if not _LABEL_VALUE.match(value):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character"
        )
    return errs


def is_extended_resource_name(name: str) -> bool:
    """Extended resources are prefixed (``example.com/foo``) outside ``kubernetes.io/``
    and not ``requests.``-prefixed (``v1helper.IsExtendedResourceName``)."""
    if "/" not in name or "kubernetes.io/" in name:
        return False  # native resource
    if name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)
