"""Read one pipeline file: its TOML tables, keys and stages, each kept with its line."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import Problem, did_you_mean
from ..model import Location, Stage
from .host_cpu import host_cpu_features, is_feature_name
from .passes.transform_script import format_sizes
from .pipeline_text import PipelineSyntaxError, parse_pipeline

KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_PIPELINE_KEYS = frozenset(
    {"name", "description", "input", "output", "extends", "remove", "tool", "timeout"}
)
_STAGE_KEYS = frozenset(
    {
        "name",
        "passes",
        "reason",
        "after",
        "before",
        "replaces",
        "transform",
        "entry-point",
        "sizes",
        "cpu",
    }
)
# What a [stage.cpu.FEATURE] table may set for a host with that feature.
_CPU_KEYS = frozenset({"passes", "sizes", "reason"})
# Sizes of transform scripts given for this run ($MLIRPIPE_TRANSFORM_SIZES), over the files'.
SizeOverrides = dict[str, tuple[int, ...]]


@dataclass(slots=True)
class RawStage:
    """A [[stage]] table as read: its data and where it is."""

    data: dict
    location: Location
    line_range: tuple[int, int]
    checked: Stage | None = None  # set once check_stage accepted it
    size_overrides: SizeOverrides = field(default_factory=dict)
    cpu_features: frozenset[str] | None = None  # None: the host's (host_cpu.py)
    # passes of the cpu tables the host did not pick, each with the lines of its table
    other_cpu_passes: list[tuple[tuple[str, ...], tuple[int, int]]] = field(default_factory=list)
    cpu_table: str | None = None  # the feature whose table applies (set by for_this_cpu)


@dataclass(slots=True)
class RawPipeline:
    """A pipeline file as read, before `extends` is applied; `problems` found while reading."""

    name: str
    data: dict
    stages: list[RawStage]
    path: Path
    text: str
    location: Location
    problems: list[Problem] = field(default_factory=list)


class Locator:
    """Finds the line of a key or a value in TOML text (tomllib keeps no positions)."""

    def __init__(self, path: Path, text: str):
        self.path = str(path)
        self.lines = text.splitlines()

    def table_lines(self, header: str) -> list[int]:
        pat = re.compile(r"^\s*" + re.escape(header) + r"\s*(#.*)?$")
        return [i + 1 for i, ln in enumerate(self.lines) if pat.match(ln)]

    def find(self, needle: str, start: int = 1, end: int | None = None) -> Location:
        stop = len(self.lines) if end is None else end
        for i in range(max(start, 1) - 1, stop):
            col = self.lines[i].find(needle)
            if col >= 0:
                return Location(self.path, i + 1, col + 1)
        return Location(self.path, start if start > 0 else 0)

    def key(self, key: str, start: int = 1, end: int | None = None) -> Location:
        stop = len(self.lines) if end is None else end
        pat = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
        for i in range(max(start, 1) - 1, stop):
            if pat.match(self.lines[i]):
                return Location(self.path, i + 1, self.lines[i].index(key) + 1)
        return Location(self.path, start)


def read_pipeline_file(path: Path) -> tuple[RawPipeline | None, list[Problem]]:
    """The file's pipeline, not yet checked beyond its tables and keys (their problems travel
    with it); or None and the problems that stop it being read at all."""
    text, data, problems = _parse_toml(path)
    if data is None:
        return None, problems
    head = data.get("pipeline")
    if not isinstance(head, dict):
        return None, [
            Problem(
                "a pipeline file needs a [pipeline] table",
                Location(str(path), 1),
                'start the file with [pipeline] and name = "..."',
            )
        ]
    loc = Locator(path, text)
    head_line = (loc.table_lines("[pipeline]") or [1])[0]
    problems = _unknown_tables_and_keys(data, head, loc, head_line)
    stages = _raw_stages(data, loc, head_line, problems)
    name = head.get("name", path.stem)
    pipe = RawPipeline(str(name), head, stages, path, text, Location(str(path), head_line))
    pipe.problems = problems
    return pipe, []


def _parse_toml(path: Path) -> tuple[str, dict | None, list[Problem]]:
    """(text, data, []) of a readable UTF-8 TOML file, else ("", None, [the problem])."""
    try:
        raw_bytes = path.read_bytes()
    except OSError as exc:
        return (
            "",
            None,
            [Problem(f"cannot read pipeline file: {exc.strerror}", Location(str(path)))],
        )
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = Problem(
            f"pipeline file is not UTF-8 (bad byte at offset {exc.start})",
            Location(str(path)),
            "save the file as UTF-8",
        )
        return "", None, [problem]
    try:
        return text, tomllib.loads(text), []
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        loc = Location(str(path), int(m.group(1)), int(m.group(2))) if m else Location(str(path))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        problem = Problem(
            f"malformed TOML: {msg}", loc, "see pipelines/refbackend.toml for the format"
        )
        return text, None, [problem]


def _unknown_tables_and_keys(data: dict, head: dict, loc: Locator, head_line: int) -> list[Problem]:
    problems = []
    for key in data:
        if key not in ("pipeline", "stage"):
            problems.append(
                Problem(
                    f"unknown table [{key}]",
                    loc.find(key),
                    "a pipeline file holds [pipeline] and [[stage]] tables only",
                )
            )
    for key in head:
        if key not in _PIPELINE_KEYS:
            problems.append(
                Problem(
                    f"unknown key '{key}' in [pipeline]",
                    loc.key(key, head_line),
                    did_you_mean(key, _PIPELINE_KEYS)
                    or f"known keys: {', '.join(sorted(_PIPELINE_KEYS))}",
                )
            )
    return problems


def _raw_stages(data: dict, loc: Locator, head_line: int, problems: list[Problem]) -> list:
    """The [[stage]] tables, each with the lines it spans."""
    raw_stages = data.get("stage", [])
    if not isinstance(raw_stages, list) or not all(isinstance(s, dict) for s in raw_stages):
        problems.append(Problem("'stage' must be [[stage]] tables", loc.find("stage")))
        raw_stages = []
    starts = loc.table_lines("[[stage]]")
    stages = []
    for i, st in enumerate(raw_stages):
        start = starts[i] if i < len(starts) else head_line
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(loc.lines)
        stages.append(RawStage(st, Location(loc.path, start), (start, end)))
    return stages


def check_stage(
    raw: RawStage, loc: Locator, extending: bool, problems: list[Problem]
) -> Stage | None:
    """The stage of a [[stage]] table, or None; adds every problem found to `problems`."""
    start, end = raw.line_range
    data = raw.data
    _check_stage_keys(data, loc, start, end, problems)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        problems.append(
            Problem("a [[stage]] has no name", raw.location, 'add name = "kebab-case-name"')
        )
        return None
    if not KEBAB.match(name):
        problems.append(
            Problem(
                f"stage name '{name}' is not kebab-case",
                loc.key("name", start, end),
                "use lower-case words joined by '-', e.g. 'finalizing-bufferize'",
            )
        )
    if not extending:
        _check_no_placement(data, name, loc, start, end, problems)
    raw = for_this_cpu(raw, name, loc, problems)
    data = raw.data
    transform = transform_fragment(raw, name, loc, problems)
    passes = _stage_passes(raw, f"stage '{name}'", loc, problems, optional="transform" in data)
    if passes is None:
        return None
    if "transform" in data:  # the script runs first; a problem with it or the passes: ()
        malformed = "passes" in data and not passes
        passes = () if transform is None or malformed else (transform, *passes)
    reason = data.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        problems.append(
            Problem(
                f"stage '{name}' has no reason",
                raw.location,
                'add reason = "one line saying why the stage is there"',
            )
        )
        reason = ""
    if not passes:
        return None
    return Stage(name, passes, reason.strip(), loc.key("name", start, end), raw.cpu_table)


def _check_stage_keys(data: dict, loc: Locator, start: int, end: int, problems: list) -> None:
    for key in data:
        if key not in _STAGE_KEYS:
            problems.append(
                Problem(
                    f"unknown key '{key}' in [[stage]]",
                    loc.key(key, start, end),
                    did_you_mean(key, _STAGE_KEYS)
                    or f"known keys: {', '.join(sorted(_STAGE_KEYS))}",
                )
            )


def for_this_cpu(raw: RawStage, name: str, loc: Locator, problems: list[Problem]) -> RawStage:
    """The stage as this host sees it: of its `[stage.cpu.FEATURE]` tables, the first (in file
    order) whose feature the host has gives its `passes` and `reason` in place of the stage's
    and its `sizes` over the stage's. Every table is checked, whichever the host picks; the
    passes of the others are kept in `raw.other_cpu_passes` for the pass-name check."""
    tables = raw.data.get("cpu")
    if tables is None:
        return raw
    start, end = raw.line_range
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        where = loc.key("cpu", start, end)
        problems.append(
            Problem(
                f"stage '{name}': cpu must hold one table per CPU feature, not {tables!r}",
                where if where.col else raw.location,
                "e.g. [stage.cpu.avx512f] below the stage, with passes = [...] and/or "
                "sizes = { ... }",
            )
        )
        return raw
    chosen = chosen_cpu_table(raw.data, raw.cpu_features)
    raw.other_cpu_passes = []
    picked = None
    for feature, table in tables.items():
        ok, passes = _check_cpu_table(raw, name, feature, table, loc, problems)
        if feature == chosen:
            picked = table if ok else None
        elif passes:
            raw.other_cpu_passes.append((passes, _cpu_table_lines(loc, feature, start, end)))
    if picked is None:
        return raw
    data = {k: v for k, v in raw.data.items() if k != "cpu"}
    data.update({k: picked[k] for k in ("passes", "reason") if k in picked})
    own = _stage_sizes(data.get("sizes", {}), "", raw.location, [])
    if "sizes" in picked and own is not None:  # broken sizes of the stage: reported as they are
        data["sizes"] = {**data.get("sizes", {}), **picked["sizes"]}
    return replace(raw, data=data, cpu_table=chosen)


def chosen_cpu_table(data: dict, features: frozenset[str] | None) -> str | None:
    """The feature of the stage's cpu table that applies to a host with `features` (None: this
    host's), or None."""
    tables = data.get("cpu")
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        return None  # no table applies; for_this_cpu reports it
    have = features if features is not None else host_cpu_features()
    return next((f for f in tables if is_feature_name(f) and f in have), None)


