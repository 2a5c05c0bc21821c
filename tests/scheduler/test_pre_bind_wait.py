"""A PreBind plugin that waits on the virtual clock (framework/prebind_wait.py), as DynamicResources
waits for device binding conditions: upstream's PreBind blocks in ``wait.PollUntilContextTimeout``
(5 s, here the wait's interval) and its error becomes ``running PreBind plugin "X": <err>``
(pkg/scheduler/framework/runtime/framework.go); the pod binds once the wait is over, other pods
are scheduled meanwhile, and a failed wait sends the pod back to the queue.
"""

from __future__ import annotations

from typing import Any

from sched_fakes import bound_at, fake, node_of, notes

from kubesched.framework.prebind_wait import PRE_BIND_WAIT, PreBindWait
from kubesched.testing import TestFramework, make_node, make_pod, new_framework


def _waiting(ready_after: float, error: str | None = None, deadline: float = 600.0) -> tuple[type, list[float]]:
    """A plugin whose PreBind for pod ``slow`` waits until ``ready_after`` seconds have passed
    (or fails with ``error`` at the first poll); polls are recorded."""
    polls: list[float] = []

    def pre_bind(state: Any, pod: Any, node_name: str) -> None:
        if pod.name != "slow":
            return None
        handle = Plugin.handle_of[0]
        start = handle.clock.now()

        def poll() -> tuple[bool, str | None]:
            polls.append(handle.clock.now() - start)
            if error is not None:
                return False, error
            return handle.clock.now() - start >= ready_after, None

        state.write(PRE_BIND_WAIT, PreBindWait("Waiting", 5.0, start + deadline, poll, "timed out"))
        return None

    Plugin = fake("Waiting", pre_bind=pre_bind)
    Plugin.handle_of = []  # type: ignore[attr-defined]
    original = Plugin.__init__

    def __init__(self: Any, args: Any = None, handle: Any = None) -> None:
        original(self, args, handle)
        Plugin.handle_of.append(handle)  # type: ignore[attr-defined]

    Plugin.__init__ = __init__  # type: ignore[method-assign]
    return Plugin, polls


def _cluster(plugin: type) -> TestFramework:
    fw = new_framework([plugin], nodes=[make_node("n1").capacity(cpu="4").obj()])
    fw.add_pod(make_pod("slow").req(cpu="1").obj())
    fw.add_pod(make_pod("fast").req(cpu="1").obj())
    return fw


def test_the_pod_binds_when_the_wait_is_over_and_others_go_on() -> None:
    plugin, polls = _waiting(ready_after=12.0)
    fw = _cluster(plugin)
    start = fw.clock.now()
    fw.schedule(until=start + 100)
    assert polls == [5.0, 10.0, 15.0]
    assert node_of(fw, "slow") == "n1" and node_of(fw, "fast") == "n1"
    slow, fast = bound_at(fw, "slow"), bound_at(fw, "fast")
    assert slow is not None and fast is not None
    assert (slow - start, fast - start) == (15.0, 0.0)


def test_a_failed_wait_is_the_pre_bind_error() -> None:
    plugin, _ = _waiting(ready_after=0.0, error="binding failed")
    fw = _cluster(plugin)
    fw.schedule(until=fw.clock.now() + 6)
    assert node_of(fw, "slow") is None
    assert notes(fw, "slow")[0] == 'running PreBind plugin "Waiting": binding failed'


def test_the_wait_times_out_at_its_deadline() -> None:
    plugin, polls = _waiting(ready_after=1e9, deadline=12.0)
    fw = _cluster(plugin)
    fw.schedule(until=fw.clock.now() + 13)
    assert polls == [5.0, 10.0, 12.0]
    assert notes(fw, "slow")[0] == 'running PreBind plugin "Waiting": timed out'
