"""`mlirpipe init` on a stand-in compiler repository, then pytest, pytest -n 2 and lit: the
docs' "Adopting it in an existing compiler repository" (docs/guides/adopting.md, and its summary
in the README), command by command."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import lit.llvm
import pytest
from foreign_repo import VERDICTS, build_foreign_repo, shadowed_path
from litrun import lit_verdicts

from pytest_mlirpipe.cli.ini_edit import Edit, EditRefused
from pytest_mlirpipe.cli.init import _check_with_pytest
from pytest_mlirpipe.cli.main import run

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "guides" / "adopting.md"
SECTION = "## Adopting it in an existing compiler repository"
README = ROOT / "README.md"
README_SECTION = "## Using it from another compiler repository"
# lit's codes as pytest outcomes (junit: a failure, a skip, or neither).
OUTCOME = {"PASS": "passed", "FAIL": "failed", "UNSUPPORTED": "skipped"}


def documented_commands(page: Path = GUIDE, heading: str = SECTION) -> list[str]:
    """The first ```sh block after `heading` on `page`, one command a line."""
    text = page.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


@pytest.fixture
def repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # lit.llvm keeps the llvm_config of the last site config that initialized it; an earlier
    # in-process session of this worker must not decide where this repository's config fails.
    monkeypatch.setattr(lit.llvm, "llvm_config", None)
    shadow = build_foreign_repo(pytester.path)
    monkeypatch.setenv("PATH", shadowed_path(shadow))
    return pytester


def mlirpipe(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(list(argv), io.StringIO(), out, err)
    return status, out.getvalue() + err.getvalue()


def junit_outcomes(path: Path) -> dict[str, str]:
    cases = ET.parse(path).getroot().iter("testcase")
    return {c.get("name"): _outcome(c) for c in cases}


def _outcome(case) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


INIT_SAYS = [
    "mlirpipe init: lit suite test/ (test/lit.cfg.py, 4 lit.local.cfg)",
    "mlirpipe init: \\*-opt tools: build/bin/foo-opt",
    "mlirpipe init: FileCheck: build/llvm/bin/FileCheck",
    "mlirpipe init: config.foo_obj_root = build  (test/lit.cfg.py:13 reads it;"
    " the build folder of build/bin/foo-opt)",
    "mlirpipe init: config.llvm_tools_dir = build/llvm/bin  (test/lit.cfg.py:16 reads it;"
    " where FileCheck is (build/llvm/bin/FileCheck))",
    "mlirpipe init: config.foo_tools_dir = build/bin  (test/lit.cfg.py:19 reads it;"
    " where foo-opt is)",
    f"mlirpipe init: config.python_executable = {sys.executable}  (test/lit.cfg.py:20 reads"
    " it; the Python that runs lit or pytest: set when the suite loads, not written)",
    "mlirpipe init: config.enable_bindings_python = False  (test/lit.cfg.py:23 reads it;"
    " a feature: guessed off, see below)",
    "mlirpipe init: config.enable_bar = False  (test/bar/lit.local.cfg:1 reads it; a feature:"
    " guessed off, see below)",
    "mlirpipe init: test/lit.cfg.py:10 uses llvm_config: the site config runs"
    " lit.llvm.initialize first, with lit's internal shell (lit 23's only one)",
    "mlirpipe init: wrote test/lit.site.cfg.py (sets the values above, then loads test/lit.cfg.py)",
    "mlirpipe init: wrote [tool.pytest.ini_options] to pyproject.toml: correct any guess in"
    " mlirpipe_lit_site there",
    "mlirpipe init: features guessed off: enable_bindings_python, enable_bar; the tests that"
    " need them do not run until you turn on those your build has: NAME = True in"
    " mlirpipe_lit_site (pyproject.toml)",
    "mlirpipe init: now run: pytest, pytest -n 2, lit test",
]


def features_off(ini: str) -> str:
    return INIT_SAYS[-2].replace("(pyproject.toml)", f"({ini})")


def turn_features_on(ini: Path) -> None:
    ini.write_text(ini.read_text().replace(" = False", " = True"))


def test_the_documented_path_gives_lits_verdict_under_pytest_and_xdist(repo) -> None:
    commands = documented_commands()
    assert documented_commands(README, README_SECTION) == commands  # the README's summary
    assert commands == [
        "pip install path/to/pytest-mlirpipe pytest-xdist",
        "mlirpipe init",
        "pytest",
        "pytest -n 2",
        "lit test",
    ]
    # The install line (not run here: this environment has the package) names a clone.
    clone = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert clone["project"]["name"] == commands[0].split()[2].rpartition("/")[2]
    status, said = mlirpipe(*commands[1].split()[1:])
    assert (status, said.splitlines()) == (0, [s.replace("\\*", "*") for s in INIT_SAYS])
    turn_features_on(repo.path / "pyproject.toml")  # the stand-in's build has both
    serial = repo.runpytest("-p", "no:cacheprovider", "--junitxml=serial.xml")
    parallel = repo.runpytest_subprocess(*commands[3].split()[1:], "--junitxml=xdist.xml")
    codes, output = lit_verdicts(repo.path, *commands[4].split()[1:])
    assert codes == VERDICTS, output
    expected = {name: OUTCOME[code] for name, code in VERDICTS.items()}
    assert junit_outcomes(repo.path / "serial.xml") == expected, serial.stdout.str()
    assert junit_outcomes(repo.path / "xdist.xml") == expected, parallel.stdout.str()
    assert "shadow" not in serial.stdout.str() + parallel.stdout.str() + output


def test_init_adopts_a_suite_configured_by_lit_cfg(repo) -> None:
    (repo.path / "test" / "lit.cfg.py").rename(repo.path / "test" / "lit.cfg")
    status, said = mlirpipe("init")
    expected = [s.replace("\\*", "*").replace("lit.cfg.py", "lit.cfg") for s in INIT_SAYS]
    assert (status, said.splitlines()) == (0, expected)
    assert "loads test/lit.cfg)" in said and "lit.site.cfg.py (sets" in said
    turn_features_on(repo.path / "pyproject.toml")
    codes, output = lit_verdicts(repo.path, "test")
    assert codes == VERDICTS, output
    repo.runpytest("-p", "no:cacheprovider", "--junitxml=serial.xml")
    expected_outcomes = {name: OUTCOME[code] for name, code in VERDICTS.items()}
    assert junit_outcomes(repo.path / "serial.xml") == expected_outcomes


# A site config of the repository's own, as an older build layout keeps in the source tree.
OWN_SITE = """\
import os

config.foo_obj_root = os.path.join(os.path.dirname(__file__), "..", "build")
lit_config.load_config(config, os.path.join(os.path.dirname(__file__), "lit.cfg.py"))
"""


def test_init_adopts_a_suite_configured_by_its_own_lit_site_cfg_and_keeps_its_values(
    repo,
) -> None:
    (repo.path / "test" / "lit.site.cfg").write_text(OWN_SITE)
    status, said = mlirpipe("init")
    assert status == 0
    lines = said.splitlines()
    assert lines[0] == "mlirpipe init: lit suite test/ (test/lit.site.cfg, 4 lit.local.cfg)"
    assert (
        "foo_obj_root" not in said
        and "foo_obj_root" not in (repo.path / "pyproject.toml").read_text()
    )
    assert (
        "mlirpipe init: wrote test/lit.site.cfg.py (sets the values above, then loads"
        " test/lit.site.cfg)" in lines
    )
    turn_features_on(repo.path / "pyproject.toml")
    codes, output = lit_verdicts(repo.path, "test")
    assert codes == VERDICTS, output


def test_a_config_that_is_not_python_is_one_located_line_and_init_stops(repo) -> None:
    (repo.path / "test" / "bar" / "lit.local.cfg").write_text("if config.enable_bar\n")
    status, said = mlirpipe("init")
    assert status == 1
    assert said.splitlines()[-1] == (
        "test/bar/lit.local.cfg:1: error: SyntaxError: expected ':': lit cannot load this config"
        " either; fix it, then run mlirpipe init again"
    )
    assert "Traceback" not in said
    assert not (repo.path / "pyproject.toml").exists()


NO_SITE = [
    "test/lit.cfg.py:10: lit could not load this suite's config: AttributeError: 'NoneType'"
    " object has no attribute 'use_lit_shell'",
    "  hint: there is no lit.site.cfg.py beside it, and this config reads what a build's"
    " lit.site.cfg.py sets up (config values, lit.llvm's llvm_config): run `mlirpipe init` in"
    " the repository to write one, or run the suite from the build folder",
]


def test_without_init_the_suite_is_one_located_error_and_nothing_is_imported(repo) -> None:
    serial = repo.runpytest("-p", "no:cacheprovider")
    parallel = repo.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    assert serial.ret == pytest.ExitCode.INTERRUPTED
    assert parallel.ret == pytest.ExitCode.TESTS_FAILED  # xdist's status for collection errors
    for result in (serial, parallel):
        result.stdout.fnmatch_lines(["*_ ERROR collecting test _*", *NO_SITE])
        assert result.stdout.str().count("ERROR collecting") == 1, result.stdout.str()
        assert "ModuleNotFoundError" not in result.stdout.str()


def test_a_config_that_raises_after_init_is_located_and_init_is_not_suggested(repo) -> None:
    mlirpipe("init")
    cfg = repo.path / "test" / "lit.cfg.py"
    lines = cfg.read_text().count("\n")
    cfg.write_text(cfg.read_text() + "config.substitutions.append(('%x', config.x_data_dir))\n")
    result = repo.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        [
            f"test/lit.cfg.py:{lines + 1}: lit could not load the suite config"
            " test/lit.site.cfg.py: AttributeError: 'TestingConfig' object has no attribute"
            " 'x_data_dir'",
            "  hint: fix the config there, or correct the value it reads in the"
            " mlirpipe_lit_site lines of the pytest ini file (pyproject.toml)",
        ]
    )
    assert "mlirpipe init" not in result.stdout.str()


def test_a_broken_suite_above_the_rootdir_shows_its_error_once(repo) -> None:
    (repo.path / "test" / "bar" / "pytest.ini").write_text("[pytest]\n")
    (repo.path / "test" / "bar" / "baz.mlir").write_text("// RUN: true\n")
    result = repo.runpytest("-p", "no:cacheprovider", "test/bar")
    result.stdout.fnmatch_lines(["*_ ERROR collecting bar.mlir _*", "test/lit.cfg.py:10: *"])
    assert result.stdout.str().count("ERROR collecting") == 1, result.stdout.str()


# What init writes: relative paths and values, nothing of this machine (no Python, no LLVM
# outside the repository), so that both files can be committed.
PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["test"]
mlirpipe_lit_site = [
    "foo_obj_root = build",
    "llvm_tools_dir = build/llvm/bin",
    "foo_tools_dir = build/bin",
    "enable_bindings_python = False",
    "enable_bar = False",
]
"""


def test_the_site_config_is_no_test_where_the_suite_runs_py_files(repo) -> None:
    cfg = repo.path / "test" / "lit.cfg.py"
    text = cfg.read_text().replace('{".mlir"}', '{".mlir", ".py"}')
    cfg.write_text(text.replace(', "lit.site.cfg.py"]', "]"))  # as a config of a source tree
    mlirpipe("init")
    codes, output = lit_verdicts(repo.path, "test")
    assert "lit.site.cfg.py" not in codes and codes["broken.mlir"] == "FAIL", output
    result = repo.runpytest("-p", "no:cacheprovider", "--collect-only", "-q", "test")
    assert "lit.site.cfg.py" not in result.stdout.str()
    result.stdout.fnmatch_lines(["test/broken.mlir::broken.mlir"])


# lit started without pytest_mlirpipe importable, as where only lit is installed.
LIT_WITHOUT_PLUGIN = """\
import sys


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "pytest_mlirpipe":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Hide())
from lit.main import main

main()
"""


def test_lit_without_the_plugin_says_once_why_the_site_values_are_missing(repo) -> None:
    mlirpipe("init")
    ran = subprocess.run(
        [sys.executable, "-c", LIT_WITHOUT_PLUGIN, "test"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    site = repo.path / "test" / "lit.site.cfg.py"
    lines = (ran.stdout + ran.stderr).splitlines()
    assert sum("note:" in line for line in lines) == 1
    assert lines[0] == (
        f"-c: {site}:10: note: No module named 'pytest_mlirpipe': the mlirpipe_lit_site values"
        " of pyproject.toml are not set, so lit.cfg.py sees only what lit sets; install"
        " pytest-mlirpipe in the Python that runs lit to have them"
    )
    # Then lit's own error: the config reads a value only the site lines give.
    assert "AttributeError: 'TestingConfig' object has no attribute 'foo_obj_root'" in lines
    assert ran.returncode != 0


LIT_THROUGH_HEAD = (
    '"$0" -c "import sys; sys.argv[0] = \'lit\'; from lit.main import main; main()" -v test'
    " | head -2; exit ${PIPESTATUS[0]}"
)


def test_lit_on_an_adopted_suite_ends_at_once_when_its_reader_closes_the_pipe(repo) -> None:
    """`lit -v test | head -2`: lit ends as a Unix tool does (SIGPIPE, status 141), instead of
    hanging with a dead reporting thread."""
    mlirpipe("init")
    ran = subprocess.run(
        ["bash", "-c", LIT_THROUGH_HEAD, sys.executable],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.stdout.startswith("-- Testing: 8 tests, "), ran.stdout
    assert (ran.returncode, ran.stderr) == (141, "")


def test_init_writes_no_path_of_this_machine(repo) -> None:
    mlirpipe("init")
    assert (repo.path / "pyproject.toml").read_text() == PYPROJECT
    site = (repo.path / "test" / "lit.site.cfg.py").read_text()
    assert str(repo.path) not in site and sys.executable not in site
    assert "# It holds no path of this machine: commit it with pyproject.toml." in site


def test_a_filecheck_outside_the_repository_is_found_again_when_the_suite_loads(
    repo, tmp_path_factory, monkeypatch
) -> None:
    machine = tmp_path_factory.mktemp("machine") / "bin"
    (repo.path / "build" / "llvm" / "bin").rename(machine)  # FileCheck, not, count
    if not (machine / "FileCheck").is_symlink():  # LLVM's stand-in script: a native program
        (machine / "FileCheck").unlink()
        (machine / "FileCheck").symlink_to("/bin/true")
    monkeypatch.setenv("PATH", f"{machine}:{os.environ['PATH']}")  # after the Python wrappers
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        f"mlirpipe init: config.llvm_tools_dir = {machine}  (test/lit.cfg.py:16 reads it; where"
        f" FileCheck is ({machine}/FileCheck), outside the repository: found again when the"
        " suite loads, not written)" in said.splitlines()
    )
    assert "llvm_tools_dir" not in (repo.path / "pyproject.toml").read_text()
    result = repo.runpytest("-p", "no:cacheprovider", "test/canonicalize.mlir")
    result.assert_outcomes(passed=1)


def test_init_twice_overwrites_nothing_and_asks_for_nothing(repo) -> None:
    mlirpipe("init")
    site = (repo.path / "test" / "lit.site.cfg.py").read_text()
    status, said = mlirpipe("init")
    assert status == 0
    lines = said.splitlines()
    assert (
        "mlirpipe init: test/lit.site.cfg.py exists: left as it is (remove it to have it"
        " written again)" in lines
    )
    assert lines[-3:] == [
        "mlirpipe init: pyproject.toml already has [tool.pytest.ini_options], with a"
        " mlirpipe_lit_site value for each name: left as it is",
        INIT_SAYS[-2],
        "mlirpipe init: now run: pytest, pytest -n 2, lit test",
    ]
    assert (repo.path / "test" / "lit.site.cfg.py").read_text() == site
    assert (repo.path / "pyproject.toml").read_text() == PYPROJECT


def test_a_site_config_init_would_now_write_otherwise_is_named_so_and_left_as_it_is(repo) -> None:
    mlirpipe("init")
    site = repo.path / "test" / "lit.site.cfg.py"
    older = site.read_text().split("# This file is a config, not a test")[0]
    site.write_text(older)
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: test/lit.site.cfg.py exists, written by mlirpipe init but not as it"
        " writes it now: left as it is (remove it to have it written again)" in said.splitlines()
    )
    assert site.read_text() == older


def test_init_again_keeps_corrected_values_and_asks_only_for_missing_lines(repo) -> None:
    mlirpipe("init")
    ini = repo.path / "pyproject.toml"
    corrected = PYPROJECT.replace("enable_bar = False", "enable_bar = True")
    ini.write_text(corrected.replace('    "foo_tools_dir = build/bin",\n', ""))
    status, said = mlirpipe("init")
    assert status == 1
    assert said.endswith(
        "mlirpipe init: pyproject.toml already has [tool.pytest.ini_options]: left as it is; add"
        " these lines to its mlirpipe_lit_site list:\n"
        '    "foo_tools_dir = build/bin",\n'
        "mlirpipe init: features guessed off: enable_bindings_python; the tests that need them"
        " do not run until you turn on those your build has: NAME = True in mlirpipe_lit_site"
        " (pyproject.toml)\n"
        "mlirpipe init: then, before running pytest or lit: add the lines above to"
        " pyproject.toml\n"
    )
    assert "enable_bar = True" in ini.read_text()


def test_init_adds_its_table_to_an_existing_pyproject(repo) -> None:
    (repo.path / "pyproject.toml").write_text('[project]\nname = "foo"\n')
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added [tool.pytest.ini_options] to pyproject.toml: correct any guess in"
        " mlirpipe_lit_site there" in said.splitlines()
    )
    text = (repo.path / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "foo"\n\n[tool.pytest.ini_options]\n')


def test_init_outside_a_lit_suite_says_there_is_none(pytester: pytest.Pytester) -> None:
    status, said = mlirpipe("init")
    assert status == 1
    assert said == (
        "mlirpipe init: no lit config (lit.cfg.py, lit.cfg, lit.site.cfg.py, lit.site.cfg) under"
        f" {pytester.path}: there is no lit suite to adopt\n"
        "  hint: run it at the repository's root; a new suite needs no init (README: "
        '"Using it from another compiler repository")\n'
    )
    assert f"\n{README_SECTION}\n" in README.read_text(encoding="utf-8")  # the section named


def test_a_malformed_site_line_is_reported_at_collection(repo) -> None:
    mlirpipe("init")
    ini = repo.path / "pyproject.toml"
    ini.write_text(ini.read_text().replace('"enable_bar = False"', '"enable_bar"'))
    result = repo.runpytest("-p", "no:cacheprovider", "test/canonicalize.mlir")
    result.stdout.fnmatch_lines(
        [
            "test/lit.site.cfg.py: lit could not load this suite's config: pyproject.toml:8:"
            " mlirpipe_lit_site: 'enable_bar' is not NAME = VALUE",
            "  hint: write NAME = VALUE, e.g. foo_obj_root = build, or enable_bar = True",
        ]
    )


def test_lit_local_cfg_files_outside_any_suite_are_named_once_as_ignored(repo) -> None:
    (repo.path / "test" / "lit.cfg.py").unlink()
    result = repo.runpytest(
        "-p", "no:cacheprovider", "-W", "default", "--collect-only", "--ignore=test/python"
    )
    result.stdout.fnmatch_lines(
        [
            "test/bar/lit.local.cfg:1",
            "  */test/bar/lit.local.cfg:1: IgnoredLocalConfig: test/bar/lit.local.cfg,"
            " test/c/lit.local.cfg, test/legacy/lit.local.cfg: ignored, as no lit suite holds"
            " them (no lit.cfg.py or lit.site.cfg.py in their folder or above it): their"
            " suffixes, excludes and settings apply to no test",
            "    hint: put a lit.cfg.py in the suite's top folder (README: \"Using it from"
            ' another compiler repository" has a two-line one), or remove these files',
        ]
    )
    assert result.stdout.str().count("IgnoredLocalConfig:") == 1
    section = README.read_text(encoding="utf-8").split(f"\n{README_SECTION}\n", 1)[1]
    assert "```python\nimport os\nfrom pytest_mlirpipe import configure\n" in section  # the one
    strict = repo.runpytest("-p", "no:cacheprovider", "-W", "error", "--ignore=test/python")
    assert strict.ret == pytest.ExitCode.USAGE_ERROR
    strict.stderr.fnmatch_lines(["ERROR: mlirpipe: test/bar/lit.local.cfg, * ignored, as *"])


