"""DefaultBinder: binds through the cluster backend (``pods/binding`` on a real API server)
(upstream ``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``).

Since v1.37 the Binding is retried on errors a retry may fix (upstream ``util.BindPod``:
``retry.OnError(retry.DefaultBackoff, util.Retriable, bind)``): up to four tries, sleeping
10 ms, 50 ms and 250 ms (each up to 10 % longer) between them, while the backend raises
:class:`~kubesched.framework.cluster.RetriableAPIError`. A conflict or a missing pod is never
retried. Before v1.37 one try.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from kubesched.config.releases import BIND_RETRIES, DEFAULT_RELEASE
from kubesched.framework.cluster import RetriableAPIError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin, Handle
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins import names

#: client-go's ``retry.DefaultBackoff``: Steps 4, Duration 10 ms, Factor 5, Jitter 0.1.
BIND_TRIES = 4
BIND_BACKOFF = 0.010
BIND_BACKOFF_FACTOR = 5.0
BIND_BACKOFF_JITTER = 0.1


class DefaultBinder(BindPlugin):
    name = names.DEFAULT_BINDER

    #: How the binder waits between tries (a test replaces it; real time, as upstream's goroutine).
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(self, args: object, handle: Handle) -> None:
        self.handle = handle
        release = handle.release if handle is not None else DEFAULT_RELEASE
        self._tries = BIND_TRIES if release.has(BIND_RETRIES) else 1
        # wait.Backoff's jitter draws from Go's global source; it never affects a decision.
        self._jitter = random.Random()

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        pause = BIND_BACKOFF
        for attempt in range(1, self._tries + 1):
            try:
                self.handle.client().bind(pod.pod, node_name)
                return None
            except RetriableAPIError as err:
                if attempt == self._tries:
                    return Status.as_status(err)
            except Exception as err:
                return Status.as_status(err)
            self.sleep(pause * (1 + BIND_BACKOFF_JITTER * self._jitter.random()))
            pause *= BIND_BACKOFF_FACTOR
        return None  # unreachable: the last try returns
