"""DRA objects in the simulator's manifests (api/dra_validation.py, after upstream
pkg/apis/resource/validation/validation.go and v1/defaults.go): each problem one line with file,
line, object and field path (exit 2 from the CLI); the API server's defaults on valid ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.sim.manifests import ManifestError, load_manifests

GOOD = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
    - {name: gpu-0, attributes: {model: {string: h100}}, capacity: {memory: {value: 80Gi}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ml}
spec:
  devices:
    requests: [{name: gpus, exactly: {deviceClassName: gpu}}]
"""


def test_valid_objects_load_with_the_api_servers_defaults(tmp_path: Path) -> None:
    path = tmp_path / "dra.yaml"
    path.write_text(GOOD)
    objects = load_manifests([path])
    [claim] = objects.of_kind("ResourceClaim")
    assert claim["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu",
        "allocationMode": "ExactCount",
        "count": 1,
    }
    assert [s["metadata"]["name"] for s in objects.of_kind("ResourceSlice")] == ["n1-gpu"]


BAD = [
    (
        "  nodeName: n1\n",
        "  nodeName: n1\n  allNodes: true\n",
        'spec: Invalid value: ["nodeName", "allNodes"]: exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
        "`perDeviceNodeSelection` is required, but multiple fields are set",
    ),
    (
        "resourceSliceCount: 1",
        "resourceSliceCount: 0",
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
    ),
    (
        "{name: gpu-0, attributes: {model: {string: h100}}",
        "{name: gpu-0, attributes: {model: {string: h100, int: 1}}",
        "spec.devices[0].attributes[model]: exactly one value must be specified",
    ),
    (
        "capacity: {memory: {value: 80Gi}}",
        "capacity: {memory: {value: lots}}",
        "spec.devices[0].capacity[memory].value: quantities must match",
    ),
    (
        "exactly: {deviceClassName: gpu}",
        "exactly: {deviceClassName: gpu, count: 0}",
        "spec.devices.requests[0].exactly.count: Invalid value: 0: must be in the range [1, 32]",
    ),
    (
        "exactly: {deviceClassName: gpu}",
        "exactly: {deviceClassName: gpu, allocationMode: Some}",
        'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some"',
    ),
    (
        "exactly: {deviceClassName: gpu}",
        "exactly: {}",
        "spec.devices.requests[0].exactly.deviceClassName: Required value",
    ),
    (
        "requests: [{name: gpus, exactly: {deviceClassName: gpu}}]",
        "requests: [{name: gpus, exactly: {deviceClassName: gpu}}]\n    constraints: [{requests: [nics], "
        "matchAttribute: gpu.example.com/numa}]",
        'spec.devices.constraints[0].requests[0]: Invalid value: "nics": must be the name of a request in the claim',
    ),
    (
        "{name: gpus, exactly: {deviceClassName: gpu}}",
        "{name: gpus}",
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
    ),
    (
        "expression: 'device.driver == \"gpu.example.com\"'",
        "expression: 7",
        "spec.selectors[0].cel.expression: must be a string, got 7",
    ),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD, ids=[b[2].split(":")[0] for b in BAD])
def test_each_bad_field_is_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD
    path = tmp_path / "dra.yaml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ManifestError) as err:
        load_manifests([path])
    [line] = err.value.errors
    assert line.startswith(f"{path}:")
    assert message in line


def test_the_cli_exits_2_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "dra.yaml").write_text(GOOD.replace("resourceSliceCount: 1", "resourceSliceCount: -3"))
    res = CliRunner().invoke(cli, ["simulate", str(tmp_path)])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert "spec.pool.resourceSliceCount: Invalid value: -3: must be greater than zero" in res.output


RULE = """\
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: maintenance}
spec:
  deviceSelector: {driver: gpu.example.com, pool: n1, device: gpu-0}
  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
"""

RULE_BAD = [
    ("effect: NoSchedule", "effect: Sometimes", 'spec.taint.effect: Unsupported value: "Sometimes"'),
    ("effect: NoSchedule", "effect: ''", "spec.taint.effect: Required value"),
    ("key: example.com/maintenance, ", "", "spec.taint.key: Required value"),
    ("key: example.com/maintenance", "key: 'bad key!'", 'spec.taint.key: Invalid value: "bad key!"'),
    ("device: gpu-0", "device: 7", "spec.deviceSelector.device: must be a string, got 7"),
    ("apiVersion: resource.k8s.io/v1\n", "apiVersion: resource.k8s.io/v2\n", "no matches for kind \"DeviceTaintRule\""),
]


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1alpha3"])
def test_device_taint_rule_loads_in_each_served_version(tmp_path: Path, version: str) -> None:
    """DeviceTaintRule: resource.k8s.io/v1alpha3 (v1.35), v1beta2 (v1.36), v1 (v1.37)."""
    path = tmp_path / "rule.yaml"
    path.write_text(RULE.replace("resource.k8s.io/v1", f"resource.k8s.io/{version}"))
    [rule] = load_manifests([path]).of_kind("DeviceTaintRule")
    assert rule["spec"]["taint"]["effect"] == "NoSchedule"


@pytest.mark.parametrize(("old", "new", "message"), RULE_BAD, ids=[b[2].split(":")[0] for b in RULE_BAD])
def test_each_bad_device_taint_rule_field_is_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in RULE
    path = tmp_path / "rule.yaml"
    path.write_text(RULE.replace(old, new, 1))
    with pytest.raises(ManifestError) as err:
        load_manifests([path])
    [line] = err.value.errors
    assert line.startswith(f"{path}:")
    assert "DeviceTaintRule" in line and "maintenance" in line
    assert message in line
