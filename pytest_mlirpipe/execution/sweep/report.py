"""A sweep's results as a matrix (JSON, HTML, meant to be diffed) and as summary tables."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ...model import SweepVerdict
from .verdicts import VERDICTS, EntryResult

MATRIX_FORMAT = 1
# A cell's colour in the HTML matrix.
_COLOURS = {
    SweepVerdict.PASS: "#c8e6c9",
    SweepVerdict.MISMATCH: "#ef9a9a",
    SweepVerdict.NOT_LOWERED: "#fff59d",
    SweepVerdict.CRASH: "#ce93d8",
    SweepVerdict.TORCH: "#e0e0e0",
    SweepVerdict.HARNESS: "#ffcc80",
}


def row_name(r: EntryResult) -> str:
    """The matrix row of an entry: the op, with the dtype and sample when not the defaults."""
    name = r.op if r.dtype == "float32" else f"{r.op} [{r.dtype}]"
    return name if r.sample == 0 else f"{name} #{r.sample}"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("torch-mlir", "torch"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


def matrix(results: Iterable[EntryResult], pipelines: Sequence[str]) -> dict[str, Any]:
    """Row (op) × pipeline -> verdict and detail; sorted, without timings, so two sweeps diff."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for r in results:
        cell: dict[str, Any] = {"verdict": str(r.verdict), "detail": r.detail}
        if r.stage:
            cell["stage"] = r.stage
        if r.pass_name:
            cell["pass"] = r.pass_name
        if r.max_abs is not None and r.verdict in (SweepVerdict.PASS, SweepVerdict.MISMATCH):
            cell["max_abs"] = float(f"{r.max_abs:.3g}")
        rows.setdefault(row_name(r), {})[r.pipeline] = cell
    return {
        "format": MATRIX_FORMAT,
        "versions": versions(),
        "pipelines": list(pipelines),
        "ops": {name: dict(sorted(rows[name].items())) for name in sorted(rows)},
    }


def matrix_json(m: dict[str, Any]) -> str:
    return json.dumps(m, indent=1, sort_keys=False) + "\n"


def counts(results: Iterable[EntryResult]) -> dict[str, Counter]:
    """Pipeline -> how many entries got each verdict."""
    found: dict[str, Counter] = {}
    for r in results:
        found.setdefault(r.pipeline, Counter())[str(r.verdict)] += 1
    return found


def summary_table(results: Iterable[EntryResult], pipelines: Sequence[str]) -> str:
    """Counts per pipeline per verdict, as a terminal (and Markdown-friendly) table."""
    from tabulate import tabulate

    by_pipeline = counts(results)
    rows = []
    for p in pipelines:
        c = by_pipeline.get(p, Counter())
        rows.append([p, *(c[v] for v in VERDICTS), sum(c.values())])
    return tabulate(rows, headers=["pipeline", *VERDICTS, "total"], tablefmt="github")


def _cause(detail: str) -> str:
    """A HARNESS detail with its numbers, shapes and quoted names folded, to group by."""
    text = re.sub(r"tensor<[^>]*>+", "tensor<…>", detail)
    text = re.sub(r"[`'][^`']*'", "'…'", text)
    text = re.sub(r"\d+", "N", text)
    return text


def harness_causes(results: Iterable[EntryResult], top: int = 10) -> str:
    """The commonest HARNESS causes, grouped by message: count, cause, a few ops."""
    from tabulate import tabulate

    groups: dict[str, list[str]] = {}
    for r in results:
        if r.verdict is SweepVerdict.HARNESS:
            groups.setdefault(_cause(r.detail), []).append(f"{r.op} ({r.pipeline})")
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    rows = [
        [len(ops), cause, ", ".join(ops[:3]) + (" ..." if len(ops) > 3 else "")]
        for cause, ops in ranked
    ]
    return tabulate(rows, headers=["entries", "HARNESS cause", "e.g."], tablefmt="github")


def matrix_html(m: dict[str, Any], summary: str) -> str:
    """The matrix as one self-contained HTML page: a cell per op and pipeline, coloured by
    verdict, with its stage and pass and its detail (a PASS's max error on hover)."""
    e = html.escape
    pipelines = m["pipelines"]
    head = "".join(f"<th>{e(p)}</th>" for p in pipelines)
    body = []
    for name, cells in m["ops"].items():
        tds = []
        for p in pipelines:
            cell = cells.get(p)
            if cell is None:
                tds.append("<td></td>")
                continue
            where = " / ".join(x for x in (cell.get("stage"), cell.get("pass")) if x)
            detail = cell["detail"]
            title = detail or (f"max abs error {cell['max_abs']}" if "max_abs" in cell else "")
            tds.append(
                f'<td style="background:{_COLOURS.get(cell["verdict"], "#fff")}" '
                f'title="{e(title)}"><b>{e(cell["verdict"])}</b>'
                + (f" <i>{e(where)}</i>" if where else "")
                + (f"<br><small>{e(detail)}</small>" if detail else "")
                + "</td>"
            )
        body.append(f"<tr><td><code>{e(name)}</code></td>{''.join(tds)}</tr>")
    v = ", ".join(f"{k} {val}" for k, val in m["versions"].items())
    return _PAGE.format(versions=e(v), summary=e(summary), head=head, body="\n".join(body))


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>mlirpipe OpInfo sweep</title>
<style>
body {{ font-family: sans-serif; font-size: 13px; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #bbb; padding: 2px 6px; vertical-align: top; max-width: 40em; }}
small {{ color: #333; }}
</style></head><body>
<h1>mlirpipe OpInfo sweep</h1>
<p>{versions}</p>
<pre>{summary}</pre>
<table><tr><th>op</th>{head}</tr>
{body}
</table></body></html>
"""
