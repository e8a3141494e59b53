"""`mlirpipe init`: give an existing lit suite the site values its configs expect, in pyproject."""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import os
import platform
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..atomic import write_atomic
from ..filetests.config import ini_values
from ..filetests.discovery import LOCAL_CONFIG_NAMES, MAIN_CONFIG_NAMES, SITE_CONFIG_NAMES
from ..filetests.machine import (
    FEATURE_NAME,
    installed_project,
    machine_answer,
    package_feature,
)
from ..filetests.needs import ConfigNeeds, ConfigReadError, read_needs
from ..filetests.site import (
    PATH_ENDINGS,
    SITE_FILE,
    SITE_KEY,
    WRITTEN_BY,
    is_machine_value,
    site_file_text,
)
from ..tools.filecheck import find_llvm_filecheck
from .ini_edit import (
    Edit,
    EditRefused,
    fill_blank,
    ini_edit,
    ini_key,
    pytest_table,
    toml_edit,
    toml_table,
)

PYPROJECT = "pyproject.toml"
INI_TABLE = "[tool.pytest.ini_options]"
# Folders that hold no suite of the repo's own (a build's generated configs, environments).
_SKIPPED = re.compile(r"^(\..*|build.*|Output|node_modules|__pycache__|.*venv.*)$")
SAY = "mlirpipe init: "


@dataclass(frozen=True, slots=True)
class Found:
    """What the repository holds, as `mlirpipe init` sees it (paths relative to its root)."""

    root: Path
    suites: tuple[Path, ...]  # folders with a lit config of their own (lit.cfg.py, lit.cfg, ...)
    local_configs: tuple[Path, ...]
    build: Path | None  # the folder of the *-opt tools' bin/
    opt_tools: tuple[Path, ...]
    filecheck: Path | None
    # The installed Python package the configs' values name (torch_mlir_obj_root: torch_mlir).
    project: str | None = None


def find(root: Path) -> Found:
    """The lit suites, local configs, *-opt tools and FileCheck of the repository at `root`."""
    suites, local = [], []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _SKIPPED.match(d))
        here = Path(folder).relative_to(root)
        if loaded_config(Path(folder)) is not None:
            suites.append(here)
        local += [here / n for n in LOCAL_CONFIG_NAMES if n in files][:1]  # lit's choice
    tools = _opt_tools(root)
    build = tools[0].parent.parent if tools else None
    return Found(root, tuple(suites), tuple(local), build, tools, _filecheck(root))


def loaded_config(folder: Path) -> str | None:
    """The name of the config that lit loads for the suite at `folder` (a site config of the
    repository's own, before lit.cfg.py, before lit.cfg), which the site config init writes
    loads in turn; never one init wrote. None when the folder holds no other."""
    for name in (*SITE_CONFIG_NAMES, *MAIN_CONFIG_NAMES):
        path = folder / name
        if path.is_file() and not _written_by_init(path):
            return name
    return None


def _written_by_init(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as text:
            return text.readline().startswith(WRITTEN_BY)
    except OSError:
        return False


def _build_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("build"))


def _opt_tools(root: Path) -> tuple[Path, ...]:
    """Executables named *-opt in a build folder's bin/ (the repo's own tools)."""
    found = []
    for build in _build_dirs(root):
        for tool in sorted(build.glob("**/bin/*-opt")):
            if os.access(tool, os.X_OK) and not _python_wrapper(tool):
                found.append(tool.relative_to(root))
    return tuple(found)


def _filecheck(root: Path) -> Path | None:
    """LLVM's FileCheck: in a build folder (never a Python wrapper of the same name), else this
    machine's (a native one on PATH, else the newest /usr/lib/llvm-NN/bin), as the generated
    site config finds it again when the suite loads."""
    for tool in (t for b in _build_dirs(root) for t in sorted(b.glob("**/bin/FileCheck"))):
        if tool.is_file() and os.access(tool, os.X_OK) and not _python_wrapper(tool):
            return tool.relative_to(root)
    found = find_llvm_filecheck()
    return Path(found) if found else None


def _python_wrapper(path: Path) -> bool:
    """A script run by Python (a console-script wrapper), not the native tool."""
    try:
        first = path.read_bytes()[:128].split(b"\n", 1)[0]
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


# A feature of the build (enable_jit, have_zlib): guessed off, as a test that needs it would fail
# where the build lacks it; the user turns on what the build has. An enable_ feature of an
# installed package is what that package holds.
FEATURE = r"^(enable|have|has)_"
FEATURE_OFF = "a feature: guessed off, see below"
AT_LOAD = "found again when the suite loads, not written"

