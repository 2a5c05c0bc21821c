"""The RBAC rules in deploy/ are enough, and no more than kube-scheduler's (issue 13, least privilege).

kubesched runs with the deploy/ ServiceAccount's token and the deploy/ ConfigMap's configuration and
never gets a 403. The scenario touches every API call the scheduler makes: informers (list/watch of
every kind), discovery of the scheduler-plugins CRDs, the Lease (create, get, update, release),
binding, events (create, and patch for a series), pod conditions and nominations (pods/status
patch), preemption (the victim's DisruptionTarget condition, then its deletion), and the secure
port's delegation (client CA lookup, TokenReview, SubjectAccessReview).

The default role cannot patch a pod (a stolen token cannot swap a kube-system pod's image), every
rule is within the real v1.35 API server's bootstrap roles except the documented read-only extras,
and GpuShare, the one plugin that writes pod annotations, works only with the opt-in
deploy/rbac-pod-annotations.yaml, whose admission policy still refuses anything but annotations.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_kube_support import (
    MERGE,
    Api,
    SubprocessScheduler,
    api,
    eventually,
    free_port,
    metric_value,
    ns,
    subprocesses,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "ns"]  # fixtures

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "ClusterRole": f"{RBAC}/clusterroles",
    "ClusterRoleBinding": f"{RBAC}/clusterrolebindings",
    "Role": f"{RBAC}/namespaces/{{ns}}/roles",
    "RoleBinding": f"{RBAC}/namespaces/{{ns}}/rolebindings",
    "ValidatingAdmissionPolicy": f"{ADMISSION}/validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": f"{ADMISSION}/validatingadmissionpolicybindings",
}
#: Rules of the default role beyond kube-scheduler's bootstrap roles, each read-only or a CRD's
#: /status (deploy/rbac.yaml's header says why): (apiGroup, resource) -> verbs.
BEYOND_UPSTREAM = {
    ("scheduling.k8s.io", "priorityclasses"): {"list", "watch"},
    ("scheduling.x-k8s.io", "elasticquotas"): {"list", "watch"},
    ("scheduling.x-k8s.io", "podgroups"): {"list", "watch"},
    ("scheduling.x-k8s.io", "elasticquotas/status"): {"patch"},
    ("scheduling.x-k8s.io", "podgroups/status"): {"patch"},
    ("topology.node.k8s.io", "noderesourcetopologies"): {"list", "watch"},
}
#: GpuShare's extended resource and annotation (src/kubesched/plugins/gpushare/requests.py).
GPU = "nvidia.com/gpu"
GPU_IDS = "kubesched.io/gpu-ids"


def _path(doc: dict[str, Any]) -> str:
    return PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))


def _apply(api: Api, doc: dict[str, Any]) -> None:
    """Create, or replace what an earlier run left (kubectl apply without the merge)."""
    base = _path(doc)
    resp = api.c.post(base, json=doc)
    if resp.status_code == 409:
        name = doc["metadata"]["name"]
        current = api.ok(api.c.get(f"{base}/{name}"))
        doc = {**doc, "metadata": {**doc["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
        resp = api.c.put(f"{base}/{name}", json=doc)
    api.ok(resp)


def _delete(api: Api, doc: dict[str, Any]) -> None:
    api.ok(api.c.delete(f"{_path(doc)}/{doc['metadata']['name']}"), 200, 202, 404)


def _docs(*files: str) -> list[dict[str, Any]]:
    return [d for f in files for d in yaml.safe_load_all((DEPLOY / f).read_text()) if d]


class Deployed:
    """deploy/'s Namespace, ServiceAccount, RBAC and ConfigMap applied, and a kubeconfig with a
    token of that ServiceAccount (what the Deployment's pods get in a cluster)."""

    def __init__(self, control_plane: ControlPlane, api: Api, tmp_path: Path) -> None:
        self.docs = _docs("namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "configmap.yaml")
        for doc in self.docs:
            _apply(api, doc)
        [cm] = self.of_kind("ConfigMap")
        self.config: dict[str, Any] = yaml.safe_load(cm["data"]["config.yaml"])
        [sa] = self.of_kind("ServiceAccount")
        self.sa_ns, self.sa_name = sa["metadata"]["namespace"], sa["metadata"]["name"]
        issued = api.ok(
            api.c.post(
                f"/api/v1/namespaces/{self.sa_ns}/serviceaccounts/{self.sa_name}/token",
                json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
            )
        )
        self.token: str = issued["status"]["token"]
        token_file = tmp_path / "token"
        token_file.write_text(self.token)
        self.kubeconfig = tmp_path / "sa.kubeconfig"
        self.kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "c",
                            "cluster": {
                                "server": control_plane.url,
                                "certificate-authority": str(control_plane.ca_path),
                            },
                        }
                    ],
                    "users": [{"name": "sa", "user": {"tokenFile": str(token_file)}}],
                    "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}],
                    "current-context": "sa",
                }
            )
        )

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["kind"] == kind]


