"""The layer contract (issue 12): every import points down, and no module imports itself in a circle.

Read from the source, every import counted (also those inside functions, which hide a cycle from the
interpreter but not from a reader). Layers, lowest first; a module may import its own layer or lower:

    api < config < framework < {plugins, backend} < scheduler < {sim, kube} < {bench, cli, testing}

Beyond the order, FORBIDDEN_RULES names imports that point down but are still wrong (a backend
importing the scheduler, the simulator importing the real cluster). The KNOWN_* lists hold accepted
exceptions; the test fails on a new violation and on a listed one that no longer exists, so they
only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: (layer name, module prefixes), lowest first.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("api", ("kubesched.api", "kubesched.gctune", "kubesched.gorand", "kubesched.logs")),
    ("config", ("kubesched.config",)),
    ("framework", ("kubesched.framework", "kubesched.metrics")),
    ("plugins, backend", ("kubesched.plugins", "kubesched.backend")),
    ("scheduler", ("kubesched.scheduler", "kubesched.explain")),
    ("sim, kube", ("kubesched.sim", "kubesched.kube")),
    ("bench, cli, testing", ("kubesched.bench", "kubesched.cli", "kubesched.testing")),
]

#: Upward imports that exist today (importer, imported module). Empty: keep it so.
KNOWN_UPWARD: set[tuple[str, str]] = set()

#: Imports that point down but are still wrong. Empty: keep it so.
KNOWN_FORBIDDEN: set[tuple[str, str]] = set()
FORBIDDEN_RULES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    # A backend never imports the scheduler: the scheduler registers its handlers with the backend
    # (framework/cluster.py's EventHandlers), as upstream's eventhandlers.go registers with the informers.
    (("kubesched.sim.cluster", "kubesched.kube.cluster"), ("kubesched.scheduler",)),
    # The bench command and the CLI must run after a plain install: nothing they import needs the
    # test extra (the control-plane harness is kubesched.kube.controlplane, behind its own extra).
    (("kubesched.bench", "kubesched.cli"), ("kubesched.testing",)),
    # The simulator and the real cluster are two worlds: neither imports the other.
    (("kubesched.sim",), ("kubesched.kube",)),
    (("kubesched.kube",), ("kubesched.sim",)),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [f"{target}.{a.name}" for a in node.names]
            else:
                target = node.module or ""
                names = [f"{target}.{a.name}" for a in node.names]
            if target.startswith("kubesched"):
                # "from kubesched.x import y" may name a submodule y: count the deepest module that exists.
                out.update(n if _is_module(n) else target for n in names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("kubesched"))
    out.discard(name)
    return out


def _is_module(name: str) -> bool:
    p = SRC.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    if module == "kubesched":
        return 0
    assert best >= 0, f"{module}: in no layer; add it to LAYERS"
    return best


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(SRC.rglob("*.py"))}


def test_every_module_has_a_layer() -> None:
    for module in graph():
        layer_of(module)


def test_imports_point_down() -> None:
    upward = {
        (m, t)
        for m, targets in graph().items()
        for t in targets
        if layer_of(t) > layer_of(m)
    }
    new = sorted(upward - KNOWN_UPWARD)
    gone = sorted(KNOWN_UPWARD - upward)
    assert not new, "imports from a lower layer to a higher one:\n" + "\n".join(
        f"  {m} ({LAYERS[layer_of(m)][0]}) -> {t} ({LAYERS[layer_of(t)][0]})" for m, t in new)
    assert not gone, "fixed, remove from KNOWN_UPWARD: " + ", ".join(f"{m} -> {t}" for m, t in gone)


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_forbidden_imports() -> None:
    found = {
        (m, t)
        for m, targets in graph().items()
        for t in targets
        for importers, imported in FORBIDDEN_RULES
        if _under(m, importers) and _under(t, imported)
    }
    assert sorted(found - KNOWN_FORBIDDEN) == []
    assert sorted(KNOWN_FORBIDDEN - found) == [], "fixed: remove from KNOWN_FORBIDDEN"


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in g:
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(g.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, todo = work[-1]
            if todo:
                w = todo.pop()
                if w not in g:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, sorted(g.get(w, ()))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


#: Import cycles that exist today. Empty: keep it so.
KNOWN_CYCLES: list[list[str]] = []


def test_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_new_import_cycles() -> None:
    found = cycles(graph())
    assert found == KNOWN_CYCLES, "import cycles:\n" + "\n".join("  " + " <-> ".join(c) for c in found)
