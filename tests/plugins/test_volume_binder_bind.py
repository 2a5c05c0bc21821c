"""VolumeBinding's binder at PreBind: bindAPIUpdate and checkBindings.

Ported from pkg/scheduler/framework/plugins/volumebinding/binder_test.go (v1.37.2; v1.35.4 has the
same rows): TestBindAPIUpdate and TestCheckBindings as data/volume_binder_bind.yaml (the rows not
ported are named there). Upstream's informer cache and API server are two stores (a fake reactor
and an indexer); kubesched's binder reads the client's objects as its informers, so "the API moved
on while the cache did not" is set up by assuming first and changing the API after. Not ported:
TestCheckBindingsWithCSIMigration (VolumeBinding does not translate in-tree PVs to CSI).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from binder_fixtures import ANN_SELECTED_NODE, PV, PVC, binder, make_test_pod

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.plugins.volumebinding.binder import BinderError, BindingInfo, DynamicProvision, VolumeBinder

DATA: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "data" / "volume_binder_bind.yaml").read_text())
_CALL = re.compile(r"^(\w+)(?::([\w-]+))?\((\w+)\)$")


def obj(ref: str) -> dict[str, Any]:
    """A named object, through upstream's helper when the name says ``helper(name)``."""
    m = _CALL.match(ref)
    if m is None:
        return copy.deepcopy(PVC.get(ref) or PV[ref])
    fn, arg, name = m.groups()
    o = copy.deepcopy(PVC.get(name) or PV[name])
    md = o["metadata"]
    if fn == "addProvisionAnn":
        md["annotations"] = {**md.get("annotations", {}), ANN_SELECTED_NODE: "node1"}
    elif fn == "pvcSetSelectedNode":
        md["annotations"] = {**md.get("annotations", {}), ANN_SELECTED_NODE: arg}
    elif fn == "pvcSetEmptyAnnotations":
        md["annotations"] = {}
    elif fn == "pvRemoveClaimUID":
        o["spec"]["claimRef"]["uid"] = ""
    else:
        raise AssertionError(f"unknown helper {fn}")
    return o


def without_version(o: Any) -> dict[str, Any]:
    o = copy.deepcopy(dict(o))
    o["metadata"].pop("resourceVersion", None)
    return o


def assumed(b: VolumeBinder, case: dict[str, Any]) -> tuple[list[BindingInfo], list[DynamicProvision]]:
    """``assumeVolumes``: the bindings' PVs and the provisioned claims, assumed in the caches."""
    bindings = []
    for c, v in case.get("bindings", []):
        pv_obj = obj(v)
        bi = BindingInfo(PersistentVolumeClaim.from_object(obj(c)), PersistentVolume.from_object(pv_obj), pv_obj)
        b.pv_cache.assume(bi.pv)
        bindings.append(bi)
    provisions = []
    for n in case.get("provisions", []):
        pvc_obj = obj(n)
        p = DynamicProvision(PersistentVolumeClaim.from_object(pvc_obj), None, pvc_obj)
        b.pvc_cache.assume(p.pvc)
        provisions.append(p)
    return bindings, provisions


def replace_api(client: Any, refs: list[str]) -> None:
    """The API server's objects moved on (without the informer cache knowing)."""
    for ref in refs:
        new = obj(ref)
        for i, o in enumerate(client.objects):
            if o.get("kind") == new["kind"] and o["metadata"]["name"] == new["metadata"]["name"]:
                client.objects[i] = new


@pytest.mark.parametrize("case", DATA["bind_api_update"], ids=lambda c: c["name"])
def test_bind_api_update(case: dict[str, Any]) -> None:
    pl, b = binder([obj(n) for n in [*case.get("cached_pvs", []), *case.get("cached_pvcs", [])]])
    assert pl.handle is not None
    client = pl.handle.client()
    bindings, provisions = assumed(b, case)
    replace_api(client, [*case.get("api_pvs", []), *case.get("api_pvcs", [])])
    if case.get("fail"):
        with pytest.raises(BinderError):
            b._bind_api_update(bindings, provisions)
    else:
        b._bind_api_update(bindings, provisions)
    for kind, key in (("PersistentVolume", "pvs"), ("PersistentVolumeClaim", "pvcs")):
        want = [without_version(obj(n)) for n in case.get(f"expected_api_{key}", case.get(f"expected_{key}", []))]
        got = [without_version(o) for o in client.list_objects("v1", kind)]
        assert sorted(got, key=lambda o: o["metadata"]["name"]) == want
    if not case.get("fail"):  # validateBind/validateProvision: the cache shows the written objects
        for n in case.get("expected_pvs", []):
            want = without_version(obj(n))
            assert without_version(b.pv_cache.get(want["metadata"]["name"]).obj) == want
        for n in case.get("expected_pvcs", []):
            want = without_version(obj(n))
            assert without_version(b.pvc_cache.get(f"testns/{want['metadata']['name']}").obj) == want


@pytest.mark.parametrize("case", DATA["check_bindings"], ids=lambda c: c["name"])
def test_check_bindings(case: dict[str, Any]) -> None:
    pod = make_test_pod() | {"kind": "Pod", "apiVersion": "v1"}
    init = [obj(n) for n in [*case.get("init_pvs", []), *case.get("init_pvcs", [])]]
    pl, b = binder([pod, *init])
    assert pl.handle is not None
    client = pl.handle.client()
    bindings, provisions = assumed(b, case)
    if case.get("delete_pvs"):
        client.objects = [o for o in client.objects if o.get("kind") != "PersistentVolume"]
    else:
        for n in case.get("api_pvs", []):
            client.update_object(obj(n))
    if case.get("delete_pvcs"):
        client.objects = [o for o in client.objects if o.get("kind") != "PersistentVolumeClaim"]
    else:
        for n in case.get("api_pvcs", []):
            client.update_object(obj(n))
    if case.get("fail"):
        with pytest.raises(BinderError):
            b._check_bindings(pod, "node1", bindings, provisions)
        return
    assert b._check_bindings(pod, "node1", bindings, provisions) is bool(case.get("bound"))
