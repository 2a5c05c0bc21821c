"""DefaultBinder and v1.37's bind retries.

Upstream: pkg/scheduler/framework/plugins/defaultbinder/default_binder.go and
pkg/scheduler/util/utils.go (``BindPod``: ``retry.OnError(retry.DefaultBackoff, Retriable, bind)``
at v1.37.2; a single ``Bind`` call at v1.35.4), client-go util/retry (``DefaultBackoff``: Steps 4,
Duration 10ms, Factor 5.0, Jitter 0.1) and apimachinery's wait.ExponentialBackoff (a sleep
between tries, none after the last). The classification of errors is
tests/kube/test_kube_bind_retriable.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import testing
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.framework.cluster import BindConflictError, RetriableAPIError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.testing import make_pod


class FlakyClient:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def bind(self, pod: Mapping[str, Any], node_name: str) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


class Handle(testing.FakeHandle):
    def __init__(self, release: Release, client: FlakyClient) -> None:
        super().__init__(release=release)
        self._flaky = client

    def client(self) -> Any:
        return self._flaky


def _bind(release: Release, failures: list[Exception]) -> tuple[Any, int, list[float]]:
    client = FlakyClient(failures)
    binder = DefaultBinder(None, Handle(release, client))
    slept: list[float] = []
    binder.sleep = slept.append  # type: ignore[method-assign]
    status = binder.bind(CycleState(), PodInfo(make_pod("p").obj()), "n1")
    return status, client.calls, slept


def _unavailable() -> RetriableAPIError:
    return RetriableAPIError("503 ServiceUnavailable: the server is currently unable to handle the request")


def test_v1_37_retries_transient_errors_with_the_default_backoff() -> None:
    status, calls, slept = _bind(V1_37, [_unavailable(), _unavailable(), _unavailable()])
    assert status is None and calls == 4
    for got, base in zip(slept, [0.010, 0.050, 0.250], strict=True):
        assert base <= got <= base * 1.1


def test_v1_37_gives_up_after_four_tries() -> None:
    status, calls, slept = _bind(V1_37, [_unavailable() for _ in range(6)])
    assert calls == 4 and len(slept) == 3
    assert status is not None and status.code == Code.ERROR and "503 ServiceUnavailable" in status.message()


@pytest.mark.parametrize("release", [V1_35, V1_36])
def test_earlier_releases_bind_once(release: Release) -> None:
    status, calls, slept = _bind(release, [_unavailable()])
    assert calls == 1 and slept == []
    assert status is not None and status.code == Code.ERROR


@pytest.mark.parametrize("error", [BindConflictError("pods \"p\" not found"), RuntimeError("boom")])
def test_other_errors_are_never_retried(error: Exception) -> None:
    status, calls, slept = _bind(V1_37, [error])
    assert calls == 1 and slept == []
    assert status is not None and not status.is_success()
