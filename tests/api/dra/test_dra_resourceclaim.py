"""Pod claim helpers, cases from upstream
staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim_test.go (Name, IsForPod,
IsReservedForPod, CanBeReserved) plus malformed objects that must not raise."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra.resourceclaim import (
    ClaimNameError,
    base_request_ref,
    can_be_reserved,
    claim_name,
    is_allocated,
    is_for_pod,
    is_reserved_for_pod,
    not_for_pod_message,
    parse_request_ref,
)

POD: dict[str, Any] = {
    "metadata": {"name": "my-pod", "namespace": "default", "uid": "pod-uid"},
    "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "my-pod-gpu-abc12"}]},
}


def test_name_direct_reference() -> None:
    assert claim_name(POD, {"name": "x", "resourceClaimName": "shared"}) == ("shared", False)


def test_name_from_template_reads_pod_status() -> None:
    assert claim_name(POD, {"name": "gpu", "resourceClaimTemplateName": "t"}) == ("my-pod-gpu-abc12", True)


def test_name_from_template_intentionally_not_created() -> None:
    pod = {"metadata": POD["metadata"], "status": {"resourceClaimStatuses": [{"name": "gpu"}]}}
    assert claim_name(pod, {"name": "gpu", "resourceClaimTemplateName": "t"}) == (None, True)


def test_name_claim_not_created_yet() -> None:
    with pytest.raises(ClaimNameError, match=r'^pod "default/my-pod": ResourceClaim not created yet$'):
        claim_name(POD, {"name": "other", "resourceClaimTemplateName": "t"})


def test_name_no_supported_field() -> None:
    msg = r'^pod "default/my-pod", spec.resourceClaim "gpu": none of the supported fields are set$'
    with pytest.raises(ClaimNameError, match=msg):
        claim_name(POD, {"name": "gpu"})


@pytest.mark.parametrize("pod", [None, 7, {"metadata": "x", "status": []}, {"status": {"resourceClaimStatuses": 3}}])
def test_name_malformed_pod_gives_claim_name_error(pod: Any) -> None:
    with pytest.raises(ClaimNameError):
        claim_name(pod, {"name": "gpu", "resourceClaimTemplateName": "t"})


def _claim(owner_uid: str | None, namespace: str = "default", controller: bool = True) -> dict[str, Any]:
    refs = [] if owner_uid is None else [{"kind": "Pod", "name": "my-pod", "uid": owner_uid, "controller": controller}]
    return {"metadata": {"name": "c", "namespace": namespace, "ownerReferences": refs}}


def test_is_for_pod() -> None:
    assert is_for_pod(POD, _claim("pod-uid"))
    assert not_for_pod_message(POD, _claim("pod-uid")) is None


@pytest.mark.parametrize(
    "claim",
    [
        _claim("other-uid"),
        _claim("pod-uid", namespace="kube-system"),
        _claim(None),
        _claim("pod-uid", controller=False),
    ],
)
def test_is_not_for_pod(claim: dict[str, Any]) -> None:
    assert not is_for_pod(POD, claim)
    ns = claim["metadata"]["namespace"]
    assert (
        not_for_pod_message(POD, claim)
        == f"ResourceClaim {ns}/c was not created for pod default/my-pod (pod is not owner)"
    )


def test_is_for_pod_malformed() -> None:
    assert not is_for_pod({}, {})  # no uid on either side: not an owner
    assert not is_for_pod(POD, {"metadata": {"namespace": "default", "ownerReferences": [1, "x"]}})


def test_is_reserved_for_pod() -> None:
    claim = {"status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "x"}, {"uid": "pod-uid"}]}}
    assert is_reserved_for_pod(POD, claim)
    assert not is_reserved_for_pod(POD, {"status": {"reservedFor": [{"uid": "x"}]}})
    assert not is_reserved_for_pod(POD, {"status": {"reservedFor": "pod-uid"}})
    assert not is_reserved_for_pod({"metadata": {}}, {"status": {"reservedFor": [{}]}})


def test_can_be_reserved_limit_256() -> None:
    assert can_be_reserved({})
    assert can_be_reserved({"status": {"reservedFor": [{"uid": str(i)} for i in range(255)]}})
    assert not can_be_reserved({"status": {"reservedFor": [{"uid": str(i)} for i in range(256)]}})


def test_is_allocated() -> None:
    assert is_allocated({"status": {"allocation": {"devices": {"results": []}}}})
    assert not is_allocated({"status": {}})
    assert not is_allocated({"status": {"allocation": None}})
    assert not is_allocated([])  # type: ignore[arg-type]


def test_request_refs() -> None:
    assert parse_request_ref("req-0/sub-1") == ("req-0", "sub-1")
    assert parse_request_ref("req-0") == ("req-0", "")
    assert base_request_ref("req-0/sub-1") == "req-0"