# Guesses by name, first match wins: (pattern, guess(name, found) -> (value, why)).
Guess = Callable[[str, Found], tuple[str, str]]


def _llvm_tools(name: str, found: Found) -> tuple[str, str]:
    if found.filecheck is None:
        return "", "no LLVM FileCheck found: set it to the folder of FileCheck, not and count"
    why = f"where FileCheck is ({found.filecheck})"
    if found.filecheck.is_absolute():
        why += f", outside the repository: {AT_LOAD}"
    return str(found.filecheck.parent), why


def _tools_dir(name: str, found: Found) -> tuple[str, str]:
    if not found.opt_tools:
        return "", "no *-opt tool found in a build folder: set it to your tools' folder"
    names = ", ".join(t.name for t in found.opt_tools)
    return str(found.opt_tools[0].parent), f"where {names} is"


def _build(name: str, found: Found) -> tuple[str, str]:
    if found.build is None:
        return "build", "no *-opt tool found in a build folder: set it to your build folder"
    return str(found.build), f"the build folder of {found.opt_tools[0]}"


def _machine(name: str, found: Found) -> tuple[str, str]:
    """A path of this machine (host_cxx, PROJECT_python_packages_dir), as the suite finds it."""
    value, why = machine_answer(name)
    return value, f"{why}: {AT_LOAD}" if value else why


def _feature(name: str, found: Found) -> tuple[str, str]:
    """[PROJECT_]enable_FEATURE: what the project's installed package holds, else off."""
    match = FEATURE_NAME.match(name)
    assert match is not None, name
    project = match["project"] or found.project
    answer = package_feature(project, match["feature"]) if project else None
    return answer or ("False", FEATURE_OFF)


GUESSES: tuple[tuple[re.Pattern[str], Guess], ...] = (
    (re.compile(r"^llvm_tools_dir$"), _llvm_tools),
    (re.compile(r"^host_cxx$|^host_cc$|^\w+_python_packages_dir$"), _machine),
    (re.compile(r"_tools_dir$|_bin_dir$"), _tools_dir),
    (re.compile(r"_obj_root$|_binary_dir$|_build_dir$"), _build),
    (re.compile(r"_src_root$|_source_dir$"), lambda n, f: (".", "the repository")),
    (
        re.compile(r"^python_executable$"),
        lambda n, f: (
            sys.executable,
            "the Python that runs lit or pytest: set when the suite loads, not written",
        ),
    ),
    (FEATURE_NAME, _feature),
    (re.compile(FEATURE), lambda n, f: ("False", FEATURE_OFF)),
    (re.compile(r"_shlib_ext$"), lambda n, f: (".so", "this platform's")),
    (re.compile(r"^host_os$"), lambda n, f: (platform.system(), "this machine")),
    (re.compile(r"^host_arch$"), lambda n, f: (host_arch(), "this machine's, as LLVM spells it")),
)


def host_arch() -> str:
    """This machine's architecture as LLVM's triples spell it (Windows says AMD64)."""
    machine = platform.machine()
    return {"amd64": "x86_64"}.get(machine.lower(), machine)


def guess(name: str, found: Found) -> tuple[str, str]:
    """(value, why) for `config.NAME`; ("", why) when nothing fits."""
    for pattern, make in GUESSES:
        if pattern.search(name):
            return make(name, found)
    return "", "no guess: set it"


def repository_root(start: Path) -> Path:
    """Where init works from `start`: the folder of the ini file pytest would read (its own
    search) when that file has pytest settings, else the git checkout's top, else the folder
    of the pyproject.toml pytest would fall back to (a subfolder's package, often), else
    `start`."""
    inipath = _pytest_ini(start)
    if inipath is not None and _pytest_loads(inipath) is not None:
        return inipath.parent
    git = next((f for f in (start, *start.parents) if (f / ".git").exists()), None)
    return git or (inipath.parent if inipath is not None else start)


