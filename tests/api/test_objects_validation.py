"""validate_pod / validate_node: one ``<field path>: <message>`` per problem, hand-computed.

Wording and paths of the API server's checks from pkg/apis/core/validation/validation.go
(ValidateResourceQuantityValue: ``must be greater than or equal to 0`` / ``must be an integer``;
container resources at ``requests[<name>]`` via ``Key``; ValidateNodeResources at
``status.allocatable.<name>``; validateTopologySpreadConstraints; ValidateTolerations;
validateContainerPorts) and apimachinery's quantity.go (ErrFormatWrong, ``null`` decodes to zero).
Type errors, which the API server refuses while decoding, read ``must be <type>, got <value>``.
Also the quantity parser's limits: huge exponents and integers never raise anything but
QuantityError and never build huge numbers.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.objects_validation import validate_node, validate_pod
from kubesched.api.quantity import MAX_ALLOWED, QuantityError, parse_quantity
from kubesched.framework.types import NodeInfo, PodInfo

FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}], **spec}}


def ctr(**fields: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", **fields}]}


POD_CASES: list[tuple[dict[str, Any], list[str]]] = [
    (pod(), []),
    (pod(**ctr(resources={"requests": {"cpu": "-1"}})),
     ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0']),
    (pod(**ctr(resources={"limits": {"memory": "abc"}})), [f"spec.containers[0].resources.limits[memory]: {FORMAT}"]),
    (pod(**ctr(resources={"requests": {"example.com/gpu": "500m"}})),
     ['spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer']),
    (pod(**ctr(resources={"requests": {"cpu": None}})), []),  # JSON null is a zero quantity
    (pod(**ctr(resources={"requests": {"cpu": "1e400"}})),
     ['spec.containers[0].resources.requests[cpu]: Invalid value: "1e400": '
      "must be less than or equal to 9223372036854775807m"]),
    (pod(initContainers=[{"name": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": "-1m"}}}]),
     ['spec.initContainers[0].resources.requests[cpu]: Invalid value: "-1m": must be greater than or equal to 0']),
    (pod(overhead={"cpu": "x"}), [f"spec.overhead[cpu]: {FORMAT}"]),
    (pod(containers="x"), ['spec.containers: must be a list, got "x"']),
    (pod(**ctr(ports=[{"containerPort": 80, "hostPort": "abc"}])),
     ['spec.containers[0].ports[0].hostPort: must be an integer, got "abc"']),
    (pod(**ctr(ports=[{"containerPort": 80, "hostPort": 70000, "protocol": "ICMP"}])),
     ["spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
      'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']),
    (pod(tolerations=["a"]), ['spec.tolerations[0]: must be an object, got "a"']),
    (pod(tolerations=[{"key": "k", "operator": "Maybe"}]),
     ['spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists", "Gt", "Lt"']),
    (pod(topologySpreadConstraints=[{"maxSkew": "x", "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     ['spec.topologySpreadConstraints[0].maxSkew: must be an integer, got "x"']),
    (pod(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Sometimes"}]),
     ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
      "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
      'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": '
      'supported values: "DoNotSchedule", "ScheduleAnyway"']),
    (pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": "x"}}}),
     ['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: '
      'must be a list, got "x"']),
    (pod(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}]}}),
     ["spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
      "Invalid value: 101: must be in the range 1-100"]),
    (pod(schedulingGates=[{"name": 3}]), ["spec.schedulingGates[0].name: must be a string, got 3"]),
    (pod(nodeSelector={"disk": 1}), ["spec.nodeSelector[disk]: must be a string, got 1"]),
    (pod(priority="high"), ['spec.priority: must be an integer, got "high"']),
    ({"metadata": {"name": "p", "labels": {"a": ["b"]}}, "spec": {}},
     ["metadata.labels[a]: must be a string, got a list"]),
    ({"metadata": {"name": "p"}, "spec": "x"}, ['spec: must be an object, got "x"']),
]


@pytest.mark.parametrize(("obj", "expected"), POD_CASES)
def test_validate_pod(obj: dict[str, Any], expected: list[str]) -> None:
    assert validate_pod(obj) == expected


@pytest.mark.parametrize(("obj", "expected"), POD_CASES)
def test_validate_pod_again_with_other_metadata(obj: dict[str, Any], expected: list[str]) -> None:
    # The spec's problems are remembered by its text; the metadata is checked for every pod.
    again = copy.deepcopy(obj)
    assert validate_pod(again) == expected
    again["metadata"] = {"name": "q", "uid": 7}
    meta_problems = ["metadata.uid: must be a string, got 7"]
    assert validate_pod(again) == meta_problems + [p for p in expected if not p.startswith("metadata.")]


def test_validate_pod_tells_equal_looking_values_apart() -> None:
    # A port given as the string "80" is a problem, the integer 80 is not, and neither answer is
    # taken for the other from the remembered shapes.
    for _ in range(2):
        assert validate_pod(pod(**ctr(ports=[{"containerPort": 80, "hostPort": 80}]))) == []
        assert validate_pod(pod(**ctr(ports=[{"containerPort": 80, "hostPort": "80"}]))) == [
            'spec.containers[0].ports[0].hostPort: must be an integer, got "80"']
        assert validate_pod(pod(priority=True)) == ["spec.priority: must be an integer, got true"]
        assert validate_pod(pod(priority=1)) == []


def node(allocatable: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "n1"}, "spec": spec,
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", **(allocatable or {})}}}


NODE_CASES: list[tuple[dict[str, Any], list[str]]] = [
    (node(), []),
    (node({"cpu": "1e400"}),
     ['status.allocatable.cpu: Invalid value: "1e400": must be less than or equal to 9223372036854775807m']),
    (node({"cpu": "abc", "memory": ""}), [f"status.allocatable.cpu: {FORMAT}", f"status.allocatable.memory: {FORMAT}"]),
    (node({"pods": None}), []),
    (node({"pods": "1.5"}), ['status.allocatable.pods: Invalid value: "1.5": must be an integer']),
    (node({"cpu": "1e999999999"}), ["status.allocatable.cpu: quantity is too large to represent"]),
    (node({"cpu": [1]}), ["status.allocatable.cpu: must be a quantity (a string or a number), got a list"]),
    (node(taints=["x"]), ['spec.taints[0]: must be an object, got "x"']),
    (node(taints=[{"key": "k", "effect": "Sometimes"}]),
     ['spec.taints[0].effect: Unsupported value: "Sometimes": supported values: '
      '"NoSchedule", "PreferNoSchedule", "NoExecute"']),
    ({"metadata": {}}, ["metadata.name: Required value: name or generateName is required"]),
]


@pytest.mark.parametrize(("obj", "expected"), NODE_CASES)
def test_validate_node(obj: dict[str, Any], expected: list[str]) -> None:
    assert validate_node(obj) == expected


def test_infos_cache_the_problems_and_never_raise() -> None:
    pi = PodInfo(pod(**ctr(ports=[{"containerPort": 80, "hostPort": "abc"}])))
    assert pi.invalid_message == 'pod is invalid: spec.containers[0].ports[0].hostPort: must be an integer, got "abc"'
    assert pi.host_ports == []
    ni = NodeInfo(node({"cpu": "abc"}, taints=["x", {"key": "k", "effect": "NoSchedule"}]))
    assert len(ni.problems) == 2
    assert ni.allocatable.milli_cpu == 0  # what failed to parse counts as nothing
    assert ni.taints == [{"key": "k", "effect": "NoSchedule"}]


@pytest.mark.parametrize("text", ["1e" + "9" * 5000, "1E+" + "0" * 3 + "9" * 4400, "NaN", "inf", "-Infinity", "1e"])
def test_quantity_refuses_without_other_exceptions(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_quantity_huge_json_integer_is_capped() -> None:
    # More than 18 digits: upstream's arbitrary-precision path, capped at int64 max.
    assert parse_quantity(10**5000) == MAX_ALLOWED
    assert parse_quantity(-(10**5000)) == -MAX_ALLOWED
