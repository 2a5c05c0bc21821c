"""A bad node or a bad pod affects only itself (issue 11), on the simulator with the default profile.

One node with an allocatable quantity the scheduler cannot count (``1e400`` cpu) and one with a
taint of the wrong shape sit among good nodes; invalid pods sit among good pods. Expected outcomes
are hand-computed: the good pods bind to the good nodes, each bad pod stays pending with a
FailedScheduling message naming its field path, the bad nodes are never used and a WARNING names
them. Messages follow pkg/apis/core/validation/validation.go (``Invalid value: "-1": must be greater
than or equal to 0``, resource paths ``requests[cpu]``).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubesched.config.load import load_config
from kubesched.plugins.registry import default_registry
from kubesched.sim.manifests import ClusterObjects, admit_pod
from kubesched.sim.runner import simulate
from kubesched.testing import make_node, make_pod

REGISTRY = default_registry(entry_points=False)


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    p = make_pod(name).req(cpu="1").obj()
    p["spec"].update(spec)
    admit_pod(p, {}, 0)
    return p


def _nodes() -> list[dict[str, Any]]:
    good = [make_node(f"good{i}").capacity(cpu="2", memory="4Gi", pods="110").obj() for i in (1, 2)]
    huge = make_node("huge").capacity(cpu="4", memory="4Gi", pods="110").obj()
    huge["status"]["allocatable"]["cpu"] = "1e400"
    tainted = make_node("badtaint").capacity(cpu="4", memory="4Gi", pods="110").obj()
    tainted["spec"]["taints"] = ["x"]
    empty = make_node("empty").capacity(cpu="4", memory="4Gi", pods="110").obj()
    empty["status"]["allocatable"]["memory"] = ""
    return [huge, good[0], tainted, good[1], empty]


BAD_PODS: dict[str, tuple[dict[str, Any], str]] = {
    "spread": ({"topologySpreadConstraints": [{"maxSkew": "x", "topologyKey": "zone",
                                               "whenUnsatisfiable": "DoNotSchedule"}]},
               'spec.topologySpreadConstraints[0].maxSkew: must be an integer, got "x"'),
    "hostport": ({"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": "abc"}]}]},
                 'spec.containers[0].ports[0].hostPort: must be an integer, got "abc"'),
    "containers": ({"containers": "x"}, 'spec.containers: must be a list, got "x"'),
    "tolerations": ({"tolerations": ["a"]}, 'spec.tolerations[0]: must be an object, got "a"'),
    "negative": ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]},
                 'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    "affinity": ({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": 5}]}}},
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
        "must be a string, got 5"),
}


def test_bad_nodes_and_pods_affect_only_themselves(caplog: pytest.LogCaptureFixture) -> None:
    good_pods = [_pod(f"ok{i}") for i in range(4)]
    bad_pods = [_pod(name, **spec) for name, (spec, _) in BAD_PODS.items()]
    pods = good_pods[:2] + bad_pods + good_pods[2:]
    config = load_config({}, args_types=REGISTRY.args_types())
    with caplog.at_level(logging.WARNING):
        result = simulate(ClusterObjects(nodes=_nodes(), pods=pods), config, REGISTRY)

    by_name = {p["name"]: p for p in result.pods}
    # 4 pods of 1 cpu fill the two good nodes of 2 cpu exactly; no pod lands on a bad node.
    assert sorted(by_name[f"ok{i}"]["node"] for i in range(4)) == ["good1", "good1", "good2", "good2"]
    for name, (_, problem) in BAD_PODS.items():
        assert by_name[name]["node"] in (None, ""), name
        notes = [e.note for e in result.events if e.name == name and e.reason == "FailedScheduling"]
        assert notes and all(n == f"pod is invalid: {problem}" for n in notes), (name, notes)

    text = caplog.text
    assert 'node "huge" is invalid and will not be used: status.allocatable.cpu: Invalid value: "1e400": ' \
           "must be less than or equal to 9223372036854775807m" in text
    assert 'node "badtaint" is invalid and will not be used: spec.taints[0]: must be an object, got "x"' in text
    assert 'node "empty" is invalid and will not be used: status.allocatable.memory: quantities must match ' \
           "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" in text
    assert "Traceback" not in text
    # One line per bad pod version, not one per retry.
    assert text.count("pod default/negative is invalid") == 1


def test_pod_that_fits_nowhere_counts_only_usable_nodes() -> None:
    """The bad nodes are out of the snapshot: ``0/N`` counts the two good nodes only. 3 cpu is more
    than a good node's whole allocatable, so preemption cannot help (noderesources/fit.go)."""
    config = load_config({}, args_types=REGISTRY.args_types())
    result = simulate(ClusterObjects(nodes=_nodes(), pods=[_pod("big", containers=[
        {"name": "c", "resources": {"requests": {"cpu": "3"}}}])]), config, REGISTRY)
    notes = {e.note for e in result.events if e.reason == "FailedScheduling"}
    assert notes == {"0/2 nodes are available: 2 Insufficient cpu. "

                     "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}
