"""PrioritySort: higher ``spec.priority`` first, then the earlier queue timestamp
(upstream ``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``)."""

from __future__ import annotations

from kubesched.framework.interfaces import Handle, QueueSortPlugin
from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins import names


class PrioritySort(QueueSortPlugin):
    name = names.PRIORITY_SORT

    def __init__(self, args: object = None, handle: Handle | None = None) -> None:
        pass

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod_info.priority, b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    @staticmethod
    def sort_key(qpi: QueuedPodInfo) -> tuple[int, float]:
        """``less(a, b) == sort_key(a) < sort_key(b)``: the queue compares these tuples instead of
        calling ``less`` (backend/queue.py ``_sort_key_of``)."""
        return -qpi.pod_info.priority, qpi.timestamp
