"""`mlirpipe init`'s guesses that this machine answers (host_cxx, a package's folder and
features), and the same values found again when a suite loads, from a fake environment."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.init import FEATURE_OFF, Found, guess
from pytest_mlirpipe.filetests.machine import installed_project
from pytest_mlirpipe.filetests.needs import suite_needs
from pytest_mlirpipe.filetests.site import load_site, machine_values

NOTHING = Found(Path("/repo"), (Path("test"),), (), None, (), None)
AT_LOAD = "found again when the suite loads, not written"
# An installed package of a project as a wheel lays it out: MLIR's Python bindings' native
# module, a dialect's, an importer, a subpackage.
PACKAGE = (
    "__init__.py",
    "_mlir_libs/__init__.py",
    "_mlir_libs/_mlir.so",
    "_mlir_libs/_stablehlo.so",
    "extras/onnx_importer.py",
    "dialects/__init__.py",
)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path holding fakeproj (as PACKAGE) and fakebare (no bindings)."""
    folder = tmp_path / "site-packages"
    for name in PACKAGE:
        (folder / "fakeproj" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "fakeproj" / name).write_text("")
    (folder / "fakebare").mkdir()
    (folder / "fakebare" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(folder))
    return folder


@pytest.fixture
def compilers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holding g++ and clang++ (no c++), and no $CXX or $CC."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("g++", "clang++"):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.delenv("CC", raising=False)
    return folder


def test_host_cxx_is_cxx_when_it_is_set(compilers, monkeypatch) -> None:
    monkeypatch.setenv("CXX", "ccache g++")
    assert guess("host_cxx", NOTHING) == ("ccache g++", f"$CXX: {AT_LOAD}")


def test_host_cxx_is_the_first_cxx_compiler_on_path(compilers) -> None:
    assert guess("host_cxx", NOTHING) == (
        str(compilers / "g++"),
        f"the first of c++, g++, clang++ on PATH: {AT_LOAD}",
    )


def test_host_cc_is_blank_when_there_is_no_c_compiler(compilers) -> None:
    assert guess("host_cc", NOTHING) == (
        "",
        "no $CC and none of cc, gcc, clang on PATH: set it to your compiler",
    )


def test_a_python_packages_dir_is_the_folder_holding_the_installed_package(site) -> None:
    assert guess("fakeproj_python_packages_dir", NOTHING) == (
        str(site),
        f"the folder that holds the installed package fakeproj: {AT_LOAD}",
    )
    assert "fakeproj" not in sys.modules  # found, not imported


def test_a_python_packages_dir_of_a_package_not_installed_is_blank(site) -> None:
    assert guess("nosuchproj_python_packages_dir", NOTHING) == (
        "",
        "no Python package nosuchproj is installed here: set it to the folder that holds it",
    )


@pytest.mark.parametrize(
    ("name", "project", "expected"),
    [
        (
            "fakeproj_enable_stablehlo",
            None,
            ("True", "fakeproj has fakeproj/_mlir_libs/_stablehlo.so"),
        ),
        ("fakeproj_enable_dialects", None, ("True", "fakeproj has fakeproj/dialects")),
        (
            "fakeproj_enable_refbackend",
            None,
            ("False", "fakeproj ({site}) has no module named refbackend"),
        ),
        (
            "fakeproj_enable_onnx",
            None,
            (
                "False",
                "fakeproj ({site}) has no module named onnx; fakeproj/extras/onnx_importer.py"
                " only come close: set it to True if that is the feature",
            ),
        ),
        (
            "enable_bindings_python",
            "fakeproj",
            ("True", "fakeproj has its Python bindings: fakeproj/_mlir_libs/_mlir.so"),
        ),
        (
            "enable_bindings_python",
            "fakebare",
            ("False", "fakebare ({site}) has no Python bindings (fakebare._mlir_libs._mlir)"),
        ),
        ("enable_stablehlo", None, ("False", FEATURE_OFF)),
        ("nosuchproj_enable_stablehlo", "fakeproj", ("False", FEATURE_OFF)),
    ],
)
def test_a_feature_is_on_when_the_projects_package_holds_a_module_named_after_it(
    site, name, project, expected
) -> None:
    found = Found(Path("/repo"), (Path("test"),), (), None, (), None, project)
    assert guess(name, found) == (expected[0], expected[1].format(site=site))
    assert not {"fakeproj", "fakebare"} & sys.modules.keys()


def test_the_project_is_the_one_installed_package_the_configs_values_name(site) -> None:
    assert installed_project(["fakeproj_obj_root", "llvm_tools_dir", "lit_tools_dir"]) == (
        "fakeproj"  # lit is installed too, but lit_tools_dir is LLVM's build's
    )
    assert installed_project(["fakeproj_obj_root", "fakebare_src_root"]) is None
    assert installed_project(["nosuchproj_obj_root", "host_os"]) is None


def test_the_machines_values_that_the_configs_read_are_found_when_the_suite_loads(
    site, compilers
) -> None:
    values = machine_values(
        ["host_cxx", "fakeproj_python_packages_dir", "nosuchproj_python_packages_dir", "x_dir"]
    )
    assert values["host_cxx"] == str(compilers / "g++")
    assert values["fakeproj_python_packages_dir"] == str(site)
    assert not {"nosuchproj_python_packages_dir", "x_dir", "host_cc"} & values.keys()


SUITE = {
    "lit.cfg.py": "config.name = 'X'\nconfig.p = config.fakeproj_python_packages_dir\n",
    "lit.site.cfg.py": "config.never_read_here = config.site_only\n",
    "sub/lit.local.cfg": "if not config.host_cxx:\n    config.unsupported = True\n",
    "Output/lit.local.cfg": "config.host_cc\n",  # lit never goes there
}


def write_suite(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / "test" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "test" / name).write_text(text)
    return root / "test" / "lit.site.cfg.py"


def test_the_names_a_suite_needs_are_read_from_its_configs_but_the_site_config(tmp_path) -> None:
    site_file = write_suite(tmp_path, SUITE)
    assert suite_needs(site_file) == ("fakeproj_python_packages_dir", "host_cxx")
    (tmp_path / "test" / "sub" / "lit.local.cfg").write_text("if config.host_cxx\n")
    assert suite_needs(site_file) == ()  # lit names the error when it loads the config


def test_a_machine_value_left_blank_in_the_ini_is_this_machines_and_one_given_wins(
    tmp_path, site, compilers
) -> None:
    site_file = write_suite(tmp_path, SUITE)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nmlirpipe_lit_site = ["host_cxx =", "fakeproj_python_'
        'packages_dir = mine", "enable_x = False"]\n'
    )
    config = types.SimpleNamespace()
    load_site(config, None, str(site_file))
    assert config.host_cxx == str(compilers / "g++")
    assert config.fakeproj_python_packages_dir == str(tmp_path / "mine")
    assert config.enable_x is False
