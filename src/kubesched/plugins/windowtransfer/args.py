"""``WindowTransferArgs``: the plugin's ``pluginConfig`` args, with defaults and validation.

Decoded strictly by ``kubesched.config.args`` (unknown keys and wrong types are errors); the paths
``validate()`` returns are relative to the args, and the loader prefixes them
(``profiles[0].pluginConfig[0].args.windowStart: ...``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kubesched.api.errors import InvalidObjectError
from kubesched.api.labels import Selector, selector_from_label_selector
from kubesched.config.errors import FieldError, invalid
from kubesched.config.names import is_extended_resource_name

WAIT: Final = "Wait"
REJECT: Final = "Reject"
DEFAULT_BANDWIDTH_RESOURCE = "kubesched.io/bandwidth"

_HH_MM = re.compile(r"([01]\d|2[0-3]):[0-5]\d")
_LABEL_SELECTOR_KEYS = ("matchLabels", "matchExpressions")


@dataclass
class WindowTransferArgs:
    """The daily window (local ``HH:MM`` times in ``timeZone``; it may cross midnight), the
    bandwidth resource and how much of it a node must keep free, and what happens outside the window."""

    window_start: str
    window_end: str
    #: IANA name (``Europe/Berlin``), resolved with ``zoneinfo``.
    time_zone: str = "UTC"
    #: Extended resource nodes declare in ``status.allocatable`` and transfer pods request (Mbit/s).
    bandwidth_resource: str = DEFAULT_BANDWIDTH_RESOURCE
    #: Free bandwidth a node must still have after the pod is placed.
    bandwidth_threshold: int = 0
    #: ``Wait``: hold pods at PreEnqueue until the window opens; ``Reject``: FailedScheduling, retried then.
    outside_window: Literal["Wait", "Reject"] = WAIT
    #: Let transfer pods preempt lower-priority pods holding the bandwidth during the window.
    preempt_in_window: bool = False
    #: ``metav1.LabelSelector``: the pods of the profile the plugin applies to (default: all).
    pod_selector: dict[str, object] | None = None

    def validate(self) -> list[FieldError]:
        errs = [
            invalid(key, value, 'must be a time "HH:MM" between 00:00 and 23:59')
            for key, value in (("windowStart", self.window_start), ("windowEnd", self.window_end))
            if not _HH_MM.fullmatch(value)
        ]
        if not errs and self.window_start == self.window_end:
            errs.append(invalid("windowEnd", self.window_end, "must differ from windowStart"))
        if time_zone(self.time_zone) is None:
            errs.append(invalid("timeZone", self.time_zone, 'must be an IANA time zone name such as "Europe/Berlin"'))
        if not is_extended_resource_name(self.bandwidth_resource):
            errs.append(
                invalid(
                    "bandwidthResource",
                    self.bandwidth_resource,
                    "must be an extended resource name (a domain-prefixed name outside kubernetes.io)",
                )
            )
        if self.bandwidth_threshold < 0:
            errs.append(invalid("bandwidthThreshold", self.bandwidth_threshold, "must be greater than or equal to 0"))
        if self.pod_selector is not None:
            errs.extend(
                FieldError(f"podSelector.{key}", "unknown field")
                for key in self.pod_selector
                if key not in _LABEL_SELECTOR_KEYS
            )
            try:
                pod_selector(self.pod_selector)
            except InvalidObjectError as err:
                errs.extend(FieldError(e.field, e.message) for e in err.errors)
        return errs


def time_zone(name: str) -> ZoneInfo | None:
    """The zone of an IANA name, or None when there is no such zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def pod_selector(raw: Mapping[str, object] | None) -> Selector:
    """Unset selects every pod of the profile (unlike ``LabelSelectorAsSelector``, where nil is nothing)."""
    return Selector.everything() if raw is None else selector_from_label_selector(raw, "podSelector")
