"""DefaultPreemption — a placeholder until preemption lands (issue 3).

The default profile names DefaultPreemption at PostFilter, so the profile must be able to load it.
Until kubesched implements upstream's preemption (candidate nodes, victim selection with PDBs,
nominatedNodeName, victim deletion), this PostFilter never preempts: it returns Unschedulable with
no message, so a pod that fits nowhere gets upstream's FailedScheduling message without the
``preemption: ...`` suffix and waits for a cluster event, as it would if no victims existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.config.plugin_args import DefaultPreemptionArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, PostFilterResult
from kubesched.plugins import names


class DefaultPreemption:
    name = names.DEFAULT_PREEMPTION
    args_type = DefaultPreemptionArgs

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Any) -> None:
        self.args = args or DefaultPreemptionArgs()

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        return None, Status(Code.UNSCHEDULABLE)
