"""NodeDeclaredFeatures in whole simulations, with each release's default profile.

Upstream: pkg/scheduler/apis/config/v1/default_plugins.go (the plugin ends the default profile once
the NodeDeclaredFeatures gate is on: v1.36.3, v1.37.2), nodedeclaredfeatures.go (PreFilter Skip for
pods needing nothing; Filter's "node(s) didn't match Pod's required features",
UnschedulableAndUnresolvable, so preemption reports "Preemption is not helpful for scheduling"),
framework/events.go (a node declaring new features is an UpdateNodeDeclaredFeature event), and
FitError's message format (schedule_one.go, reasons sorted). The messages below are written out by
hand from those sources.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.config import load_config
from kubesched.config.releases import V1_35, V1_36, V1_37, Release
from kubesched.testing import TestFramework, make_node, make_pod, new_framework

RESTART_ALL = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
BIND_MOUNT = "VolumeBindMountOptions"
NOT_HELPFUL = "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."


def node(name: str, zone: str, features: list[str] | None = None) -> dict[str, Any]:
    n = make_node(name).label("topology.kubernetes.io/zone", zone).capacity(cpu="4", memory="8Gi").obj()
    if features is not None:
        n["status"]["declaredFeatures"] = sorted(features)
    return n


def nodes() -> list[dict[str, Any]]:
    return [
        node("n1", "a"),
        node("n2", "b", []),
        node("n3", "a", [RESTART_ALL, USERNS, "SomeFutureFeature"]),
        node("n4", "b", [BIND_MOUNT]),
    ]


def ordinary_pods() -> list[dict[str, Any]]:
    """Pods needing no declared feature: sizes, priorities, a selector, a sidecar, one too big."""
    pods = [make_pod(f"web-{i}").req(cpu="500m", memory="512Mi").obj() for i in range(6)]
    pods += [make_pod(f"batch-{i}").req(cpu="1", memory="1Gi").priority(10).obj() for i in range(3)]
    pods.append(make_pod("pinned").req(cpu="250m").node_selector({"kubernetes.io/hostname": "n3"}).obj())
    pods.append(make_pod("sidecar").req(cpu="100m").init_req({"cpu": "100m"}, sidecar=True).obj())
    pods.append(make_pod("host-net").req(cpu="100m").set("spec.hostNetwork", True).obj())  # host users: unset
    pods.append(make_pod("huge").req(cpu="16").obj())
    return pods


def restart_all(name: str) -> dict[str, Any]:
    pod = make_pod(name).req(cpu="100m").obj()
    pod["spec"]["containers"][0].update(restartPolicy="Never", restartPolicyRules=[
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}])
    return pod


def bind_mount(name: str) -> dict[str, Any]:
    pod = make_pod(name).req(cpu="100m").obj()
    pod["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    pod["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/data", "bindMountOptions": ["nosuid"]}
    ]
    return pod


def userns_host_network(name: str) -> dict[str, Any]:
    return make_pod(name).req(cpu="100m").set("spec.hostNetwork", True).set("spec.hostUsers", False).obj()


def run(release: Release, pods: list[dict[str, Any]], config: dict[str, Any] | None = None) -> TestFramework:
    fw = new_framework(load_config(config, release=release), nodes=nodes(), pods=copy.deepcopy(pods))
    fw.schedule()
    return fw


def placements(fw: TestFramework) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in fw.cluster.pods.values()}


def failed(fw: TestFramework) -> dict[str, str]:
    """Each pod's last FailedScheduling message."""
    return {e.name: e.note for e in fw.cluster.events if e.reason == "FailedScheduling"}


