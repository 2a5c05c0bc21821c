"""VolumeBinding's binder: AssumePodVolumes and RevertAssumedPodVolumes.

Ported from pkg/scheduler/framework/plugins/volumebinding/binder_test.go (v1.37.2; v1.35.4 has the
same rows): TestAssumePodVolumes (every row, data/volume_binder_assume.yaml) and
TestRevertAssumedPodVolumes, with upstream's checks (``validateAssume``: the assumed PV's claimRef
names the claim, the assumed claim has the selected-node annotation; ``validateCacheRestored``:
the caches hold the API's objects again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from binder_fixtures import ANN_SELECTED_NODE, PV, PVC, binder, make_test_pod

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.framework.types import PodInfo
from kubesched.plugins.helper.storage_listers import volumes_of
from kubesched.plugins.volumebinding.binder import BinderError, BindingInfo, DynamicProvision, PodVolumes, VolumeBinder

DATA: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "data" / "volume_binder_assume.yaml").read_text())


def bindings(pairs: list[list[str]]) -> list[BindingInfo]:
    """``makeBinding(pvc, pv)``."""
    return [BindingInfo(PersistentVolumeClaim.from_object(PVC[c]), PersistentVolume.from_object(PV[v]))
            for c, v in pairs]


def validate_assume(b: VolumeBinder, want_bindings: list[list[str]], want_provisions: list[str]) -> None:
    for c, v in want_bindings:
        pv = b.pv_cache.get(PV[v]["metadata"]["name"])
        assert pv.claim_ref is not None
        assert (pv.claim_ref.name, pv.claim_ref.namespace) == (PVC[c]["metadata"]["name"], "testns")
    for c in want_provisions:
        pvc = b.pvc_cache.get(f"testns/{PVC[c]['metadata']['name']}")
        assert pvc.annotations.get(ANN_SELECTED_NODE) == "node1"


def validate_restored(b: VolumeBinder, pairs: list[list[str]], provisions: list[str]) -> None:
    for _, v in pairs:
        name = PV[v]["metadata"]["name"]
        try:
            api = b.pv_cache.get_api_obj(name)
        except LookupError:
            continue  # missing from the API: nothing to restore
        assert b.pv_cache.get(name) is api
    for c in provisions:
        pvc = b.pvc_cache.get(f"testns/{PVC[c]['metadata']['name']}")
        assert pvc.annotations.get(ANN_SELECTED_NODE, "") == ""


@pytest.mark.parametrize("case", DATA, ids=lambda c: c["name"])
def test_assume_pod_volumes(case: dict[str, Any]) -> None:
    _, b = binder([*(PVC[n] for n in case["pvcs"]), *(PV[n] for n in case["pvs"])])
    pod = make_test_pod([PVC[n] for n in case["pvcs"]])
    pod_volumes = PodVolumes(bindings(case.get("bindings", [])),
                             [DynamicProvision(PersistentVolumeClaim.from_object(PVC[n]))
                              for n in case.get("provisions", [])])
    volumes = volumes_of(PodInfo(pod))
    if case.get("fail"):
        with pytest.raises(BinderError):
            b.assume_pod_volumes(pod, volumes, "node1", pod_volumes)
        validate_restored(b, case.get("bindings", []), case.get("provisions", []))
        assert b.pv_cache.assumed_count() == 0 and b.pvc_cache.assumed_count() == 0
        return
    all_bound = b.assume_pod_volumes(pod, volumes, "node1", pod_volumes)
    assert all_bound is bool(case.get("all_bound"))
    want_bindings = case.get("want_bindings", case.get("bindings", []))
    want_provisions = case.get("want_provisions", case.get("provisions", []))
    validate_assume(b, want_bindings, want_provisions)
    # validatePodCache: the pod's volumes now hold the assumed objects.
    assert [(x.pvc.name, x.pv.name) for x in pod_volumes.static_bindings] == [
        (PVC[c]["metadata"]["name"], PV[v]["metadata"]["name"]) for c, v in want_bindings]
    for x, (_, v) in zip(pod_volumes.static_bindings, want_bindings, strict=True):
        want_ref = PV[v]["spec"].get("claimRef")
        assert x.pv.claim_ref is not None and want_ref is not None
        assert (x.pv.claim_ref.name, x.pv.claim_ref.namespace) == (want_ref["name"], want_ref["namespace"])
    assert [(p.pvc.name, p.pvc.annotations.get(ANN_SELECTED_NODE)) for p in pod_volumes.dynamic_provisions] == [
        (PVC[n]["metadata"]["name"], PVC[n]["metadata"].get("annotations", {}).get(ANN_SELECTED_NODE))
        for n in want_provisions]


def test_revert_assumed_pod_volumes() -> None:
    """TestRevertAssumedPodVolumes."""
    claims = ["unboundPVC", "provisionedPVC"]
    _, b = binder([*(PVC[n] for n in claims), PV["pvNode1a"]])
    pod = make_test_pod([PVC[n] for n in claims])
    pod_volumes = PodVolumes(bindings([["unboundPVC", "pvNode1a"]]),
                             [DynamicProvision(PersistentVolumeClaim.from_object(PVC["provisionedPVC"]))])
    assert b.assume_pod_volumes(pod, volumes_of(PodInfo(pod)), "node1", pod_volumes) is False
    validate_assume(b, [["unboundPVC", "pvNode1aBound"]], ["selectedNodePVC"])
    b.revert_assumed_pod_volumes(pod_volumes)
    validate_restored(b, [["unboundPVC", "pvNode1a"]], ["provisionedPVC"])
    assert b.pv_cache.assumed_count() == 0 and b.pvc_cache.assumed_count() == 0
