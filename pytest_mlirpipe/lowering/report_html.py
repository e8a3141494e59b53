"""A StageReport as one self-contained HTML page: chart, stage table, each stage's diff and IR."""

from __future__ import annotations

import html
import math
from importlib import resources
from pathlib import Path

from ..atomic import write_atomic
from .stage_report import StageReport, StageView

# Tableau 10: categorical colours that stay apart for most forms of colour blindness.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_DASHES = ("", "6 3", "2 3")  # past ten dialects the colours repeat with another dash
_WIDTH, _HEIGHT = 880, 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 24, 16, 110


def write_html(report: StageReport, path: str | Path, make_parents: bool = True) -> Path:
    """Write the report's page to `path` (whole or not at all); its folder is made if needed
    and `make_parents`."""
    write_atomic(path, render_html(report), make_parents=make_parents)
    return Path(path)


def render_html(report: StageReport) -> str:
    """The whole page: inline CSS, JS and SVG, nothing fetched from anywhere."""
    title = f"{report.source_name} through {report.pipeline}"
    stages = report.views[1:]
    total = sum(v.seconds or 0.0 for v in stages)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_asset('stage_report.css')}</style>",
        "</head><body>",
        f"<header><h1>{_e(report.source_name)}</h1>",
        f"<p>pipeline <b>{_e(report.pipeline)}</b>: {len(stages)} stage(s) run in "
        f"{total * 1e3:.1f} ms; {report.views[0].line_count} lines in, "
        f"{report.views[-1].line_count} lines out.</p>",
    ]
    if report.note:
        parts.append(f'<p class="note">{_e(report.note)}</p>')
    if report.failure:
        parts.append(f'<section class="failure"><pre>{_e(report.failure)}</pre></section>')
    parts += [
        "</header>",
        _chart_section(report),
        _stage_table(report),
        '<section id="stages"><h2>Stages</h2>',
        '<p class="controls"><button type="button" data-action="open-changed">'
        'expand changed stages</button> <button type="button" data-action="close-all">'
        "collapse all</button></p>",
        *(
            _stage_section(view, before, view.name == report.checked)
            for before, view in _pairs(report.views)
        ),
        "</section>",
        f"<script>{_asset('stage_report.js')}</script>",
        "</body></html>\n",
    ]
    return "\n".join(parts)


def _pairs(views: tuple[StageView, ...]) -> list[tuple[StageView | None, StageView]]:
    return [(views[i - 1] if i else None, view) for i, view in enumerate(views)]


def _chart_section(report: StageReport) -> str:
    return "\n".join(
        [
            '<section id="chart"><h2>Ops per dialect after each stage (log scale)</h2>',
            chart_svg(report),
            _legend(report),
            "<details><summary>the same counts as a table</summary>",
            _counts_table(report),
            "</details></section>",
        ]
    )


def chart_svg(report: StageReport) -> str:
    """A line chart: stages along x, op count along y (log scale, so a dialect of 3 ops shows
    beside one of 3,000), one `g.series` per dialect."""
    views = report.views
    top = max((n for v in views for n in (v.counts or {}).values()), default=0)
    decades = max(1, math.ceil(math.log10(1 + top)))
    step = (_WIDTH - _LEFT - _RIGHT) / max(len(views) - 1, 1)
    plot_h = _HEIGHT - _TOP - _BOTTOM

    def x(i: int) -> float:
        return _LEFT + i * step

    def y(n: int) -> float:
        return _TOP + plot_h * (1 - math.log10(1 + n) / decades)

    out = [
        f'<svg id="op-chart" role="img" viewBox="0 0 {_WIDTH} {_HEIGHT}" width="{_WIDTH}" '
        f'height="{_HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        "<title>ops per dialect after each stage (log scale)</title>",
    ]
    for n in (0, *(10**k for k in range(decades + 1))):
        out.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{y(n):.1f}" '
            f'y2="{y(n):.1f}"/><text class="tick" x="{_LEFT - 6}" y="{y(n) + 4:.1f}" '
            f'text-anchor="end">{n:,}</text>'
        )
    for i, view in enumerate(views):
        label = f"{view.number}. {view.name}" if view.number else view.name
        out.append(
            f'<a href="#stage-{view.number}"><text class="stage-label" '
            f'transform="translate({x(i):.1f},{_HEIGHT - _BOTTOM + 14}) rotate(-35)" '
            f'text-anchor="end">{_e(label)}</text></a>'
        )
    for k, dialect in enumerate(report.dialects):
        out.append(_series(dialect, k, views, x, y))
    out.append("</svg>")
    return "\n".join(out)