SITE_INI = """\
mlirpipe_lit_site =
    foo_obj_root = build
    llvm_tools_dir = build/llvm/bin
    foo_tools_dir = build/bin
    enable_bindings_python = False
    enable_bar = False
"""


def test_init_edits_the_pytest_ini_that_wins_over_pyproject(repo) -> None:
    (repo.path / "pytest.ini").write_text("[pytest]\n; kept\naddopts = -q\n")
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added testpaths, mlirpipe_lit_site to [pytest] in pytest.ini: correct"
        " any guess in mlirpipe_lit_site there" in said.splitlines()
    )
    assert (repo.path / "pytest.ini").read_text() == (
        f"[pytest]\ntestpaths = test\n{SITE_INI}; kept\naddopts = -q\n"
    )
    assert not (repo.path / "pyproject.toml").exists()
    result = repo.runpytest("-p", "no:cacheprovider", "test/canonicalize.mlir")
    result.assert_outcomes(passed=1)
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: pytest reads pytest.ini here (it wins over pyproject.toml), with a"
        " mlirpipe_lit_site value for each name: left as it is" in said.splitlines()
    )


def test_init_edits_the_setup_cfg_section_pytest_reads(repo) -> None:
    (repo.path / "setup.cfg").write_text("[metadata]\nname = foo\n\n[tool:pytest]\naddopts = -q\n")
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added testpaths, mlirpipe_lit_site to [tool:pytest] in setup.cfg:"
        " correct any guess in mlirpipe_lit_site there" in said.splitlines()
    )
    assert (repo.path / "setup.cfg").read_text() == (
        f"[metadata]\nname = foo\n\n[tool:pytest]\ntestpaths = test\n{SITE_INI}addopts = -q\n"
    )


