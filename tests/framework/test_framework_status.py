"""Status codes and their predicates.

Pinned against ``staging/src/k8s.io/kube-scheduler/framework/interface.go`` (codes iota 0..6,
``IsRejected``, ``AsError``, ``Message``).
"""

from __future__ import annotations

import pytest

from kubesched.framework.status import Code, Status, is_success, or_success

# code, name, is_success, is_rejected, as_error is None
CODES = [
    (Code.SUCCESS, 0, "Success", True, False, True),
    (Code.ERROR, 1, "Error", False, False, False),
    (Code.UNSCHEDULABLE, 2, "Unschedulable", False, True, False),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 3, "UnschedulableAndUnresolvable", False, True, False),
    (Code.WAIT, 4, "Wait", False, False, True),
    (Code.SKIP, 5, "Skip", False, False, True),
    (Code.PENDING, 6, "Pending", False, True, False),
]


@pytest.mark.parametrize(("code", "value", "name", "success", "rejected", "no_error"), CODES)
def test_codes_match_upstream(code: Code, value: int, name: str, success: bool, rejected: bool,
                              no_error: bool) -> None:
    s = Status(code, "r")
    assert int(code) == value
    assert code.upstream_name == name
    assert s.is_success() is success
    assert s.is_rejected() is rejected
    assert (s.as_error() is None) is no_error


def test_message_joins_reasons_with_comma() -> None:
    assert Status(Code.UNSCHEDULABLE, "a", "b").message() == "a, b"
    assert Status(Code.UNSCHEDULABLE).message() == ""


def test_none_is_success() -> None:
    assert is_success(None)
    assert or_success(None).is_success()
    assert not is_success(Status(Code.SKIP))


def test_error_status_carries_the_exception() -> None:
    err = ValueError("boom")
    s = Status.as_status(err)
    assert s.code == Code.ERROR
    assert s.message() == "boom"
    assert s.as_error() is err


def test_as_error_of_a_rejection_names_its_message() -> None:
    err = Status(Code.UNSCHEDULABLE, "no room").as_error()
    assert err is not None
    assert str(err) == "no room"


def test_one_as_status_and_it_is_upstreams_as_status() -> None:
    # Upstream's AsStatus(err) wraps an error; the None-to-Success normaliser has its own name, so
    # the one name no longer means two opposite things (issue 12).
    from kubesched.framework import status

    assert not hasattr(status, "as_status")
    assert status.or_success(None).code == Code.SUCCESS
    s = Status(Code.UNSCHEDULABLE, "x")
    assert status.or_success(s) is s
