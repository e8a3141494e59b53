"""Load, compose and validate pipelines from `pipelines/*.toml` (every problem reported at once)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import PipelineSpecError, Problem, did_you_mean
from ..model import ExternalTool, IRLevel, Location, Pipeline, Stage
from .pipeline_file import (
    KEBAB,
    Locator,
    RawPipeline,
    RawStage,
    check_stage,
    chosen_cpu_table,
    read_pipeline_file,
)
from .pipeline_text import PipelineSyntaxError, parse_pipeline

_LEVELS = tuple(lvl.value for lvl in IRLevel)
# Sizes for the transform scripts of this run, over the pipeline files': `block=32,128 k-block=128`.
SIZES_ENV = "MLIRPIPE_TRANSFORM_SIZES"


def builtin_pipeline_dirs() -> list[Path]:
    """The shipped pipelines: packaged in a wheel, or the checkout's top-level `pipelines/`."""
    here = Path(__file__).resolve().parent.parent
    dirs = [here / "_pipelines", here.parent / "pipelines"]
    return [d for d in dirs if d.is_dir()][:1]


class PipelineCatalog:
    """Every pipeline found on the search path, resolved (extends applied) and validated."""

    def __init__(
        self,
        pipelines: dict[str, Pipeline],
        sources: dict[str, Path],
        broken: Mapping[str, tuple[Problem, ...]] | None = None,
        problems: Sequence[Problem] = (),
    ):
        self._pipelines = pipelines
        self.sources = sources
        # Kept going past broken files: each pipeline they break, with their problems, and
        # every problem found (a file that names no pipeline breaks none but is listed here).
        self.broken = dict(broken or {})
        self.problems = tuple(problems)

    def names(self) -> list[str]:
        return sorted(self._pipelines)

    def __contains__(self, name: str) -> bool:
        return name in self._pipelines or name in self.broken

    def get(self, name: str, where: Location | None = None) -> Pipeline:
        if name in self.broken:
            raise PipelineSpecError(self.broken[name])
        try:
            return self._pipelines[name]
        except KeyError:
            unknown = Problem(
                f"unknown pipeline '{name}'",
                where,
                did_you_mean(name, self._pipelines)
                or f"known pipelines: {', '.join(self.names()) or '(none)'}",
            )
            # a file that did not load may be where it is defined
            raise PipelineSpecError([unknown, *self.problems]) from None

    def check(self) -> None:
        """Raise every problem of the pipeline files, when the catalog kept going past them."""
        if self.problems:
            raise PipelineSpecError(self.problems)

    def __iter__(self):
        return iter(self._pipelines[n] for n in self.names())


