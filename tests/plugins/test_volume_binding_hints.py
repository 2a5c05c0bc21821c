"""VolumeBinding's PreBindPreFlight and queueing hints.

Ported from pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go (v1.37.2; the
v1.35.4 tables have the same rows): Test_PreBindPreFlight and TestIsSchedulableAfterCSINodeChange,
...PersistentVolumeClaimChange, ...StorageClassChange, ...CSIStorageCapacityChange,
...CSIDriverChange, every row, as data in data/volume_binding_hints.yaml. Upstream's "type
conversion error" / "unexpected objects" rows return an error (which the queue reads as Queue);
here the hint raises TypeError, which the queue reads the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.types import PodInfo
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumebinding.binder import PodVolumes
from kubesched.plugins.volumebinding.volume_binding import (
    STATE_KEY,
    _State,
    is_schedulable_after_csi_driver_change,
    is_schedulable_after_csi_node_change,
    is_schedulable_after_csi_storage_capacity_change,
    is_schedulable_after_persistent_volume_claim_change,
    is_schedulable_after_storage_class_change,
)

DATA: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "data" / "volume_binding_hints.yaml").read_text())
Hint = Callable[[dict[str, Any], object, object], QueueingHint]
HINTS: dict[str, Hint] = {
    "csi_node": is_schedulable_after_csi_node_change,
    "pvc": is_schedulable_after_persistent_volume_claim_change,
    "storage_class": is_schedulable_after_storage_class_change,
    "csi_storage_capacity": is_schedulable_after_csi_storage_capacity_change,
    "csi_driver": is_schedulable_after_csi_driver_change,
}


def make_pod(spec: dict[str, Any] | None) -> dict[str, Any]:
    """``makePod("pod-a")`` with ``withNamespace`` / ``withPVCVolume`` / ``withGenericEphemeralVolume``
    / ``withCSI`` / ``withEmptyDirVolume``."""
    spec = spec or {}
    vols: list[dict[str, Any]] = [{"name": "", "persistentVolumeClaim": {"claimName": c}}
                                  for c in spec.get("claims", [])]
    vols += [{"name": e, "ephemeral": {}} for e in spec.get("ephemeral", [])]
    if "csi" in spec:
        vols.append({"name": "", "csi": {"driver": spec["csi"]}})
    if spec.get("emptyDir"):
        vols.append({"name": "", "emptyDir": {}})
    return {"metadata": {"name": "pod-a", "namespace": spec.get("namespace", "default")}, "spec": {"volumes": vols}}


@pytest.mark.parametrize("case", DATA["pre_bind_pre_flight"], ids=lambda c: c["name"])
def test_pre_bind_pre_flight(case: dict[str, Any]) -> None:
    state = CycleState()
    if case["state"] is not None:
        s = _State()
        s.all_bound = bool(case["state"].get("all_bound"))
        s.pod_volumes_by_node = {n: PodVolumes() for n in case["state"].get("nodes", [])}
        state.write(STATE_KEY, s)
    status = VolumeBinding().pre_bind_pre_flight(state, PodInfo({"metadata": {"name": "p"}, "spec": {}}), "node-a")
    got = None if status is None else [status.code.upstream_name, *status.reasons]
    assert got == case["want"]


HINT_ROWS = [(kind, row) for kind in HINTS for row in DATA[kind]]


@pytest.mark.parametrize(("kind", "case"), HINT_ROWS, ids=[f"{k}: {r['name']}" for k, r in HINT_ROWS])
def test_queueing_hint(kind: str, case: dict[str, Any]) -> None:
    hint = HINTS[kind](make_pod(case.get("pod")), case["old"], case["new"])
    assert hint == QueueingHint[{"Queue": "QUEUE", "QueueSkip": "QUEUE_SKIP"}[case["want"]]]


@pytest.mark.parametrize("kind", list(HINTS))
def test_queueing_hint_unexpected_objects(kind: str) -> None:
    """Upstream's "type conversion error" rows: both objects of the wrong type."""
    with pytest.raises(TypeError):
        HINTS[kind](make_pod(None), object(), object())