def _series(dialect: str, k: int, views, x, y) -> str:
    """One dialect's line (broken where a view's IR did not parse) and its points."""
    color, dash = PALETTE[k % len(PALETTE)], _DASHES[(k // len(PALETTE)) % len(_DASHES)]
    path, points, pen = [], [], "M"
    for i, view in enumerate(views):
        if view.counts is None:
            pen = "M"
            continue
        n = view.counts.get(dialect, 0)
        path.append(f"{pen}{x(i):.1f},{y(n):.1f}")
        pen = "L"
        where = "in the input" if view.number == 0 else f"after stage {view.number} ({view.name})"
        points.append(
            f'<circle cx="{x(i):.1f}" cy="{y(n):.1f}" r="3"><title>{_e(dialect)}: {n} ops '
            f"{_e(where)}</title></circle>"
        )
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<g class="series" data-dialect="{_e(dialect)}" stroke="{color}" fill="{color}">'
        f'<path d="{" ".join(path)}" fill="none"{dash_attr}/>{"".join(points)}</g>'
    )


def _legend(report: StageReport) -> str:
    items = []
    for k, dialect in enumerate(report.dialects):
        peak = max((v.counts or {}).get(dialect, 0) for v in report.views)
        items.append(
            f'<li data-dialect="{_e(dialect)}"><span class="swatch" style="background:'
            f'{PALETTE[k % len(PALETTE)]}"></span>{_e(dialect)} <small>(up to {peak})</small></li>'
        )
    if not items:
        return '<p class="note">No op could be counted: the IR did not parse here.</p>'
    return f'<ul class="legend">{"".join(items)}</ul>'


def _counts_table(report: StageReport) -> str:
    head = "".join(f"<th>{v.number}</th>" for v in report.views)
    rows = []
    for dialect in report.dialects:
        cells = "".join(
            f"<td>{'?' if v.counts is None else v.counts.get(dialect, 0)}</td>"
            for v in report.views
        )
        rows.append(f"<tr><th>{_e(dialect)}</th>{cells}</tr>")
    return f'<table class="counts"><tr><th>dialect \\ stage</th>{head}</tr>{"".join(rows)}</table>'


def _stage_table(report: StageReport) -> str:
    rows = []
    for view in report.views:
        ops = "?" if view.counts is None else sum(view.counts.values())
        ms = "" if view.seconds is None else f"{view.seconds * 1e3:.1f}"
        rows.append(
            f'<tr><td>{view.number}</td><td><a href="#stage-{view.number}">{_e(view.name)}</a>'
            f'</td><td class="num">{ms}</td><td class="num">{view.line_count}</td>'
            f'<td class="num">{ops}</td><td>{_change(view)}</td></tr>'
        )
    return (
        '<section id="summary"><h2>Stages at a glance</h2><table class="stages"><tr>'
        "<th>#</th><th>stage</th><th>ms</th><th>lines</th><th>ops</th><th>change</th></tr>"
        f"{''.join(rows)}</table></section>"
    )


def _change(view: StageView) -> str:
    if view.number == 0:
        return "input"
    if not view.changed:
        return '<span class="same">no change</span>'
    added, removed = view.diff_stat()
    return f'<span class="add">+{added}</span> <span class="del">&minus;{removed}</span>'


def _stage_section(view: StageView, before: StageView | None, checked: bool = False) -> str:
    """A collapsed <details> per view: its passes, its diff (open once expanded), its IR; the
    stage a failing RUN line checked is open and marked."""
    time = "" if view.seconds is None else f' <span class="time">{view.seconds * 1e3:.1f} ms</span>'
    css = "stage" if view.changed else "stage unchanged"
    css += " checked" if checked else ""
    mark = ' <span class="checked-mark">checked by the failing RUN line</span>' if checked else ""
    parts = [
        f'<details class="{css}" id="stage-{view.number}" data-stage="{_e(view.name)}"'
        f"{' open' if checked else ''}>",
        f'<summary><span class="num">{view.number}.</span> <b>{_e(view.name)}</b>{time} '
        f"{_change(view) if view.number else ''}{mark}</summary>",
    ]
    if view.passes:
        parts.append(f'<p class="passes">passes: <code>{_e(", ".join(view.passes))}</code></p>')
    if before is not None and view.diff:
        parts.append(
            f'<details class="diff" open><summary>diff against {_e(_label(before))}</summary>'
            f"<pre>{_diff_markup(view.diff)}</pre></details>"
        )
    parts.append(
        f'<details class="ir"{" open" if before is None else ""}><summary>IR '
        f"{_e(_label(view))} ({view.line_count} lines)</summary><pre>{_e(view.ir)}</pre></details>"
    )
    parts.append("</details>")
    return "\n".join(parts)


def _label(view: StageView) -> str:
    return view.name if view.number == 0 else f"after stage {view.number} ({view.name})"


def _diff_markup(lines: tuple[str, ...]) -> str:
    """Escaped diff text; only added, removed and hunk lines get an element of their own."""
    out = []
    for line in lines:
        text = _e(line)
        if line.startswith(("+++", "---")):
            out.append(f'<span class="file">{text}</span>')
        elif line.startswith("+"):
            out.append(f'<span class="add">{text}</span>')
        elif line.startswith("-"):
            out.append(f'<span class="del">{text}</span>')
        elif line.startswith("@@"):
            out.append(f'<span class="hunk">{text}</span>')
        else:
            out.append(text)
    return "".join(out)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _e(text: str) -> str:
    return html.escape(text, quote=True)