@pytest.fixture
def deployed(control_plane: ControlPlane, api: Api, tmp_path: Path) -> Deployed:
    return Deployed(control_plane, api, tmp_path)


@pytest.fixture
def pod_annotations_role(api: Api) -> Iterator[list[dict[str, Any]]]:
    """deploy/rbac-pod-annotations.yaml applied for one test, then deleted again: the other tests
    of the session run with the default role only."""
    docs = _docs("rbac-pod-annotations.yaml")
    try:
        yield docs
    finally:
        for doc in reversed(docs):
            _delete(api, doc)


def _image_patch(container: str, image: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": container, "image": image}]}}


def _kube_system_pod(api: Api) -> str:
    name = unique("static-like")
    api.ok(
        api.c.post(
            "/api/v1/namespaces/kube-system/pods",
            json={
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "kube-system"},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "c", "image": "registry.invalid/etcd:3.6"}],
                },
            },
        )
    )
    return name


def test_deploy_rbac_is_enough_to_schedule(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path, deployed: Deployed
) -> None:
    config = deployed.config
    sched = config["profiles"][0]["schedulerName"]
    le = config["leaderElection"]
    low, high = unique("low"), unique("high")
    api.priority_class(low, 100)
    api.priority_class(high, 1000)
    # The Deployment and Service are valid for this API server (server-side dry run), and the
    # scheduler runs with the Deployment's own arguments (the harness sets config, kubeconfig and
    # the metrics port; the secure port moves to a free one on 127.0.0.1 and delegates to the API
    # server with the ServiceAccount's token, as in-cluster).
    [deployment, service] = _docs("deployment.yaml", "service.yaml")
    for doc, path in (
        (deployment, "/apis/apps/v1/namespaces/{ns}/deployments"),
        (service, "/api/v1/namespaces/{ns}/services"),
    ):
        api.ok(api.c.post(path.format(ns=doc["metadata"]["namespace"]), json=doc, params={"dryRun": "All"}), 200, 201)
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "run"
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == deployed.sa_name
    assert deployment["spec"]["replicas"] == 2
    assert "--secure-port=10259" in container["args"]
    assert not [a for a in container["args"] if a.startswith("--metrics-bind-address")], "plain HTTP only on request"
    secure_port = free_port()
    args = [
        *(a for a in container["args"][1:] if not a.startswith(("--config=", "--secure-port="))),
        f"--secure-port={secure_port}",
        "--bind-address=127.0.0.1",
        f"--cert-dir={tmp_path / 'serving'}",
        f"--authentication-kubeconfig={deployed.kubeconfig}",
        f"--authorization-kubeconfig={deployed.kubeconfig}",
    ]
    ks = SubprocessScheduler(config, deployed.kubeconfig, tmp_path, *args)
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
        assert api.events(ns, reason="Scheduled", regarding="early")

        api.pod(ns, "victim", scheduler=sched, cpu="1500m", priority_class=low)
        eventually(lambda: api.node_of(ns, "victim") == "n-1", "the victim bound")
        api.pod(ns, "preemptor", scheduler=sched, cpu="1500m", priority_class=high)
        eventually(lambda: api.node_of(ns, "preemptor") == "n-1", "the preemptor bound after preemption")
        assert api.get_pod(ns, "victim") is None
        assert api.events(ns, reason="Preempted", regarding="victim")

        # VolumeBinding: PreBind patches the PV's claimRef (patch of persistentvolumes, which
        # system:volume-scheduler grants); kube-controller-manager's PV controller completes it.
        kcm = control_plane.start_controller_manager()
        try:
            api.node("n-2", cpu="2")
            cls, pv = unique("local"), unique("local-pv")
            api.ok(api.c.post("/apis/storage.k8s.io/v1/storageclasses", json={
                "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": cls},
                "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}))
            api.ok(api.c.post("/api/v1/persistentvolumes", json={
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                         "local": {"path": "/mnt/disk"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n-2"]}]}]}}}}))
            api.ok(api.c.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json={
                "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                         "resources": {"requests": {"storage": "1Gi"}}}}))
            api.pod(ns, "with-claim", scheduler=sched, cpu="100m",
                    extra_spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]})
            eventually(lambda: api.node_of(ns, "with-claim") == "n-2", "the pod with a claim bound to its PV's node",
                       timeout=90)
            claim = api.ok(api.c.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data"))
            assert (claim["spec"]["volumeName"], claim["status"]["phase"]) == (pv, "Bound")
        finally:
            kcm.terminate()
            kcm.wait(30)

        # DynamicResources: PreBind adds the claim's finalizer (patch of resourceclaims), then
        # writes status.allocation and reservedFor (patch of resourceclaims/status, and from v1.37
        # of resourceclaims/binding), each within system:kube-scheduler's grants.
        driver = f"{unique('gpu')}.example.com"
        dra = "/apis/resource.k8s.io/v1"
        api.ok(api.c.post(f"{dra}/deviceclasses", json={
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}))
        api.ok(api.c.post(f"{dra}/resourceslices", json={
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"n-2-{driver}"},
            "spec": {"driver": driver, "nodeName": "n-2", "pool": {"name": "n-2", "generation": 1,
                     "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}}))
        api.ok(api.c.post(f"{dra}/namespaces/{ns}/resourceclaims", json={
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu"},
            "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": driver}}]}}}))
        api.pod(ns, "with-device", scheduler=sched, cpu="100m", extra_spec={
            "resourceClaims": [{"name": "g", "resourceClaimName": "gpu"}]})
        eventually(lambda: api.node_of(ns, "with-device") == "n-2", "the pod with a ResourceClaim bound", timeout=60)
        rc = api.ok(api.c.get(f"{dra}/namespaces/{ns}/resourceclaims/gpu"))
        [result] = rc["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (driver, "n-2", "gpu-0")
        assert [r["name"] for r in rc["status"]["reservedFor"]] == ["with-device"]
        assert "resource.kubernetes.io/delete-protection" in rc["metadata"]["finalizers"]

        # The secure port: health always allowed; /metrics authenticates the bearer token with a
        # TokenReview (a failed review would be 401) and asks a SubjectAccessReview, which says
        # no for this ServiceAccount (no get on the non-resource URL /metrics): 403.
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
        with httpx.Client(base_url=f"https://127.0.0.1:{secure_port}", verify=tls, timeout=10) as https:
            assert https.get("/healthz").status_code == 200
            denied = https.get("/metrics", headers={"Authorization": f"Bearer {deployed.token}"})
            assert denied.status_code == 403, denied.text

        text = ks.metrics()
        assert metric_value(text, "rest_client_requests_total", code="403") is None, text
        assert (metric_value(text, "rest_client_requests_total", code="201", method="POST") or 0) > 0
        assert ks.terminate() == 0
    log = ks.log()
    assert "forbidden" not in log.lower(), log
    assert "released lease" in log
    lease = api.lease(le["resourceNamespace"], le["resourceName"])
    assert lease is not None and not lease["spec"].get("holderIdentity")


def test_default_role_cannot_patch_a_pod(control_plane: ControlPlane, api: Api, ns: str, deployed: Deployed) -> None:
    victim = _kube_system_pod(api)
    api.pod(ns, "mine", scheduler="kubesched")
    with control_plane.token_client(deployed.token, timeout=30.0) as sa:
        for pod_ns, pod in (("kube-system", victim), (ns, "mine")):
            for body, content_type in (
                (_image_patch("c", "registry.invalid/evil"), "application/strategic-merge-patch+json"),
                ({"metadata": {"annotations": {GPU_IDS: "0"}}}, MERGE["Content-Type"]),
            ):
                resp = sa.patch(
                    f"/api/v1/namespaces/{pod_ns}/pods/{pod}", json=body, headers={"Content-Type": content_type}
                )
                assert resp.status_code == 403, resp.text
                message = resp.json()["message"]
                assert f'cannot patch resource "pods" in API group "" in the namespace "{pod_ns}"' in message
            put = sa.put(f"/api/v1/namespaces/{pod_ns}/pods/{pod}", json=api.get_pod(pod_ns, pod))
            assert put.status_code == 403, put.text
        # What the default role does allow on pods: their status and binding subresources.
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {
                "resourceAttributes": {"namespace": ns, "resource": "pods", "subresource": "status", "verb": "patch"}
            },
        }
        allowed = api.ok(sa.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review))
        assert allowed["status"]["allowed"] is True
    assert api.get_pod("kube-system", victim)["spec"]["containers"][0]["image"] == "registry.invalid/etcd:3.6"
    api.c.delete(f"/api/v1/namespaces/kube-system/pods/{victim}", params={"gracePeriodSeconds": 0})


def _covered(rule: dict[str, Any], group: str, resource: str, verb: str, name: str | None) -> bool:
    return (
        group in rule.get("apiGroups", [])
        and (resource in rule.get("resources", []) or "*" in rule.get("resources", []))
        and (verb in rule.get("verbs", []) or "*" in rule.get("verbs", []))
        and (not rule.get("resourceNames") or name in rule["resourceNames"])
    )


def test_default_role_is_within_kube_schedulers(api: Api, deployed: Deployed) -> None:
    """Every (group, resource, verb) of deploy/rbac.yaml is granted to kube-scheduler by the real
    API server's bootstrap policy (system:kube-scheduler and system:volume-scheduler, both bound to
    the user system:kube-scheduler), except BEYOND_UPSTREAM; our Lease stands for kube-scheduler's
    (same verbs, our own name and namespace)."""
    upstream = api.ok(api.c.get(f"{RBAC}/clusterroles/system:kube-scheduler"))["rules"]
    # Upstream binds system:volume-scheduler to the scheduler too (storage classes; PV and PVC updates).
    volume_binding = api.ok(api.c.get(f"{RBAC}/clusterrolebindings/system:volume-scheduler"))
    assert {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:kube-scheduler"} in volume_binding[
        "subjects"
    ]
    upstream = [*upstream, *api.ok(api.c.get(f"{RBAC}/clusterroles/system:volume-scheduler"))["rules"]]
    lease_role = api.ok(api.c.get(f"{RBAC}/namespaces/kube-system/roles/system::leader-locking-kube-scheduler"))
    ca_reader = api.ok(api.c.get(f"{RBAC}/namespaces/kube-system/roles/extension-apiserver-authentication-reader"))
    # Upstream binds the same client-CA reader Role to kube-scheduler.
    ca_binding = api.ok(
        api.c.get(f"{RBAC}/namespaces/kube-system/rolebindings/system::extension-apiserver-authentication-reader")
    )
    assert {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "system:kube-scheduler"} in ca_binding[
        "subjects"
    ]
    beyond: dict[tuple[str, str], set[str]] = {}
    for role in deployed.of_kind("ClusterRole") + deployed.of_kind("Role"):
        namespaced = role["kind"] == "Role"
        for rule in role["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        if namespaced and group == "coordination.k8s.io":
                            ok = any(_covered(r, group, resource, verb, "kube-scheduler") for r in lease_role["rules"])
                        else:
                            ok = any(_covered(r, group, resource, verb, None) for r in upstream)
                        if not ok:
                            beyond.setdefault((group, resource), set()).add(verb)
    assert beyond == BEYOND_UPSTREAM
    [ca] = [d for d in deployed.of_kind("RoleBinding") if d["metadata"]["namespace"] == "kube-system"]
    assert ca["roleRef"]["name"] == ca_reader["metadata"]["name"]
    # Upstream's resource names in the reader Role: only the one ConfigMap.
    assert ca_reader["rules"][0]["resourceNames"] == ["extension-apiserver-authentication"]


def _gpu_node(api: Api, name: str, gpus: int) -> None:
    api.node(name, cpu="8")
    res = {"cpu": "8", "memory": "8Gi", "pods": "110", GPU: str(gpus)}
    api.ok(
        api.c.patch(
            f"/api/v1/nodes/{name}/status", json={"status": {"capacity": res, "allocatable": res}}, headers=MERGE
        )
    )


def _gpu_pod(api: Api, ns: str, name: str, sched: str) -> None:
    api.pod(
        ns,
        name,
        scheduler=sched,
        extra_spec={
            "containers": [
                {
                    "name": "c",
                    "image": "registry.invalid/cuda",
                    "resources": {"requests": {"cpu": "1"}, "limits": {GPU: "1"}},
                }
            ]
        },
    )


def test_gpushare_needs_the_opt_in_role(
    control_plane: ControlPlane,
    api: Api,
    ns: str,
    tmp_path: Path,
    deployed: Deployed,
    pod_annotations_role: list[dict[str, Any]],
) -> None:
    config = {
        **deployed.config,
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": unique("gpushare"),
                "plugins": {"multiPoint": {"enabled": [{"name": "GpuShare"}]}},
            }
        ],
    }
    sched = config["profiles"][0]["schedulerName"]
    _gpu_node(api, "gpu-1", 2)
    ks = SubprocessScheduler(config, deployed.kubeconfig, tmp_path)
    with subprocesses(ks):
        eventually(ks.ready, "kubesched ready")
        # Default role only: GpuShare's PreBind cannot write the annotation; the binding cycle
        # fails, the pod stays unbound and its FailedScheduling event names the 403.
        _gpu_pod(api, ns, "trainer", sched)
        [failed] = eventually(
            lambda: api.events(ns, reason="FailedScheduling", regarding="trainer"), "GpuShare's PreBind refused"
        )
        note = failed["note"]
        assert "GpuShare" in note and "forbidden" in note.lower(), note
        assert 'cannot patch resource "pods"' in note, note
        assert api.node_of(ns, "trainer") is None

        # The opt-in role: the annotation is written and the pod bound (after its backoff).
        for doc in pod_annotations_role:
            _apply(api, doc)
        eventually(lambda: api.node_of(ns, "trainer") == "gpu-1", "the GPU pod bound with the opt-in role", timeout=90)
        pod = api.get_pod(ns, "trainer")
        assert pod is not None and pod["metadata"]["annotations"][GPU_IDS] in ("0", "1")
        assert ks.terminate() == 0
    print(f"GpuShare PreBind with the default role only: {note}")

    # Even with the opt-in role the ServiceAccount may change only annotations (the policy).
    victim = _kube_system_pod(api)
    with control_plane.token_client(deployed.token, timeout=30.0) as sa:

        def patch(body: dict[str, Any]) -> httpx.Response:
            return sa.patch(
                f"/api/v1/namespaces/kube-system/pods/{victim}",
                json=body,
                headers={"Content-Type": "application/strategic-merge-patch+json"},
            )

        # The policy may take a moment to be enforced after its binding is created.
        eventually(
            lambda: patch(_image_patch("c", "registry.invalid/evil")).status_code == 403,
            "the admission policy refusing an image change",
        )
        refused = patch(_image_patch("c", "registry.invalid/evil"))
        assert "may change only the annotations" in refused.json()["message"], refused.text
        assert patch({"metadata": {"labels": {"evil": "1"}}}).status_code == 403
        assert patch({"metadata": {"annotations": {GPU_IDS: "0"}}}).status_code == 200
    assert api.get_pod("kube-system", victim)["spec"]["containers"][0]["image"] == "registry.invalid/etcd:3.6"
    api.c.delete(f"/api/v1/namespaces/kube-system/pods/{victim}", params={"gracePeriodSeconds": 0})
