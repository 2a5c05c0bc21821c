"""Plugins and helpers for the end-to-end scheduler tests (a simulated cluster, virtual clock).

``fake("A", filter=...)`` builds a plugin class from callables, as in tests/framework/fw_fakes.py;
the helpers read what a user would see: events, pod conditions, where a pod is queued.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.testing import TestFramework


def fake(name: str, **points: Callable[..., Any]) -> type:
    """A plugin class called ``name`` implementing exactly the given extension point methods."""

    def __init__(self: Any, args: Any = None, handle: Any = None) -> None:
        self.args = args
        self.handle = handle

    ns: dict[str, Any] = {"name": name, "__init__": __init__}
    for method, fn in points.items():
        ns[method] = staticmethod(fn)
    if "pre_filter" in points and "pre_filter_extensions" not in points:
        ns["pre_filter_extensions"] = staticmethod(lambda: None)
    if "score" in points and "score_extensions" not in points:

        def score_extensions(self: Any) -> Any:
            return self if "normalize_score" in points else None

        ns["score_extensions"] = score_extensions
    return type(name, (), ns)


def notes(fw: TestFramework, pod: str, reason: str = "FailedScheduling") -> list[str]:
    return [e.note for e in fw.cluster.events if e.name == pod and e.reason == reason]


def node_of(fw: TestFramework, pod: str) -> str | None:
    node: str | None = fw.cluster.history[f"default/{pod}"]["node"]
    return node


def bound_at(fw: TestFramework, pod: str) -> float | None:
    t: float | None = fw.cluster.history[f"default/{pod}"]["boundAt"]
    return t


def condition(fw: TestFramework, pod: str) -> dict[str, Any]:
    cur = fw.cluster.pods[f"default/{pod}"]
    conds = [c for c in (cur.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
    assert conds, f"pod {pod} has no PodScheduled condition"
    return dict(conds[-1])


def queued(fw: TestFramework, pod: str) -> tuple[str, Any] | None:
    """(queue name, QueuedPodInfo) of a pending pod, or None."""
    for qpi, where in fw.scheduler.queue.pending_pods():
        if qpi.pod_info.name == pod:
            return where, qpi
    return None