def _check_cpu_table(
    raw: RawStage, name: str, feature: str, table: dict, loc: Locator, problems: list[Problem]
) -> tuple[bool, tuple[str, ...]]:
    """(no problem, its passes) of one `[stage.cpu.FEATURE]` table; its problems, each at its
    line in the table, go to `problems`."""
    first, last = _cpu_table_lines(loc, feature, *raw.line_range)
    header = loc.find("cpu", first, first)  # [stage.cpu.F], or the line `cpu = {...}`
    what = f"[stage.cpu.{feature}] of stage '{name}'"
    found: list[Problem] = []
    if not is_feature_name(feature):
        found.append(
            Problem(
                f"stage '{name}': {feature!r} is not a CPU feature name",
                header,
                "name a feature in lower case as the host lists it (Linux: the flags in "
                "/proc/cpuinfo, e.g. avx512f, sse4_1)",
            )
        )
    for key in table:
        if key not in _CPU_KEYS:
            where = loc.key(key, first, last)
            found.append(
                Problem(
                    f"unknown key '{key}' in {what}",
                    where if where.col else header,
                    did_you_mean(key, _CPU_KEYS)
                    or f"a cpu table sets {', '.join(sorted(_CPU_KEYS))}",
                )
            )
    passes: tuple[str, ...] | None = ()
    if "passes" in table:
        passes = _stage_passes(RawStage(table, header, (first, last)), what, loc, found)
    if "sizes" in table:
        where = loc.key("sizes", first, last)
        _stage_sizes(table["sizes"], what, where, found)
        if "transform" not in raw.data:
            found.append(
                Problem(
                    f"{what} gives sizes but the stage has no transform script",
                    where,
                    'give the stage transform = "script.mlir", or drop the sizes',
                )
            )
    problems.extend(found)
    return not found, passes or ()


