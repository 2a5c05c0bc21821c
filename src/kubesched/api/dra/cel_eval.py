"""cel-python's evaluator with the parts of the Kubernetes CEL environment it lacks.

Upstream compiles device selectors in the Kubernetes base environment
(k8s.io/apiserver/pkg/cel/environment/base.go) plus ``cel.bind`` (k8s.io/dynamic-resource-allocation
/cel/compile.go) and runs them under a cost limit (``CELSelectorExpressionMaxCost``, 1,000,000). This
module adds to ``celpy.evaluation.Evaluator``:

- a step budget, so an expression like ``[1..10].all(x, [1..10].all(y, ...))`` nested seven deep
  ends with upstream's ``actual cost limit exceeded`` instead of running for an hour (cel-python
  takes ~7 µs a step). A step is one node of cel-python's parse tree evaluated; an upstream cost
  unit is one or more of them, so the budget refuses no expression upstream accepts below
  ~1/8 of upstream's limit. Selectors in practice cost tens of units.
- the macro ``cel.bind(name, init, expr)`` and the namespaced ``sets.contains/intersects/
  equivalent`` (cel-go ext.Bindings and ext.Sets), which cel-python would read as variables;
- cel-go's wording for the errors a selector's author sees: ``no such key: <k>`` and
  ``got '<type>', expected iterable type``;
- the Kubernetes lists library's ``min()``/``max()`` with no argument (cel-python has its own
  ``min`` macro, which needs two).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, cast

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError, Evaluator

__all__ = ["COST_LIMIT", "BudgetRunner", "CostLimitExceeded", "cel_type_name", "literal_type"]

#: Upstream's resourceapi.CELSelectorExpressionMaxCost, spent here in evaluator steps.
COST_LIMIT = 1_000_000

_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})

#: cel-go's names of the runtime types, for its messages.
_CEL_GO_TYPES: tuple[tuple[type, str], ...] = (
    (celtypes.BoolType, "types.Bool"),
    (celtypes.IntType, "types.Int"),
    (celtypes.UintType, "types.Uint"),
    (celtypes.DoubleType, "types.Double"),
    (celtypes.StringType, "types.String"),
    (celtypes.BytesType, "types.Bytes"),
    (celtypes.ListType, "types.List"),
    (celtypes.MapType, "types.Map"),
)


class CostLimitExceeded(Exception):
    """The step budget ran out (upstream: ``operation cancelled: actual cost limit exceeded``)."""


def cel_type_name(value: object) -> str:
    """cel-go's Go type name of a runtime value (``types.Int``, ``cel.Semver``, ...)."""
    for cls, name in _CEL_GO_TYPES:
        if isinstance(value, cls):
            return name
    kind = type(value).__name__
    return {"Semver": "cel.Semver", "Quantity": "cel.Quantity"}.get(kind, kind)


def literal_type(ast: lark.Tree[Any]) -> str | None:
    """The CEL type of an expression that is one literal and not a bool (``int``, ``string``,
    ...), which upstream's type checker refuses as a selector; None otherwise. cel-python has no
    checker, so this is the part of it that needs no variable types."""
    node: lark.Tree[Any] = ast
    while len(node.children) == 1 and isinstance(node.children[0], lark.Tree):
        if node.data in ("list_lit", "map_lit"):
            return "list" if node.data == "list_lit" else "map"
        node = node.children[0]
    if node.data == "mapinits":
        return "map"
    if node.data != "literal" or not node.children:
        return None
    token = node.children[0]
    kind = getattr(token, "type", "")
    return {
        "INT_LIT": "int",
        "UINT_LIT": "uint",
        "FLOAT_LIT": "double",
        "STRING_LIT": "string",
        "MLSTRING_LIT": "string",
        "BYTES_LIT": "bytes",
        "NULL_LIT": "null_type",
    }.get(kind)


def _ident(tree: object) -> str | None:
    """The name when ``tree`` is a bare identifier (``cel``, ``sets``), else None."""
    node = tree
    while isinstance(node, lark.Tree) and len(node.children) == 1 and isinstance(node.children[0], lark.Tree):
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident" and node.children:
        return str(cast(lark.Token, node.children[0]).value)
    return None


class _Budget:
    __slots__ = ("left",)

    def __init__(self, steps: int) -> None:
        self.left = steps


class _Evaluator(Evaluator):
    def __init__(
        self, ast: lark.Tree[Any], activation: Any, budget: _Budget, sets: dict[str, Callable[..., Any]]
    ) -> None:
        super().__init__(ast, activation=activation)
        self._budget = budget
        self._sets = sets

    def visit_children(self, tree: lark.Tree[Any]) -> list[Any]:
        self._budget.left -= 1
        if self._budget.left < 0:
            raise CostLimitExceeded("operation cancelled: actual cost limit exceeded")
        return cast(list[Any], super().visit_children(tree))

    def sub_evaluator(self, ast: lark.Tree[Any]) -> Evaluator:
        return _Evaluator(ast, self.activation, self._budget, self._sets)

    def _args(self, tree: lark.Tree[Any]) -> list[lark.Tree[Any]]:
        if len(tree.children) < 3 or tree.children[2] is None:
            return []
        return [c for c in cast(Any, tree.children[2]).children if isinstance(c, lark.Tree)]

    def member_dot_arg(self, tree: lark.Tree[Any]) -> Any:
        member_tree, name_token = tree.children[:2]
        name = str(cast(lark.Token, name_token).value)
        namespace = _ident(member_tree)
        args = self._args(tree)
        if namespace == "cel" and name == "bind" and len(args) == 3:
            var = _ident(args[0])
            if var is None:
                return CELEvalError("cel.bind() variable name must be a simple identifier", TypeError, None)
            init = self.visit(args[1])
            if isinstance(init, CELEvalError):
                return init
            return self.sub_evaluator(args[2]).evaluate({var: init})
        if namespace == "sets" and name in self._sets:
            values = [self.visit(a) for a in args]
            for v in values:
                if isinstance(v, CELEvalError):
                    return v
            try:
                return self._sets[name](*values)
            except (TypeError, ValueError) as err:
                return CELEvalError(f"no such overload: sets.{name}: {err}", TypeError, None)
        if name in _MACROS or (name in ("min", "max") and not args):
            target = self.visit(member_tree)
            if isinstance(target, CELEvalError):
                return target
            if name in ("min", "max"):
                return _extreme(target, name)
            if not isinstance(target, (celtypes.ListType, celtypes.MapType)):
                return CELEvalError(f"got '{cel_type_name(target)}', expected iterable type", TypeError, None)
        return super().member_dot_arg(tree)


def _extreme(target: object, name: str) -> Any:
    """The lists library's ``min()``/``max()``: an error on an empty list, as upstream."""
    if not isinstance(target, celtypes.ListType):
        return CELEvalError(f"no such overload: {cel_type_name(target)}.{name}()", TypeError, None)
    if not target:
        return CELEvalError(f"{name}(list) argument must not be empty", ValueError, None)
    try:
        items: list[Any] = list(target)
        return min(items) if name == "min" else max(items)
    except TypeError as err:
        return CELEvalError(f"no such overload: {name}: {err}", TypeError, None)


class BudgetRunner(celpy.InterpretedRunner):
    """Runs one expression with a fresh step budget; the Kubernetes extensions above included."""

    steps: int = COST_LIMIT
    sets: ClassVar[dict[str, Callable[..., Any]]] = {}

    def evaluate(self, context: Any) -> Any:
        evaluator = _Evaluator(self.ast, self.new_activation(), _Budget(self.steps), self.sets)
        return evaluator.evaluate(context)