def init(start: Path, out: TextIO) -> int:
    """Find the suites, print each guess, write each suite's site config and the ini lines."""
    root = repository_root(start)
    if root != start:
        out.write(f"{SAY}working in {root} (the repository's root, where pytest runs)\n")
    found = find(root)
    if not found.suites:
        names = ", ".join((*MAIN_CONFIG_NAMES, *SITE_CONFIG_NAMES))
        out.write(
            f"{SAY}no lit config ({names}) under {root}: there is no lit suite to adopt\n"
            "  hint: run it at the repository's root; a new suite needs no init (README: "
            '"Using it from another compiler repository")\n'
        )
        return 1
    _say_found(found, out)
    try:  # every config read before anything is written
        all_needs = [
            read_needs([root / c for c in _configs_of(root, s, found)]) for s in found.suites
        ]
    except ConfigReadError as error:
        out.write(_unreadable(root, error))
        return 1
    read = [n.name for needs in all_needs for n in needs.attributes]
    found = dataclasses.replace(found, project=installed_project(read))
    lines: dict[str, str] = {}
    said: set[str] = set()
    given = {n: v for n, v in _ini_site(root).items() if v}
    for suite, needs in zip(found.suites, all_needs, strict=True):
        for need in (n for n in needs.attributes if n.name not in said):
            said.add(need.name)
            value, why = guess(need.name, found)
            where = f"{Path(need.path).relative_to(root)}:{need.line}"
            if given.get(need.name, value) != value:  # the user's value wins
                why = f"given in {_config_path(root).name}; the guess, {value or 'blank'}: {why}"
                value = given[need.name]
            out.write(f"{SAY}config.{need.name} = {value}  ({where} reads it; {why})\n")
            if not _found_at_load(need.name, value):
                lines[need.name] = f"{need.name} = {value}"
        _write_site(root, suite, needs, out, _config_path(root).name)
    ini, added = _write_ini(root, found, list(lines.values()), out)
    values = _values(root, lines)
    off = [n for n, v in values.items() if _is_feature(n) and v == "False"]
    _say_features_off(off, ini, out)
    unset = [name for name, value in values.items() if not value]
    todo = [] if added else [f"add the lines above to {ini}"]
    todo += [f"give {', '.join(unset)} a value in {SITE_KEY} ({ini})"] if unset else []
    if todo:
        out.write(f"{SAY}then, before running pytest or lit: {'; '.join(todo)}\n")
        return 1
    out.write(f"{SAY}now run: {_run_line(root, found.suites, ini)}\n")
    return 0


def _run_line(root: Path, suites: tuple[Path, ...], ini: str) -> str:
    """The commands that run the suites and nothing else: plain `pytest` only when the ini's
    testpaths are the suites (else it would run other tests, or not these), with --ignore for
    the Python files in them that lit does not run and the ini's addopts do not leave out
    (pytest would import them); and how to run those it leaves out."""
    named = " ".join(map(str, suites))
    values = (ini_values(root) or ({}, None))[0]
    paths = [w for line in values.get("testpaths", []) for w in line.split()]
    python = _python_tests(root, suites, values.get("python_files", []))
    ignored = {os.path.normpath(p) for p in _ignored(values.get("addopts", []))}
    left_out = [p for p in python if os.path.normpath(p) in ignored]
    opts = "".join(f" --ignore={p}" for p in python if os.path.normpath(p) not in ignored)
    notes = []
    if opts:
        notes.append(f"--ignore: Python files in {named} that lit does not run")
    if left_out:
        more = f" and {len(left_out) - 1} more" if len(left_out) > 1 else ""
        notes.append(
            f"pytest leaves out {left_out[0]}{more}: Python files that lit does not run,"
            f" ignored by the addopts of {ini}; to run them too: pytest"
            f" {' '.join(map(str, left_out))}"
        )
    if {os.path.normpath(p) for p in paths} == {os.path.normpath(s) for s in suites}:
        line = f"pytest{opts}, pytest -n 2{opts}, lit {named}"
    else:
        if paths:
            notes.insert(0, f"plain pytest runs the testpaths of {ini}: {' '.join(paths)}")
        else:
            notes.insert(
                0, f"{ini} sets no testpaths: plain pytest would collect every test file here"
            )
        line = f"pytest {named}{opts}, pytest -n 2 {named}{opts}, lit {named}"
    return line + (f" ({'; '.join(notes)})" if notes else "")


def _ignored(addopts: list[str]) -> list[str]:
    """The paths of the --ignore options among the ini's addopts."""
    words = [w for line in addopts for w in line.split()]
    found = [w.partition("=")[2] for w in words if w.startswith("--ignore=")]
    return found + [b for a, b in itertools.pairwise(words) if a == "--ignore"]


