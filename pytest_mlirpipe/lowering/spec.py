"""Load, compose and validate pipelines from `pipelines/*.toml` (every problem reported at once)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PipelineSpecError, Problem, did_you_mean
from ..model import IRLevel, Location, Pipeline, Stage
from .pipeline_text import PipelineSyntaxError, parse_pipeline

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_PIPELINE_KEYS = {"name", "description", "input", "output", "extends", "remove"}
_STAGE_KEYS = {"name", "passes", "reason", "after", "before", "replaces"}
_LEVELS = [lvl.value for lvl in IRLevel]


def builtin_pipeline_dirs() -> list[Path]:
    """The shipped pipelines: packaged in a wheel, or the checkout's top-level `pipelines/`."""
    here = Path(__file__).resolve().parent.parent
    dirs = [here / "_pipelines", here.parent / "pipelines"]
    return [d for d in dirs if d.is_dir()][:1]


@dataclass(slots=True)
class _RawStage:
    data: dict
    location: Location
    line_range: tuple[int, int]
    checked: Stage | None = None  # set once _check_stage accepted it


@dataclass(slots=True)
class _RawPipeline:
    name: str
    data: dict
    stages: list[_RawStage]
    path: Path
    text: str
    location: Location
    problems: list[Problem] = field(default_factory=list)


class _Locator:
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


def _read_file(path: Path) -> tuple[_RawPipeline | None, list[Problem]]:
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
    loc = _Locator(path, text)
    head_line = (loc.table_lines("[pipeline]") or [1])[0]
    problems = _unknown_tables_and_keys(data, head, loc, head_line)
    stages = _raw_stages(data, loc, head_line, problems)
    name = head.get("name", path.stem)
    pipe = _RawPipeline(str(name), head, stages, path, text, Location(str(path), head_line))
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


def _unknown_tables_and_keys(
    data: dict, head: dict, loc: _Locator, head_line: int
) -> list[Problem]:
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


def _raw_stages(data: dict, loc: _Locator, head_line: int, problems: list[Problem]) -> list:
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
        stages.append(_RawStage(st, Location(loc.path, start), (start, end)))
    return stages