def load_catalog(
    extra_dirs: Sequence[str | Path] = (),
    pass_exists: Callable[[str], bool] | None = None,
    known_passes: Callable[[], Iterable[str]] | None = None,
    tool_passes: Callable[[ExternalTool], Collection[str] | None] | None = None,
    size_overrides: Mapping[str, tuple[int, ...]] | None = None,
    cpu_features: Collection[str] | None = None,
    keep_going: bool = False,
) -> PipelineCatalog:
    """Load every `*.toml` under `extra_dirs` (first) and the shipped pipelines.

    A user pipeline with the same name as a shipped one shadows it; two files of one directory
    level defining the same name is an error. `pass_exists` checks pass names (all unknown ones
    are reported together, with close matches from `known_passes`); those of a pipeline run by
    an external tool are checked against `tool_passes(tool)` instead. `size_overrides` replace
    the sizes transform stages give their scripts (each name must be one some stage gives).
    `cpu_features` choose each stage's `[stage.cpu.FEATURE]` table (None: the host's).
    `keep_going`: when every problem is located in a file, the pipelines of the other files
    stay usable; those the broken files define or extend raise the files' problems.
    """
    problems: list[Problem] = []
    raws: dict[str, RawPipeline] = {}
    dirs = [Path(d) for d in extra_dirs] + builtin_pipeline_dirs()
    for d in dirs:
        if not d.is_dir():
            problems.append(
                Problem(
                    f"pipeline directory '{d}' does not exist",
                    None,
                    "fix the path given by --mlirpipe-pipelines / mlirpipe_pipelines / "
                    "--pipelines-dir / $MLIRPIPE_PIPELINES_PATH",
                )
            )
            continue
        level: dict[str, RawPipeline] = {}
        for path in sorted(d.glob("*.toml")):
            raw, errs = read_pipeline_file(path)
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
    if cpu_features is not None:
        for raw in raws.values():
            for rs in raw.stages:
                rs.cpu_features = frozenset(cpu_features)
    if size_overrides:
        problems.extend(_apply_size_overrides(raws, size_overrides))
    resolved: dict[str, Pipeline] = {}
    for name in sorted(raws):
        _resolve(name, raws, resolved, problems, ())
    for raw in raws.values():
        problems.extend(raw.problems)
    if pass_exists is not None:
        checker = PassChecker(pass_exists, known_passes, tool_passes)
        problems.extend(_check_pass_names(raws, resolved, checker))
    sources = {n: r.path for n, r in raws.items()}
    if problems and keep_going and all(p.location for p in problems):
        return _without_broken(resolved, sources, raws, _dedupe(problems))
    if problems:
        raise PipelineSpecError(_dedupe(problems))
    return PipelineCatalog(resolved, sources)


def _without_broken(
    resolved: dict[str, Pipeline],
    sources: dict[str, Path],
    raws: dict[str, RawPipeline],
    problems: list[Problem],
) -> PipelineCatalog:
    """The catalog of the pipelines whose file, and whose ancestors' files, have no problem."""
    by_file: dict[str, list[Problem]] = {}
    for p in problems:
        assert p.location is not None  # a pipeline file's problems are located
        by_file.setdefault(str(Path(p.location.path).resolve()), []).append(p)
    broken: dict[str, tuple[Problem, ...]] = {}
    for name in raws:
        found: list[Problem] = []
        seen: set[str] = set()
        current: str | None = name
        while current in raws and current not in seen:
            seen.add(current)
            found += by_file.get(str(Path(raws[current].path).resolve()), [])
            parent = raws[current].data.get("extends")
            current = parent if isinstance(parent, str) else None
        if found:
            broken[name] = tuple(dict.fromkeys(found))
    good = {n: pipe for n, pipe in resolved.items() if n not in broken}
    return PipelineCatalog(good, sources, broken, problems)


def _apply_size_overrides(
    raws: dict[str, RawPipeline], overrides: Mapping[str, tuple[int, ...]]
) -> list[Problem]:
    """Hand the overrides to every stage; a name no transform stage gives is a problem."""
    declared: set[str] = set()
    for raw in raws.values():
        for rs in raw.stages:
            rs.size_overrides = dict(overrides)
            if "transform" in rs.data:  # the sizes in effect on this host
                feature = chosen_cpu_table(rs.data, rs.cpu_features)
                table = rs.data["cpu"][feature] if feature is not None else {}
                for sizes in (rs.data.get("sizes"), table.get("sizes")):
                    if isinstance(sizes, dict):
                        declared.update(sizes)
    return [
        Problem(
            f"${SIZES_ENV} sets size '{name}', which no transform stage gives",
            None,
            did_you_mean(name, declared)
            or f"sizes of the transform stages: {', '.join(sorted(declared)) or '(none)'}",
        )
        for name in sorted(set(overrides) - declared)
    ]


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
    raws: dict[str, RawPipeline],
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
    loc = Locator(raw.path, raw.text)
    if not KEBAB.match(str(raw.name)):
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
                rs.checked = check_stage(rs, loc, True, problems)
            return None
    levels = _levels(raw, parent, loc, problems)
    tool = _tool(raw, parent, loc, problems)
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
        tool=tool,
    )
    resolved[name] = pipe
    return pipe