def _python_tests(root: Path, suites: tuple[Path, ...], python_files: list[str]) -> list[Path]:
    """The files in the suites that pytest would import as its own tests (named as
    `python_files` says, with no RUN: line for lit): scripts, often, that lit does not run."""
    patterns = [w for line in python_files for w in line.split()] or ["test_*.py", "*_test.py"]
    found = []
    for suite in suites:
        for folder, dirs, files in os.walk(root / suite):
            dirs[:] = sorted(d for d in dirs if not _SKIPPED.match(d))
            for name in sorted(files):
                path = Path(folder, name)
                if any(fnmatch.fnmatch(name, p) for p in patterns) and not _has_run_line(path):
                    found.append(path.relative_to(root))
    return found


def _has_run_line(path: Path) -> bool:
    try:
        return "RUN:" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _say_features_off(names: list[str], ini: str, out: TextIO) -> None:
    if names:
        out.write(
            f"{SAY}features guessed off: {', '.join(names)}; the tests that need them do not"
            f" run until you turn on those your build has: NAME = True in {SITE_KEY} ({ini})\n"
        )


def _found_at_load(name: str, value: str) -> bool:
    """Whether the suite finds `config.NAME` on each machine as it loads, so that it is not
    written: a value of this machine (python_executable, host_cxx, a package's folder), save
    a folder inside the repository (a build's llvm_tools_dir) and a blank to fill in."""
    inside = name.endswith(PATH_ENDINGS) and not Path(value).is_absolute()
    return is_machine_value(name) and bool(value) and not inside


def _is_feature(name: str) -> bool:
    return re.search(FEATURE, name) is not None or FEATURE_NAME.match(name) is not None


def _ini_site(root: Path) -> dict[str, str]:
    """The site values the ini gives (the user's, a blank one as ""), as text."""
    given = (ini_values(root) or ({}, None))[0].get(SITE_KEY, [])
    return {k.strip(): v.strip() for k, _, v in (g.partition("=") for g in given)}


def _values(root: Path, lines: dict[str, str]) -> dict[str, str]:
    """Each name's value: in the ini when it gives one (the user's), else the guess."""
    values = {n: line.partition("=")[2].strip() for n, line in lines.items()}
    values |= _ini_site(root)
    return {name: values[name] for name in lines}


def _configs_of(root: Path, suite: Path, found: Found) -> list[Path]:
    """The configs lit reads for the suite: the one it loads (and the main config beside a
    site config of the repository's own, which loads it, usually), then the local ones."""
    loaded = loaded_config(root / suite) or MAIN_CONFIG_NAMES[0]
    main = [n for n in MAIN_CONFIG_NAMES if n != loaded and (root / suite / n).is_file()][:1]
    configs = [suite / loaded, *(suite / n for n in main if loaded in SITE_CONFIG_NAMES)]
    return configs + [c for c in found.local_configs if c.is_relative_to(suite)]


def _unreadable(root: Path, error: ConfigReadError) -> str:
    """A config whose needs cannot be read, as one line: where, what, what to do."""
    path = Path(error.path)
    where = str(path.relative_to(root) if path.is_relative_to(root) else path)
    where += f":{error.line}" if error.line else ""
    return (
        f"{where}: error: {error.reason}: lit cannot load this config either; fix it, then run"
        " mlirpipe init again\n"
    )


def _say_found(found: Found, out: TextIO) -> None:
    for suite in found.suites:
        local = [c for c in found.local_configs if c.is_relative_to(suite)]
        config = suite / (loaded_config(found.root / suite) or MAIN_CONFIG_NAMES[0])
        out.write(f"{SAY}lit suite {suite}/ ({config}, {len(local)} lit.local.cfg)\n")
    if found.opt_tools:
        out.write(f"{SAY}*-opt tools: {', '.join(map(str, found.opt_tools))}\n")
    else:
        out.write(f"{SAY}no *-opt tool in a build folder (build*/**/bin/*-opt)\n")
    if found.filecheck:
        out.write(f"{SAY}FileCheck: {found.filecheck}\n")
    else:
        out.write(f"{SAY}no LLVM FileCheck found (install LLVM's tools, e.g. llvm-22-tools)\n")


