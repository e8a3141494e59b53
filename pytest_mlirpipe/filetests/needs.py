"""What a repo's lit configs expect on `config` before they run: names read but never set."""

from __future__ import annotations

import ast
import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .discovery import LOCAL_CONFIG_NAMES, MAIN_CONFIG_NAMES, SITE_CONFIG_NAMES


@dataclass(frozen=True, slots=True)
class Need:
    """`config.NAME` read at PATH:LINE (or, for lit.llvm, the call that needs it)."""

    name: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class ConfigNeeds:
    attributes: tuple[Need, ...]  # read somewhere, set nowhere, not lit's own
    llvm_initialize: Need | None  # where `llvm_config` is used with no lit.llvm.initialize


def lit_own_names() -> frozenset[str]:
    """What lit's TestingConfig has before any config file runs."""
    from lit.TestingConfig import TestingConfig

    params = inspect.signature(TestingConfig.__init__).parameters
    return frozenset(params) | frozenset(dir(TestingConfig)) - {"self"}


class ConfigReadError(Exception):
    """A lit config that is not Python this module can read (a syntax error, not UTF-8)."""

    def __init__(self, path: str, line: int | None, reason: str):
        super().__init__(path, line, reason)
        self.path = path
        self.line = line
        self.reason = reason


def read_needs(paths: Sequence[Path]) -> ConfigNeeds:
    """The needs of the lit configs at `paths` (lit.cfg.py, lit.local.cfg, ...); raises
    ConfigReadError, located, for one that does not parse."""
    sources = []
    for path in paths:
        try:
            sources.append((str(path), path.read_text(encoding="utf-8")))
        except UnicodeDecodeError as error:
            raise ConfigReadError(str(path), None, f"not UTF-8 text ({error.reason})") from None
    try:
        return needs_of(sources)
    except SyntaxError as error:
        reason = f"{type(error).__name__}: {error.msg}"
        raise ConfigReadError(error.filename or "", error.lineno, reason) from None


def suite_needs(site_file: Path) -> tuple[str, ...]:
    """The names the lit configs of the suite whose site config is `site_file` need: the other
    configs in its folder and the local configs below it; () when one does not parse (lit
    says so when it loads it)."""
    folder = site_file.parent
    configs = [folder / n for n in (*SITE_CONFIG_NAMES, *MAIN_CONFIG_NAMES) if n != site_file.name]
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith((".", "Output", "__"))]
        configs += [Path(here, n) for n in LOCAL_CONFIG_NAMES if n in files][:1]  # lit's choice
    try:
        needs = read_needs([c for c in configs if c.is_file()])
    except (ConfigReadError, OSError):
        return ()
    return tuple(n.name for n in needs.attributes)


def needs_of(sources: Sequence[tuple[str, str]]) -> ConfigNeeds:
    """The names the configs (path, text) read from `config` but never set, in order of
    first use, and whether they use `llvm_config` without initializing it."""
    reads: list[Need] = []
    sets: set[str] = set()
    llvm_uses: list[Need] = []
    initialized = False
    for path, text in sources:
        tree = ast.parse(text, filename=path)
        found = sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0))
        for node in found:
            if isinstance(node, ast.Attribute) and _is_name(node.value, "config"):
                if isinstance(node.ctx, ast.Load):
                    reads.append(Need(node.attr, str(path), node.lineno))
                else:
                    sets.add(node.attr)
            elif isinstance(node, ast.Call):
                sets.update(_setattr_name(node))
                initialized = initialized or _calls(node, "initialize")
                if _calls(node, "use_default_substitutions"):  # lit reads llvm_tools_dir
                    reads.append(Need("llvm_tools_dir", str(path), node.lineno))
            elif isinstance(node, ast.Name) and node.id == "llvm_config":
                llvm_uses.append(Need("llvm_config", str(path), node.lineno))
    own = lit_own_names()
    needed: dict[str, Need] = {}
    for need in reads:
        if need.name not in sets and need.name not in own:
            needed.setdefault(need.name, need)
    llvm = llvm_uses[0] if llvm_uses and not initialized else None
    return ConfigNeeds(tuple(needed.values()), llvm)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _calls(node: ast.Call, name: str) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == name) or _is_name(func, name)


def _setattr_name(node: ast.Call) -> set[str]:
    """{NAME} of `setattr(config, "NAME", ...)`."""
    if _is_name(node.func, "setattr") and len(node.args) >= 2 and _is_name(node.args[0], "config"):
        name = node.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return {name.value}
    return set()
