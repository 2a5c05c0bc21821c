"""PodGroup ``status``: what scheduler-plugins' PodGroup controller and the plugin's PostBind keep.

kubesched runs no controllers, so the plugin does both parts through the handle's client:

* the controller's reconcile (``pkg/controllers/podgroup_controller.go``, the version with the
  ``scheduled`` counter and the PreScheduling/Scheduled phases), run to its fixed point:
  ``""`` -> Pending; Pending -> PreScheduling once ``minMember`` pods exist (``occupiedBy`` from the
  first pod's owners); then running/succeeded/failed from the pods' phases, Scheduling ->
  Scheduled once ``scheduled >= minMember``, Scheduled -> Running once running + succeeded
  reach ``minMember``, Failed and Finished as final states, back to Pending without pods;
* the plugin's former ``PostBind`` (``core.go``): ``scheduled`` counts bound members; below
  ``minMember`` the phase is Scheduling (``scheduleStartTime`` set once), at it Scheduled;
* and, where upstream's plugin wrote nothing, the first member waiting at Permit turns a
  Pending/PreScheduling group into Scheduling with its ``scheduleStartTime``.

Zero counters and empty fields are left out, as the API server's JSON omits them (``omitempty``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from kubesched.api.rfc3339 import parse_time
from kubesched.framework.clock import rfc3339
from kubesched.framework.interfaces import Handle
from kubesched.framework.types import JSONObj, JSONValue
from kubesched.plugins.jsonview import get_list, get_obj

from .podgroup import (
    FAILED,
    FINISHED,
    PENDING,
    PRE_SCHEDULING,
    RUNNING,
    SCHEDULED,
    SCHEDULING,
    PodGroupInfo,
)

log = logging.getLogger("kubesched.plugins.coscheduling")

_COUNTERS = ("scheduled", "running", "succeeded", "failed")


def pod_stats(pods: Sequence[JSONObj]) -> tuple[int, int, int]:
    """Upstream ``getCurrentPodStats``: (running, succeeded, failed) by ``status.phase``."""
    running = succeeded = failed = 0
    for p in pods:
        phase = get_obj(p, "status").get("phase")
        if phase == "Running":
            running += 1
        elif phase == "Succeeded":
            succeeded += 1
        elif phase == "Failed":
            failed += 1
    return running, succeeded, failed


def occupied_by(pod: JSONObj) -> str:
    """Upstream ``fillOccupiedObj``: ``namespace/owner`` of each owner reference, sorted, joined."""
    md = get_obj(pod, "metadata")
    ns = md.get("namespace") or "default"
    refs = sorted(f"{ns}/{ref.get('name')}" for ref in get_list(md, "ownerReferences") if isinstance(ref, Mapping))
    return ",".join(refs)


def _count(status: JSONObj, key: str) -> int:
    v = status.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _set(status: dict[str, JSONValue], key: str, value: JSONValue) -> None:
    if value:
        status[key] = value
    else:
        status.pop(key, None)


def _controller_step(status: dict[str, JSONValue], min_member: int, pods: Sequence[JSONObj]) -> None:
    phase = status.get("phase") or ""
    if phase in (FINISHED, FAILED):
        return
    if phase == "":
        status["phase"] = PENDING
        return
    if phase == PENDING:
        if len(pods) >= min_member:
            status["phase"] = PRE_SCHEDULING
            owners = occupied_by(pods[0]) if pods else ""
            if owners:
                status["occupiedBy"] = owners
        return
    running, succeeded, failed = pod_stats(pods)
    _set(status, "running", running)
    _set(status, "succeeded", succeeded)
    _set(status, "failed", failed)
    if not pods:
        status["phase"] = PENDING
        return
    if _count(status, "scheduled") >= min_member and status["phase"] == SCHEDULING:
        status["phase"] = SCHEDULED
    if succeeded + running >= min_member and status["phase"] == SCHEDULED:
        status["phase"] = RUNNING
    if failed and failed + running + succeeded >= min_member:
        status["phase"] = FAILED
    if succeeded >= min_member:
        status["phase"] = FINISHED


#: The controller leaves alone a group scheduled in full whose start came this long after its creation.
GIVE_UP_AFTER = 48 * 3600.0


def reconcile(
    status: JSONObj, min_member: int, pods: Sequence[JSONObj], created: float | None = None
) -> dict[str, JSONValue]:
    """The controller's reconcile, repeated until the status no longer changes (as the controller
    reconciles again after each of its own updates). ``created`` is the PodGroup's creation time."""
    new = dict(status)
    start = parse_time(new.get("scheduleStartTime"))
    if (
        created is not None
        and start is not None
        and _count(new, "scheduled") == min_member
        and _count(new, "running") == 0
        and start - created > GIVE_UP_AFTER
    ):
        # "schedule time longer than 48 hours": its pods may have been garbage-collected.
        return new
    for _ in range(8):
        before = dict(new)
        _controller_step(new, min_member, pods)
        if new == before:
            break
    return new


def waiting(status: JSONObj, now: float) -> dict[str, JSONValue]:
    """A first member waits at Permit: the gang is being scheduled."""
    new = dict(status)
    if (new.get("phase") or "") in ("", PENDING, PRE_SCHEDULING):
        new["phase"] = SCHEDULING
    if new["phase"] == SCHEDULING and not new.get("scheduleStartTime"):
        new["scheduleStartTime"] = rfc3339(now)
    return new


def bound(status: JSONObj, min_member: int, now: float) -> dict[str, JSONValue]:
    """Upstream ``PostBind``: one more member scheduled."""
    new = dict(status)
    if (new.get("phase") or "") in (FINISHED, FAILED):
        return new
    scheduled = _count(new, "scheduled") + 1
    new["scheduled"] = scheduled
    if scheduled >= min_member:
        new["phase"] = SCHEDULED
    else:
        new["phase"] = SCHEDULING
        if not new.get("scheduleStartTime"):
            new["scheduleStartTime"] = rfc3339(now)
    return new


class StatusWriter:
    """Writes a PodGroup's status through the handle's client when it changed."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def write(self, pg: PodGroupInfo, new: JSONObj) -> bool:
        cur = pg.status
        if dict(cur) == dict(new):
            return False
        try:
            self.handle.client().update_object_status(pg.obj, dict(new))
        except Exception as err:  # a failed status write must not fail scheduling
            log.warning("updating the status of PodGroup %s: %s", pg.full_name, err)
            return False
        if cur.get("phase") != new.get("phase"):
            log.info(
                "%s PodGroup %s: phase %s -> %s",
                rfc3339(self.handle.clock.now()),
                pg.full_name,
                cur.get("phase") or '""',
                new.get("phase"),
            )
        return True


__all__ = ["RUNNING", "StatusWriter", "bound", "occupied_by", "pod_stats", "reconcile", "waiting"]