def _check_stage(
    raw: _RawStage, loc: _Locator, extending: bool, problems: list[Problem]
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
    if not _KEBAB.match(name):
        problems.append(
            Problem(
                f"stage name '{name}' is not kebab-case",
                loc.key("name", start, end),
                "use lower-case words joined by '-', e.g. 'finalizing-bufferize'",
            )
        )
    if not extending:
        _check_no_placement(data, name, loc, start, end, problems)
    passes = _stage_passes(raw, name, loc, problems)
    if passes is None:
        return None
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
    return Stage(name, passes, reason.strip(), loc.key("name", start, end))


def _check_stage_keys(data: dict, loc: _Locator, start: int, end: int, problems: list) -> None:
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


def _check_no_placement(
    data: dict, name: str, loc: _Locator, start: int, end: int, problems: list
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


def _stage_passes(
    raw: _RawStage, name: str, loc: _Locator, problems: list[Problem]
) -> tuple[str, ...] | None:
    """The stage's pass fragments, stripped: None when it has none, () when one is malformed
    (its reason is still checked then)."""
    start, end = raw.line_range
    passes = raw.data.get("passes")
    if isinstance(passes, str):
        passes = [passes]
    if (
        not passes
        or not isinstance(passes, list)
        or not all(isinstance(p, str) and p.strip() for p in passes)
    ):
        problems.append(
            Problem(
                f"stage '{name}' has no passes",
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
                    f"malformed pass pipeline {p!r} in stage '{name}': {exc}",
                    Location(where.path, where.line, where.col + exc.offset)
                    if where.col
                    else where,
                    "use MLIR's textual syntax: pass{opt=value}, op-name(nested-passes)",
                )
            )
            ok = False
    return tuple(p.strip() for p in passes) if ok else ()


class PipelineCatalog:
    """Every pipeline found on the search path, resolved (extends applied) and validated."""

    def __init__(self, pipelines: dict[str, Pipeline], sources: dict[str, Path]):
        self._pipelines = pipelines
        self.sources = sources

    def names(self) -> list[str]:
        return sorted(self._pipelines)

    def __contains__(self, name: str) -> bool:
        return name in self._pipelines

    def get(self, name: str, where: Location | None = None) -> Pipeline:
        try:
            return self._pipelines[name]
        except KeyError:
            raise PipelineSpecError(
                Problem(
                    f"unknown pipeline '{name}'",
                    where,
                    did_you_mean(name, self._pipelines)
                    or f"known pipelines: {', '.join(self.names()) or '(none)'}",
                )
            ) from None

    def __iter__(self):
        return iter(self._pipelines[n] for n in self.names())


def load_catalog(
    extra_dirs: Sequence[str | Path] = (),
    pass_exists: Callable[[str], bool] | None = None,
    known_passes: Callable[[], Iterable[str]] | None = None,
) -> PipelineCatalog:
    """Load every `*.toml` under `extra_dirs` (first) and the shipped pipelines.

    A user pipeline with the same name as a shipped one shadows it; two files of one directory
    level defining the same name is an error. `pass_exists` checks pass names (all unknown ones
    are reported together, with close matches from `known_passes`).
    """
    problems: list[Problem] = []
    raws: dict[str, _RawPipeline] = {}
    dirs = [Path(d) for d in extra_dirs] + builtin_pipeline_dirs()
    for d in dirs:
        if not d.is_dir():
            problems.append(
                Problem(
                    f"pipeline directory '{d}' does not exist",
                    None,
                    "fix the path given by --mlirpipe-pipelines / mlirpipe_pipelines / "
                    "--pipelines-dir",
                )
            )
            continue
        level: dict[str, _RawPipeline] = {}
        for path in sorted(d.glob("*.toml")):
            raw, errs = _read_file(path)
            problems.extend(errs)
            if raw is None:
                continue
            if raw.name in level:
                problems.append(
                    Problem(
                        f"pipeline '{raw.name}' is defined twice",
                        raw.location,
                        f"it is also defined at {level[raw.name].location}; rename one",
                    )
                )
                continue
            level[raw.name] = raw
        for name, raw in level.items():
            raws.setdefault(name, raw)
    resolved: dict[str, Pipeline] = {}
    for name in sorted(raws):
        _resolve(name, raws, resolved, problems, ())
    for raw in raws.values():
        problems.extend(raw.problems)
    if pass_exists is not None:
        problems.extend(_check_pass_names(raws, pass_exists, known_passes))
    if problems:
        raise PipelineSpecError(_dedupe(problems))
    return PipelineCatalog(resolved, {n: r.path for n, r in raws.items()})


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple] = set()
    out = []
    for p in problems:
        key = (p.message, str(p.location))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _resolve(
    name: str,
    raws: dict[str, _RawPipeline],
    resolved: dict[str, Pipeline],
    problems: list[Problem],
    chain: tuple[str, ...],
) -> Pipeline | None:
    """The pipeline `name` with `extends` applied (its parent resolved first), or None; its
    problems go to `problems`. `chain` holds the pipelines extending it, to see a cycle."""
    if name in resolved:
        return resolved[name]
    raw = raws[name]
    if name in chain:
        problems.append(_cycle_problem(chain[chain.index(name) :], raws))
        return None
    loc = _Locator(raw.path, raw.text)
    if not _KEBAB.match(str(raw.name)):
        problems.append(
            Problem(
                f"pipeline name '{raw.name}' is not kebab-case",
                loc.key("name", raw.location.line),
                "use lower-case words joined by '-'",
            )
        )
    parent: Pipeline | None = None
    parent_name = raw.data.get("extends")
    if parent_name is not None:
        parent = _parent(raw, parent_name, raws, resolved, problems, chain)
        if parent is None:
            for rs in raw.stages:  # still report every problem of the stages themselves
                rs.checked = _check_stage(rs, loc, True, problems)
            return None
    levels = _levels(raw, parent, loc, problems)
    stages = _stages(raw, parent, loc, problems)
    stages = _remove_stages(raw, parent, stages, loc, problems)
    if not stages:
        problems.append(
            Problem(f"pipeline '{name}' has no stages", raw.location, "add [[stage]] tables")
        )
    if len(levels) != 2 or not stages:
        return None
    pipe = Pipeline(
        name=name,
        description=str(raw.data.get("description", parent.description if parent else "")),
        input=levels["input"],
        output=levels["output"],
        stages=tuple(stages),
        location=raw.location,
        extends=parent_name,
    )
    resolved[name] = pipe
    return pipe


def _cycle_problem(members: Sequence[str], raws: dict[str, _RawPipeline]) -> Problem:
    """The cycle of `extends` through `members`, told from its alphabetically first member."""
    members = list(members)
    first = members.index(min(members))
    members = members[first:] + members[:first]
    cycle = " -> ".join((*members, members[0]))
    return Problem(
        f"pipelines extend each other in a cycle: {cycle}",
        raws[members[0]].location,
        "remove one of the `extends` keys",
    )


def _parent(
    raw: _RawPipeline,
    parent_name: str,
    raws: dict[str, _RawPipeline],
    resolved: dict[str, Pipeline],
    problems: list[Problem],
    chain: tuple[str, ...],
) -> Pipeline | None:
    if parent_name not in raws:
        problems.append(
            Problem(
                f"pipeline '{raw.name}' extends unknown pipeline '{parent_name}'",
                _Locator(raw.path, raw.text).key("extends", raw.location.line),
                did_you_mean(str(parent_name), raws)
                or f"known pipelines: {', '.join(sorted(raws))}",
            )
        )
        return None
    return _resolve(parent_name, raws, resolved, problems, (*chain, raw.name))


def _levels(
    raw: _RawPipeline, parent: Pipeline | None, loc: _Locator, problems: list[Problem]
) -> dict[str, IRLevel]:
    """The input and output IR levels that are given or inherited (missing ones are problems)."""
    levels: dict[str, IRLevel] = {}
    for key in ("input", "output"):
        value = raw.data.get(key)
        if value is None:
            if parent is not None:
                levels[key] = getattr(parent, key)
                continue
            problems.append(
                Problem(
                    f"pipeline '{raw.name}' does not say its {key} IR level",
                    raw.location,
                    f'add {key} = "..." with one of: {", ".join(_LEVELS)}',
                )
            )
            continue
        try:
            levels[key] = IRLevel(value)
        except ValueError:
            problems.append(
                Problem(
                    f"unknown {key} IR level {value!r}",
                    loc.key(key, raw.location.line),
                    f"use one of: {', '.join(_LEVELS)}",
                )
            )
    return levels


def _stages(
    raw: _RawPipeline, parent: Pipeline | None, loc: _Locator, problems: list[Problem]
) -> list[Stage]:
    """The parent's stages (if any) with the file's own placed among them, in order."""
    stages: list[Stage] = list(parent.stages) if parent else []
    for rs in raw.stages:
        st = rs.checked = _check_stage(rs, loc, parent is not None, problems)
        if st is None:
            continue
        anchor_keys = [k for k in ("after", "before", "replaces") if k in rs.data and parent]
        if len(anchor_keys) > 1:
            start, end = rs.line_range
            problems.append(
                Problem(
                    f"stage '{st.name}' gives more than one of after/before/replaces",
                    loc.key(anchor_keys[1], start, end),
                    "keep one",
                )
            )
        elif anchor_keys:
            _place_stage(st, rs, anchor_keys[0], stages, raw, loc, problems)
        elif st.name in [s.name for s in stages]:
            problems.append(
                Problem(
                    f"stage '{st.name}' is defined twice in pipeline '{raw.name}'",
                    st.location,
                    "stage names must be unique within a pipeline",
                )
            )
        else:
            stages.append(st)
    return stages


def _place_stage(
    st: Stage,
    rs: _RawStage,
    key: str,
    stages: list[Stage],
    raw: _RawPipeline,
    loc: _Locator,
    problems: list[Problem],
) -> None:
    """Put `st` after, before or in place of the parent's stage its `key` names."""
    start, end = rs.line_range
    names = [s.name for s in stages]
    target = rs.data[key]
    parent_name = raw.data.get("extends")
    if target not in names:
        problems.append(
            Problem(
                f"stage '{st.name}' "
                + ("replaces" if key == "replaces" else f"is placed {key}")
                + f" unknown stage '{target}'",
                loc.key(key, start, end),
                did_you_mean(str(target), names)
                or f"stages of '{parent_name}': {', '.join(names)}",
            )
        )
        return
    idx = names.index(target)
    if key == "replaces":
        stages[idx] = st
    elif st.name in names:
        problems.append(
            Problem(
                f"stage '{st.name}' already exists in '{parent_name}'",
                st.location,
                f'to change it, write replaces = "{st.name}"',
            )
        )
    else:
        stages.insert(idx + 1 if key == "after" else idx, st)


def _remove_stages(
    raw: _RawPipeline,
    parent: Pipeline | None,
    stages: list[Stage],
    loc: _Locator,
    problems: list[Problem],
) -> list[Stage]:
    """`stages` without those the file's `remove` names (only an extending pipeline may)."""
    remove = raw.data.get("remove", [])
    if isinstance(remove, str):
        remove = [remove]
    head_line = raw.location.line
    if remove and parent is None:
        problems.append(
            Problem(
                "'remove' is only for a pipeline that `extends` another",
                loc.key("remove", head_line),
                "delete the stage instead",
            )
        )
    elif isinstance(remove, list):
        for target in remove:
            names = [s.name for s in stages]
            if target not in names:
                problems.append(
                    Problem(
                        f"pipeline '{raw.name}' removes unknown stage '{target}'",
                        loc.find(f'"{target}"', head_line),
                        did_you_mean(str(target), names) or f"stages: {', '.join(names)}",
                    )
                )
                continue
            stages = [s for s in stages if s.name != target]
    return stages


def _check_pass_names(
    raws: dict[str, _RawPipeline],
    pass_exists: Callable[[str], bool],
    known_passes: Callable[[], Iterable[str]] | None,
) -> list[Problem]:
    """Every unknown pass in every stage defined in a file, whether its pipeline resolved or not
    (inherited stages are checked in the file that defines them)."""
    problems = []
    known: list[str] | None = None
    for name in sorted(raws):
        raw = raws[name]
        loc = _Locator(raw.path, raw.text)
        for rs in raw.stages:
            stage = rs.checked
            if stage is None:
                continue
            start, end = rs.line_range
            passes_line = loc.key("passes", start, end).line
            for fragment in stage.passes:
                for el in _all_passes(fragment):
                    if pass_exists(el):
                        continue
                    if known is None:
                        known = list(known_passes()) if known_passes else []
                    problems.append(
                        Problem(
                            f"unknown pass '{el}' in stage '{stage.name}' of pipeline '{name}'",
                            _find_name(loc, el, passes_line, end),
                            did_you_mean(el, known)
                            or "run `mlirpipe passes` to list the passes available",
                        )
                    )
    return problems


def _find_name(loc: _Locator, name: str, start: int, end: int) -> Location:
    """Where `name` first appears as a whole pass name (not inside a longer one)."""
    pat = re.compile(r"(?<![\w.\-])" + re.escape(name) + r"(?![\w.\-])")
    for i in range(max(start, 1) - 1, min(end, len(loc.lines))):
        m = pat.search(loc.lines[i])
        if m:
            return Location(loc.path, i + 1, m.start() + 1)
    return Location(loc.path, start)


def _all_passes(fragment: str) -> list[str]:
    out = []
    for el in parse_pipeline(fragment):
        out.extend(p.name for p, _ in el.passes())
    return out


def check_pipeline_text(
    text: str,
    pass_exists: Callable[[str], bool],
    known_passes: Callable[[], Iterable[str]],
    where: Location | None = None,
) -> None:
    """Validate a `--pass-pipeline` string: syntax, then every unknown pass name at once."""
    try:
        elements = parse_pipeline(text)
    except PipelineSyntaxError as exc:
        raise PipelineSpecError(
            Problem(
                f"malformed pass pipeline: {exc} (at column {exc.offset + 1} of {text!r})",
                where,
                "use MLIR's textual syntax: pass{opt=value}, op-name(nested-passes)",
            )
        ) from None
    problems = []
    known: list[str] | None = None
    for el in elements:
        for p, _anchors in el.passes():
            if not pass_exists(p.name):
                known = known if known is not None else list(known_passes())
                problems.append(
                    Problem(
                        f"unknown pass '{p.name}' (at column {p.offset + 1} of the pass pipeline)",
                        where,
                        did_you_mean(p.name, known)
                        or "run `mlirpipe passes` to list the passes available",
                    )
                )
    if problems:
        raise PipelineSpecError(problems)
