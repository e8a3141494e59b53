"""`mlirpipe list` and `mlirpipe passes`: the pipelines with their stages, every pass."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from ..errors import MlirpipeError, Problem, did_you_mean
from ..lowering.catalog import catalog_for, known_pass_names
from ..lowering.host_cpu import CPU_FEATURES_ENV
from ..options import add_cli_options
from ..tools.common import (
    named_pipelines,
)


def add_list(sub) -> None:
    ls = sub.add_parser(
        "list",
        help="every pipeline, its stages, their reasons and passes",
        description="List every pipeline with its stages, reasons and passes. A stage marked "
        "(cpu.F) took its [stage.cpu.F] table: the host has the CPU feature F "
        "($MLIRPIPE_CPU_FEATURES=avx2,fma sets the features for a run; empty: none).",
    )
    add_cli_options(ls, "pipelines")
    ls.set_defaults(body=_list)


def _list(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    named_pipelines(args.pipelines_dir, [])  # a --pipelines-dir that is not there: exit 2
    catalog = catalog_for(args.pipelines_dir)
    catalog.check()  # a broken pipeline file is an error here, not a shorter list
    blocks = []
    for pipe in catalog:
        lines = [f"{pipe.name}: {pipe.input.value} -> {pipe.output.value}"]
        if pipe.description:
            lines.append(f"  {pipe.description}")
        lines.append(f"  file: {catalog.sources.get(pipe.name, pipe.location.path)}")
        if pipe.extends:
            lines.append(f"  extends: {pipe.extends}")
        if pipe.tool:
            lines.append(f"  tool: {pipe.tool.command} (runs the stages, not the bindings)")
        lines.append("  stages:")
        for number, stage in enumerate(pipe.stages, 1):
            table = f" (cpu.{stage.cpu})" if stage.cpu else ""
            lines.append(f"    {number}. {stage.name}{table}: {stage.reason}")
            lines.append(f"       passes: {', '.join(stage.passes)}")
        blocks.append("\n".join(lines) + "\n")
    stdout.write("\n".join(blocks))
    if any(stage.cpu for pipe in catalog for stage in pipe.stages):
        source = (
            f"${CPU_FEATURES_ENV}" if CPU_FEATURES_ENV in os.environ else "this host's CPU features"
        )
        stdout.write(
            f"\n(cpu.F: the stage's [stage.cpu.F] table, which {source} chose; "
            f"{CPU_FEATURES_ENV}=... sets the features for a run)\n"
        )
    return 0


def add_passes(sub) -> None:
    ps = sub.add_parser(
        "passes",
        help="every pass name a pipeline may use",
        description="List every pass name a pipeline may use; the project's "
        "Python-defined passes are marked (python).",
    )
    ps.add_argument("--grep", metavar="TEXT", help="only names containing TEXT")
    ps.set_defaults(body=_passes)


def _passes(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..lowering import passes as python_passes

    own = python_passes.all_passes()
    names = known_pass_names()
    shown = [n for n in names if args.grep is None or args.grep.lower() in n.lower()]
    if not shown:
        raise MlirpipeError(
            Problem(
                f"no pass name contains '{args.grep}'",
                hint=did_you_mean(args.grep, names) or "run `mlirpipe passes` for them all",
            )
        )
    for name in shown:
        stdout.write(f"{name} (python)  {own[name].description}\n" if name in own else name + "\n")
    return 0