def _write_site(root: Path, suite: Path, needs: ConfigNeeds, out: TextIO, ini: str) -> None:
    site = suite / SITE_FILE
    if needs.llvm_initialize is not None:
        use = needs.llvm_initialize
        out.write(
            f"{SAY}{Path(use.path).relative_to(root)}:{use.line} uses llvm_config: the site "
            "config runs lit.llvm.initialize first, with lit's internal shell (lit 23's only one)\n"
        )
    loaded = loaded_config(root / suite) or MAIN_CONFIG_NAMES[0]
    text = site_file_text(loaded, ini, needs.llvm_initialize is not None)
    if (root / site).exists():
        old = (root / site).read_text(encoding="utf-8", errors="replace")
        if old != text and old.startswith(text.split("\n", 1)[0]):  # ours, older or for another ini
            out.write(
                f"{SAY}{site} exists, written by mlirpipe init but not as it writes it now: left"
                " as it is (remove it to have it written again)\n"
            )
        else:
            out.write(f"{SAY}{site} exists: left as it is (remove it to have it written again)\n")
        return
    write_atomic(root / site, text)
    out.write(f"{SAY}wrote {site} (sets the values above, then loads {suite / loaded})\n")


def site_lines(lines: list[str], toml: bool) -> str:
    """The lines of the site key's value: TOML strings, or an ini file's indented lines."""
    import json

    return "".join(f"    {json.dumps(line) + ',' if toml else line}\n" for line in lines)


def ini_block(suites: tuple[Path, ...], lines: list[str], testpaths: bool = True) -> str:
    """The pyproject.toml table `mlirpipe init` writes."""
    import json

    paths = ", ".join(json.dumps(str(s)) for s in suites)
    head = f"testpaths = [{paths}]\n" if testpaths else ""
    return f"{INI_TABLE}\n{head}{SITE_KEY} = [\n{site_lines(lines, True)}]\n"


def _pytest_ini(root: Path) -> Path | None:
    """The ini file pytest reads at `root` (pytest's own search), if any."""
    from _pytest.config.findpaths import locate_config
    from _pytest.outcomes import OutcomeException

    try:
        return locate_config(root, [root])[1]
    except (Exception, OutcomeException):  # one pytest cannot read: the edit says why
        return None


def _missing(root: Path, lines: list[str], toml: bool) -> str | None:
    """The site lines the pytest ini at `root` lacks, as text to add to its list (empty when
    it has a value for every name, whatever the value: the user's corrections); None when it
    has no site list at all."""
    values = (ini_values(root) or ({}, None))[0]
    if SITE_KEY not in values:
        return None
    have = {line.partition("=")[0].strip() for line in values[SITE_KEY]}
    return site_lines([line for line in lines if line.partition("=")[0].strip() not in have], toml)


# The pytest section of each ini file init edits, as pytest names it there.
SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest"}
SECTIONS |= {"setup.cfg": "tool:pytest"}


def _write_ini(root: Path, found: Found, lines: list[str], out: TextIO) -> tuple[str, bool]:
    """Add testpaths (and addopts that leave out the Python files in the suites that lit does
    not run) and the site lines to the file pytest reads at `root` (pyproject.toml when there
    is none), keeping the rest of its text and any of these keys it has already. Returns the
    file the values are to live in, and whether they are there."""
    path = _config_path(root)
    name = str(path.relative_to(root) if path.is_relative_to(root) else path)
    text = path.read_bytes().decode("utf-8") if path.exists() else ""  # CRLF kept
    toml = path.suffix == ".toml"
    table = pytest_table(path.name, text) if toml else ()
    if path.name == PYPROJECT:
        place = f"[{'.'.join(table)}]"
        state = f"{PYPROJECT} already has {place}"
    else:
        state = f"pytest reads {name} here (it wins over {PYPROJECT})"
        place = f"[{'.'.join(table) if toml else SECTIONS.get(path.name, 'pytest')}]"
    missing = _missing(root, lines, toml)
    if missing is not None:
        _fill_blanks(root, path, text, lines, out)
        return name, _say_to_add(state, f"its {SITE_KEY} list", missing, out)
    keys = {"testpaths": [str(s) for s in found.suites]}
    python_files = (ini_values(root) or ({}, None))[0].get("python_files", [])
    scripts = _python_tests(root, found.suites, python_files)
    keys |= {"addopts": [f"--ignore={p}" for p in scripts]} if scripts else {}
    keys[SITE_KEY] = lines
    try:
        if toml:
            edit = toml_edit(text, keys, table, path.name)
        else:  # each ini file pytest reads by name is in SECTIONS
            edit = ini_edit(text, SECTIONS[path.name], keys, path.name)
        _check_with_pytest(path, edit)
    except EditRefused as why:
        out.write(f"{SAY}{name} left as it is: {why}; add these lines to its {place}:\n")
        added = [k for k in keys if k == SITE_KEY or not _has(root, k)]
        out.write(_key_lines({k: keys[k] for k in added}, toml))
        return name, False
    write_atomic(path, edit.text)  # whole or not at all
    if path.name == PYPROJECT and not text:
        verb = f"wrote {place} to {PYPROJECT}"
    elif path.name == PYPROJECT and edit.created:
        verb = f"added {place} to {PYPROJECT}"
    else:
        verb = f"added {', '.join(edit.added)} to {place} in {name}"
        verb += f" ({', '.join(edit.kept)} kept as set there)" if edit.kept else ""
    out.write(f"{SAY}{verb}: correct any guess in {SITE_KEY} there\n")
    return name, True


