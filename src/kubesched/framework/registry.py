"""Plugin registry: names to factories (upstream ``framework/runtime/registry.go``).

A factory is ``factory(args, handle) -> plugin``; a plugin class whose ``__init__`` takes
``(args, handle)`` is its own factory. A factory may declare the dataclass its args decode into
with an ``args_type`` attribute (or ``Args`` on a class); configuration then decodes, defaults and
validates the args before the factory is called, and errors name the field path.

Out-of-tree plugins come from installed packages through the entry-point group
``kubesched.plugins``: the entry point's name is the plugin name, its object the factory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "kubesched.plugins"

PluginFactory = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class PluginSpec:
    name: str
    factory: PluginFactory
    args_type: type | None = None
    #: Where it came from (``in-tree``, an entry point's distribution, or ``main``).
    origin: str = "in-tree"


def args_type_of(factory: PluginFactory) -> type | None:
    t = getattr(factory, "args_type", None) or getattr(factory, "Args", None)
    return t if isinstance(t, type) else None


class RegistryError(ValueError):
    pass


class Registry(Mapping[str, PluginSpec]):
    def __init__(self, specs: Mapping[str, PluginSpec] | None = None) -> None:
        self._specs: dict[str, PluginSpec] = dict(specs or {})

    def __getitem__(self, name: str) -> PluginSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def register(
        self, name: str, factory: PluginFactory, *, args_type: type | None = None, origin: str = "in-tree"
    ) -> None:
        """Add a factory; registering a name twice is an error, as upstream."""
        if name in self._specs:
            raise RegistryError(f"a plugin named {name} already exists")
        self._specs[name] = PluginSpec(name, factory, args_type or args_type_of(factory), origin)

    def unregister(self, name: str) -> None:
        if name not in self._specs:
            raise RegistryError(f"no plugin named {name} exists")
        del self._specs[name]

    def merge(self, other: Mapping[str, PluginSpec]) -> None:
        for name, spec in other.items():
            if name in self._specs:
                raise RegistryError(f"a plugin named {name} already exists")
            self._specs[name] = spec

    def copy(self) -> Registry:
        return Registry(self._specs)

    def args_types(self) -> dict[str, type]:
        return {n: s.args_type for n, s in self._specs.items() if s.args_type is not None}


def load_entry_points(registry: Registry, group: str = ENTRY_POINT_GROUP) -> list[str]:
    """Register every plugin published under ``group`` by installed distributions.

    A broken entry point is logged and skipped: one bad package must not stop the scheduler, and
    a profile that names the missing plugin fails with a clear "not registered" error instead.
    """
    loaded: list[str] = []
    for ep in metadata.entry_points(group=group):
        if ep.name in registry:
            log.warning("plugin %s from entry point %s shadows an existing plugin; ignored", ep.name, ep.value)
            continue
        try:
            factory = ep.load()
        except Exception as err:
            log.error("cannot load plugin %s from entry point %s: %s", ep.name, ep.value, err)
            continue
        dist = getattr(ep, "dist", None)
        origin = f"entry point {dist.name if dist else ep.value}"
        registry.register(ep.name, factory, origin=origin)
        loaded.append(ep.name)
    return loaded
