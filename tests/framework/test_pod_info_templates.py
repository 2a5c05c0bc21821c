"""PodInfo.share_spec_parses: pods entering the queue with the same spec and status take the spec's
parses from one template, parsed once; what reads the metadata (labels, problems) stays their own.
Every shared parse equals the one the pod would have made itself."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.framework.types import PodInfo

SPEC_PARSES = (
    "priority", "requests", "non_zero_requests", "tolerations", "affinity", "has_affinity",
    "has_required_anti_affinity", "host_ports", "scheduling_gates",
)


def pod(name: str, *, labels: dict[str, Any] | None = None, cpu: str = "100m", host_port: Any = 8080) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": name, "labels": labels or {"app": "a"}},
        "spec": {
            "priority": 5,
            "containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}},
                            "ports": [{"containerPort": 80, "hostPort": host_port}]}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "a"}}}]}},
            "schedulingGates": [{"name": "g"}],
        },
    }


def _parses(pi: PodInfo) -> dict[str, Any]:
    out = {name: getattr(pi, name) for name in SPEC_PARSES}
    r = out["requests"]
    out["requests"] = (r.milli_cpu, r.memory, r.ephemeral_storage, dict(r.scalar_resources))
    return out


def test_same_spec_shares_one_parse_and_keeps_its_metadata() -> None:
    first, second = PodInfo(pod("p1")), PodInfo(pod("p2", labels={"app": 3}))  # type: ignore[dict-item]
    first.share_spec_parses()
    second.share_spec_parses()
    alone = PodInfo(pod("p3"))
    assert _parses(first) == _parses(second) == _parses(alone)
    assert first.requests is second.requests  # parsed once
    assert second.labels == {"app": 3}
    assert second.problems == ("metadata.labels[app]: must be a string, got 3",)
    assert first.problems == ()


@pytest.mark.parametrize("change", [{"cpu": "200m"}, {"host_port": "8080"}])
def test_another_spec_does_not_share(change: dict[str, Any]) -> None:
    a, b = PodInfo(pod("a")), PodInfo(pod("b", **change))
    a.share_spec_parses()
    b.share_spec_parses()
    assert _parses(b) == _parses(PodInfo(pod("alone", **change)))
    assert _parses(a) != _parses(b)


def test_the_template_is_not_the_first_pods_object() -> None:
    # The simulator patches a stored pod's status in place; the template parsed a copy.
    first = pod("p1")
    original = copy.deepcopy(first)
    pi = PodInfo(first)
    pi.share_spec_parses()
    first["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"  # nobody does this; still
    later = PodInfo(copy.deepcopy(original))
    later.share_spec_parses()
    assert later.requests.milli_cpu == 100


def test_a_copy_of_the_pod_parses_its_own_spec() -> None:
    # The assumed copy (with_node_name) and the informer's echo keep the parses made so far, not
    # the template: their spec differs by the node name.
    pi = PodInfo(pod("p1"))
    pi.share_spec_parses()
    assumed = pi.with_node_name("n1")
    assert "_template" not in vars(assumed) and "spec_key" not in vars(assumed)
    echo = PodInfo(assumed.pod)
    echo.inherit_parses(assumed)
    assert "_template" not in vars(echo)
    assert _parses(echo) == _parses(PodInfo(pod("p2")))


def _node_state(ni: Any) -> tuple[Any, ...]:
    r, nz = ni.requested, ni.non_zero_requested
    return ([p.uid for p in ni.pods], [p.uid for p in ni.pods_with_affinity],
            [p.uid for p in ni.pods_with_required_anti_affinity], (r.milli_cpu, r.memory, dict(r.scalar_resources)),
            (nz.milli_cpu, nz.memory), len(ni.used_ports))


def test_replace_pod_is_remove_then_add() -> None:
    # The informer's echo of a binding: a newer copy with the parses of the assumed one replaces it
    # as remove_pod + add_pod would, order of the pod lists included, without redoing the sums.
    from kubesched.framework.types import NodeInfo

    pods = [PodInfo(pod(f"p{i}", cpu=f"{100 * (i + 1)}m")) for i in range(3)]
    pods[1].pod["spec"].pop("affinity")
    for pi in pods:
        pi.share_spec_parses()
    fast, slow = NodeInfo(None, pods), NodeInfo(None, pods)
    echo = PodInfo(copy.deepcopy(pods[0].pod))
    echo.inherit_parses(pods[0])  # after the node counted it, as the assumed pod had been
    assert fast.replace_pod(pods[0], echo)
    slow.remove_pod(pods[0])
    slow.add_pod(echo)
    assert _node_state(fast) == _node_state(slow)
    assert fast.pods[-1] is echo and fast.pods_with_affinity[-1] is echo
    # A copy that counts differently is left to the long way.
    other = PodInfo(pod("p1", cpu="900m"))
    assert not fast.replace_pod(pods[1], other) and _node_state(fast) == _node_state(slow)
