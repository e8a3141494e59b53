"""The package's shape: imports point one way, down the layers, and no module imports itself
back through others (imports inside functions count)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_mlirpipe

PACKAGE = "pytest_mlirpipe"
ROOT = Path(pytest_mlirpipe.__file__).parent

# Lowest first: a module may import its own layer and the layers before it, never a later one.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "core",
        (
            "model",
            "errors",
            "atomic",
            "capture",
            "contain",
            "mlir_env",
            "options",
            "expectations",
            "callers",
        ),
    ),
    ("lowering", ("lowering",)),
    ("execution", ("execution",)),
    ("tools", ("tools",)),
    ("filetests", ("filetests",)),
    (
        "shell",
        (
            "cli",
            "plugin",
            "items",
            "ordering",
            "sharding",
            "rootdir_guard",
            "pool",
            "lit_controls_plugin",
            "fixtures",
            "backend",
            "expectations_plugin",
        ),
    ),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            # `from pkg import sub` imports the submodule `pkg.sub`; other names come from pkg.
            subs = {f"{target}.{a.name}" for a in node.names} & modules.keys()
            found.update(subs or {target})
    return {m for m in found if m in modules and m != name}


def layer_of(name: str) -> int:
    first = name.split(".")[1] if "." in name else ""
    for index, (_, tops) in enumerate(LAYERS):
        if first in tops:
            return index
    raise AssertionError(f"{name}: not in any layer of test_layers.LAYERS; add it to one")


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    # A package's __init__ that only holds a docstring is not a layer of its own.
    return {n: deps for n, deps in graph.items() if n != PACKAGE}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for name, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if dep != PACKAGE and layer_of(dep) > layer_of(name):
                found.append(
                    f"{name} ({LAYERS[layer_of(name)][0]}) imports {dep} "
                    f"({LAYERS[layer_of(dep)][0]})"
                )
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_module_is_in_a_layer():
    for name in import_graph():
        layer_of(name)


def test_no_module_imports_a_later_layer():
    upward = upward_imports(import_graph())
    assert not upward, "imports that point up the layers:\n  " + "\n  ".join(upward)


def test_no_import_cycles_even_through_function_level_imports():
    found = cycles(import_graph())
    assert not found, "import cycles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_cycles_and_only_cycles(graph, expected):
    assert cycles(graph) == expected


def test_the_layer_check_reports_an_upward_import():
    graph = {f"{PACKAGE}.lowering.stages": {f"{PACKAGE}.execution.native"}}
    assert upward_imports(graph) == [
        f"{PACKAGE}.lowering.stages (lowering) imports {PACKAGE}.execution.native (execution)"
    ]


def test_function_level_imports_are_seen(tmp_path):
    modules = {f"{PACKAGE}.a": tmp_path / "a.py", f"{PACKAGE}.b": tmp_path / "b.py"}
    (tmp_path / "a.py").write_text("def f():\n    from . import b\n", encoding="utf-8")
    assert imports_of(f"{PACKAGE}.a", tmp_path / "a.py", modules) == {f"{PACKAGE}.b"}
