"""Tiny configurable plugins for the framework and scheduler tests.

``fake("A", filter=lambda state, pod, ni: ...)`` builds a plugin class named ``A`` whose extension
point methods are the given callables (no ``self``), the way upstream's framework_test.go builds
``TestPlugin`` with injected statuses. PreFilter plugins get ``pre_filter_extensions() -> None`` and
Score plugins get ``score_extensions()`` (themselves when a ``normalize_score`` is given).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubesched.config.load import load_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import default_registry


def fake(name: str, **points: Callable[..., Any]) -> type:
    """A plugin class called ``name`` implementing exactly the given extension point methods."""

    def __init__(self: Any, args: Any = None, handle: Any = None) -> None:
        self.args = args
        self.handle = handle

    ns: dict[str, Any] = {"name": name, "__init__": __init__}
    for method, fn in points.items():
        ns[method] = staticmethod(fn)
    if "pre_filter" in points and "pre_filter_extensions" not in points:
        ns["pre_filter_extensions"] = staticmethod(lambda: None)
    if "score" in points and "score_extensions" not in points:

        def score_extensions(self: Any) -> Any:
            return self if "normalize_score" in points else None

        ns["score_extensions"] = score_extensions
    return type(name, (), ns)


def registry_with(*plugins: type) -> Registry:
    """The in-tree registry plus the given plugin classes (registered under their ``name``)."""
    reg = default_registry(entry_points=False)
    for p in plugins:
        reg.register(p.name, p)  # type: ignore[attr-defined]
    return reg


def config_for(
    registry: Registry, profiles: list[Mapping[str, Any]], **top: Any
) -> KubeSchedulerConfiguration:
    """A configuration whose profiles start from no default plugins (multiPoint ``*`` disabled)."""
    raw_profiles = []
    for p in profiles:
        plugins = dict(p.get("plugins") or {})
        mp = dict(plugins.get("multiPoint") or {})
        mp.setdefault("disabled", [{"name": "*"}])
        plugins["multiPoint"] = mp
        raw_profiles.append({**p, "plugins": plugins})
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": raw_profiles,
        **top,
    }
    return load_config(raw, args_types=registry.args_types())