def _fill_blanks(root: Path, path: Path, text: str, lines: list[str], out: TextIO) -> None:
    """Give the site lines the ini file leaves blank (`NAME =`) the value init now guesses (a
    build folder that appeared since); every value given there stays as it is."""
    name = str(path.relative_to(root) if path.is_relative_to(root) else path)
    given = (ini_values(root) or ({}, None))[0].get(SITE_KEY, [])
    blank = {k.strip() for k, _, v in (g.partition("=") for g in given) if not v.strip()}
    filled: list[str] = []
    for line in lines:
        key, _, value = (part.strip() for part in line.partition("="))
        new = fill_blank(text, key, value, path.suffix == ".toml") if key in blank else None
        if value and new is not None:
            text, filled = new, [*filled, f"{key} = {value}"]
    if filled:  # each a one-line change inside a string or a continuation line
        write_atomic(path, text)
        out.write(f"{SAY}filled in {name} what was left blank: {', '.join(filled)}\n")


def _check_with_pytest(path: Path, edit: Edit) -> None:
    """pytest reads the config file `path` as it is (when it is there) and as edited, with the
    keys added: what its own loader says, not only the file format's."""
    if path.exists():
        try:
            _pytest_loads(path)
        except EditRefused as why:
            raise EditRefused(f"pytest does not read it ({why}): fix it first") from None
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        copy.write_bytes(edit.text.encode("utf-8"))
        try:
            got = _pytest_loads(copy) or {}
        except EditRefused as why:
            said = str(why).replace(str(copy), path.name)
            raise EditRefused(f"with the keys added pytest would not read it ({said})") from None
    lost = [key for key in edit.added if key not in got]
    if lost:
        raise EditRefused(f"pytest would not read {', '.join(lost)} there")


def _pytest_loads(path: Path) -> dict | None:
    """pytest's reading of the config file `path` (None: no pytest settings in it); raises
    EditRefused with pytest's own message where pytest stops on it."""
    from _pytest.config.findpaths import CONFIG_LOADERS_BY_NAME
    from _pytest.outcomes import OutcomeException

    try:
        return CONFIG_LOADERS_BY_NAME[path.name](path)
    except (Exception, OutcomeException) as error:  # UsageError; fail() for setup.cfg's [pytest]
        said = " ".join(str(getattr(error, "msg", None) or error).split())
        raise EditRefused(said.rstrip(".")) from None


def _config_path(root: Path) -> Path:
    """The config file init edits: the one pytest reads at `root`, else pyproject.toml."""
    return _pytest_ini(root) or _unreadable_config(root) or root / PYPROJECT


def _unreadable_config(root: Path) -> Path | None:
    """The config file that stops pytest's search at `root` by not parsing, if one does (the
    edit then refuses it, saying why, rather than writing another file pytest would not reach)."""
    from _pytest.config.findpaths import CONFIG_LOADERS_BY_NAME

    for folder in (root, *root.parents):
        for path in (folder / n for n in CONFIG_LOADERS_BY_NAME):
            if not path.is_file():
                continue
            try:
                if _pytest_loads(path) is not None:
                    return None
            except EditRefused:  # pytest's error, naming the file and line
                return path
    return None


def _has(root: Path, key: str) -> bool:
    return key in (ini_values(root) or ({}, None))[0]


def _key_lines(keys: dict[str, list[str]], toml: bool) -> str:
    """`keys` as lines to paste into a TOML table or an ini section."""
    if toml:
        return toml_table(keys).split("\n", 1)[1]
    return "".join(ini_key(k, v) for k, v in keys.items())


def _say_to_add(state: str, where: str, text: str, out: TextIO) -> bool:
    """Say what to add to an ini file left as it is; whether it already has every line."""
    if not text:
        out.write(f"{SAY}{state}, with a {SITE_KEY} value for each name: left as it is\n")
        return True
    out.write(f"{SAY}{state}: left as it is; add these lines to {where}:\n{text}")
    return False