def _cycle_problem(members: Sequence[str], raws: dict[str, RawPipeline]) -> Problem:
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
    raw: RawPipeline,
    parent_name: str,
    raws: dict[str, RawPipeline],
    resolved: dict[str, Pipeline],
    problems: list[Problem],
    chain: tuple[str, ...],
) -> Pipeline | None:
    if parent_name not in raws:
        problems.append(
            Problem(
                f"pipeline '{raw.name}' extends unknown pipeline '{parent_name}'",
                Locator(raw.path, raw.text).key("extends", raw.location.line),
                did_you_mean(str(parent_name), raws)
                or f"known pipelines: {', '.join(sorted(raws))}",
            )
        )
        return None
    return _resolve(parent_name, raws, resolved, problems, (*chain, raw.name))


def _levels(
    raw: RawPipeline, parent: Pipeline | None, loc: Locator, problems: list[Problem]
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


def _tool(
    raw: RawPipeline, parent: Pipeline | None, loc: Locator, problems: list[Problem]
) -> ExternalTool | None:
    """The `*-opt` tool that runs the stages (a path relative to the pipeline file made
    absolute), the parent's when the file names none, or None (in-process)."""
    command = raw.data.get("tool")
    timeout = _timeout(raw, loc, problems)
    inherited = parent.tool if parent else None
    if command is None:
        if timeout is not None and inherited is None:
            problems.append(
                Problem(
                    "timeout is for a pipeline whose stages an external tool runs",
                    loc.key("timeout", raw.location.line),
                    'name the tool, e.g. tool = "foo-opt", or remove the timeout',
                )
            )
        if inherited is not None and timeout is not None:
            return ExternalTool(inherited.command, inherited.location, timeout)
        return inherited
    if not isinstance(command, str) or not command.strip():
        problems.append(
            Problem(
                f"tool must name an *-opt program, not {command!r}",
                loc.key("tool", raw.location.line),
                'e.g. tool = "foo-opt" (found in the tool folders or on PATH), or a path',
            )
        )
        return None
    command = command.strip()
    if "/" in command and not Path(command).is_absolute():
        command = str((raw.path.parent / command).resolve())
    return ExternalTool(command, loc.key("tool", raw.location.line), timeout)


def _timeout(raw: RawPipeline, loc: Locator, problems: list[Problem]) -> float | None:
    """The file's `timeout` in seconds (None when it gives none, or a wrong one)."""
    timeout = raw.data.get("timeout")
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append(
            Problem(
                f"timeout must be a positive number of seconds, not {timeout!r}",
                loc.key("timeout", raw.location.line),
                "e.g. timeout = 60",
            )
        )
        return None
    return float(timeout)


def _stages(
    raw: RawPipeline, parent: Pipeline | None, loc: Locator, problems: list[Problem]
) -> list[Stage]:
    """The parent's stages (if any) with the file's own placed among them, in order."""
    stages: list[Stage] = list(parent.stages) if parent else []
    for rs in raw.stages:
        st = rs.checked = check_stage(rs, loc, parent is not None, problems)
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
    rs: RawStage,
    key: str,
    stages: list[Stage],
    raw: RawPipeline,
    loc: Locator,
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
    raw: RawPipeline,
    parent: Pipeline | None,
    stages: list[Stage],
    loc: Locator,
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
    raws: dict[str, RawPipeline],
    resolved: dict[str, Pipeline],
    checker: PassChecker,
) -> list[Problem]:
    """Every unknown pass in every stage defined in a file, whether its pipeline resolved or not
    (inherited stages are checked in the file that defines them), against the passes of the
    engine that runs them: the bindings, or the pipeline's tool."""
    problems = []
    for name in sorted(raws):
        raw = raws[name]
        problems += _inherited_in_process_stages(raw, resolved.get(name))
        engine = checker.engine_of(raw, resolved.get(name))
        if engine is None:
            continue
        exists, known, suffix, hint = engine
        loc = Locator(raw.path, raw.text)
        for rs in raw.stages:
            stage = rs.checked
            if stage is None:
                continue
            start, end = rs.line_range
            passes_line = loc.key("passes", start, end).line
            # the stage's passes (a picked cpu table's among them), then the other tables'
            for fragments, (first, last) in [
                (stage.passes, (passes_line, end)),
                *rs.other_cpu_passes,
            ]:
                for el in (el for fragment in fragments for el in _all_passes(fragment)):
                    if exists(el):
                        continue
                    problems.append(
                        Problem(
                            f"unknown pass '{el}' in stage '{stage.name}' of pipeline "
                            f"'{name}'{suffix}",
                            _find_name(loc, el, first, last),
                            did_you_mean(el, known()) or hint,
                        )
                    )
    return problems


