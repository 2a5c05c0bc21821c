"""The one ``util.As`` of the plugins (plugins/jsonview.py), which every queueing hint uses."""

from __future__ import annotations

import pytest

from kubesched.plugins.jsonview import as_object, as_pod_info, require_object


def test_as_object_keeps_none_and_objects() -> None:
    node = {"metadata": {"name": "n1"}}
    assert as_object(None, "Node") is None
    assert as_object(node, "Node") is node


@pytest.mark.parametrize("bad", ["n1", 3, ["a"]])
def test_as_object_rejects_anything_else(bad: object) -> None:
    with pytest.raises(TypeError, match=f"unexpected object type {type(bad).__name__}, want a Node"):
        as_object(bad, "Node")


def test_require_object_rejects_none_too() -> None:
    pod = {"metadata": {"name": "p"}}
    assert require_object(pod, "Pod") is pod
    with pytest.raises(TypeError, match="unexpected object type NoneType, want a Pod"):
        require_object(None, "Pod")


def test_as_pod_info_views_the_pod() -> None:
    assert as_pod_info(None) is None
    info = as_pod_info({"metadata": {"name": "p", "namespace": "ns"}})
    assert info is not None and info.namespace == "ns"
    with pytest.raises(TypeError):
        as_pod_info("p")