def test_init_edits_the_pytest_section_of_tox_ini_and_keeps_its_testpaths(repo) -> None:
    tox = "[tox]\nenvlist = py311\n\n[pytest]\ntestpaths = test\n\n[testenv]\ncommands = pytest\n"
    (repo.path / "tox.ini").write_text(tox)
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added mlirpipe_lit_site to [pytest] in tox.ini (testpaths kept as set"
        " there): correct any guess in mlirpipe_lit_site there" in said.splitlines()
    )
    assert (repo.path / "tox.ini").read_text() == tox.replace("[pytest]\n", f"[pytest]\n{SITE_INI}")


def test_an_ini_edit_that_configparser_would_not_read_writes_nothing(repo) -> None:
    cfg = "[tool:pytest]\nTestPaths = test\n"  # configparser folds case: a second testpaths
    (repo.path / "setup.cfg").write_text(cfg)
    status, said = mlirpipe("init")
    assert status == 1
    assert (
        "mlirpipe init: setup.cfg left as it is: with the lines added it would not parse"
        " (configparser: option 'testpaths' in section 'tool:pytest' already exists); add"
        " these lines to its [tool:pytest]:\n"
        f"testpaths = test\n{SITE_INI}{features_off('setup.cfg')}\n"
        "mlirpipe init: then, before running pytest or lit: add the lines above to setup.cfg\n"
    ) in said
    assert (repo.path / "setup.cfg").read_text() == cfg


