"""VolumeBinding's binder: FindPodVolumes.

Ported from pkg/scheduler/framework/plugins/volumebinding/binder_test.go (v1.37.2; v1.35.4 has the
same rows): TestFindPodVolumesWithoutProvisioning and TestFindPodVolumesWithProvisioning, every
row under each of upstream's three CSIDriver variants, and TestCapacity, every row with the
driver's StorageCapacity on and off, as data/volume_binder_find.yaml.
Not ported: TestFindPodVolumesWithCSIMigration and TestCheckBindingsWithCSIMigration —
kubesched's VolumeBinding does not translate in-tree PVs to CSI (NodeVolumeLimits does, for
counting); a migrated in-tree PV's node affinity is read as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from binder_fixtures import PV, PVC, binder, csi_driver, find_pod_volumes, make_test_pod
from volume_binding_builders import make_capacity

from kubesched.plugins.volumebinding.assume_cache import NotFoundError
from kubesched.plugins.volumebinding.binder import BinderError

DATA: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "data" / "volume_binder_find.yaml").read_text())
NO_SPACE = "node(s) did not have enough free storage"
DRIVERS: dict[str, bool | None] = {"no CSIDriver": None, "CSIDriver with capacity tracking": True,
                                   "CSIDriver without capacity tracking": False}
ROWS = [(d, r) for table in ("without_provisioning", "with_provisioning") for r in DATA[table] for d in DRIVERS]


def row_pod(case: dict[str, Any]) -> dict[str, Any]:
    if "pod" in case:
        return make_test_pod(**case["pod"])
    return make_test_pod([PVC[n] for n in case.get("pvcs", [])])


@pytest.mark.parametrize(("driver", "case"), ROWS, ids=[f"{d}: {r['name']}" for d, r in ROWS])
def test_find_pod_volumes(driver: str, case: dict[str, Any]) -> None:
    capacity = DRIVERS[driver]
    objs = [PV[n] for n in case.get("pvs", [])]
    objs += [PVC[n] for n in case.get("cache_pvcs", case.get("pvcs", []))]
    if capacity is not None:
        objs.append(csi_driver(capacity))
    _, b = binder(objs)
    pod = row_pod(case)
    if case.get("fail"):
        with pytest.raises((BinderError, NotFoundError, RuntimeError)):
            find_pod_volumes(b, pod)
        return
    pod_volumes, reasons = find_pod_volumes(b, pod)
    want_reasons = list(case.get("reasons", []))
    want_provisions = case.get("provisions", [])
    if case.get("needs_capacity") and capacity:
        want_reasons.append(NO_SPACE)
        want_provisions = []
    assert sorted(reasons) == sorted(want_reasons)
    got_bindings = [(bi.pvc.obj, bi.pv.obj) for bi in pod_volumes.static_bindings]
    assert got_bindings == [(PVC[c], PV[v]) for c, v in case.get("bindings", [])]
    assert [p.pvc.obj for p in pod_volumes.dynamic_provisions] == [PVC[n] for n in want_provisions]


CAPACITY_ROWS = [(opt_in, r) for r in DATA["capacity"] for opt_in in (True, False)]


@pytest.mark.parametrize(("opt_in", "case"), CAPACITY_ROWS,
                         ids=[f"CSIDriver.StorageCapacity={o}: {r['name']}" for o, r in CAPACITY_ROWS])
def test_capacity(opt_in: bool, case: dict[str, Any]) -> None:
    caps: dict[str, dict[str, Any]] = {}
    for name, cls, node, cap, max_size in case["capacities"]:
        caps[name] = make_capacity(name, cls, node, cap, max_size, namespace="")
    _, b = binder([csi_driver(opt_in), PVC["provisionedPVC"], *caps.values()])
    pod_volumes, reasons = find_pod_volumes(b, make_test_pod([PVC["provisionedPVC"]]))
    want_reasons = case.get("reasons", []) if opt_in else []
    assert reasons == want_reasons
    assert not pod_volumes.static_bindings
    if want_reasons:
        return
    [provision] = pod_volumes.dynamic_provisions
    assert provision.pvc.obj == PVC["provisionedPVC"]
    if not opt_in:
        assert provision.node_capacity is None
        return
    want = case["capacities"][case["provision_capacity"]]
    assert provision.node_capacity is not None
    got = provision.node_capacity
    assert (got.name, got.storage_class_name) == (want[0], want[1])
    assert got.obj == caps[want[0]]
