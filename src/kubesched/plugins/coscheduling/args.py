"""``CoschedulingArgs`` (scheduler-plugins ``apis/config/types.go``), defaults
(``apis/config/v1/defaults.go``) and validation (``apis/config/validation/validation_pluginargs.go``)."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.config.errors import FieldError, invalid

#: scheduler-plugins' defaults: ``PermitWaitingTimeSeconds`` 60, ``PodGroupBackoffSeconds`` 0.
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
#: PostFilter keeps a gang waiting while at most this percentage of ``minMember`` is unassigned.
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10


@dataclass
class CoschedulingArgs:
    """How long members wait at Permit for their gang, and how a failed gang backs off."""

    #: Wait at Permit, in seconds, when the PodGroup sets no ``scheduleTimeoutSeconds``.
    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    #: After PostFilter rejected a gang, PreFilter turns its pods away this long (0: never).
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    #: PostFilter lets the waiting members be while the unassigned share of ``minMember`` is at
    #: most this percentage (upstream's former fixed 10 %).
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE

    def validate(self) -> list[FieldError]:
        """Upstream ``ValidateCoschedulingArgs``, messages included."""
        errs = []
        if self.permit_waiting_time_seconds < 0:
            errs.append(invalid("permitWaitingTimeSeconds", self.permit_waiting_time_seconds, "must be greater than 0"))
        if self.pod_group_backoff_seconds < 0:
            errs.append(invalid("podGroupBackoffSeconds", self.pod_group_backoff_seconds, "must be greater than 0"))
        if not 0 <= self.pod_group_reject_percentage <= 100:
            errs.append(
                invalid("podGroupRejectPercentage", self.pod_group_reject_percentage, "must be between 0 and 100")
            )
        return errs
