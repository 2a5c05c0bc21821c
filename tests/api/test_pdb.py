"""What preemption reads of a PodDisruptionBudget (api/pdb.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.api.pdb import PodDisruptionBudget, parse_pdbs
from kubesched.framework.preemption import PodDisruptionBudget as ReExported


@dataclass
class Pod:
    namespace: str = "default"
    labels: dict[str, str] = field(default_factory=dict)


def pdb(selector: Any, namespace: str | None = "default", status: Any = None) -> dict[str, Any]:
    md = {"name": "b"} | ({"namespace": namespace} if namespace else {})
    return {"metadata": md, "spec": {"selector": selector}, "status": status or {}}


def test_reads_status() -> None:
    b = PodDisruptionBudget.from_object(
        pdb({"matchLabels": {"app": "a"}}, status={"disruptionsAllowed": 2, "disruptedPods": {"p1": "t"}}))
    assert (b.namespace, b.disruptions_allowed, b.disrupted_pods) == ("default", 2, frozenset({"p1"}))
    odd = PodDisruptionBudget.from_object(pdb({}, None, {"disruptionsAllowed": "2", "disruptedPods": ["p1"]}))
    assert (odd.namespace, odd.disruptions_allowed, odd.disrupted_pods) == ("default", 0, frozenset())


def test_matches_namespace_and_selector() -> None:
    b = PodDisruptionBudget.from_object(pdb({"matchLabels": {"app": "a"}}))
    assert b.matches(Pod(labels={"app": "a"}))
    assert not b.matches(Pod(labels={"app": "b"}))
    assert not b.matches(Pod("other", {"app": "a"}))


def test_empty_nil_and_invalid_selectors_select_nothing() -> None:
    for selector in ({}, None, {"matchLabels": {"bad key!": "x"}}):
        b = PodDisruptionBudget.from_object(pdb(selector))
        assert not b.matches(Pod(labels={"app": "a"}))


def test_parse_pdbs_keeps_order_and_is_re_exported() -> None:
    assert [b.namespace for b in parse_pdbs([pdb({}, "x"), pdb({}, "y")])] == ["x", "y"]
    assert ReExported is PodDisruptionBudget
