"""Pods with ResourceClaims on the real API server, scheduled by kube-scheduler and by kubesched in
turn (v1.35.4 and v1.37.2, each with its own control plane, kube-controller-manager's resourceclaim
controller, and kubesched at that ``--emulated-version``), each with the default profile: the same
node, the same FailedScheduling message, the same devices. The test publishes the ResourceSlices
itself (no driver is needed to schedule). Upstream:
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go,
staging/src/k8s.io/dynamic-resource-allocation/structured, pkg/controller/resourceclaim/controller.go.
Hand-traced, with a driver of its own per run (so one run's allocations never meet the other's):

- ``nvlink``: node ``a`` has 8 GPUs in two NVLink domains of 4, node ``b`` 8 GPUs in one domain; a
  claim for 8 GPUs whose ``matchAttribute`` is the domain fits only ``b``, and gets all of its GPUs.
- ``too-many``: 9 GPUs of one domain: no node has them, ``cannot allocate all claims``.
- ``template``: a pod whose claim comes from a ResourceClaimTemplate (the controller creates it):
  1 GPU, on ``a`` (``b``'s are all taken), the generated claim allocated and reserved for the pod.
- ``bind-fails``: an admission policy refuses the pod's binding; the claim, allocated and reserved in
  PreBind, is released by Unreserve (the pod leaves ``reservedFor``); once the policy goes the pod
  binds and the claim is reserved for it again.
- ``extended`` (a test of its own): a pod asking for an extended resource a DeviceClass provides
  through DRA (v1.37: placed with a claim the scheduler creates; v1.35: the node's allocatable).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_kube_support import Api, InProcessScheduler, eventually, free_port, healthy, outcome, unique

from kubesched.config.releases import NO_DRA_DEALLOCATE_REASON, V1_35, V1_37, Release
from kubesched.kube.controlplane import ControlPlane, require_binaries, start_kube_scheduler

pytestmark = pytest.mark.controlplane

RESOURCE = "/apis/resource.k8s.io/v1"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def _config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": name}],
    }


@pytest.fixture(scope="module", params=[V1_35, V1_37], ids=str)
def cp(request: pytest.FixtureRequest) -> Iterator[tuple[Release, ControlPlane]]:
    release: Release = request.param
    with ControlPlane(require_binaries(f"v{release}")) as plane:
        plane.start_controller_manager(controllers=("resourceclaim-controller",))
        yield release, plane


def _slice(api: Api, driver: str, node: str, domains: list[int]) -> None:
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {"nvlink": {"int": d}, "model": {"string": "h100"}},
            "capacity": {"memory": {"value": "80Gi"}},
        }
        for i, d in enumerate(domains)
    ]
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }
    api.ok(api.c.post(f"{RESOURCE}/resourceslices", json=body))


def _device_class(api: Api, name: str, driver: str) -> None:
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }
    api.ok(api.c.post(f"{RESOURCE}/deviceclasses", json=body))


def _claim_spec(cls: str, count: int, domain_attribute: str | None) -> dict[str, Any]:
    devices: dict[str, Any] = {
        "requests": [
            {"name": "gpus", "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}}
        ],
    }
    if domain_attribute:
        devices["constraints"] = [{"requests": ["gpus"], "matchAttribute": domain_attribute}]
    return {"devices": devices}


def _claim(api: Api, ns: str, name: str, spec: dict[str, Any]) -> None:
    api.ok(
        api.c.post(
            f"{RESOURCE}/namespaces/{ns}/resourceclaims",
            json={
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name},
                "spec": spec,
            },
        )
    )


def _template(api: Api, ns: str, name: str, spec: dict[str, Any]) -> None:
    api.ok(
        api.c.post(
            f"{RESOURCE}/namespaces/{ns}/resourceclaimtemplates",
            json={
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name},
                "spec": {"spec": spec},
            },
        )
    )


def _get_claim(api: Api, ns: str, name: str) -> dict[str, Any]:
    return dict(api.ok(api.c.get(f"{RESOURCE}/namespaces/{ns}/resourceclaims/{name}")))


def _using(claim: str | None = None, template: str | None = None) -> dict[str, Any]:
    source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template}
    return {
        "resourceClaims": [{"name": "gpus", **source}],
        "containers": [
            {
                "name": "c",
                "image": "registry.invalid/pause",
                "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpus"}]},
            }
        ],
    }


def _devices(claim: dict[str, Any], tag: str) -> list[str]:
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return sorted(f"{r['pool']}/{r['device']} {r['request']} {r['driver'].replace(tag, 'TAG')}" for r in results)


def _reserved(claim: dict[str, Any]) -> list[str]:
    return sorted(str(r.get("name")) for r in (claim.get("status") or {}).get("reservedFor") or [])


def _when_reserved(api: Api, ns: str, name: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        claim = _get_claim(api, ns, name)
        return claim if _reserved(claim) else None

    got = eventually(check, f"claim {name} reserved")
    assert isinstance(got, dict)
    return got


def _deny_binding(api: Api, name: str, pod: str) -> None:
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/binding"]}
                ]
            },
            "validations": [{"expression": f"object.metadata.name != '{pod}'", "message": "no binding today"}],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    api.ok(api.c.post(f"{ADMISSION}/validatingadmissionpolicies", json=policy))
    api.ok(api.c.post(f"{ADMISSION}/validatingadmissionpolicybindings", json=binding))


def _allow_binding(api: Api, name: str) -> None:
    api.ok(api.c.delete(f"{ADMISSION}/validatingadmissionpolicybindings/{name}"), 200, 404)
    api.ok(api.c.delete(f"{ADMISSION}/validatingadmissionpolicies/{name}"), 200, 404)


def _watch_claim_states(
    api: Api, ns: str, name: str, seen: list[tuple[bool, tuple[str, ...]]], stop: threading.Event
) -> None:
    """Record each distinct (allocated, reservedFor) state of the claim, by polling fast: the
    transitions last at least the pod's backoff (1 s), so 50 ms polls see each of them."""
    while not stop.is_set():
        try:
            claim = _get_claim(api, ns, name)
        except (httpx.HTTPError, AssertionError):
            time.sleep(0.05)
            continue
        state = (bool((claim.get("status") or {}).get("allocation")), tuple(_reserved(claim)))
        if not seen or seen[-1] != state:
            seen.append(state)
        time.sleep(0.05)