def test_init_from_a_subfolder_works_at_the_repositorys_root(repo, monkeypatch) -> None:
    (repo.path / ".git").mkdir()
    monkeypatch.chdir(repo.path / "test" / "python")
    status, said = mlirpipe("init")
    assert status == 0
    assert said.splitlines()[0] == (
        f"mlirpipe init: working in {repo.path} (the repository's root, where pytest runs)"
    )
    assert (repo.path / "pyproject.toml").exists()
    assert (repo.path / "test" / "lit.site.cfg.py").exists()


def test_a_subfolders_pyproject_without_pytest_settings_does_not_stop_the_root_search(
    repo, monkeypatch
) -> None:
    (repo.path / ".git").mkdir()
    package = repo.path / "test" / "python" / "pyproject.toml"
    package.write_text('[project]\nname = "foo-bindings"\n')
    monkeypatch.chdir(package.parent)
    status, said = mlirpipe("init")
    assert status == 0
    assert said.splitlines()[0] == (
        f"mlirpipe init: working in {repo.path} (the repository's root, where pytest runs)"
    )
    assert (repo.path / "pyproject.toml").read_text() == PYPROJECT
    assert package.read_text() == '[project]\nname = "foo-bindings"\n'


def test_init_without_a_tool_says_what_to_fill_in_instead_of_what_to_run(repo) -> None:
    (repo.path / "build" / "bin" / "foo-opt").unlink()
    status, said = mlirpipe("init")
    assert status == 1
    assert said.splitlines()[-1] == (
        "mlirpipe init: then, before running pytest or lit: give foo_tools_dir a value in"
        " mlirpipe_lit_site (pyproject.toml)"
    )
    assert "now run" not in said
    ini = repo.path / "pyproject.toml"
    ini.write_text(ini.read_text().replace('"foo_tools_dir = "', '"foo_tools_dir = tools"'))
    status, said = mlirpipe("init")
    assert (status, said.splitlines()[-1]) == (
        0,
        "mlirpipe init: now run: pytest, pytest -n 2, lit test",
    )
    assert (
        "mlirpipe init: config.foo_tools_dir = tools  (test/lit.cfg.py:19 reads it; given in"
        " pyproject.toml; the guess, blank: no *-opt tool found in a build folder: set it to"
        " your tools' folder)" in said.splitlines()
    )


