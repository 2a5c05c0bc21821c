"""examples/volumes (docs/volumes.md) end to end in the simulator, with the outcome traced by hand
from upstream's VolumeBinding (framework/plugins/volumebinding/binder.go) and the simulated PV
controller (src/kubesched/sim/pv_controller.py):

- db-0 (80Gi, local-disk, WaitForFirstConsumer): only local-web-1 (100Gi) is large enough, and it
  lies on web-1: bound there; the PV's claimRef names data-db-0 and the claim is fully bound.
- db-1 (40Gi): local-web-1 is taken (assumed at Reserve, then bound), local-web-2 (50Gi) lies on
  web-2: bound there.
- etl: its ephemeral volume's claim etl-scratch (zonal-ssd, allowedTopologies zone-b) can only be
  provisioned on batch-1, the one node in zone-b; the provisioned PV is pinned to zone-b.
- db-2 (500Gi): no PV is large enough and local-disk cannot provision: upstream's
  ``node(s) didn't find available persistent volumes to bind`` on all three nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.config import load_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.manifests import load_manifests
from kubesched.sim.runner import simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "volumes"


@pytest.fixture(scope="module")
def result() -> Any:
    return simulate(load_manifests([EXAMPLE]), load_config(None), in_tree_registry(), seed=1)


def test_each_pod_lands_where_its_volume_can_be(result: Any) -> None:
    placed = {p["name"]: p["node"] for p in result.to_json()["pods"]}
    assert placed == {"db-0": "web-1", "db-1": "web-2", "etl": "batch-1", "db-2": None}


def test_the_bindings_are_written_and_completed(result: Any) -> None:
    cluster = result.cluster
    pv1 = cluster.get_object("v1", "PersistentVolume", "", "local-web-1")
    pv2 = cluster.get_object("v1", "PersistentVolume", "", "local-web-2")
    assert (pv1["spec"]["claimRef"]["name"], pv1["status"]["phase"]) == ("data-db-0", "Bound")
    assert (pv2["spec"]["claimRef"]["name"], pv2["status"]["phase"]) == ("data-db-1", "Bound")
    for claim, pv in (("data-db-0", "local-web-1"), ("data-db-1", "local-web-2")):
        pvc = cluster.get_object("v1", "PersistentVolumeClaim", "default", claim)
        assert pvc["spec"]["volumeName"] == pv
        assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
        # A static binding writes only the PV's claimRef; selected-node is for provisioning.
        assert "volume.kubernetes.io/selected-node" not in pvc["metadata"]["annotations"]
        assert pvc["status"]["phase"] == "Bound"
    scratch = cluster.get_object("v1", "PersistentVolumeClaim", "default", "etl-scratch")
    assert scratch["metadata"]["ownerReferences"][0]["name"] == "etl"
    assert scratch["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "batch-1"
    provisioned = cluster.get_object("v1", "PersistentVolume", "", scratch["spec"]["volumeName"])
    assert provisioned["spec"]["capacity"] == {"storage": "200Gi"}
    assert provisioned["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]}]}
    ]
    untouched = cluster.get_object("v1", "PersistentVolumeClaim", "default", "data-db-2")
    assert not untouched["spec"].get("volumeName") and untouched["status"]["phase"] == "Pending"


def test_the_pending_replica_says_why_as_upstream(result: Any) -> None:
    [db2] = [p for p in result.to_json()["pods"] if p["name"] == "db-2"]
    assert db2["message"].startswith(
        "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind."
    )