def _scenario(api: Api, scheduler: str) -> dict[str, Any]:
    ns = api.namespace()
    tag = ns.rsplit("-", 1)[-1]
    driver = f"gpu-{tag}.example.com"
    cls = f"gpu-{tag}"
    domain = f"{driver}/nvlink"
    _device_class(api, cls, driver)
    _slice(api, driver, "a", [0, 0, 0, 0, 1, 1, 1, 1])
    _slice(api, driver, "b", [0] * 8)
    _claim(api, ns, "eight", _claim_spec(cls, 8, domain))
    _claim(api, ns, "nine", _claim_spec(cls, 9, domain))
    _claim(api, ns, "one", _claim_spec(cls, 1, None))
    _template(api, ns, "one-gpu", _claim_spec(cls, 1, None))
    time.sleep(1.0)  # the informers have the slices, the class and the claims

    out: dict[str, Any] = {}
    api.pod(ns, "nvlink", scheduler=scheduler, extra_spec=_using(claim="eight"))
    out["nvlink"] = outcome(api, ns, "nvlink", timeout=60)
    eight = _when_reserved(api, ns, "eight")
    out["nvlink devices"] = _devices(eight, tag)
    out["nvlink reserved"] = _reserved(eight)

    api.pod(ns, "too-many", scheduler=scheduler, extra_spec=_using(claim="nine"))
    out["too-many"] = outcome(api, ns, "too-many", timeout=60)

    api.pod(ns, "template", scheduler=scheduler, extra_spec=_using(template="one-gpu"))
    out["template"] = outcome(api, ns, "template", timeout=60)
    pod = api.get_pod(ns, "template") or {}
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
    generated = statuses[0]["resourceClaimName"] if statuses else None
    assert generated, pod.get("status")
    claim = _when_reserved(api, ns, generated)
    out["template devices"] = [d.split(" ")[0].split("/")[0] for d in _devices(claim, tag)]  # the pool: the node
    out["template reserved"] = _reserved(claim)

    policy = f"deny-{tag}"
    _deny_binding(api, policy, "bind-fails")
    time.sleep(1.0)  # the policy is in force
    seen: list[tuple[bool, tuple[str, ...]]] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_claim_states, args=(api, ns, "one", seen, stop), daemon=True)
    watcher.start()
    try:
        api.pod(ns, "bind-fails", scheduler=scheduler, extra_spec=_using(claim="one"))
        message = outcome(api, ns, "bind-fails", timeout=60)
        out["bind-fails first"] = "no binding today" in message
        eventually(
            lambda: any(not reserved for _, reserved in seen[1:]),
            "the claim released after the failed bind",
            timeout=30,
        )
        _allow_binding(api, policy)
        out["bind-fails"] = eventually(
            lambda: (lambda p: f"node {p['spec']['nodeName']}" if p.get("spec", {}).get("nodeName") else None)(
                api.get_pod(ns, "bind-fails") or {}
            ),
            "bound once allowed",
            timeout=60,
        )
        final = _when_reserved(api, ns, "one")
        out["bind-fails reserved"] = _reserved(final)
    finally:
        stop.set()
        watcher.join(5)
        _allow_binding(api, policy)
    # Reserved for the pod, then released (whether the controller also deallocated it in between
    # depends on timing), then reserved again.
    out["bind-fails released"] = (False, ()) in seen or (True, ()) in seen[1:]
    return out


