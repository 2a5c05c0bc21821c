"""A PreBind plugin's wait on a virtual clock (DynamicResources' device binding conditions).

Upstream's PreBind may block its binding goroutine while it polls (``wait.PollUntilContextTimeout``):
DynamicResources waits there for the binding conditions of allocated devices. On the real backend
a plugin blocks its binding thread the same way. On a virtual clock blocking would stop time, so
the plugin instead leaves a :class:`PreBindWait` in the cycle state and returns Success; the
binding cycle then polls it on clock timers (time advances, other pods are scheduled meanwhile)
and goes on to Bind when it is ready, or fails the cycle as if PreBind had returned the error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PRE_BIND_WAIT", "PreBindWait"]

#: CycleState key of the pending :class:`PreBindWait`.
PRE_BIND_WAIT = "kubesched/PreBindWait"


@dataclass
class PreBindWait:
    """Poll ``poll`` every ``interval`` seconds until ``deadline`` (clock time).

    ``poll`` returns (ready, error): an error ends the wait with that message, ready ends it with
    success; past the deadline the wait ends with ``timeout_message``. Messages are the plugin's
    own; the binding cycle adds ``running PreBind plugin "<plugin>": `` as for a PreBind error.
    """

    plugin: str
    interval: float
    deadline: float
    poll: Callable[[], tuple[bool, str | None]]
    timeout_message: str
