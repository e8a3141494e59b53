"""Collection inside a lit suite as lit finds its tests: pytest's hooks hear of the files lit
runs and of those pytest's own plugins may take, never of each source file a suite's tree
holds beside its tests."""

from __future__ import annotations

import pytest

LIT_CFG = """\
import lit.formats
config.name = "TREE"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = config.test_exec_root = __import__("os").path.dirname(__file__)
"""
TEST = "// RUN: true\n"
# The files and folders (NAME/) pytest's hooks heard of (pytest_ignore_collect comes first).
RECORDING = """\
import pathlib

def pytest_ignore_collect(collection_path):
    with open(pathlib.Path(__file__).parent / "heard.txt", "a") as heard:
        heard.write(collection_path.name + ("/" if collection_path.is_dir() else "") + "\\n")
"""


@pytest.fixture
def tree(pytester: pytest.Pytester) -> pytest.Pytester:
    """A source tree that is one lit suite: C++ files and build rules beside the tests."""
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    pytester.makeconftest(RECORDING)
    lib = pytester.mkdir("lib")
    for name in ("Pass.cpp", "Pass.h", "CMakeLists.txt", "notes.txt"):
        (lib / name).write_text("// source\n")
    (lib / "transforms").mkdir()
    (lib / "transforms" / "Fold.cpp").write_text("// source\n")
    test = pytester.mkdir("test")
    (test / "lit.local.cfg").write_text('config.substitutions.append(("%x", "x"))\n')
    (test / "fold.mlir").write_text(TEST)
    (test / "CMakeLists.txt").write_text("# rules\n")
    (test / "test_helpers.py").write_text("def test_python_tests_live_alongside():\n    pass\n")
    (test / "test_readme.txt").write_text(">>> 1 + 1\n2\n")
    (test / "Inputs").mkdir()
    (test / "Inputs" / "input.mlir").write_text(TEST)
    return pytester


def _heard(tree: pytest.Pytester) -> set[str]:
    return set((tree.path / "heard.txt").read_text().split())


def test_hooks_hear_of_the_tests_and_pythons_files_not_of_the_sources(tree):
    result = tree.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["test/fold.mlir::fold.mlir", "*test_helpers.py::test_*"])
    heard = _heard(tree)
    assert {"fold.mlir", "test_helpers.py", "conftest.py"} <= heard
    assert not heard & {"Pass.cpp", "Pass.h", "CMakeLists.txt", "notes.txt"}, heard


def test_a_folder_whose_tree_holds_only_sources_is_passed_by(tree):
    tree.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    heard = _heard(tree)
    assert "test/" in heard
    assert not heard & {"lib/", "transforms/"}, heard


def test_the_doctest_files_are_still_offered_to_its_plugin(tree):
    result = tree.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["test/test_readme.txt::test_readme.txt"])


def test_a_text_file_named_on_the_command_line_is_a_doctest_as_elsewhere(tree):
    (tree.path / "lib" / "notes.txt").write_text(">>> 2 * 3\n6\n")
    result = tree.runpytest("-p", "no:cacheprovider", "lib/notes.txt")
    result.assert_outcomes(passed=1)


def test_another_plugin_that_collects_files_hears_of_every_file(tree):
    (tree.path / "lib" / "conftest.py").write_text(
        "import pytest\n\n"
        "class Header(pytest.File):\n"
        "    def collect(self):\n"
        "        return []\n\n"
        "def pytest_collect_file(file_path, parent):\n"
        "    if file_path.suffix == '.h':\n"
        "        return Header.from_parent(parent, path=file_path)\n"
    )
    tree.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert {"Pass.cpp", "Pass.h", "CMakeLists.txt"} <= _heard(tree)


SCRIPT = "import sys\n\ntry:\n    import no_such_dependency\nexcept ImportError:\n    sys.exit(0)\n"
EXIT_HINT = (
    "  hint: a script, not a pytest module: keep pytest away from it (testpaths in the pytest"
    " ini file, or --ignore={}), or have it skip instead of exit (pytest.importorskip, or"
    " pytest.skip(..., allow_module_level=True))"
)


def test_a_script_in_a_suite_that_exits_at_import_is_a_collection_error_of_its_file(tree):
    (tree.path / "test" / "bench_test.py").write_text(SCRIPT)
    result = tree.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR collecting test/bench_test.py _*",
            "test/bench_test.py:6: exits at import with status 0 (SystemExit): pytest collects"
            " no test from it",
            EXIT_HINT.format("test/bench_test.py"),
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=3, errors=1)  # fold.mlir, test_helpers.py, the doctest


def test_a_module_outside_any_suite_that_exits_with_a_message_is_a_collection_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(gen_test='import sys\n\nsys.exit("needs numpy")\n')
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "gen_test.py:3: exits at import with status 1 (needs numpy) (SystemExit): pytest"
            " collects no test from it",
            EXIT_HINT.format("gen_test.py"),
        ]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_files_given_one_by_one_have_their_folder_scanned_once(tree):
    """pytest collects a folder again for each of its files given on the command line; the
    folder's children are found once all the same, so 1,000 files given one by one cost what
    their folder costs (each test file is offered to the hooks once, not once per argument)."""
    names = [f"t{i}.mlir" for i in range(6)]
    for name in names:
        (tree.path / "test" / name).write_text(TEST)
    conftest = tree.path / "conftest.py"
    conftest.write_text(conftest.read_text() + OFFERED)
    result = tree.runpytest("--collect-only", "-q", "-p", "no:cacheprovider",
                            *(f"test/{n}" for n in names))  # fmt: skip
    result.stdout.fnmatch_lines([f"test/{n}::{n}" for n in names])
    offered = (tree.path / "offered.txt").read_text().split()
    assert [offered.count(n) for n in [*names, "fold.mlir"]] == [1] * (len(names) + 1), offered


# The files pytest_collect_file is called for, once per call.
OFFERED = """

def pytest_collect_file(file_path):
    with open(pathlib.Path(__file__).parent / "offered.txt", "a") as offered:
        offered.write(file_path.name + "\\n")
"""