def _both(
    cp: tuple[Release, ControlPlane], tmp_path: Path, nodes: list[str], scenario: Callable[[Api, str], dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``scenario`` run by kube-scheduler, then by kubesched at the same release, on ``nodes``."""
    release, plane = cp
    with plane.admin_client(timeout=30.0) as client:
        api = Api(client)
        api.delete_all_nodes()
        for name in nodes:
            api.node(name)
        time.sleep(1.0)

        ks_name = unique("ks")
        cfg = tmp_path / "ks.yaml"
        cfg.write_text(yaml.safe_dump(_config(ks_name)))
        port = free_port()
        proc = start_kube_scheduler(
            cfg,
            plane.kubeconfig_path,
            binary=plane.binaries.kube_scheduler,
            secure_port=port,
            log_path=tmp_path / "ks.log",
        )
        try:
            eventually(lambda: healthy(port), "kube-scheduler serving", timeout=60)
            theirs = scenario(api, ks_name)
        finally:
            proc.terminate()
            proc.wait(30)
        print("kube-scheduler:", theirs)

        ours_name = unique("kubesched")
        sched = InProcessScheduler(_config(ours_name), plane.kubeconfig_path, release=release).start()
        try:
            ours = scenario(api, ours_name)
        finally:
            sched.stop()
    return theirs, ours


def test_pods_with_resource_claims_as_kube_scheduler(cp: tuple[Release, ControlPlane], tmp_path: Path) -> None:
    release = cp[0]
    theirs, ours = _both(cp, tmp_path, ["a", "b"], _scenario)

    eight_on_b = sorted(f"b/gpu-{i} gpus gpu-TAG.example.com" for i in range(8))
    assert theirs["nvlink"] == "node b", theirs
    assert theirs["nvlink devices"] == eight_on_b, theirs
    assert theirs["nvlink reserved"] == ["nvlink"], theirs
    # v1.35's DynamicResources PostFilter gives its reason for a pod with claims it could not help.
    still = "" if release.has(NO_DRA_DEALLOCATE_REASON) else "still not schedulable, "
    assert theirs["too-many"] == (
        f"0/2 nodes are available: 2 cannot allocate all claims. {still}"
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    ), theirs
    assert theirs["template"] == "node a" and theirs["template devices"] == ["a"], theirs
    assert theirs["template reserved"] == ["template"], theirs
    assert theirs["bind-fails first"] and theirs["bind-fails released"], theirs
    assert theirs["bind-fails"] == "node a" and theirs["bind-fails reserved"] == ["bind-fails"], theirs
    assert ours == theirs


def _extended_scenario(api: Api, scheduler: str) -> dict[str, Any]:
    """Extended resources backed by DRA (DRAExtendedResource, on from v1.36; upstream
    pkg/scheduler/framework/plugins/dynamicresources/extended/, noderesources/fit.go): a DeviceClass
    names ``<tag>.example.com/gpu``; node ``x`` does not list it in its allocatable but publishes 4
    devices of the class. A pod asking for 2 is placed there with a claim the scheduler creates for
    it; a pod asking for 5 is not. With the gate off (v1.35) both ask of the node's allocatable."""
    ns = api.namespace()
    tag = ns.rsplit("-", 1)[-1]
    driver = f"gpu-{tag}.example.com"
    resource = f"{tag}.example.com/gpu"
    api.ok(
        api.c.post(
            f"{RESOURCE}/deviceclasses",
            json={
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": f"gpu-{tag}"},
                "spec": {
                    "selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}],
                    "extendedResourceName": resource,
                },
            },
        )
    )
    _slice(api, driver, "x", [0, 0, 0, 0])
    time.sleep(1.0)  # the informers have the slice and the class

    def wants(n: int) -> dict[str, Any]:
        return {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.invalid/pause",
                    "resources": {"requests": {"cpu": "100m"}, "limits": {resource: str(n)}},
                }
            ]
        }

    out: dict[str, Any] = {}
    api.pod(ns, "two", scheduler=scheduler, extra_spec=wants(2))
    out["two"] = outcome(api, ns, "two", timeout=60).replace(tag, "TAG")
    if out["two"] == "node x":
        status = eventually(
            lambda: ((api.get_pod(ns, "two") or {}).get("status") or {}).get("extendedResourceClaimStatus"),
            "the pod's extendedResourceClaimStatus",
            timeout=30,
        )
        out["two mappings"] = sorted(
            (m["containerName"], m["resourceName"].replace(tag, "TAG")) for m in status["requestMappings"]
        )
        claim = _when_reserved(api, ns, status["resourceClaimName"])
        out["two devices"] = len(_devices(claim, tag))
        out["two claim owner"] = [o["name"] for o in claim["metadata"].get("ownerReferences") or []]
        out["two reserved"] = _reserved(claim)
    api.pod(ns, "five", scheduler=scheduler, extra_spec=wants(5))
    out["five"] = outcome(api, ns, "five", timeout=60).replace(tag, "TAG")
    return out


def test_extended_resources_backed_by_dra_as_kube_scheduler(cp: tuple[Release, ControlPlane], tmp_path: Path) -> None:
    release = cp[0]
    # The first run's pod holds 2 of its class's devices; the second run has its own class.
    theirs, ours = _both(cp, tmp_path, ["x"], _extended_scenario)

    if release == V1_37:
        assert theirs["two"] == "node x", theirs
        assert theirs["two devices"] == 2 and theirs["two reserved"] == ["two"], theirs
        assert theirs["two claim owner"] == ["two"], theirs
    else:
        assert "Insufficient TAG.example.com/gpu" in theirs["two"], theirs
    assert "five" in theirs and not theirs["five"].startswith("node"), theirs
    assert ours == theirs
