"""`mlirpipe init`'s reading of lit configs and its guesses, from strings."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.ini_edit import EditRefused, fill_blank, ini_edit, toml_edit
from pytest_mlirpipe.cli.init import Found, _say_found, _unreadable, guess, ini_block
from pytest_mlirpipe.filetests.needs import ConfigReadError, needs_of, read_needs
from pytest_mlirpipe.filetests.site import SiteValueError, machine_values, parse_site_line

NOTHING = Found(Path("/repo"), (Path("test"),), (), None, (), None)
TOOLS = Found(
    Path("/repo"),
    (Path("test"),),
    (),
    Path("build"),
    (Path("build/bin/foo-opt"),),
    Path("/usr/lib/llvm-22/bin/FileCheck"),
)


def test_names_read_but_never_set_are_needed_in_order_of_first_use() -> None:
    needs = needs_of(
        [
            ("lit.cfg.py", "config.a = config.x_obj_root\nconfig.suffixes = {'.mlir'}\n"),
            ("sub/lit.local.cfg", "if not config.enable_y:\n    config.unsupported = True\n"),
            ("b/lit.local.cfg", "config.a2 = getattr(config, 'maybe', 1)\nconfig.a\n"),
        ]
    )
    assert [(n.name, n.path, n.line) for n in needs.attributes] == [
        ("x_obj_root", "lit.cfg.py", 1),
        ("enable_y", "sub/lit.local.cfg", 1),
    ]
    assert needs.llvm_initialize is None


def test_llvm_config_without_initialize_is_a_need_and_so_is_its_tools_dir() -> None:
    text = "from lit.llvm import llvm_config\n\nllvm_config.use_default_substitutions()\n"
    needs = needs_of([("lit.cfg.py", text)])
    assert [n.name for n in needs.attributes] == ["llvm_tools_dir"]
    assert (needs.llvm_initialize.path, needs.llvm_initialize.line) == ("lit.cfg.py", 3)
    initialized = needs_of([("lit.cfg.py", "import lit.llvm\nlit.llvm.initialize(a, b)\n" + text)])
    assert initialized.llvm_initialize is None


def test_a_config_that_is_not_utf8_is_named_without_a_line(tmp_path) -> None:
    (tmp_path / "lit.cfg").write_bytes(b"config.name = '\xff'\n")
    with pytest.raises(ConfigReadError) as error:
        read_needs([tmp_path / "lit.cfg"])
    assert _unreadable(tmp_path, error.value) == (
        "lit.cfg: error: not UTF-8 text (invalid start byte): lit cannot load this config"
        " either; fix it, then run mlirpipe init again\n"
    )


def test_setattr_counts_as_setting() -> None:
    needs = needs_of([("c", "setattr(config, 'v_dir', 1)\nprint(config.v_dir)\n")])
    assert needs.attributes == ()


@pytest.mark.parametrize(
    ("name", "found", "expected"),
    [
        ("foo_obj_root", TOOLS, ("build", "the build folder of build/bin/foo-opt")),
        ("foo_tools_dir", TOOLS, ("build/bin", "where foo-opt is")),
        (
            "llvm_tools_dir",
            TOOLS,
            (
                "/usr/lib/llvm-22/bin",
                "where FileCheck is (/usr/lib/llvm-22/bin/FileCheck), outside the repository:"
                " found again when the suite loads, not written",
            ),
        ),
        (
            "foo_obj_root",
            NOTHING,
            ("build", "no *-opt tool found in a build folder: set it to your build folder"),
        ),
        (
            "foo_tools_dir",
            NOTHING,
            ("", "no *-opt tool found in a build folder: set it to your tools' folder"),
        ),
        (
            "llvm_tools_dir",
            NOTHING,
            ("", "no LLVM FileCheck found: set it to the folder of FileCheck, not and count"),
        ),
        ("foo_src_root", NOTHING, (".", "the repository")),
        ("have_zlib", NOTHING, ("False", "a feature: guessed off, see below")),
        ("llvm_shlib_ext", NOTHING, (".so", "this platform's")),
        ("frobnicate_level", NOTHING, ("", "no guess: set it")),
    ],
)
def test_each_name_gets_a_guess_and_the_reason_for_it(name, found, expected) -> None:
    assert guess(name, found) == expected


def test_the_machines_values_are_found_when_the_suite_loads(tmp_path, monkeypatch) -> None:
    import sys

    llvm = tmp_path / "llvm" / "bin"
    llvm.mkdir(parents=True)
    (llvm / "FileCheck").symlink_to("/bin/true")  # a native program, as LLVM's is
    (tmp_path / "FileCheck").write_text("#!/bin/sh\n")  # a script first on PATH: not LLVM's
    (tmp_path / "FileCheck").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{llvm}:/usr/bin:/bin")
    assert machine_values() == {"python_executable": sys.executable, "llvm_tools_dir": str(llvm)}
    assert guess("python_executable", NOTHING) == (
        sys.executable,
        "the Python that runs lit or pytest: set when the suite loads, not written",
    )


def test_host_os_is_this_machines() -> None:
    import platform

    assert guess("host_os", NOTHING) == (platform.system(), "this machine")


@pytest.mark.parametrize(("machine", "expected"), [("AMD64", "x86_64"), ("aarch64", "aarch64")])
def test_host_arch_is_this_machines_in_llvms_spelling(monkeypatch, machine, expected) -> None:
    import platform

    monkeypatch.setattr(platform, "machine", lambda: machine)
    assert guess("host_arch", NOTHING) == (expected, "this machine's, as LLVM spells it")


def test_missing_tools_are_said() -> None:
    out = io.StringIO()
    _say_found(NOTHING, out)
    assert out.getvalue().splitlines() == [
        "mlirpipe init: lit suite test/ (test/lit.cfg.py, 0 lit.local.cfg)",
        "mlirpipe init: no *-opt tool in a build folder (build*/**/bin/*-opt)",
        "mlirpipe init: no LLVM FileCheck found (install LLVM's tools, e.g. llvm-22-tools)",
    ]


def test_the_ini_block_is_toml_with_one_line_per_value() -> None:
    block = ini_block((Path("test"),), ['a_dir = "x y"', "b = True"])
    assert block == (
        '[tool.pytest.ini_options]\ntestpaths = ["test"]\nmlirpipe_lit_site = [\n'
        '    "a_dir = \\"x y\\"",\n    "b = True",\n]\n'
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("foo_obj_root = build", ("foo_obj_root", "/repo/build")),
        ("llvm_tools_dir = /usr/lib/llvm-22/bin", ("llvm_tools_dir", "/usr/lib/llvm-22/bin")),
        ("enable_bar = True", ("enable_bar", True)),
        ("jobs = 3", ("jobs", 3)),
        ("host_os = Linux", ("host_os", "Linux")),
        ("name = 'a b'", ("name", "a b")),
        ("empty_dir =", ("empty_dir", "")),
    ],
)
def test_site_lines_are_literals_or_text_and_paths_are_from_the_ini(line, expected) -> None:
    assert parse_site_line(line, Path("/repo")) == expected


@pytest.mark.parametrize("line", ["enable_bar", "9x = 1", " = 2"])
def test_a_site_line_that_is_not_name_equals_value_is_refused(line) -> None:
    with pytest.raises(SiteValueError) as info:
        parse_site_line(line, Path("/repo"))
    assert str(info.value) == f"{line.strip()!r} is not NAME = VALUE"


KEYS = {"testpaths": ["test"], "mlirpipe_lit_site": ["a = 1", "b = 2"]}
SITE = 'mlirpipe_lit_site = [\n    "a = 1",\n    "b = 2",\n]\n'


def test_keys_go_into_an_ini_options_table_under_a_tool_pytest_table() -> None:
    text = '[tool.pytest]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    edit = toml_edit(text, KEYS)
    assert edit.text == text + 'testpaths = ["test"]\n' + SITE
    assert (edit.added, edit.kept) == (("testpaths", "mlirpipe_lit_site"), ())


def test_keys_in_an_inline_table_stay_on_its_line() -> None:
    edit = toml_edit('[tool.pytest]\nini_options = {addopts = "-q"}\n', KEYS)
    assert edit.text == (
        '[tool.pytest]\nini_options = {addopts = "-q",testpaths = ["test"],'
        'mlirpipe_lit_site = ["a = 1", "b = 2"]}\n'
    )


def test_a_pyproject_without_the_table_gets_it_at_the_end() -> None:
    edit = toml_edit('[project]\nname = "foo"', KEYS)
    assert edit.text == (
        '[project]\nname = "foo"\n\n[tool.pytest.ini_options]\ntestpaths = ["test"]\n' + SITE
    )


def test_a_pyproject_that_is_not_toml_is_not_edited() -> None:
    with pytest.raises(EditRefused) as refused:
        toml_edit("[project\n", KEYS)
    assert str(refused.value) == (
        "it is not valid TOML (pyproject.toml:1:9: Expected ']' at the end of a table"
        " declaration): fix it first"
    )


def test_an_ini_file_without_the_section_gets_it_at_the_end() -> None:
    edit = ini_edit("[metadata]\nname = foo", "tool:pytest", KEYS)
    assert edit.text == (
        "[metadata]\nname = foo\n\n[tool:pytest]\ntestpaths = test\n"
        "mlirpipe_lit_site =\n    a = 1\n    b = 2\n"
    )


def test_an_ini_section_header_on_the_last_line_gets_its_keys_after_it() -> None:
    edit = ini_edit("[pytest]", "pytest", {"testpaths": ["test"]})
    assert edit.text == "[pytest]\ntestpaths = test\n"


def test_an_ini_file_that_does_not_parse_is_not_edited() -> None:
    with pytest.raises(EditRefused) as refused:
        ini_edit("  indented = before any section\n", "pytest", KEYS, "tox.ini")
    assert str(refused.value) == (
        "it does not parse as an ini file (iniconfig: tox.ini:1: unexpected value continuation):"
        " fix it first"
    )


def test_ini_words_go_on_one_line_and_name_value_lines_one_per_line() -> None:
    edit = ini_edit("[pytest]\n", "pytest", {"testpaths": ["a", "b"], "site": ["x = 1"]})
    assert edit.text == "[pytest]\ntestpaths = a b\nsite =\n    x = 1\n"


def test_toml_keys_go_after_the_tables_last_key_not_after_the_next_tables_comment() -> None:
    text = '[tool.pytest.ini_options]\naddopts = "-q"  # quiet\n\n# ruff\n[tool.ruff]\nx = 1\n'
    edit = toml_edit(text, KEYS)
    assert edit.text == text.replace("# quiet\n", '# quiet\ntestpaths = ["test"]\n' + SITE)


def test_a_table_that_would_clash_with_the_one_added_is_named_by_its_line() -> None:
    text = '[project]\nname = "foo"\n\n[[tool.pytest.ini_options]]\naddopts = "-q"\n'
    with pytest.raises(EditRefused) as refused:
        toml_edit(text, KEYS)
    assert str(refused.value) == (
        "with the keys added it would not parse as TOML (Cannot declare ('tool', 'pytest',"
        " 'ini_options') twice, because of pyproject.toml:4)"
    )


def test_keys_that_would_land_in_a_sub_table_are_not_added() -> None:
    text = '[tool.pytest.ini_options]\naddopts = "-q"\n[tool.pytest.ini_options.x]\n'
    with pytest.raises(EditRefused) as refused:
        toml_edit(text, KEYS)
    assert str(refused.value) == ("the keys added would not be read in [tool.pytest.ini_options]")


def test_an_edit_that_would_change_another_setting_is_not_made(monkeypatch) -> None:
    import tomlkit

    dumps = tomlkit.dumps
    monkeypatch.setattr(tomlkit, "dumps", lambda doc: dumps(doc).replace('"-q"', '"-x"'))
    with pytest.raises(EditRefused) as refused:
        toml_edit('[tool.pytest.ini_options]\naddopts = "-q"\n', KEYS)
    assert str(refused.value) == "the edit would change other settings of the file"


def test_ini_lines_that_would_read_back_otherwise_are_not_added() -> None:
    with pytest.raises(EditRefused) as refused:
        ini_edit("[pytest]\n", "pytest", {"site": ["#a = 1", "b = 2"]})
    assert str(refused.value) == "the lines added would not be read as site in [pytest]"


def test_ini_lines_that_would_not_parse_are_not_added(monkeypatch) -> None:
    from pytest_mlirpipe.cli import ini_edit as module

    monkeypatch.setattr(module, "ini_key", lambda key, values: f"  {key}\n")
    with pytest.raises(EditRefused) as refused:
        ini_edit("[pytest]\n", "pytest", {"site": ["a = 1"]}, "tox.ini")
    assert str(refused.value) == (
        "with the lines added it would not parse (iniconfig: tox.ini:2: unexpected value"
        " continuation)"
    )


@pytest.mark.parametrize(
    ("text", "toml", "expected"),
    [
        ('s = [\n    "a = 1",\n    "b_dir = ",\n]\n', True, '    "b_dir = x y",\n'),
        ("[pytest]\ns =\n    a = 1\n    b_dir =\r\n", False, "    b_dir = x y\r\n"),
    ],
)
def test_a_blank_site_line_is_filled_in_place(text, toml, expected) -> None:
    filled = fill_blank(text, "b_dir", "x y", toml)
    assert filled is not None and filled.endswith(expected + ("]\n" if toml else ""))
    assert filled.replace(expected, "") == text.replace(
        text.splitlines(True)[-2 if toml else -1], ""
    )


def test_a_site_line_with_a_value_is_not_filled() -> None:
    assert fill_blank('s = ["b_dir = mine"]\n', "b_dir", "x", True) is None
