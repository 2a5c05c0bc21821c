"""GPUNode, the simulator's short form of a GPU server (sim/gpu_node_shape.py), expanded by hand:
the Node a kubelet would register and the ResourceSlice a DRA driver would publish."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.gpu_node_shape import expand_gpu_node


def _shape(**gpus: Any) -> dict[str, Any]:
    return {
        "apiVersion": "sim.kubesched.io/v1alpha1",
        "kind": "GPUNode",
        "metadata": {"name": "h100-0", "labels": {"zone": "a"}},
        "spec": {"cpu": "112", "memory": "2Ti", "gpus": {"model": "H100", "count": 8, **gpus}},
    }


def test_eight_gpus_in_two_nvlink_domains() -> None:
    objects, problems = expand_gpu_node(_shape(memory="80Gi", nvlinkDomains=2))
    assert problems == []
    node, rs = objects
    assert node == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "h100-0", "labels": {"zone": "a", "kubernetes.io/hostname": "h100-0"}, "annotations": {}},
        "spec": {},
        "status": {
            "capacity": {"cpu": "112", "memory": "2Ti", "pods": "110"},
            "allocatable": {"cpu": "112", "memory": "2Ti", "pods": "110"},
        },
    }
    assert rs["metadata"] == {"name": "h100-0-gpu.nvidia.com"}
    assert {k: v for k, v in rs["spec"].items() if k != "devices"} == {
        "driver": "gpu.nvidia.com",
        "nodeName": "h100-0",
        "pool": {"name": "h100-0", "generation": 1, "resourceSliceCount": 1},
    }
    devices = rs["spec"]["devices"]
    assert [d["name"] for d in devices] == [f"gpu-{i}" for i in range(8)]
    assert [d["attributes"]["nvlinkDomain"]["int"] for d in devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [d["attributes"]["resource.kubernetes.io/pcieRoot"]["string"] for d in devices] == ["pci0000:00"] * 4 + [
        "pci0000:01"
    ] * 4
    assert devices[5]["attributes"]["productName"] == {"string": "H100"}
    assert devices[5]["attributes"]["index"] == {"int": 5}
    assert devices[5]["capacity"] == {"memory": {"value": "80Gi"}}


def test_defaults_one_domain_one_root_no_memory_capacity() -> None:
    (_, rs), _ = expand_gpu_node(_shape(driver="gpu.example.com"))
    assert rs["spec"]["driver"] == "gpu.example.com"
    assert {d["attributes"]["nvlinkDomain"]["int"] for d in rs["spec"]["devices"]} == {0}
    assert all("capacity" not in d for d in rs["spec"]["devices"])


@pytest.mark.parametrize(
    ("gpus", "spec", "expected"),
    [
        ({"count": 0}, {}, [("spec.gpus.count", "must be an integer in [1, 128], got 0")]),
        ({"count": 10**9}, {}, [("spec.gpus.count", "must be an integer in [1, 128], got 1000000000")]),
        ({"count": "8"}, {}, [("spec.gpus.count", "must be an integer in [1, 128], got '8'")]),
        (
            {"nvlinkDomains": 3},
            {},
            [
                ("spec.gpus.nvlinkDomains", "3 does not divide the 8 GPUs into equal groups"),
                ("spec.gpus.pcieRoots", "3 does not divide the 8 GPUs into equal groups"),
            ],
        ),
        ({"model": None}, {}, [("spec.gpus.model", "must be a non-empty string, got None")]),
        ({"memory": "-1Gi"}, {}, [("spec.gpus.memory", "must be positive, got '-1Gi'")]),
        (
            {"nvlink": 2},
            {},
            [("spec.gpus.nvlink", "unknown field (known: count, driver, memory, model, nvlinkDomains, pcieRoots)")],
        ),
        ({}, {"cpu": None}, [("spec.cpu", "must be a quantity, got None")]),
        ({}, {"taints": "NoSchedule"}, [("spec.taints", "must be a list, got 'NoSchedule'")]),
    ],
)
def test_each_bad_field_is_one_problem_with_its_path(
    gpus: dict[str, Any], spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    obj = _shape(**gpus)
    obj["spec"].update(spec)
    objects, problems = expand_gpu_node(obj)
    assert objects == []
    assert problems == expected


def test_not_objects() -> None:
    assert expand_gpu_node({"metadata": {"name": "x"}, "spec": [1]}) == ([], [("spec", "must be an object, got [1]")])
    assert expand_gpu_node({"metadata": {"name": "x"}, "spec": {"cpu": "1", "memory": "1Gi", "gpus": 8}}) == (
        [],
        [("spec.gpus", "must be an object, got 8")],
    )


def test_a_bad_gpu_node_in_a_manifest_is_one_line_with_file_and_field(tmp_path: Any) -> None:
    from kubesched.sim.manifests import ManifestError, load_manifests

    path = tmp_path / "nodes.yaml"
    path.write_text(
        "apiVersion: sim.kubesched.io/v1alpha1\nkind: GPUNode\nmetadata: {name: g}\n"
        "spec:\n  cpu: '8'\n  memory: 64Gi\n  gpus: {model: A100, count: 0}\n"
    )
    with pytest.raises(ManifestError) as err:
        load_manifests([path])
    assert err.value.errors == [
        f"{path}:7: document 1 (GPUNode g): spec.gpus.count: must be an integer in [1, 128], got 0"
    ]
    path.write_text(path.read_text().replace("count: 0", "count: 2"))
    objects = load_manifests([path])
    assert [n["metadata"]["name"] for n in objects.nodes] == ["g"]
    assert [s["metadata"]["name"] for s in objects.of_kind("ResourceSlice")] == ["g-gpu.nvidia.com"]
