"""Outcomes as a terminal table (case x pipeline) and as JSON for trend tracking."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...atomic import write_atomic
from ...errors import Problem, UsageError
from ...model import ExecutionVerdict
from .timing import format_seconds

if TYPE_CHECKING:
    from ..check import Outcome

JSON_FORMAT = 1


def outcome_to_dict(o: Outcome) -> dict[str, Any]:
    """Plain data (for JSON and for shipping from an xdist worker)."""
    d = dataclasses.asdict(o)
    d["verdict"] = str(o.verdict)  # a plain string: xdist ships the rows as they are
    d["max_abs"] = o.max_abs
    d["ok"] = o.verdict is ExecutionVerdict.PASS
    if o.verdict.is_failure:
        d["reason"] = failure_reason(o)
    return d


def failure_reason(o: Outcome) -> str:
    """One line saying why a check failed: who refused the model at which stage (and pass),
    which result is wrong, or how the compiled code ended (crash, time limit)."""
    if o.refusal is not None:
        r = o.refusal
        by = "torch" if r.by == "torch" else "the compiler"
        where = f"stage '{r.stage}'" + (f", pass '{r.pass_name}'" if r.pass_name else "")
        return f"{o.verdict}: refused by {by} at {where}: {r.reason}"
    if o.comparison is not None and not o.comparison.ok:
        wrong = [line for line in o.comparison.format().splitlines() if ": matches (" not in line]
        return f"{o.verdict}: wrong results: {wrong[0].strip() if wrong else 'differ'}"
    error = (o.error or "").strip().splitlines()
    first = error[0].removeprefix("error: ") if error else "failed"
    return f"{o.verdict}: {first}"


def row_of(d: dict[str, Any]) -> list[str]:
    t, tt = d.get("timing"), d.get("torch_timing")
    median = t["median"] if t else None
    torch_median = tt["median"] if tt else None
    ratio = f"{median / torch_median:.2f}" if median and torch_median else "-"
    gflops = f"{d['flops'] / median / 1e9:.2f}" if d.get("flops") and median else "-"
    notes = []
    if (t and t.get("loaded")) or (tt and tt.get("loaded")):
        notes.append("LOADED")
    if d.get("cached"):
        notes.append("cached")
    if d.get("export"):
        notes.append(f"{d['export']}-export")
    max_abs = d.get("max_abs")
    return [
        d["case"],
        d["pipeline"] + (f" ({d['mode']})" if d.get("mode") and d["mode"] != "jit" else ""),
        d["verdict"],
        f"{max_abs:.2e}" if max_abs is not None else "-",
        format_seconds(median) if median else "-",
        format_seconds(torch_median) if torch_median else "-",
        ratio,
        gflops,
        ",".join(notes),
    ]


HEADER = ["case", "pipeline", "verdict", "max err", "median", "torch", "ratio", "GFLOP/s", "notes"]


def format_table(rows: Iterable[dict[str, Any]]) -> str:
    """A table, one row per outcome; `ratio` is native median / torch eager median (lower is
    faster)."""
    body = [row_of(d) for d in rows]
    if not body:
        return ""
    lines = [_tabulated(HEADER, body)]
    if any(r[-1].startswith("LOADED") or ",LOADED" in r[-1] for r in body):
        lines.append(
            "LOADED: other processes used CPU during timing; those figures are not trustworthy"
        )
    return "\n".join(lines)


def _tabulated(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    """Left-aligned text columns under a dashed rule, cells exactly as given."""
    from tabulate import tabulate  # here, so importing the plugin does not load it

    text = tabulate(body, headers=header, tablefmt="simple", disable_numparse=True)
    return "\n".join(line.rstrip() for line in text.splitlines())


def format_side_by_side(rows: Iterable[dict[str, Any]]) -> str:
    """Cases timed through more than one pipeline: torch and each pipeline's median in one row,
    with the ratio to torch (e.g. a plain pipeline next to its -blas twin)."""
    timed: dict[str, dict[str, dict[str, Any]]] = {}
    for d in rows:
        if d.get("verdict") == ExecutionVerdict.PASS and d.get("timing"):
            timed.setdefault(d["case"], {}).setdefault(d["pipeline"], d)
    cases = {c: by_pipe for c, by_pipe in timed.items() if len(by_pipe) > 1}
    if not cases:
        return ""
    pipelines: list[str] = []
    for by_pipe in cases.values():
        pipelines += [p for p in by_pipe if p not in pipelines]
    plain = [p for p in pipelines if not p.endswith("-blas")]
    pipelines = plain + [p for p in pipelines if p.endswith("-blas")]
    header = ["case", "torch", *pipelines]
    body = []
    for case, by_pipe in cases.items():
        torch_medians = sorted(
            d["torch_timing"]["median"] for d in by_pipe.values() if d.get("torch_timing")
        )
        torch_median = torch_medians[len(torch_medians) // 2] if torch_medians else None
        cells = [case, format_seconds(torch_median) if torch_median else "-"]
        for p in pipelines:
            row = by_pipe.get(p)
            if row is None:
                cells.append("")
                continue
            median = row["timing"]["median"]
            ratio = f" ({median / torch_median:.2f}x)" if torch_median else ""
            cells.append(format_seconds(median) + ratio)
        body.append(cells)
    return (
        _tabulated(header, body) + "\nmedian per call; (Nx) = pipeline median / torch eager median"
    )


def write_json(
    path: str | os.PathLike[str],
    rows: Sequence[dict[str, Any]],
    files: dict[str, dict[str, Any]] | None = None,
    make_parents: bool = True,
) -> None:
    """The run's timing report: execution outcomes (`results`) and RUN/CHECK files' verdicts
    and seconds (`files`, by node id); its folder is made when missing, with `make_parents`."""
    data = {
        "format": JSON_FORMAT,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "files": dict(files or {}),
        "results": list(rows),
    }
    text = json.dumps(data, indent=1, default=_plain) + "\n"
    write_atomic(path, text, make_parents=make_parents)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | set):
        return list(value)
    return str(value)


def read_report(path: Path) -> dict[str, Any]:
    """A timing report written by --mlirpipe-json (or merged), checked for its format."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(Problem(f"cannot read {path} as JSON: {exc}")) from None
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        raise UsageError(
            Problem(
                f"{path} is not a timing report of pytest-mlirpipe (format {JSON_FORMAT})",
                hint="write one with pytest --mlirpipe-json PATH",
            )
        )
    return data
