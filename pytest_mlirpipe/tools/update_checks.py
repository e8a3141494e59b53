"""CHECK lines from IR in the style of MLIR's generate-test-checks.py, and their place in a file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .common import SPLIT_MARKER

SSA_NAME = r"[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*"
_SSA = re.compile(SSA_NAME)
_RESULTS = re.compile(rf"\s*(%(?:{SSA_NAME}))(\s*,\s*%(?:{SSA_NAME}))*\s*=")
_ATTR_DEF = re.compile(r"\s*(#[a-zA-Z._-][a-zA-Z0-9._-]*)\s*=")
_ATTR_USE = re.compile(r"#[a-zA-Z._-][a-zA-Z0-9._-]*")
# The argument names on CHECK-SAME lines: `.*` would run over the next argument of a
# signature whose arguments share a type (upstream's --strict_name_re).
_STRICT = "[^:]*"
LABEL_PAD = " " * len("-LABEL")
KINDS = r"(?:-(?:NEXT|SAME|NOT|DAG|LABEL|EMPTY|COUNT-\d+))?"


@dataclass(slots=True)
class _Namer:
    """FileCheck variable names for SSA values, scoped by regions as the IR nests them."""

    scopes: list[dict[str, str]] = field(default_factory=list)
    counter: int = 0
    used: set[str] = field(default_factory=set)
    to_parent: int = 0  # results of a region-holding op belong to the enclosing scope

    def lookup(self, ssa: str) -> str | None:
        for scope in reversed(self.scopes):
            if ssa in scope:
                return scope[ssa]
        return None

    def define(self, ssa: str, from_ssa_name: bool) -> str:
        name = ssa.upper() if from_ssa_name and ssa[:1].isalpha() else ""
        if not name or name in self.used or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            name = f"VAL_{self.counter}"
            self.counter += 1
        scope = -1
        if self.to_parent > 0 and len(self.scopes) > 1:
            self.to_parent -= 1
            scope = -2
        self.scopes[scope][ssa] = name
        self.used.add(name)
        return name


def _escape(line: str) -> str:
    """FileCheck's `{{` and `[[` taken literally (as upstream does)."""
    line = line.replace("{{", "{{\\{\\{}}").replace("[[", "{{\\[\\[}}")
    return line.replace("[%", "{{\\[}}%")


def _substitute(chunks: Sequence[str], namer: _Namer, strict: bool = False) -> str:
    """The text after each `%` with SSA names as FileCheck variables (defined or used)."""
    out = ""
    for chunk in chunks:
        m = _SSA.match(chunk)
        ssa = m.group(0) if m else ""
        known = namer.lookup(ssa)
        if known is not None:
            out += f"%[[{known}]]"
        else:
            name = namer.define(ssa, from_ssa_name=strict)
            out += f"%[[{name}:{_STRICT if strict else '.*'}]]"
        out += chunk[len(ssa) :]
    return out.rstrip()


def generate_checks(ir: str, prefix: str) -> list[list[str]]:
    """Check lines for `ir` (mlir-opt's printed output), one list per top-level op with a
    body (`// P-LABEL: func.func @f(` and its arguments on `// P-SAME:` lines), the lines
    before the first such op (attribute aliases, globals) in the first list."""
    namer = _Namer()
    aliases: dict[str, str] = {}
    segments: list[list[str]] = [[]]
    for raw in ir.splitlines():
        line = raw.rstrip()
        if not line.strip() or SPLIT_MARKER.fullmatch(line):
            continue
        alias = _ATTR_DEF.match(line)
        if alias and not namer.scopes:
            aliases[alias.group(1)] = f"$ATTR_{len(aliases)}"
            rest = _escape(line[alias.end() :])
            segments[0].append(f"// {prefix}: #[[{aliases[alias.group(1)]}:.+]] ={rest}")
            continue
        stripped = line.lstrip()
        if stripped.startswith("^"):  # a block label: drop its `// pred:` comment
            line = line.rsplit("//", 1)[0].rstrip()
        level = len(namer.scopes)
        if stripped.startswith("}"):
            namer.scopes.pop()
            level = len(namer.scopes)
        if line.endswith("{"):
            namer.scopes.append({})
            if level == 1:
                segments.append([])
            results = _RESULTS.match(line)
            namer.to_parent = results.group(0).count("%") if results else 0
        if level < 1:
            continue  # `module {` and its `}`
        if not segments[-1] and len(segments) > 1:
            namer.counter, namer.used = 0, set()
        segments[-1].extend(_check_lines(line, prefix, namer, aliases, not segments[-1]))
    return [s for s in segments if s]


def _check_lines(
    line: str, prefix: str, namer: _Namer, aliases: dict[str, str], first: bool
) -> list[str]:
    """The check lines of one line of IR: a label (with CHECK-SAME lines for its SSA
    values) for the first line of a top-level op, else one CHECK line."""
    text = _ATTR_USE.sub(
        lambda m: f"#[[{aliases[m.group(0)]}]]" if m.group(0) in aliases else m.group(0),
        _escape(line),
    )
    parts = text.split("%")
    if not first or not parts[0].strip():
        return [f"// {prefix}: {LABEL_PAD}{parts[0]}{_substitute(parts[1:], namer)}".rstrip()]
    label = parts[0].strip()
    out = [f"// {prefix}-LABEL: {label}"]
    pad = " " * (len(label) if len(label) < 21 else 4)
    for argument in parts[1:]:
        out.append(f"// {prefix}-SAME:  {pad}{_substitute([argument], namer, strict=True)}")
    return out