def test_init_again_fills_a_value_it_left_blank_once_it_can_guess_it(repo) -> None:
    tool = repo.path / "build" / "bin" / "foo-opt"
    kept = tool.read_text()
    tool.unlink()
    mlirpipe("init")
    assert '"foo_tools_dir = ",' in (repo.path / "pyproject.toml").read_text()
    ini = repo.path / "pyproject.toml"
    ini.write_text(ini.read_text().replace("enable_bar = False", "enable_bar = True"))
    tool.write_text(kept)
    tool.chmod(0o755)
    status, said = mlirpipe("init")
    assert status == 0, said
    assert (
        "mlirpipe init: filled in pyproject.toml what was left blank: foo_tools_dir = build/bin"
        in said.splitlines()
    )
    assert ini.read_text() == PYPROJECT.replace("enable_bar = False", "enable_bar = True")


SITE_TOML = PYPROJECT.split('testpaths = ["test"]\n', 1)[1]
TEAM = """\
[project]
name = "foo"

# pytest, as the team set it
{header}
addopts = "-q"  # quiet
testpaths = ["test/foo"]

[tool.ruff]
line-length = 100
"""


@pytest.mark.parametrize("header", ["[tool.pytest.ini_options]", "[ tool.pytest.ini_options ]"])
def test_init_adds_its_keys_to_an_existing_table_keeping_comments_and_the_users_keys(
    repo, header
) -> None:
    ini = repo.path / "pyproject.toml"
    ini.write_text(TEAM.format(header=header))
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added mlirpipe_lit_site to [tool.pytest.ini_options] in pyproject.toml"
        " (testpaths kept as set there): correct any guess in mlirpipe_lit_site there"
        in said.splitlines()
    )
    team = TEAM.format(header=header)
    assert ini.read_text() == team.replace('["test/foo"]\n', f'["test/foo"]\n{SITE_TOML}')
    assert tomllib.loads(ini.read_text())["tool"]["pytest"]["ini_options"]["testpaths"] == [
        "test/foo"
    ]
    assert said.splitlines()[-1] == (
        "mlirpipe init: now run: pytest test, pytest -n 2 test, lit test (plain pytest runs the"
        " testpaths of pyproject.toml: test/foo)"
    )