def _cpu_table_lines(loc: Locator, feature: str, start: int, end: int) -> tuple[int, int]:
    """The lines of a `[stage.cpu.FEATURE]` table inside the stage's (start, end): from its
    header to the line before the next table header; the `cpu = ...` line for an inline one."""
    for header in (f"[stage.cpu.{feature}]", f'[stage.cpu."{feature}"]'):
        lines = [n for n in loc.table_lines(header) if start <= n <= end]
        if lines:
            nxt = [n for n in _header_lines(loc) if lines[0] < n <= end]
            return lines[0], (nxt[0] - 1 if nxt else end)
    line = loc.key("cpu", start, end).line
    return line, line


def _header_lines(loc: Locator) -> list[int]:
    return [i + 1 for i, ln in enumerate(loc.lines) if ln.lstrip().startswith("[")]


def _check_no_placement(
    data: dict, name: str, loc: Locator, start: int, end: int, problems: list
) -> None:
    """after/before/replaces place a stage among its parent's: only for an extending pipeline."""
    for key in ("after", "before", "replaces"):
        if key in data:
            problems.append(
                Problem(
                    f"stage '{name}' uses '{key}', which only a pipeline that `extends` "
                    "another may use",
                    loc.key(key, start, end),
                    "list the stages in order instead",
                )
            )


