"""The binding path asks the leader elector just before ``POST pods/binding``: a binding cycle
that started while we led but reaches Bind after the renew deadline binds nothing (the new
leader may already have decided about the pod)."""

from __future__ import annotations

import httpx
import pytest
from kube_fakes import FakeApi

from kubesched.framework.clock import VirtualClock
from kubesched.framework.cluster import BindConflictError
from kubesched.kube.cluster import KubeCluster

T0 = 1767225600.0
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "uid-1"}, "spec": {}}
BINDING = "/api/v1/namespaces/ns/pods/p/binding"


def test_no_binding_once_no_longer_leading() -> None:
    api = FakeApi()
    api.route("POST", BINDING, httpx.Response(201, json={"kind": "Status", "status": "Success"}))
    c = KubeCluster(api.client(), VirtualClock(T0))
    leading = [True]
    c.may_bind = lambda: leading[0]
    c.bind(POD, "node-1")
    assert c.bindings == 1
    leading[0] = False
    with pytest.raises(BindConflictError, match="no longer leading"):
        c.bind(POD, "node-1")
    assert len(api.sent("POST", BINDING)) == 1  # nothing sent past the deadline
    assert c.bindings == 1