def test_python_files_in_a_suite_that_lit_does_not_run_are_left_out_and_named(repo) -> None:
    for name in ("test/unit/test_a.py", "test/unit/test_b.py"):
        (repo.path / name).parent.mkdir(exist_ok=True)
        (repo.path / name).write_text("def test_a():\n    pass\n")
    status, said = mlirpipe("init")
    assert status == 0
    assert said.splitlines()[-1] == (
        "mlirpipe init: now run: pytest, pytest -n 2, lit test (pytest leaves out"
        " test/unit/test_a.py and 1 more: Python files that lit does not run, ignored by the"
        " addopts of pyproject.toml; to run them too: pytest test/unit/test_a.py"
        " test/unit/test_b.py)"
    )
    assert (
        'addopts = [\n    "--ignore=test/unit/test_a.py",\n    "--ignore=test/unit/test_b.py",\n]\n'
        in (repo.path / "pyproject.toml").read_text()
    )
    turn_features_on(repo.path / "pyproject.toml")
    repo.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=6, failed=1, skipped=1)
    named = repo.runpytest("-p", "no:cacheprovider", "test/unit/test_a.py", "test/unit/test_b.py")
    named.assert_outcomes(passed=2)


def test_where_addopts_is_the_users_the_commands_carry_the_ignore_options(repo) -> None:
    (repo.path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    (repo.path / "test" / "unit").mkdir()
    (repo.path / "test" / "unit" / "test_a.py").write_text("def test_a():\n    pass\n")
    status, said = mlirpipe("init")
    assert status == 0
    assert said.splitlines()[-1] == (
        "mlirpipe init: now run: pytest --ignore=test/unit/test_a.py, pytest -n 2"
        " --ignore=test/unit/test_a.py, lit test (--ignore: Python files in test that lit does"
        " not run)"
    )


# Scripts that pytest's default python_files match, that lit never runs, and that exit at
# import where an optional dependency is missing.
EXITING_SCRIPTS = ("utils/gen_test.py", "test/tools/bench_test.py", "test/tools/test_golden.py")


def test_every_command_init_prints_gives_lits_verdicts_beside_scripts_that_exit(repo) -> None:
    for name in EXITING_SCRIPTS:
        (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / name).write_text("import sys\n\nsys.exit(0)\n")
    status, said = mlirpipe("init")
    assert status == 0, said
    turn_features_on(repo.path / "pyproject.toml")
    line = said.splitlines()[-1].removeprefix("mlirpipe init: now run: ").split(" (")[0]
    commands = [c.split() for c in line.split(", ")]
    assert [c[0] for c in commands] == ["pytest", "pytest", "lit"], line
    expected = {name: OUTCOME[code] for name, code in VERDICTS.items()}
    for number, (_, *args) in enumerate(commands[:2]):
        ran = repo.runpytest_subprocess("-p", "no:cacheprovider", *args, f"--junitxml={number}.xml")
        output = ran.stdout.str() + ran.stderr.str()
        assert "INTERNALERROR" not in output and "exits at import" not in output, output
        assert junit_outcomes(repo.path / f"{number}.xml") == expected, output
    codes, output = lit_verdicts(repo.path, *commands[2][1:])
    assert codes == VERDICTS, output


def test_without_testpaths_init_names_the_suites_in_the_commands_it_suggests(repo) -> None:
    ini = repo.path / "pyproject.toml"
    ini.write_text(PYPROJECT.replace('testpaths = ["test"]\n', ""))
    status, said = mlirpipe("init")
    assert status == 0
    assert said.splitlines()[-1] == (
        "mlirpipe init: now run: pytest test, pytest -n 2 test, lit test (pyproject.toml sets no"
        " testpaths: plain pytest would collect every test file here)"
    )


TOX = "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n"


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "pyproject.toml",
            TEAM.format(header="[tool.pytest.ini_options]"),
            TEAM.format(header="[tool.pytest.ini_options]").replace(
                '["test/foo"]\n', f'["test/foo"]\n{SITE_TOML}'
            ),
        ),
        ("tox.ini", TOX, TOX.replace("[pytest]\n", f"[pytest]\ntestpaths = test\n{SITE_INI}")),
    ],
)
def test_a_file_with_crlf_line_endings_keeps_them(repo, name, text, expected) -> None:
    ini = repo.path / name
    ini.write_bytes(text.replace("\n", "\r\n").encode())
    status, _ = mlirpipe("init")
    assert status == 0
    assert ini.read_bytes().decode() == expected.replace("\n", "\r\n")


