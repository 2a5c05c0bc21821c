"""Custom resources our plugins read: watched only while their CRD is served, read through
``list_objects`` and written through the status subresource.

CapacityScheduling (scheduler-plugins pkg/capacityscheduling) is the reader here: with an
ElasticQuota of max 1 CPU in a namespace, the second 600m pod is rejected at PreFilter with the
plugin's upstream message, and the quota's ``status.used`` is written by the scheduler.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from test_kube_support import Api, InProcessScheduler, api, eventually, kubeconfig, ns, scheduler_config, unique

from kubesched.api.quantity import parse_quantity
from kubesched.kube.cluster import KubeOptions

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kubeconfig", "ns"]  # fixtures

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
EQ_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "elasticquotas.scheduling.x-k8s.io"},
    "spec": {
        "group": "scheduling.x-k8s.io",
        "scope": "Namespaced",
        "names": {"plural": "elasticquotas", "singular": "elasticquota", "kind": "ElasticQuota", "shortNames": ["eq"]},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


@pytest.fixture
def no_eq_crd(api: Api) -> Iterator[None]:
    """The test starts without the CRD and leaves none behind for other tests."""
    name = EQ_CRD["metadata"]["name"]
    api.c.delete(f"{CRD_PATH}/{name}")
    eventually(lambda: api.c.get(f"{CRD_PATH}/{name}").status_code == 404, "no ElasticQuota CRD")
    yield
    api.c.delete(f"{CRD_PATH}/{name}")


def test_elastic_quota_watched_once_its_crd_appears(api: Api, ns: str, kubeconfig: Path, no_eq_crd: None) -> None:
    sched = unique("sched")
    config = scheduler_config(
        sched,
        extra={
            "profiles": [
                {
                    "schedulerName": sched,
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
                        "postFilter": {"disabled": [{"name": "*"}], "enabled": [{"name": "CapacityScheduling"}]},
                    },
                }
            ]
        },
    )
    ks = InProcessScheduler(config, kubeconfig, backend=KubeOptions(bind_workers=4, crd_poll_interval=0.5)).start()
    try:
        assert "ElasticQuota" not in ks.app.cluster.informers  # not served: not watched
        api.ok(api.c.post(CRD_PATH, json=EQ_CRD))

        def established() -> bool:
            crd = api.ok(api.c.get(f"{CRD_PATH}/{EQ_CRD['metadata']['name']}"))
            return any(
                c["type"] == "Established" and c["status"] == "True"
                for c in (crd.get("status") or {}).get("conditions") or []
            )

        eventually(established, "the CRD established")
        eventually(
            lambda: (
                "ElasticQuota" in ks.app.cluster.informers and ks.app.cluster.informers["ElasticQuota"].synced.is_set()
            ),
            "kubesched to start watching ElasticQuotas",
        )
        eq = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": ns},
            "spec": {"min": {"cpu": "1"}, "max": {"cpu": "1"}},
        }
        eq_path = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/elasticquotas"
        api.ok(api.c.post(eq_path, json=eq))
        eventually(
            lambda: [
                o
                for o in ks.app.cluster.list_objects("scheduling.x-k8s.io/v1alpha1", "ElasticQuota")
                if o["metadata"]["namespace"] == ns
            ],
            "the quota in kubesched's informer",
        )

        api.node("n-1", cpu="4")
        api.pod(ns, "first", scheduler=sched, cpu="600m")
        eventually(lambda: api.node_of(ns, "first") == "n-1", "the first pod bound")
        api.pod(ns, "second", scheduler=sched, cpu="600m")
        [failed] = eventually(lambda: api.events(ns, reason="FailedScheduling", regarding="second"), "FailedScheduling")
        assert f"Pod {ns}/second is rejected in PreFilter because ElasticQuota {ns} is more than Max" in failed["note"]
        assert api.node_of(ns, "second") is None

        def used_cpu() -> Fraction | None:
            got = api.ok(api.c.get(f"{eq_path}/quota"))
            used = (got.get("status") or {}).get("used") or {}
            return parse_quantity(used["cpu"]) if "cpu" in used else None

        eventually(lambda: used_cpu() == Fraction(6, 10), "status.used written through the status subresource")
    finally:
        ks.stop()
