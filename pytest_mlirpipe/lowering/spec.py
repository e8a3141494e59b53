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
    try:
        raw_bytes = path.read_bytes()
    except OSError as exc:
        return None, [Problem(f"cannot read pipeline file: {exc.strerror}", Location(str(path)))]
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [
            Problem(
                f"pipeline file is not UTF-8 (bad byte at offset {exc.start})",
                Location(str(path)),
                "save the file as UTF-8",
            )
        ]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        loc = Location(str(path), int(m.group(1)), int(m.group(2))) if m else Location(str(path))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        return None, [
            Problem(f"malformed TOML: {msg}", loc, "see pipelines/refbackend.toml for the format")
        ]
    loc = _Locator(path, text)
    problems: list[Problem] = []
    head = data.get("pipeline")
    if not isinstance(head, dict):
        return None, [
            Problem(
                "a pipeline file needs a [pipeline] table",
                Location(str(path), 1),
                'start the file with [pipeline] and name = "..."',
            )
        ]
    head_line = (loc.table_lines("[pipeline]") or [1])[0]
    for key in data:
        if key not in ("pipeline", "stage"):
            problems.append(
                Problem(
                    f"unknown table [{key}]",
                    loc.find(key),
                    "a pipeline file holds [pipeline] and [[stage]] tables only",
                )
            )
    name = head.get("name", path.stem)
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
    raw_stages = data.get("stage", [])
    if not isinstance(raw_stages, list) or not all(isinstance(s, dict) for s in raw_stages):
        problems.append(Problem("'stage' must be [[stage]] tables", loc.find("stage")))
        raw_stages = []
    starts = loc.table_lines("[[stage]]")
    stages = []
    for i, st in enumerate(raw_stages):
        start = starts[i] if i < len(starts) else head_line
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(loc.lines)
        stages.append(_RawStage(st, Location(str(path), start), (start, end)))
    pipe = _RawPipeline(str(name), head, stages, path, text, Location(str(path), head_line))
    pipe.problems = problems
    return pipe, []


def _check_stage(
    raw: _RawStage, loc: _Locator, extending: bool, problems: list[Problem]
) -> Stage | None:
    start, end = raw.line_range
    data = raw.data
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
    passes = data.get("passes")
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
                loc.key("passes", start, end) if "passes" in data else raw.location,
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
    if not ok:
        return None
    return Stage(
        name, tuple(p.strip() for p in passes), reason.strip(), loc.key("name", start, end)
    )


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
    if name in resolved:
        return resolved[name]
    raw = raws[name]
    if name in chain:
        members = list(chain[chain.index(name) :])
        first = members.index(min(members))
        members = members[first:] + members[:first]
        cycle = " -> ".join((*members, members[0]))
        problems.append(
            Problem(
                f"pipelines extend each other in a cycle: {cycle}",
                raws[members[0]].location,
                "remove one of the `extends` keys",
            )
        )
        return None
    loc = _Locator(raw.path, raw.text)
    head = raw.data
    head_line = raw.location.line
    for key, valid in (("name", _KEBAB.match(str(raw.name))),):
        if not valid:
            problems.append(
                Problem(
                    f"pipeline name '{raw.name}' is not kebab-case",
                    loc.key(key, head_line),
                    "use lower-case words joined by '-'",
                )
            )
    parent: Pipeline | None = None
    parent_name = head.get("extends")
    if parent_name is not None:
        if parent_name not in raws:
            problems.append(
                Problem(
                    f"pipeline '{name}' extends unknown pipeline '{parent_name}'",
                    loc.key("extends", head_line),
                    did_you_mean(str(parent_name), raws)
                    or f"known pipelines: {', '.join(sorted(raws))}",
                )
            )
        else:
            parent = _resolve(parent_name, raws, resolved, problems, (*chain, name))
        if parent is None:
            for rs in raw.stages:  # still report every problem of the stages themselves
                rs.checked = _check_stage(rs, loc, True, problems)
            return None
    levels: dict[str, IRLevel] = {}
    for key in ("input", "output"):
        value = head.get(key)
        if value is None:
            if parent is not None:
                levels[key] = getattr(parent, key)
                continue
            problems.append(
                Problem(
                    f"pipeline '{name}' does not say its {key} IR level",
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
                    loc.key(key, head_line),
                    f"use one of: {', '.join(_LEVELS)}",
                )
            )
    stages: list[Stage] = list(parent.stages) if parent else []
    for rs in raw.stages:
        st = rs.checked = _check_stage(rs, loc, parent is not None, problems)
        if st is None:
            continue
        start, end = rs.line_range
        names = [s.name for s in stages]
        anchor_keys = [k for k in ("after", "before", "replaces") if k in rs.data and parent]
        if len(anchor_keys) > 1:
            problems.append(
                Problem(
                    f"stage '{st.name}' gives more than one of after/before/replaces",
                    loc.key(anchor_keys[1], start, end),
                    "keep one",
                )
            )
            continue
        if anchor_keys:
            key = anchor_keys[0]
            target = rs.data[key]
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
                continue
            idx = names.index(target)
            if key == "replaces":
                stages[idx] = st
                continue
            if st.name in names:
                problems.append(
                    Problem(
                        f"stage '{st.name}' already exists in '{parent_name}'",
                        st.location,
                        f'to change it, write replaces = "{st.name}"',
                    )
                )
                continue
            stages.insert(idx + 1 if key == "after" else idx, st)
            continue
        if st.name in names:
            problems.append(
                Problem(
                    f"stage '{st.name}' is defined twice in pipeline '{name}'",
                    st.location,
                    "stage names must be unique within a pipeline",
                )
            )
            continue
        stages.append(st)
    remove = head.get("remove", [])
    if isinstance(remove, str):
        remove = [remove]
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
                        f"pipeline '{name}' removes unknown stage '{target}'",
                        loc.find(f'"{target}"', head_line),
                        did_you_mean(str(target), names) or f"stages: {', '.join(names)}",
                    )
                )
                continue
            stages = [s for s in stages if s.name != target]
    if not stages:
        problems.append(
            Problem(f"pipeline '{name}' has no stages", raw.location, "add [[stage]] tables")
        )
    if len(levels) != 2 or not stages:
        return None
    pipe = Pipeline(
        name=name,
        description=str(head.get("description", parent.description if parent else "")),
        input=levels["input"],
        output=levels["output"],
        stages=tuple(stages),
        location=raw.location,
        extends=parent_name,
    )
    resolved[name] = pipe
    return pipe


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
