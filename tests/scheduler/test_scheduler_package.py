"""The scheduler package (issue 12, step 4): one job per module behind one import path.

Everything that was imported as ``from kubesched.scheduler import X`` still is, and each part of
the Scheduler lives in the module an engineer who knows upstream's ``pkg/scheduler`` looks in."""

from __future__ import annotations

import kubesched.scheduler as scheduler_package
from kubesched.framework.cluster import EventHandlers
from kubesched.scheduler import Scheduler
from kubesched.testing import new_framework


def test_every_exported_name_exists() -> None:
    missing = [name for name in scheduler_package.__all__ if not hasattr(scheduler_package, name)]
    assert missing == []


def test_each_job_lives_in_its_module() -> None:
    where = {
        "on_pod_add": "eventhandlers",
        "on_object_event": "eventhandlers",
        "schedule_one": "schedule_one",
        "find_nodes_that_pass_filters": "schedule_one",
        "prioritize_nodes": "schedule_one",
        "select_host": "schedule_one",
        "binding_cycle": "binding_cycle",
        "bind": "binding_cycle",
        "handle_binding_cycle_error": "binding_cycle",
        "handle_scheduling_failure": "failure",
        "log_plugins": "scheduler",
    }
    actual = {name: getattr(Scheduler, name).__module__.rsplit(".", 1)[-1] for name in where}
    assert actual == where


def test_the_scheduler_registers_its_event_handlers() -> None:
    fw = new_framework(["NodeResourcesFit"])
    handlers: EventHandlers = fw.scheduler  # type-checked: the Scheduler satisfies the protocol
    assert fw.cluster.handlers is handlers  # registered at the end of its constructor
