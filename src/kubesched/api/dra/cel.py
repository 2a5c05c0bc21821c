"""Device selectors in CEL, as upstream k8s.io/dynamic-resource-allocation/cel evaluates them.

The expressions come from DeviceClasses and claims (``selectors[].cel.expression``) and see one
variable, ``device``: ``driver``, ``attributes`` (domain -> id -> value) and ``capacity`` (domain
-> id -> quantity), ``allowMultipleAllocations``. An unqualified attribute or capacity name is in
the driver's domain, as upstream's ``device.attributes["<driver>"].<id>`` reads it.

The CEL implementation is ``cel-python`` (module ``celpy``, PyPI ``cel-python``): maintained by
Cloud Custodian, pure Python (no native wheels to build on a user's platform), with the standard
macros and map selection the selectors use; :mod:`.cel_eval` adds what the Kubernetes environment
has beyond it (a cost limit, ``cel.bind``, ``sets.*``, cel-go's error wording), :mod:`.cel_ext` and
:mod:`.cel_library` its libraries. It evaluates an expression in about 0.2 ms, so results are cached
per expression and device (a device's attributes are fixed while its slice is).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import celpy
from celpy import celtypes

from .cel_eval import BudgetRunner, CostLimitExceeded, cel_type_name, literal_type
from .cel_ext import FUNCTIONS as EXT_FUNCTIONS
from .cel_ext import SETS
from .cel_library import FUNCTIONS as K8S_FUNCTIONS
from .cel_library import Quantity, Semver

FUNCTIONS = {**EXT_FUNCTIONS, **K8S_FUNCTIONS}


class _Runner(BudgetRunner):
    sets = SETS


class _Domains(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: a domain no attribute is in reads as an empty
    map (upstream's ``device.attributes["no-such-domain"]`` is ``{}``, so a missing id is the
    error ``no such key: <id>``), while ``"<domain>" in device.attributes`` stays false."""

    def __missing__(self, key: Any) -> celtypes.MapType:
        return celtypes.MapType()

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
            "attributes": _Domains({celtypes.StringType(d): cel_map(v) for d, v in attributes.items()}),
            "capacity": _Domains({celtypes.StringType(d): cel_map(v) for d, v in capacity.items()}),
            "allowMultipleAllocations": celtypes.BoolType(device.get("allowMultipleAllocations") is True),
        }
    )


class CELCache:
    """Compiled expressions, and each expression's result per device, shared across cycles
    (upstream ``cel.Cache`` keeps the compiled programs)."""

    def __init__(self, max_results: int = 1 << 18) -> None:
        self._env = celpy.Environment(runner_class=_Runner)
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
                ast = self._env.compile(expression)
            except Exception as err:  # celpy raises its own parse errors
                detail = str(err).splitlines()[0] if str(err) else type(err).__name__
                message = f"compilation failed: Syntax error: {detail}"
                self._errors[expression] = message
                raise CELError(message) from None
            wrong = literal_type(ast)
            if wrong is not None:
                message = f"compilation failed: must evaluate to bool or the unknown type, not {wrong}"
                self._errors[expression] = message
                raise CELError(message)
            prog = self._env.program(ast, functions=FUNCTIONS)
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
            except CostLimitExceeded as err:
                # Remembered for the expression, not the device: it would spend the whole
                # budget again on every node's devices.
                cached = self._errors[expression] = f"runtime error: {err}"
            except Exception as err:
                cached = f"runtime error: {_first_line(err)}"
            else:
                cached = (
                    bool(value)
                    if isinstance(value, (bool, celtypes.BoolType))
                    else f"CEL result of type {_cel_type(value)} could not be converted to bool"
                )
            if len(self._results) >= self._max_results:
                self._results.clear()
            self._results[(expression, key)] = cached
        if isinstance(cached, str):
            raise CELError(cached)
        return cached


def _cel_type(value: object) -> str:
    """CEL's name of a result's type (``list``, ``int``, ...), for the non-bool message."""
    name = cel_type_name(value)
    return name.removeprefix("types.").lower() if name.startswith("types.") else name


def _first_line(err: BaseException) -> str:
    """The error's first line in cel-go's words where they differ (``no such key: <k>``), without
    the activation dump cel-python appends to an undeclared reference (which would print every
    variable and function into a pod's message)."""
    args: tuple[Any, ...] = tuple(getattr(err, "args", ()))
    if len(args) >= 2 and args[1] is KeyError:
        text = str(args[0])
        if text.startswith("no such member in mapping: "):
            return "no such key: " + text.removeprefix("no such member in mapping: ").strip("'")
        if text == "no such key" and len(args) >= 3 and args[2]:
            return f"no such key: {args[2][0]}"
    wrapped = len(args) >= 3 and args[0] == "return error for overflow" and bool(args[2])
    if wrapped and isinstance(args[1], type) and issubclass(args[1], ValueError):
        # cel-python's wrapping of a library function's ValueError: the function's own message.
        return str(args[2][0]).splitlines()[0]
    text = str(args[0]) if args else str(err)
    text = text.split(" (in activation", 1)[0]
    return text.splitlines()[0] if text else type(err).__name__
