"""This machine's answers to site values: its C and C++ compilers, and the folder and features of
an installed Python package, each with its evidence (the packages are found, never imported)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

# (value, why): value "" when there is no answer.
Answer = tuple[str, str]

# host_cxx and host_cc as a CMake build gives them: the compiler variable, else one on PATH.
HOST_COMPILERS = {
    "host_cxx": ("CXX", ("c++", "g++", "clang++")),
    "host_cc": ("CC", ("cc", "gcc", "clang")),
}
PACKAGES_DIR = re.compile(r"^(?P<project>\w+)_python_packages_dir$")
# enable_FEATURE, or PROJECT_enable_FEATURE (torch_mlir_enable_refbackend).
FEATURE_NAME = re.compile(r"^(?:(?P<project>\w+)_)?enable_(?P<feature>\w+)$")
BINDINGS = "bindings_python"
# The native module of MLIR's Python bindings, in the package that ships them.
BINDINGS_MODULE = ("_mlir_libs", "_mlir")
# Names of the project's own build values (torch_mlir_obj_root): their prefix names the project.
PROJECT_NAME = re.compile(
    r"^(?P<project>\w+?)_(obj_root|src_root|binary_dir|source_dir|build_dir|tools_dir"
    r"|python_packages_dir|enable_\w+)$"
)
# Prefixes of the values of LLVM's own build (llvm_tools_dir, lit_tools_dir): not the project.
NOT_PROJECTS = ("llvm", "lit")
# How deep under the package a module named after a feature is looked for (_mlir_libs/_stablehlo).
DEPTH = 2


def is_machine_name(name: str) -> bool:
    """Whether `config.NAME` holds a path of this machine that `machine_answer` gives."""
    return name in HOST_COMPILERS or PACKAGES_DIR.match(name) is not None


def machine_answer(name: str) -> Answer:
    """This machine's value of a name `is_machine_name` accepts."""
    if name in HOST_COMPILERS:
        return host_compiler(name)
    match = PACKAGES_DIR.match(name)
    assert match is not None, name
    return packages_dir(match["project"])


def host_compiler(name: str) -> Answer:
    """host_cxx (host_cc): $CXX ($CC), else the first of c++, g++, clang++ (cc, gcc, clang) on
    PATH."""
    variable, programs = HOST_COMPILERS[name]
    given = os.environ.get(variable, "").strip()
    if given:
        return given, f"${variable}"
    listed = ", ".join(programs)
    for program in programs:
        found = shutil.which(program)
        if found:
            return found, f"the first of {listed} on PATH"
    return "", f"no ${variable} and none of {listed} on PATH: set it to your compiler"


def package_folders(project: str) -> tuple[Path, ...]:
    """The folders of the installed top-level package `project` (several for a namespace
    package), found as `import` would find it, without importing it; () when there is none."""
    if not project.isidentifier():
        return ()
    try:
        spec = importlib.util.find_spec(project)
    except (ImportError, ValueError):  # ValueError: imported with no __spec__
        return ()
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(Path(p) for p in spec.submodule_search_locations)


def packages_dir(project: str) -> Answer:
    """The folder that holds the installed package `project` (what PYTHONPATH needs)."""
    folders = package_folders(project)
    if not folders:
        return (
            "",
            f"no Python package {project} is installed here: set it to the folder that holds it",
        )
    return str(folders[0].parent), f"the folder that holds the installed package {project}"


def package_feature(project: str, feature: str) -> Answer | None:
    """True when the installed package `project` holds a module or subpackage named after
    `feature` (a leading _ aside; for bindings_python, MLIR's Python bindings), else False,
    with the evidence; None when `project` is not installed."""
    folders = package_folders(project)
    if not folders:
        return None
    where = f"{project} ({folders[0].parent})"
    if feature == BINDINGS:
        found = _bindings(project, folders)
        if found is not None:
            return "True", f"{project} has its Python bindings: {_shown(found, folders)}"
        return "False", f"{where} has no Python bindings ({'.'.join((project, *BINDINGS_MODULE))})"
    modules = list(_modules(folders))
    named = [m for m in modules if _module_name(m).lstrip("_").lower() == feature.lower()]
    if named:
        return "True", f"{project} has {_shown(named[0], folders)}"
    why = f"{where} has no module named {feature}"
    words = feature.lower().split("_")
    near = [_shown(m, folders) for m in modules if _holds(_module_name(m), words)]
    if near:
        why += f"; {', '.join(near[:2])} only come close: set it to True if that is the feature"
    return "False", why


def installed_project(names: Iterable[str]) -> str | None:
    """The installed package that the project prefix of the names points to (torch_mlir for
    torch_mlir_obj_root); None when none is installed, or several are."""
    prefixes = [m["project"] for m in map(PROJECT_NAME.match, names) if m is not None]
    projects = dict.fromkeys(p for p in prefixes if p not in NOT_PROJECTS)
    installed = [p for p in projects if package_folders(p)]
    return installed[0] if len(installed) == 1 else None


def _bindings(project: str, folders: tuple[Path, ...]) -> Path | None:
    """Where the import spec of PROJECT._mlir_libs._mlir is, found without importing."""
    name, path = project, [str(f) for f in folders]
    spec = None
    for part in BINDINGS_MODULE:
        name = f"{name}.{part}"
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        path = list(spec.submodule_search_locations or [])
    assert spec is not None
    if spec.origin and spec.has_location:
        return Path(spec.origin)
    return Path(path[0]) if path else None


def _modules(folders: tuple[Path, ...], depth: int = DEPTH) -> Iterable[Path]:
    """The modules (source or extension files) and subpackage folders under `folders`, `depth`
    levels down at most."""
    suffixes = (*importlib.machinery.SOURCE_SUFFIXES, *importlib.machinery.EXTENSION_SUFFIXES)
    for folder in folders:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir() and entry.name.isidentifier() and not entry.name.startswith("__"):
                yield entry
                if depth > 1:
                    yield from _modules((entry,), depth - 1)
            elif entry.name.endswith(suffixes) and not entry.name.startswith("__"):
                yield entry


def _module_name(path: Path) -> str:
    return path.name.split(".", 1)[0]


def _holds(name: str, words: list[str]) -> bool:
    """Whether the words of a module's name hold `words`, in a row (onnx in onnx_importer)."""
    have = name.lstrip("_").lower().split("_")
    return any(have[i : i + len(words)] == words for i in range(len(have) - len(words) + 1))


def _shown(path: Path, folders: tuple[Path, ...]) -> str:
    """`path` from the folder that holds the package (torch_mlir/_mlir_libs/_mlir...so)."""
    for folder in folders:
        if path.is_relative_to(folder):
            return str(path.relative_to(folder.parent))
    return str(path)
