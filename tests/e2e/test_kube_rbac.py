"""The RBAC rules in deploy/ are enough: kubesched runs with the deploy/ ServiceAccount's token
and the deploy/ ConfigMap's configuration and never gets a 403.

The scenario touches every API call the scheduler makes: informers (list/watch of every kind),
discovery of the scheduler-plugins CRDs, the Lease (create, get, update, release), binding,
events (create, and patch for a series), pod conditions and nominations (pods/status patch),
and preemption (the victim's DisruptionTarget condition, then its deletion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_kube_support import (
    Api,
    SubprocessScheduler,
    api,
    eventually,
    metric_value,
    ns,
    subprocesses,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "ns"]  # fixtures

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


def _apply(api: Api, doc: dict[str, Any]) -> None:
    """Create, or replace what an earlier run left (kubectl apply without the merge)."""
    base = PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
    resp = api.c.post(base, json=doc)
    if resp.status_code == 409:
        name = doc["metadata"]["name"]
        current = api.ok(api.c.get(f"{base}/{name}"))
        doc = {**doc, "metadata": {**doc["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
        resp = api.c.put(f"{base}/{name}", json=doc)
    api.ok(resp)


def _docs(*files: str) -> list[dict[str, Any]]:
    return [d for f in files for d in yaml.safe_load_all((DEPLOY / f).read_text()) if d]


def test_deploy_rbac_is_enough_to_schedule(control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path) -> None:
    docs = _docs("namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "configmap.yaml")
    for doc in docs:
        _apply(api, doc)
    [cm] = [d for d in docs if d["kind"] == "ConfigMap"]
    config = yaml.safe_load(cm["data"]["config.yaml"])
    sched = config["profiles"][0]["schedulerName"]
    le = config["leaderElection"]
    [sa] = [d for d in docs if d["kind"] == "ServiceAccount"]
    sa_ns, sa_name = sa["metadata"]["namespace"], sa["metadata"]["name"]

    issued = api.ok(
        api.c.post(
            f"/api/v1/namespaces/{sa_ns}/serviceaccounts/{sa_name}/token",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )
    )
    token_file = tmp_path / "token"
    token_file.write_text(issued["status"]["token"])
    kubeconfig = tmp_path / "sa.kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {"server": control_plane.url, "certificate-authority": str(control_plane.ca_path)},
                    }
                ],
                "users": [{"name": "sa", "user": {"tokenFile": str(token_file)}}],
                "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}],
                "current-context": "sa",
            }
        )
    )
    low, high = unique("low"), unique("high")
    api.priority_class(low, 100)
    api.priority_class(high, 1000)
    # The Deployment and Service are valid for this API server (server-side dry run), and the
    # scheduler runs with the Deployment's own arguments (the harness sets config, kubeconfig and
    # the metrics port).
    [deployment, service] = _docs("deployment.yaml", "service.yaml")
    for doc, path in (
        (deployment, "/apis/apps/v1/namespaces/{ns}/deployments"),
        (service, "/api/v1/namespaces/{ns}/services"),
    ):
        api.ok(api.c.post(path.format(ns=doc["metadata"]["namespace"]), json=doc, params={"dryRun": "All"}), 200, 201)
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "run"
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == sa_name
    assert deployment["spec"]["replicas"] == 2
    args = [a for a in container["args"][1:] if not a.startswith(("--config=", "--metrics-bind-address="))]
    ks = SubprocessScheduler(config, kubeconfig, tmp_path, *args)
    with subprocesses(ks):
        eventually(ks.ready, "kubesched ready with the ServiceAccount's token")
        eventually(
            lambda: (
                (api.lease(le["resourceNamespace"], le["resourceName"]) or {}).get("spec", {}).get("holderIdentity")
            ),
            "the Lease taken",
        )

        # No node yet: repeated identical failures become an event series (events patch).
        api.pod(ns, "early", scheduler=sched)
        eventually(
            lambda: [e for e in api.events(ns, reason="FailedScheduling", regarding="early") if e.get("series")],
            "a FailedScheduling series",
        )
        api.node("n-1", cpu="2")
        eventually(lambda: api.node_of(ns, "early") == "n-1", "the early pod bound")

        api.pod(ns, "victim", scheduler=sched, cpu="1500m", priority_class=low)
        eventually(lambda: api.node_of(ns, "victim") == "n-1", "the victim bound")
        api.pod(ns, "preemptor", scheduler=sched, cpu="1500m", priority_class=high)
        eventually(lambda: api.node_of(ns, "preemptor") == "n-1", "the preemptor bound after preemption")
        assert api.get_pod(ns, "victim") is None
        assert api.events(ns, reason="Preempted", regarding="victim")

        text = ks.metrics()
        assert metric_value(text, "rest_client_requests_total", code="403") is None, text
        assert (metric_value(text, "rest_client_requests_total", code="201", method="POST") or 0) > 0
        assert ks.terminate() == 0
    log = ks.log()
    assert "forbidden" not in log.lower(), log
    assert "released lease" in log
    lease = api.lease(le["resourceNamespace"], le["resourceName"])
    assert lease is not None and not lease["spec"].get("holderIdentity")
