"""Name and value syntax checks from k8s.io/apimachinery/pkg/util/validation/validation.go.

Only the checks the object model needs: qualified names (label keys, resource names) and
label values. Each returns a list of human-readable problems, empty when valid, like upstream.
"""

from __future__ import annotations

import re

__all__ = [
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
]

_QUALIFIED_NAME_MAX_LENGTH = 63
_LABEL_VALUE_MAX_LENGTH = 63
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253

_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

_QUALIFIED_NAME_FMT_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_LABEL_VALUE_FMT_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


def is_dns1123_subdomain(value: str) -> list[str]:
    """IsDNS1123Subdomain."""
    errs: list[str] = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(f"must be no more than {_DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_DNS1123_SUBDOMAIN_FMT_MSG)
    return errs


def is_qualified_name(value: str) -> list[str]:
    """IsQualifiedName: ``[prefix/]name`` with a DNS-subdomain prefix and a 63-char name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {msg}" for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character with an optional DNS subdomain prefix and '/'"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX_LENGTH:
        errs.append(f"name part must be no more than {_QUALIFIED_NAME_MAX_LENGTH} characters")
    if name and not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(_QUALIFIED_NAME_FMT_MSG)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """IsValidLabelValue: at most 63 characters, empty allowed."""
    errs: list[str] = []
    if len(value) > _LABEL_VALUE_MAX_LENGTH:
        errs.append(f"must be no more than {_LABEL_VALUE_MAX_LENGTH} characters")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_LABEL_VALUE_FMT_MSG)
    return errs
