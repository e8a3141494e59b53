"""This machine's answers to site values: its C and C++ compilers and the folder of an installed
Python package, each with its evidence (the package is found, never imported)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path

# (value, why): value "" when there is no answer.
Answer = tuple[str, str]

# host_cxx and host_cc as a CMake build gives them: the compiler variable, else one on PATH.
HOST_COMPILERS = {
    "host_cxx": ("CXX", ("c++", "g++", "clang++")),
    "host_cc": ("CC", ("cc", "gcc", "clang")),
}
PACKAGES_DIR = re.compile(r"^(?P<project>\w+)_python_packages_dir$")


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
