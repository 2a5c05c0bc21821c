"""Which Binding errors the kube backend reports as retriable (upstream ``util.Retriable``).

Upstream: pkg/scheduler/util/utils.go ``Retriable`` = apierrors.IsInternalError ||
apierrors.IsServiceUnavailable || net.IsConnectionRefused; apimachinery
pkg/api/errors/errors.go (by reason, or by code 500/503 when the reason is not one of
``knownReasons``) and pkg/util/net/util.go (``syscall.ECONNREFUSED``).
"""

from __future__ import annotations

import httpx
import pytest

from kubesched.kube.client import ApiError
from kubesched.kube.cluster import retriable


@pytest.mark.parametrize(
    ("code", "reason", "want"),
    [
        (500, "InternalError", True),
        (503, "ServiceUnavailable", True),
        (500, "", True),  # no reason: the code decides
        (503, "SomethingNew", True),  # a reason apimachinery does not know: the code decides
        (500, "Conflict", False),  # a known reason decides, whatever the code
        (409, "Conflict", False),
        (404, "NotFound", False),
        (429, "TooManyRequests", False),
        (504, "Timeout", False),
        (403, "Forbidden", False),
        (502, "", False),
    ],
)
def test_api_errors(code: int, reason: str, want: bool) -> None:
    assert retriable(ApiError(code, reason, "x")) is want


def test_a_refused_connection_is_retriable_and_a_timeout_is_not() -> None:
    with pytest.raises(httpx.ConnectError) as refused:
        httpx.post("http://127.0.0.1:1/", timeout=5)  # port 1: nothing listens
    assert retriable(refused.value)
    assert not retriable(httpx.ReadTimeout("timed out"))
    assert not retriable(httpx.ConnectError("name resolution failed"))
