"""The scheduler: event handlers, the scheduling cycle and the binding cycle, one module per job.

``scheduler.py`` builds the Scheduler; ``eventhandlers.py`` (upstream ``eventhandlers.go``) feeds
the cache and the queue; ``schedule_one.py`` is the scheduling cycle and ``binding_cycle.py`` the
binding cycle (together upstream's ``schedule_one.go``), ``failure.py`` what a failed attempt does;
``handle.py`` is the plugins' handle and ``stats.py`` the counters.

What belongs here: the two cycles and what drives them, as upstream's ``pkg/scheduler`` outside
``framework`` and ``backend``. May import ``api``, ``config``, ``framework``, ``plugins`` and
``backend``; never ``sim``, ``kube`` or anything above them. No backend imports it: the Scheduler
registers itself as the backend's ``framework.cluster.EventHandlers``.
"""

from kubesched.scheduler.base import ScheduleResult
from kubesched.scheduler.failure import NOTE_LENGTH_LIMIT, truncate_message
from kubesched.scheduler.handle import FrameworkHandle
from kubesched.scheduler.schedule_one import (
    MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND,
    MIN_FEASIBLE_NODES_TO_FIND,
    TIE_BREAK_NODE_ORDER,
    TIE_BREAK_RANDOM,
    num_feasible_nodes_to_find,
)
from kubesched.scheduler.scheduler import Scheduler
from kubesched.scheduler.stats import RECENT_BINDINGS, SchedulerStats

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NOTE_LENGTH_LIMIT",
    "RECENT_BINDINGS",
    "TIE_BREAK_NODE_ORDER",
    "TIE_BREAK_RANDOM",
    "FrameworkHandle",
    "ScheduleResult",
    "Scheduler",
    "SchedulerStats",
    "num_feasible_nodes_to_find",
    "truncate_message",
]
