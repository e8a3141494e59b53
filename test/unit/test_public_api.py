"""The public surface: every name in `pytest_mlirpipe.__all__` loads, lazily, and the docs and
examples import only those names."""

from __future__ import annotations

import re
import subprocess
import sys
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
