"""``kubesched bench``: scheduler_perf-style workloads measured on the simulator or a real API server.

What belongs here: the workloads, the two backends' harnesses and the result's arithmetic. A top
layer next to ``cli``: it may import everything below (``sim``, ``kube``, ``cluster``, the
scheduler...), never ``cli``, and never ``testing`` at import time: the control-plane harness that
``--backend apiserver`` needs is imported when such a run starts, and only with the
``kubesched[controlplane]`` extra installed.
"""

from .workloads import WORKLOADS, Workload, get_workload

__all__ = ["WORKLOADS", "Workload", "get_workload"]