def test_init_adds_its_keys_where_a_dotted_key_declares_the_table(repo) -> None:
    ini = repo.path / "pyproject.toml"
    ini.write_text('[tool.pytest]\nini_options.addopts = "-q"\n')
    status, _ = mlirpipe("init")
    assert status == 0
    assert ini.read_text() == (
        '[tool.pytest]\nini_options.addopts = "-q"\nini_options.testpaths = ["test"]\n'
        + "ini_options."
        + SITE_TOML
    )


def test_a_pyproject_edit_that_would_not_parse_writes_nothing_and_says_why(repo) -> None:
    ini = repo.path / "pyproject.toml"
    ini.write_text("tool = {black = {line-length = 100}}\n")
    status, said = mlirpipe("init")
    assert status == 1
    assert (
        "mlirpipe init: pyproject.toml left as it is: with the keys added it would not parse"
        " as TOML (Cannot declare ('tool', 'pytest', 'ini_options') twice, because of"
        " pyproject.toml:1); add these lines to its [tool.pytest.ini_options]:\n"
        f'testpaths = ["test"]\n{SITE_TOML}{features_off("pyproject.toml")}\n'
        "mlirpipe init: then, before running pytest or lit: add the lines above to"
        " pyproject.toml\n"
    ) in said
    assert ini.read_text() == "tool = {black = {line-length = 100}}\n"


def test_init_from_a_subfolder_edits_the_ini_file_pytest_reads_at_the_root(
    repo, monkeypatch
) -> None:
    (repo.path / "tox.ini").write_text("[pytest]\naddopts = -q\n")
    monkeypatch.chdir(repo.path / "test" / "python")
    status, said = mlirpipe("init")
    assert status == 0
    assert said.splitlines()[0] == (
        f"mlirpipe init: working in {repo.path} (the repository's root, where pytest runs)"
    )
    assert (repo.path / "tox.ini").read_text() == (
        f"[pytest]\ntestpaths = test\n{SITE_INI}addopts = -q\n"
    )
    assert not (repo.path / "pyproject.toml").exists()
    assert (repo.path / "test" / "lit.site.cfg.py").exists()


