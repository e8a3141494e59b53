"""The public surface: every name in `pytest_mlirpipe.__all__` loads, lazily, and the docs and
examples (the README, every page under docs/, and the Python blocks in them) use only those
names."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pytest_mlirpipe

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", pytest_mlirpipe.__all__)
def test_every_public_name_loads(name):
    assert getattr(pytest_mlirpipe, name) is not None


def test_all_lists_exactly_the_names_the_package_loads():
    assert sorted(pytest_mlirpipe.__all__) == sorted(pytest_mlirpipe._EXPORTS)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="module 'pytest_mlirpipe' has no attribute 'nope'"):
        _ = pytest_mlirpipe.nope


def test_importing_the_package_loads_neither_the_bindings_nor_torch():
    code = (
        "import sys, pytest_mlirpipe\n"
        "print(' '.join(m for m in ('torch', 'torch_mlir', 'lit') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


_IMPORT = re.compile(
    r"^\s*(?:from\s+(pytest_mlirpipe[\w.]*)\s+import|import\s+(pytest_mlirpipe[\w.]*))", re.M
)


def _doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_docs_import_only_the_public_surface():
    internal = [
        f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
        for path in _doc_files()
        for m in _IMPORT.finditer(path.read_text(encoding="utf-8"))
        if (m.group(1) or m.group(2)) != "pytest_mlirpipe"
    ]
    assert internal == []


# A fenced block, also one indented inside a list item: its indent, language and body.
_FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```", re.M | re.S)
# `pytest_mlirpipe.NAME` anywhere in the text (prose, code spans, any block).
_DOTTED = re.compile(r"\bpytest_mlirpipe\.(\w+)")


def _code_blocks(path: Path, language: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [textwrap.dedent(m.group(3)) for m in _FENCE.finditer(text) if m.group(2) == language]


def test_the_docs_checked_are_the_readme_and_every_page_of_the_site():
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    nav = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    assert nav == pages  # every page is in the site's navigation, and the navigation is pages
    assert _doc_files() == [ROOT / "README.md", *sorted(ROOT / "docs" / p for p in pages)]


def test_the_python_blocks_of_the_docs_parse_and_import_only_public_names():
    blocks = {path: _code_blocks(path, "python") for path in _doc_files()}
    assert blocks[ROOT / "README.md"], "the README's Python blocks are checked too"
    internal = []
    for path, sources in blocks.items():
        for source in sources:
            for node in ast.walk(ast.parse(source, filename=str(path))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "pytest_mlirpipe"
                ):
                    names = [a.name for a in node.names]
                    if node.module != "pytest_mlirpipe" or set(names) - set(
                        pytest_mlirpipe.__all__
                    ):
                        internal.append(f"{path.relative_to(ROOT)}: {node.module}: {names}")
                elif isinstance(node, ast.Import):
                    internal += [
                        f"{path.relative_to(ROOT)}: import {a.name}"
                        for a in node.names
                        if a.name.startswith("pytest_mlirpipe.")
                    ]
    assert internal == []


def test_the_docs_name_only_public_attributes_of_the_package():
    internal = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in _doc_files()
        for m in _DOTTED.finditer(path.read_text(encoding="utf-8"))
        if m.group(1) not in pytest_mlirpipe.__all__
    ]
    assert internal == []