def _inherited_in_process_stages(raw: RawPipeline, pipe: Pipeline | None) -> list[Problem]:
    """The stages a tool pipeline inherits that run the project's own Python passes
    (`mlirpipe-*`), which only run in-process: the tool cannot run them."""
    if pipe is None or pipe.tool is None or "extends" not in raw.data:
        return []
    own = {rs.checked.name for rs in raw.stages if rs.checked is not None}
    loc = Locator(raw.path, raw.text)
    problems = []
    for stage in pipe.stages:
        ours = [
            el
            for fragment in stage.passes
            for el in _all_passes(fragment)
            if el.startswith("mlirpipe-")
        ]
        if stage.name in own or not ours:
            continue
        problems.append(
            Problem(
                f"pipeline '{raw.name}' runs its stages with {pipe.tool.name}, which cannot run "
                f"stage '{stage.name}' (from '{raw.data['extends']}'): {ours[0]} is a pass of "
                "pytest-mlirpipe's own, run only in-process",
                loc.key("extends"),
                f'leave the stage out: remove = ["{stage.name}"]',
            )
        )
    return problems


class PassChecker:
    """Which pass names exist: the bindings' (`pass_exists`, close matches from `known_passes`)
    or, for a pipeline run by a tool, those `tool_passes(tool)` lists (None: not found)."""

    def __init__(
        self,
        pass_exists: Callable[[str], bool],
        known_passes: Callable[[], Iterable[str]] | None,
        tool_passes: Callable[[ExternalTool], Collection[str] | None] | None,
    ):
        self.pass_exists = pass_exists
        self.tool_passes = tool_passes
        self._known_passes = known_passes
        self._known: list[str] | None = None

    def known(self) -> list[str]:
        if self._known is None:
            self._known = list(self._known_passes()) if self._known_passes else []
        return self._known

    def engine_of(self, raw: RawPipeline, pipe: Pipeline | None) -> tuple | None:
        """(exists, known, message suffix, hint) for the stages of `raw`; None: not checked
        (a tool that cannot be found or asked is reported when the pipeline runs)."""
        tool = pipe.tool if pipe is not None else None
        if tool is None and pipe is None and "tool" in raw.data:
            return None  # the pipeline did not resolve: its engine is unknown
        if tool is None:
            return (
                self.pass_exists,
                self.known,
                "",
                "run `mlirpipe passes` to list the passes available",
            )
        passes = self.tool_passes(tool) if self.tool_passes else None
        if passes is None:
            return None
        return (
            passes.__contains__,
            lambda: passes,
            f": {tool.name} does not register it",
            f"`{tool.command} --help` lists the passes it registers",
        )


def _find_name(loc: Locator, name: str, start: int, end: int) -> Location:
    """Where `name` first appears as a whole pass name (not inside a longer one)."""
    pat = re.compile(r"(?<![\w.\-])" + re.escape(name) + r"(?![\w.\-])")
    for i in range(max(start, 1) - 1, min(end, len(loc.lines))):
        m = pat.search(loc.lines[i])
        if m:
            return Location(loc.path, i + 1, m.start() + 1)
    return Location(loc.path, start)


def _all_passes(fragment: str) -> list[str]:
    out: list[str] = []
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