WITHOUT_PLUGIN = {"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "NodeDeclaredFeatures"}]}}}]}


@pytest.mark.parametrize("release", [V1_36, V1_37])
def test_ordinary_pods_schedule_as_without_the_plugin(release: Release) -> None:
    """The plugin is in the default profile, and changes nothing for pods needing no feature:
    same nodes, same FailedScheduling messages as the same release without it."""
    with_it, without = run(release, ordinary_pods()), run(release, ordinary_pods(), WITHOUT_PLUGIN)
    assert "NodeDeclaredFeatures" in with_it.framework.plugins
    assert "NodeDeclaredFeatures" not in without.framework.plugins
    assert placements(with_it) == placements(without)
    assert failed(with_it) == failed(without)
    assert placements(with_it)["huge"] == "" and placements(with_it)["pinned"] == "n3"
    assert failed(with_it)["huge"].startswith("0/4 nodes are available: 4 Insufficient cpu. ")


def test_ordinary_pods_schedule_under_1_37_as_under_1_35() -> None:
    v135, v137 = run(V1_35, ordinary_pods()), run(V1_37, ordinary_pods())
    assert "NodeDeclaredFeatures" not in v135.framework.plugins
    assert placements(v137) == placements(v135)
    assert set(failed(v137)) == set(failed(v135)) == {"huge"}
    # The diagnosis is the same; only v1.37's DynamicResources PostFilter lost its reason. 16 CPUs
    # exceed every node's allocatable: NodeResourcesFit's rejection is unresolvable (fit.go).
    assert failed(v137)["huge"] == f"0/4 nodes are available: 4 Insufficient cpu. {NOT_HELPFUL}"
    assert failed(v135)["huge"] == failed(v137)["huge"].replace(
        "preemption: ", "no new claims to deallocate, preemption: ")


def feature_pods() -> list[dict[str, Any]]:
    pods = [restart_all(f"restart-{i}") for i in range(3)]
    pods += [userns_host_network("userns"), bind_mount("bind")]
    both = userns_host_network("userns-and-bind")
    both["spec"]["containers"] = bind_mount("x")["spec"]["containers"]
    both["spec"]["volumes"] = bind_mount("x")["spec"]["volumes"]
    pods.append(both)
    pods.append(restart_all("restart-pinned"))
    pods[-1]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n1"}
    return pods


def test_pods_needing_features_go_only_to_nodes_declaring_them_1_37() -> None:
    fw = run(V1_37, feature_pods())
    got = placements(fw)
    assert {got[f"restart-{i}"] for i in range(3)} == {"n3"}
    assert got["userns"] == "n3"
    assert got["bind"] == "n4"
    assert got["userns-and-bind"] == got["restart-pinned"] == ""
    assert failed(fw) == {
        "userns-and-bind": f"0/4 nodes are available: 4 node(s) didn't match Pod's required features. {NOT_HELPFUL}",
        "restart-pinned": "0/4 nodes are available: 1 node(s) didn't match Pod's required features, "
                          f"3 node(s) didn't match Pod's node affinity/selector. {NOT_HELPFUL}",
    }


def test_v1_36_knows_no_bind_mount_options() -> None:
    """component-helpers v0.36.3 has no VolumeBindMountOptions: such a pod needs nothing in 1.36."""
    fw = run(V1_36, feature_pods())
    got = placements(fw)
    assert {got[f"restart-{i}"] for i in range(3)} == {"n3"} and got["userns"] == "n3"
    assert got["bind"] != ""
    assert got["userns-and-bind"] == "n3"  # only the user namespace counts
    assert set(failed(fw)) == {"restart-pinned"}


def test_v1_35_offers_the_plugin_disabled() -> None:
    """v1.35.4 registers it, but with the gate off its factory returns it inert: enabled explicitly,
    it lets every pod through."""
    config = {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}]}
    fw = run(V1_35, feature_pods(), config)
    assert "NodeDeclaredFeatures" in fw.framework.plugins
    assert all(placements(fw).values()) and failed(fw) == {}


def test_a_node_declaring_the_feature_lets_the_pod_in_at_once() -> None:
    """UpdateNodeDeclaredFeature wakes the pod through the plugin's node hint, long before the
    unschedulable pods' five-minute flush."""
    fw = new_framework(load_config(None, release=V1_37), nodes=[node("n1", "a"), node("n2", "b", [])],
                       pods=[restart_all("waiting")])
    fw.schedule()
    assert placements(fw)["waiting"] == ""
    updated = copy.deepcopy(fw.cluster.nodes["n2"])
    updated["status"]["declaredFeatures"] = [RESTART_ALL]
    now = fw.clock.now()
    fw.cluster.update_node(updated)
    fw.schedule(until=now + 30)
    assert placements(fw)["waiting"] == "n2"
