"""`mlirpipe init`: a lit suite's site values found and written for pytest and lit."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO


def add_init(sub) -> None:
    it = sub.add_parser(
        "init",
        help="give an existing lit suite what its lit.cfg.py (or lit.cfg) expects from a build",
        description="In a compiler repository with a lit suite (run anywhere in it: it works "
        "at the repository's root): find its lit configs, *-opt tools and FileCheck; guess the "
        "values its configs read but never set (what a build's lit.site.cfg.py sets), print "
        "each guess, and write them to pyproject.toml with a lit.site.cfg.py that reads them, "
        "for pytest and lit alike. Never overwrites a file: when pytest reads another ini file "
        "(pytest.ini, tox.ini, setup.cfg), it prints the lines to add there.",
        epilog="Exit status: 0 ready to run; 1 no lit suite, a lit config that does not "
        "parse, or something left to fill in (it says what).",
    )
    it.set_defaults(body=_init)


def _init(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:

    from .init import init

    return init(Path.cwd(), stdout)
