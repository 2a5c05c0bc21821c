"""Every in-tree plugin names, as base classes, exactly the extension-point Protocols it implements.

The framework decides which points a plugin has by ``isinstance`` against the runtime-checkable
Protocols of kubesched.framework.interfaces (framework/runtime.py ``_implements``). Naming a Protocol
as a base makes that check true by inheritance, and gives the class the Protocol's stub methods. So
the declared set must equal what the class really defines, method by method, or a plugin would be
run at a point whose method is a stub (upstream states the same contract with compile-time
assertions: ``var _ framework.FilterPlugin = &TaintToleration{}`` in each plugin's file).
"""

from __future__ import annotations

import inspect
import typing

import pytest

from kubesched.framework import interfaces
from kubesched.framework.runtime import EXTENSION_POINTS
from kubesched.plugins.registry import default_registry

PROTOCOLS: list[type] = [
    interfaces.PreEnqueuePlugin, interfaces.QueueSortPlugin, interfaces.EnqueueExtensions,
    interfaces.PreFilterPlugin, interfaces.PreFilterExtensions, interfaces.FilterPlugin,
    interfaces.BatchFilterPlugin, interfaces.BatchFilterStatusesPlugin, interfaces.PostFilterPlugin,
    interfaces.PreScorePlugin, interfaces.ScorePlugin, interfaces.ScoreExtensions,
    interfaces.BatchScorePlugin, interfaces.ReservePlugin, interfaces.PermitPlugin,
    interfaces.PreBindPlugin, interfaces.PreBindPreFlightPlugin, interfaces.BindPlugin, interfaces.PostBindPlugin,
]


def _members(proto: type) -> set[str]:
    attrs: set[str] = typing._get_protocol_attrs(proto)  # type: ignore[attr-defined]
    return attrs - {"name"}


def _defines(cls: type, method: str) -> bool:
    """``cls`` or a base of it that is not a Protocol defines ``method`` (a stub does not count)."""
    return any(method in vars(k) for k in cls.__mro__ if k is not object and not getattr(k, "_is_protocol", False))


CLASSES = [spec.factory for spec in default_registry(entry_points=False).values() if inspect.isclass(spec.factory)]


def test_every_in_tree_plugin_is_a_class() -> None:
    assert len(CLASSES) == len(default_registry(entry_points=False)) == 27


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_declared_protocols_are_the_implemented_ones(cls: type) -> None:
    declared = {p.__name__ for p in PROTOCOLS if p in cls.__mro__}
    implemented = {p.__name__ for p in PROTOCOLS if all(_defines(cls, m) for m in _members(p))}
    assert declared == implemented


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_a_protocol_base_changes_no_point_a_plugin_has(cls: type) -> None:
    """What ``isinstance`` says (the runtime's test) is what the class defines, point by point."""
    plugin = cls.__new__(cls)
    for _, proto in EXTENSION_POINTS.values():
        assert isinstance(plugin, proto) == all(_defines(cls, m) for m in _members(proto)), proto.__name__