def directive_pattern(prefixes: Sequence[str]) -> re.Pattern[str]:
    """A line that is only a comment holding one of `prefixes`' directives."""
    names = "|".join(re.escape(p) for p in prefixes)
    return re.compile(rf"^[ \t]*//[ \t]*(?:{names}){KINDS}:")


def embedded_directive(prefixes: Sequence[str]) -> re.Pattern[str]:
    """One of `prefixes`' directives anywhere in a line."""
    names = "|".join(re.escape(p) for p in prefixes)
    return re.compile(rf"(?<![\w-])(?:{names}){KINDS}:")


def chunk_ranges(lines: Sequence[str], split: bool) -> list[tuple[int, int]]:
    """[start, end) line indices of each `// -----` chunk (one chunk without `split`)."""
    if not split:
        return [(0, len(lines))]
    cuts = [i for i, ln in enumerate(lines) if SPLIT_MARKER.fullmatch(ln.rstrip("\n"))]
    starts = [0, *[c + 1 for c in cuts]]
    ends = [*cuts, len(lines)]
    return list(zip(starts, ends, strict=True))


def negative_pattern(prefixes: Sequence[str]) -> re.Pattern[str]:
    """A line that is only a comment holding one of `prefixes`' -NOT directives."""
    names = "|".join(re.escape(p) for p in prefixes)
    return re.compile(rf"^[ \t]*//[ \t]*(?:{names})-NOT:")


def replace_checks(
    lines: list[str], span: tuple[int, int], old: re.Pattern[str], new: list[list[str]]
) -> list[str]:
    """The lines of one chunk (`span` of `lines`) without the lines `old` matches, and each
    check block of `new` right above the top-level op it checks (found by its symbol, where
    generate-test-checks.py puts it). A block whose op is not in the chunk (the pipeline made
    it) follows the block before it; when no op is found, all blocks go where the first old
    line was, or above the chunk's IR when it had none."""
    start, end = span
    chunk = lines[start:end]
    kept = [ln for ln in chunk if not old.match(ln)]
    places = _places(kept, new)
    if not places:
        first = next((i for i, ln in enumerate(chunk) if old.match(ln)), None)
        joined = [ln for j, block in enumerate(new) for ln in ([""] if j else []) + block]
        if first is None:
            places = {_ir_start(kept): joined + ([""] if joined else [])}
        else:
            places = {sum(1 for ln in chunk[:first] if not old.match(ln)): joined}
    out: list[str] = []
    for i in range(len(kept) + 1):
        out.extend(ln + "\n" for ln in places.get(i, []))
        if i < len(kept):
            out.append(kept[i])
    return out


def _places(kept: Sequence[str], blocks: list[list[str]]) -> dict[int, list[str]]:
    """{index in `kept`: the check lines to put before it}: each block above its op, in the
    order of the output (an op found before the previous one counts as not found)."""
    tops = _top_level_symbols(kept)
    places: dict[int, list[str]] = {}
    waiting: list[str] = []  # blocks before the first op found (aliases, made-up ops)
    last = -1
    for block in blocks:
        symbol = _label_symbol(block)
        at = next((i for i, s in tops if s == symbol and i > last), None) if symbol else None
        if at is None:
            if last < 0:
                waiting += [*([""] if waiting else []), *block]
            else:
                places[last] += ["", *block]
            continue
        gap = [""] if at > 0 and _ends_op(kept[at - 1]) else []
        places[at] = [*gap, *waiting, *([""] if waiting else []), *block]
        waiting, last = [], at
    return places


_DEFINES = re.compile(r'^\s*[A-Za-z_][\w.]*(?:\s+[A-Za-z_]\w*)*\s+@("[^"]*"|[\w$.-]+)')
_LABEL_SYMBOL = re.compile(r'-LABEL:.*?@("[^"]*"|[\w$.-]+)')


def _label_symbol(block: Sequence[str]) -> str | None:
    """The symbol of the op a block's CHECK-LABEL line names (`@forward`), if any."""
    m = _LABEL_SYMBOL.search(block[0]) if block else None
    return m.group(1) if m else None


def _top_level_symbols(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(index, symbol) of the lines that start a top-level op defining a symbol (`func.func
    @f(`, `llvm.func private @g(`), in the chunk or in its one `module {`."""
    found: list[tuple[int, str]] = []
    depth, top = 0, {0}
    for i, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        if depth in top:
            m = _DEFINES.match(line)
            if m:
                found.append((i, m.group(1)))
            if depth == 0 and re.match(r"(?:builtin\.)?module\b", text):
                top = {0, 1}
        depth += _net_braces(line)
    return found


def _net_braces(line: str) -> int:
    """`{` less `}` in a line of IR, outside strings and a trailing `//` comment."""
    count, quoted, escaped = 0, False, False
    for i, c in enumerate(line):
        if quoted:
            quoted = escaped or c != '"'
            escaped = c == "\\" and not escaped
        elif c == '"':
            quoted = True
        elif c == "/" and line[i + 1 : i + 2] == "/":
            break
        elif c in "{}":
            count += 1 if c == "{" else -1
    return count


def _ends_op(line: str) -> bool:
    """A line of IR that does not open a region (`}`, `#map = ...`): a blank line after it."""
    text = line.strip()
    return bool(text) and not text.startswith("//") and not text.endswith("{")


def _ir_start(chunk: Sequence[str]) -> int:
    """The first line of a chunk that is neither blank nor a comment (its end if none)."""
    for i, line in enumerate(chunk):
        if line.strip() and not line.lstrip().startswith("//"):
            return i
    return len(chunk)
