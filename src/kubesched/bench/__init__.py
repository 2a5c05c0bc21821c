"""``kubesched bench``: scheduler_perf-style workloads measured on the simulator or a real API server."""

from .workloads import WORKLOADS, Workload, get_workload

__all__ = ["WORKLOADS", "Workload", "get_workload"]
