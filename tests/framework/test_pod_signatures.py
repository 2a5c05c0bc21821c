"""Pod signatures (OpportunisticBatching): the shared signers, the framework's SignPod and the
plugins' own, against upstream's tables.

Ported from k8s.io/kube-scheduler/framework/signers_test.go (TestHostPortsSigner,
TestTolerationsSigner, TestVolumesSigner, TestNodeAffinitySigner), pkg/scheduler/schedule_one_test.go
(TestSignatures: the exact bytes of the signature), interpodaffinity/plugin_test.go
(TestPodAffinitySignature), podtopologyspread/filtering_test.go (TestPodTopoSignatures) and
imagelocality/image_locality_test.go (TestImageSignature), v1.35.4; data/pod_signatures.yaml.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.framework import signature as sign
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.signature import SignFragment
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.testing import new_framework

DATA = yaml.safe_load((Path(__file__).parent / "data" / "pod_signatures.yaml").read_text())


def _pod(spec: dict[str, Any], labels: dict[str, str] | None = None, scheduler: str = "") -> PodInfo:
    spec = dict(spec)
    if scheduler:
        spec["schedulerName"] = scheduler
    return PodInfo({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default", "uid": "p", "labels": labels or {}},
                    "spec": spec})


def _rows(key: str) -> list[Any]:
    return [pytest.param(r, id=r["name"]) for r in DATA[key]]


@pytest.mark.parametrize("row", _rows("host_ports"))
def test_host_ports_signer(row: dict[str, Any]) -> None:
    assert sign.host_ports(_pod(row["spec"])) == row["want"]


@pytest.mark.parametrize("row", _rows("tolerations"))
def test_tolerations_signer(row: dict[str, Any]) -> None:
    assert sign.tolerations(_pod(row["spec"])) == row["want"]


@pytest.mark.parametrize("row", _rows("volumes"))
def test_volumes_signer(row: dict[str, Any]) -> None:
    assert sign.volumes(_pod(row["spec"])) == row["want"]


@pytest.mark.parametrize("row", _rows("node_affinity"))
def test_node_affinity_signer(row: dict[str, Any]) -> None:
    assert sign.node_affinity(_pod(row["spec"])) == row["want"]


def _const_sig(cfg: dict[str, Any]) -> type:
    """A plugin at one extension point that signs every pod with fixed fragments and code."""
    fragments = [SignFragment(k, v) for k, v in cfg["fragments"]]
    code = Code[{"Success": "SUCCESS", "Unschedulable": "UNSCHEDULABLE", "Error": "ERROR"}[cfg["code"]]]

    def sign_pod(self: object, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return fragments, Status(code)

    methods: dict[str, Any] = {"name": cfg["name"], "sign_pod": sign_pod,
                               "__init__": lambda self, args=None, handle=None: None}
    point = cfg["point"]
    if point == "filter":
        methods["filter"] = lambda self, state, pod, ni: None
    elif point == "preFilter":
        methods["pre_filter"] = lambda self, state, pod, nodes: (None, None)
        methods["pre_filter_extensions"] = lambda self: None
    elif point == "preScore":
        methods["pre_score"] = lambda self, state, pod, nodes: None
    else:
        methods["score"] = lambda self, state, pod, ni: (0, None)
        methods["score_extensions"] = lambda self: None
    return type(cfg["name"], (), methods)


@pytest.mark.parametrize("row", _rows("framework"))
def test_framework_sign_pod(row: dict[str, Any]) -> None:
    fw = new_framework([_const_sig(p) for p in row["plugins"]], profile="test-scheduler")
    assert fw.framework.sign_pod(_pod({}, scheduler="test-scheduler"), True) == row["want"]


def _plugin_signature(plugin: Any, pod: PodInfo) -> tuple[Sequence[SignFragment], Status | None]:
    parts, st = plugin.sign_pod(pod)
    return [tuple(f) for f in parts], st


@pytest.mark.parametrize("row", _rows("inter_pod_affinity"))
def test_inter_pod_affinity_signature(row: dict[str, Any]) -> None:
    fw = new_framework(["InterPodAffinity"], args={"InterPodAffinity": row.get("args", {})})
    parts, st = _plugin_signature(fw.plugin("InterPodAffinity"), _pod(row["spec"], row["labels"]))
    if row.get("unsignable"):
        assert st is not None and st.code == Code.UNSCHEDULABLE
    else:
        assert st is None and parts == [tuple(w) for w in row["want"]]


@pytest.mark.parametrize("row", _rows("pod_topology_spread"))
def test_pod_topology_spread_signature(row: dict[str, Any]) -> None:
    fw = new_framework(["PodTopologySpread"], args={"PodTopologySpread": row["args"]})
    parts, st = _plugin_signature(fw.plugin("PodTopologySpread"), _pod(row["spec"]))
    if row.get("unsignable"):
        assert st is not None and st.code == Code.UNSCHEDULABLE
    else:
        assert st is None and parts == row["want"]


@pytest.mark.parametrize("row", _rows("image_locality"))
def test_image_locality_signature(row: dict[str, Any]) -> None:
    fw = new_framework(["ImageLocality"])
    parts, st = _plugin_signature(fw.plugin("ImageLocality"), _pod(row["spec"]))
    assert st is None and parts == [tuple(w) for w in row["want"]]


def test_a_plugin_that_raises_makes_the_pod_unsignable() -> None:
    class Raises:
        name = "Raises"

        def __init__(self, args: object = None, handle: object = None) -> None:
            pass

        def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> None:
            return None

        def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], None]:
            raise RuntimeError("boom")

    fw = new_framework([Raises])
    assert fw.framework.sign_pod(_pod({})) is None


def test_a_plugin_without_sign_pod_disables_signatures_for_the_profile() -> None:
    class Unsigned:
        name = "Unsigned"

        def __init__(self, args: object = None, handle: object = None) -> None:
            pass

        def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> None:
            return None

    fw = new_framework([Unsigned])
    assert not fw.framework.signatures_enabled
    assert fw.framework.sign_pod(_pod({})) is None


def test_every_default_plugin_signs_pods() -> None:
    """The default profile's PreFilter, Filter, PreScore and Score plugins all implement
    sign_pod (upstream's in-tree plugins all do), so only PodTopologySpread's defaults stop it."""
    fw = new_framework({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    assert fw.framework.signatures_enabled
    assert fw.framework.sign_pod(_pod({"containers": [{"name": "c", "image": "x"}]})) is None


def test_pods_of_one_spec_with_other_labels_are_signed_apart() -> None:
    """InterPodAffinity signs the labels: two pods of one template but different labels must not
    share a signature, however their parses are shared (a ReplicaSet's pods differ in name only)."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}}],
    }
    fw = new_framework(config)
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    a, b, c = _pod(spec, {"app": "a"}), _pod(spec, {"app": "b"}), _pod(spec, {"app": "a"})
    for p in (a, b, c):
        p.share_spec_parses()  # as the queue does: one template, the spec-only signers' answers shared
    sa, sb, sc = (fw.framework.sign_pod(p) for p in (a, b, c))
    assert sa is not None and sb is not None
    assert sa != sb and sa == sc


def test_every_sign_call_is_timed_until_the_first_that_cannot_sign() -> None:
    """Upstream ``SignPod`` (framework/runtime/framework.go, v1.35.4) observes every plugin's call
    into ``scheduler_plugin_execution_duration_seconds{extension_point="Sign"}`` with the call's
    status, in every cycle (not only sampled ones), and stops at the first plugin that cannot
    sign: the plugins after it are neither called nor observed."""
    plugins = [
        {"name": "SignsA", "point": "filter", "fragments": [["a", 1]], "code": "Success"},
        {"name": "CannotSign", "point": "filter", "fragments": [], "code": "Unschedulable"},
        {"name": "SignsC", "point": "score", "fragments": [["c", 1]], "code": "Success"},
    ]
    fw = new_framework([_const_sig(p) for p in plugins], profile="test-scheduler").framework
    assert fw.metrics is not None
    for _ in range(3):  # three pods (a PodInfo keeps its signature: one call each)
        assert fw.sign_pod(_pod({}, scheduler="test-scheduler"), False) is None

    def count(plugin: str, status: str) -> float | None:
        return fw.metrics.registry.get_sample_value(  # type: ignore[union-attr]
            "scheduler_plugin_execution_duration_seconds_count",
            {"plugin": plugin, "extension_point": "Sign", "status": status},
        )

    assert count("SignsA", "Success") == 3
    assert count("CannotSign", "Unschedulable") == 3
    assert count("SignsC", "Success") is None
    assert count("CannotSign", "Success") is None


def test_spec_only_signers_answer_once_per_template_and_are_still_timed_per_pod() -> None:
    """A signer declaring ``signs_by_spec`` answers once for the pods sharing a spec template; every
    pod still gets one Sign observation per plugin (upstream calls SignPod per pod). A signer
    without it is asked for each pod."""
    calls = {"BySpec": 0, "ByLabels": 0}

    class BySpec:
        name = "BySpec"
        signs_by_spec = True

        def __init__(self, args: object = None, handle: object = None) -> None:
            pass

        def filter(self, state: object, pod: PodInfo, ni: object) -> None:
            return None

        def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
            calls["BySpec"] += 1
            return [SignFragment("spec", pod.spec.get("priority"))], None

    class ByLabels(BySpec):
        name = "ByLabels"
        signs_by_spec = False

        def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
            calls["ByLabels"] += 1
            return [SignFragment("labels", dict(pod.labels))], None

    fw = new_framework([BySpec, ByLabels], profile="test-scheduler").framework
    pods = [_pod({"priority": 1}, {"i": str(i)}, scheduler="test-scheduler") for i in range(3)]
    other = _pod({"priority": 2}, {"i": "0"}, scheduler="test-scheduler")
    for p in [*pods, other]:
        p.share_spec_parses()
    sigs = [fw.sign_pod(p) for p in [*pods, other]]
    assert calls == {"BySpec": 2, "ByLabels": 4}  # two templates; four pods
    assert len(set(sigs)) == 4
    assert sigs[0] == fw.sign_pod(_pod({"priority": 1}, {"i": "0"}, scheduler="test-scheduler"))
    assert fw.metrics is not None
    count = fw.metrics.registry.get_sample_value(
        "scheduler_plugin_execution_duration_seconds_count",
        {"plugin": "BySpec", "extension_point": "Sign", "status": "Success"},
    )
    assert count == 5