def test_init_edits_a_pytest_toml_with_toml_lists(repo) -> None:
    (repo.path / "pytest.toml").write_text('[pytest]\naddopts = ["-q"]\n')
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added testpaths, mlirpipe_lit_site to [pytest] in pytest.toml: correct"
        " any guess in mlirpipe_lit_site there" in said.splitlines()
    )
    assert (repo.path / "pytest.toml").read_text() == (
        f'[pytest]\naddopts = ["-q"]\ntestpaths = ["test"]\n{SITE_TOML}'
    )
    result = repo.runpytest("-p", "no:cacheprovider", "test/canonicalize.mlir")
    result.assert_outcomes(passed=1)


def test_init_edits_pytests_native_tool_pytest_table_when_a_pyproject_uses_it(repo) -> None:
    ini = repo.path / "pyproject.toml"
    ini.write_text('[tool.pytest]\naddopts = ["-q"]\n')
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added testpaths, mlirpipe_lit_site to [tool.pytest] in pyproject.toml:"
        " correct any guess in mlirpipe_lit_site there" in said.splitlines()
    )
    assert ini.read_text() == f'[tool.pytest]\naddopts = ["-q"]\ntestpaths = ["test"]\n{SITE_TOML}'
    result = repo.runpytest("-p", "no:cacheprovider", "test/canonicalize.mlir")
    result.assert_outcomes(passed=1)


def test_an_empty_ini_options_table_gets_the_keys_and_is_not_said_to_be_added(repo) -> None:
    ini = repo.path / "pyproject.toml"
    ini.write_text("[tool.pytest.ini_options]\n")
    status, said = mlirpipe("init")
    assert status == 0
    assert (
        "mlirpipe init: added testpaths, mlirpipe_lit_site to [tool.pytest.ini_options] in"
        " pyproject.toml: correct any guess in mlirpipe_lit_site there" in said.splitlines()
    )
    assert ini.read_text() == PYPROJECT


def test_a_pytest_ini_that_does_not_parse_is_named_and_nothing_is_written(repo) -> None:
    (repo.path / "pytest.ini").write_text("[pytest]\n  -q\n")
    status, said = mlirpipe("init")
    assert status == 1
    assert (
        "mlirpipe init: pytest.ini left as it is: it does not parse as an ini file (iniconfig:"
        " pytest.ini:2: unexpected value continuation): fix it first; add these lines to its"
        f" [pytest]:\ntestpaths = test\n{SITE_INI}"
    ) in said
    assert (repo.path / "pytest.ini").read_text() == "[pytest]\n  -q\n"
    assert not (repo.path / "pyproject.toml").exists()


def test_a_setup_cfg_pytest_stops_on_is_named_with_pytests_reason_and_left_as_it_is(repo) -> None:
    (repo.path / "setup.cfg").write_text("[pytest]\naddopts = -q\n")
    status, said = mlirpipe("init")
    assert status == 1
    assert (
        "mlirpipe init: setup.cfg left as it is: pytest does not read it ([pytest] section in"
        " setup.cfg files is no longer supported, change to [tool:pytest] instead): fix it"
        " first; add these lines to its [tool:pytest]:\n"
        f"testpaths = test\n{SITE_INI}"
    ) in said
    assert (repo.path / "setup.cfg").read_text() == "[pytest]\naddopts = -q\n"
    assert not (repo.path / "pyproject.toml").exists()


def test_an_edit_pytest_would_not_read_is_refused_with_pytests_reason(tmp_path) -> None:
    edit = Edit("[pytest]\n  -q\n", ("testpaths",), ())
    with pytest.raises(EditRefused) as refused:
        _check_with_pytest(tmp_path / "pytest.ini", edit)
    assert str(refused.value) == (
        "with the keys added pytest would not read it (pytest.ini:2: unexpected value continuation)"
    )


def test_an_edit_whose_keys_pytest_would_not_see_is_refused(tmp_path) -> None:
    edit = Edit("[pytest]\naddopts = -q\n", ("testpaths", "mlirpipe_lit_site"), ())
    with pytest.raises(EditRefused) as refused:
        _check_with_pytest(tmp_path / "tox.ini", edit)
    assert str(refused.value) == "pytest would not read testpaths, mlirpipe_lit_site there"


def test_a_pyproject_that_is_not_toml_is_named_at_its_line_and_left_as_it_is(repo) -> None:
    (repo.path / "pyproject.toml").write_text('[project]\nname = "foo\n')
    status, said = mlirpipe("init")
    assert status == 1
    assert (
        "mlirpipe init: pyproject.toml left as it is: it is not valid TOML (pyproject.toml:2:12:"
        " Illegal character '\\n'): fix it first; add these lines to its"
        " [tool.pytest.ini_options]:\n"
    ) in said
    assert (repo.path / "pyproject.toml").read_text() == '[project]\nname = "foo\n'