def transform_fragment(
    raw: RawStage, name: str, loc: Locator, problems: list[Problem]
) -> str | None:
    """The `mlirpipe-transform{...}` pass that runs the stage's `transform` script (a path
    relative to the pipeline file) with its `sizes` (the run's overrides over the file's);
    None when the stage has no script (or a problem)."""
    start, end = raw.line_range
    data = raw.data
    if "transform" not in data:
        if "sizes" in data:
            problems.append(
                Problem(
                    f"stage '{name}' gives sizes but no transform script",
                    loc.key("sizes", start, end),
                    'add transform = "script.mlir" (a file next to the pipeline file)',
                )
            )
        return None
    script = data["transform"]
    path = Path(loc.path).parent / script if isinstance(script, str) else None
    if path is None or not path.is_file():
        problems.append(
            Problem(
                f"stage '{name}': transform script {script!r} not found"
                + (f" (looked for {path})" if path is not None else ""),
                loc.key("transform", start, end),
                "give the path of a transform-dialect .mlir file, relative to the pipeline file",
            )
        )
        return None
    where = loc.key("sizes", start, end)
    sizes = _stage_sizes(data.get("sizes", {}), f"stage '{name}'", where, problems)
    if sizes is None:
        return None
    sizes.update({k: v for k, v in raw.size_overrides.items() if k in sizes})
    options = f'script="{path.resolve()}"'
    entry = data.get("entry-point")
    if entry is not None:
        if not isinstance(entry, str) or not re.fullmatch(r"[\w.$-]+", entry):
            problems.append(
                Problem(
                    f"stage '{name}': entry-point must name a transform.named_sequence, "
                    f"not {entry!r}",
                    loc.key("entry-point", start, end),
                    'e.g. entry-point = "__transform_main" (the default)',
                )
            )
            return None
        options += f" entry-point={entry}"
    return (
        f'mlirpipe-transform{{{options} sizes="{format_sizes(sizes)}"}}'
        if sizes
        else (f"mlirpipe-transform{{{options}}}")
    )


def _stage_sizes(
    value: object, what: str, where: Location, problems: list[Problem]
) -> dict[str, tuple[int, ...]] | None:
    """A stage's (`what`: "stage 'x'" or a cpu table of it) `sizes = { name = [n, ...] }` (a
    number alone is a list of one)."""
    ok = isinstance(value, dict)
    sizes: dict[str, tuple[int, ...]] = {}
    for key, v in value.items() if isinstance(value, dict) else ():
        items = [v] if isinstance(v, int) else v
        if (
            not KEBAB.match(key)
            or not isinstance(items, list)
            or not items
            or not all(isinstance(i, int) and not isinstance(i, bool) and i > 0 for i in items)
        ):
            ok = False
            break
        sizes[key] = tuple(items)
    if not ok:
        problems.append(
            Problem(
                f"{what}: sizes must map kebab-case names to lists of positive "
                f"integers, not {value!r}",
                where,
                "e.g. sizes = { block = [64, 256], register = [8, 32, 1] }",
            )
        )
        return None
    return sizes


def _stage_passes(
    raw: RawStage, what: str, loc: Locator, problems: list[Problem], optional: bool = False
) -> tuple[str, ...] | None:
    """The stage's pass fragments, stripped: None when it has none, () when one is malformed
    (its reason is still checked then). With `optional` (a transform stage), none is ()."""
    start, end = raw.line_range
    passes = raw.data.get("passes")
    if optional and "passes" not in raw.data:
        return ()
    if isinstance(passes, str):
        passes = [passes]
    if (
        not passes
        or not isinstance(passes, list)
        or not all(isinstance(p, str) and p.strip() for p in passes)
    ):
        problems.append(
            Problem(
                f"{what} has no passes",
                loc.key("passes", start, end) if "passes" in raw.data else raw.location,
                'give passes = ["pass-a", "func.func(pass-b)"]',
            )
        )
        return None
    ok = True
    for p in passes:
        try:
            parse_pipeline(p)
        except PipelineSyntaxError as exc:
            where = loc.find(p, start, end)
            problems.append(
                Problem(
                    f"malformed pass pipeline {p!r} in {what}: {exc}",
                    Location(where.path, where.line, where.col + exc.offset)
                    if where.col
                    else where,
                    "use MLIR's textual syntax: pass{opt=value}, op-name(nested-passes)",
                )
            )
            ok = False
    return tuple(p.strip() for p in passes) if ok else ()
