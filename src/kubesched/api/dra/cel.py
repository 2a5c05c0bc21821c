"""Device selectors in CEL, as upstream k8s.io/dynamic-resource-allocation/cel evaluates them.

The expressions come from DeviceClasses and claims (``selectors[].cel.expression``) and see one
variable, ``device``: ``driver``, ``attributes`` (domain -> id -> value) and ``capacity`` (domain
-> id -> quantity), ``allowMultipleAllocations``. An unqualified attribute or capacity name is in
the driver's domain, as upstream's ``device.attributes["<driver>"].<id>`` reads it.

The CEL implementation is ``cel-python`` (module ``celpy``, PyPI ``cel-python``): maintained by
Cloud Custodian, pure Python (no native wheels to build on a user's platform), with the standard
macros and map selection the selectors use. It evaluates an expression in about 0.2 ms, so results
are cached per expression and device (a device's attributes are fixed while its slice is).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import celpy
from celpy import celtypes

from .cel_library import FUNCTIONS, Quantity, Semver

__all__ = ["CELCache", "CELError", "device_variable"]


class CELError(Exception):
    """A compile or runtime error of one expression, with upstream's wording where it has one."""


def _value(attr: Mapping[str, Any]) -> Any:
    if "string" in attr:
        return celtypes.StringType(str(attr["string"]))
    if "bool" in attr:
        return celtypes.BoolType(bool(attr["bool"]))
    if "int" in attr and isinstance(attr["int"], int):
        return celtypes.IntType(attr["int"])
    if "version" in attr:
        try:
            return Semver(str(attr["version"]))
        except ValueError:
            return None
    return None


def _capacity(cap: Mapping[str, Any]) -> Quantity | None:
    try:
        return Quantity(str(cap.get("value", "")))
    except ValueError:
        return None


def device_variable(driver: str, device: Mapping[str, Any]) -> celtypes.MapType:
    """The ``device`` variable of upstream's environment for one device of a slice: attributes
    by domain (an unqualified name is in the driver's), capacities as quantities, versions as
    semantic versions."""
    attributes: dict[str, dict[str, Any]] = {}
    raw_attributes, raw_capacity = device.get("attributes"), device.get("capacity")
    for name, attr in (raw_attributes if isinstance(raw_attributes, Mapping) else {}).items():
        domain, _, ident = str(name).rpartition("/")
        value = _value(attr) if isinstance(attr, Mapping) else None
        if value is not None:
            attributes.setdefault(domain or driver, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (raw_capacity if isinstance(raw_capacity, Mapping) else {}).items():
        domain, _, ident = str(name).rpartition("/")
        q = _capacity(cap) if isinstance(cap, Mapping) else None
        if q is not None:
            capacity.setdefault(domain or driver, {})[ident] = q

    def cel_map(m: Mapping[str, Any]) -> celtypes.MapType:
        return celtypes.MapType({celtypes.StringType(k): v for k, v in m.items()})

    return cel_map(
        {
            "driver": celtypes.StringType(driver),
            "attributes": cel_map({d: cel_map(v) for d, v in attributes.items()}),
            "capacity": cel_map({d: cel_map(v) for d, v in capacity.items()}),
            "allowMultipleAllocations": celtypes.BoolType(device.get("allowMultipleAllocations") is True),
        }
    )


class CELCache:
    """Compiled expressions, and each expression's result per device, shared across cycles
    (upstream ``cel.Cache`` keeps the compiled programs)."""

    def __init__(self, max_results: int = 1 << 18) -> None:
        self._env = celpy.Environment()
        self._programs: dict[str, Any] = {}
        self._errors: dict[str, str] = {}
        self._results: dict[tuple[str, object], bool | str] = {}
        self._max_results = max_results

    def _program(self, expression: str) -> Any:
        if expression in self._errors:
            raise CELError(self._errors[expression])
        prog = self._programs.get(expression)
        if prog is None:
            try:
                prog = self._env.program(self._env.compile(expression), functions=FUNCTIONS)
            except Exception as err:  # celpy raises its own parse errors
                message = f"compilation failed: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
                self._errors[expression] = message
                raise CELError(message) from None
            self._programs[expression] = prog
        return prog

    def matches(self, expression: str, key: object, device: celtypes.MapType) -> bool:
        """Whether ``expression`` is true for ``device`` (``key`` identifies the device and its
        slice version for the cache). Raises CELError for a compile or runtime error, or a
        non-boolean result, as upstream fails the allocation then."""
        cached = self._results.get((expression, key))
        if cached is None:
            prog = self._program(expression)
            try:
                value = prog.evaluate({"device": device})
            except Exception as err:
                cached = f"runtime error: {_first_line(err)}"
            else:
                cached = (
                    bool(value)
                    if isinstance(value, (bool, celtypes.BoolType))
                    else f"expression must evaluate to bool, got {value!r}"
                )
            if len(self._results) >= self._max_results:
                self._results.clear()
            self._results[(expression, key)] = cached
        if isinstance(cached, str):
            raise CELError(cached)
        return cached


def _first_line(err: BaseException) -> str:
    """The error's first line, without the activation dump cel-python appends to an undeclared
    reference (which would print every variable and function into a pod's message)."""
    args = getattr(err, "args", ())
    text = str(args[0]) if args else str(err)
    text = text.split(" (in activation", 1)[0]
    return text.splitlines()[0] if text else type(err).__name__
