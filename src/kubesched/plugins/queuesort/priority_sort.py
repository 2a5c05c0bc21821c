"""PrioritySort: higher ``spec.priority`` first, then the earlier queue timestamp
(upstream ``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``)."""

from __future__ import annotations

from typing import Any

from kubesched.framework.interfaces import QueueSortPlugin
from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins import names


class PrioritySort(QueueSortPlugin):
    name = names.PRIORITY_SORT

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.pod_info.priority, b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)
