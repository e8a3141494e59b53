"""Find CHECK lines FileCheck ignores: misspelled directives, unused or unchecked prefixes."""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

# FileCheck's directive suffixes (LLVM's FileCheck.cpp; the `filecheck` port's parser.py),
# COUNT-<n> apart, and its default comment prefixes.
SUFFIXES = ("NEXT", "SAME", "NOT", "DAG", "LABEL", "EMPTY")
DEFAULT_PREFIX = "CHECK"
DEFAULT_COMMENT_PREFIXES = ("COM", "RUN")
# Directives that follow the match before them: meaningless (an error for LLVM's FileCheck)
# before any CHECK, CHECK-LABEL or CHECK-COUNT. The Python port matches a first -NEXT or -SAME
# against the input's first line, which suites that run it rely on.
FOLLOWERS = {"llvm": ("NEXT", "SAME", "EMPTY"), "python": ("EMPTY",)}
# lit's own keywords (and this project's), which are not FileCheck's business.
_KEYWORDS = frozenset(
    "RUN COM DEFINE REDEFINE REQUIRES UNSUPPORTED XFAIL ALLOW_RETRIES END MLIRPIPE-EXPECT "  # noqa: SIM905
    "MLIRPIPE-TIMEOUT".split()
)
# Words that make `// CHECK-NOT is ...` prose about a directive rather than a directive.
_PROSE_AFTER = frozenset(
    "is are was were would will should must can cannot could does do did lines line here "  # noqa: SIM905
    "because to for and or the a an as in on with after before since so that which directive "
    "directives checks matches only also not if when then but".split()
)
# FileCheck options whose value may come as the next argument.
_VALUED = frozenset(
    "check-prefix check-prefixes comment-prefixes input-file implicit-check-not "  # noqa: SIM905
    "dump-input dump-input-filter dump-input-context".split()
)
# A comment that starts a line (`//`, `#` or `;`), and the word that starts the comment.
_LEADING = re.compile(
    r"^\s*(?://+|#+|;+)[ \t]*(?P<word>[A-Za-z_][A-Za-z0-9_-]*)(?P<literal>\{LITERAL\})?"
    r"(?P<space>[ \t]*)(?P<colon>:?)"
)
# The condition of a RUN line's `%if COND %{`, and the feature names in it.
_CONDITION = re.compile(r"%if\s+(.*?)\s*%\{")
_FEATURE_WORD = re.compile(r"[^\s()!&|]+")
_FILECHECK_PROGRAM = re.compile(r"(?i)filecheck(-\d+)?(\.py|\.exe)?")
_UPPER_NAME = re.compile(r"[A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*")
# What patterns hold and prose does not: FileCheck's own syntax (a regex, a variable), an IR
# value or symbol (`%arg0`, `@forward`).
_PATTERN_SYNTAX = re.compile(r"\{\{|\[\[|[%@][\w$.]")
# `CHECK-SAME-LITERAL`: the {LITERAL} modifier written as a suffix, which FileCheck ignores.
_LITERAL_AS_SUFFIX = re.compile(r"(?i)(.+)-LITERAL")


class Kind(enum.Enum):
    """What is wrong with a line, as `mlirpipe lint-checks` names it."""

    MISSPELLED = "misspelled-directive"
    NO_COLON = "missing-colon"
    SPACE_BEFORE_COLON = "space-before-colon"
    UNUSED_PREFIX = "unused-prefix"
    UNCHECKED_PREFIX = "unchecked-prefix"
    FOLLOWER_FIRST = "nothing-to-follow"


@dataclass(frozen=True, slots=True)
class Finding:
    """One line FileCheck ignores, or checks differently from what it says: where, what,
    and what it probably meant."""

    line: int
    kind: Kind
    message: str
    suggestion: str = ""

    def describe(self) -> str:
        """What is wrong and what it probably meant, without the location."""
        tail = f"; {self.suggestion}" if self.suggestion else ""
        return f"{self.message}{tail} [{self.kind.value}]"

    def format(self, path: str, severity: str = "warning") -> str:
        return f"{path}:{self.line}: {severity}: {self.describe()}"


class MlirpipeLintWarning(UserWarning):
    """A CHECK line FileCheck would ignore, found as its file's test started."""


@dataclass(frozen=True, slots=True)
class FileCheckCall:
    """A FileCheck that a RUN line runs on the file itself: its prefixes, as it reads them."""

    run_line: int
    prefixes: tuple[str, ...] = (DEFAULT_PREFIX,)
    comment_prefixes: tuple[str, ...] = DEFAULT_COMMENT_PREFIXES
    allow_unused: bool = False  # --allow-unused-prefixes
    engine: str = "llvm"  # the FileCheck that runs: "llvm" (LLVM's) or "python" (the port)


@dataclass(frozen=True, slots=True)
class CheckedBy:
    """What the file's RUN lines (as lit expands them) tell the lint: the FileChecks that read
    the file, and whether every command could be read (if not, absence proves nothing)."""

    calls: tuple[FileCheckCall, ...]
    complete: bool = True
    # The prefixes of FileChecks of other files, which may be this one's lines (`split-file %s
    # %t` then `FileCheck %t/a.mlir`): never said to be unchecked.
    elsewhere: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Directive:
    line: int
    prefix: str
    suffix: str  # "" for a plain CHECK:, else NEXT, SAME, ..., COUNT


# ----------------------------------------------------------------------------- RUN lines


def checked_by(
    script: Sequence[str],
    source: str | os.PathLike,
    chosen: str = "",
    configured: str = "auto",
) -> CheckedBy:
    """The FileChecks of lit's expanded RUN lines (`%dbg(RUN: at line N) command` lines, as
    `script.substituted_script` gives them) whose check file is `source`; `chosen` is the
    FileCheck engine the run chose for FileCheck programs ("" for none), `configured` the one
    the project's own FileCheck runs (see `filecheck_engine`)."""
    import lit.ShUtil as ShUtil
    import lit.TestRunner as TR

    own = os.path.realpath(source)
    calls: list[FileCheckCall] = []
    elsewhere: tuple[str, ...] = ()
    complete = True
    for text in script:
        m = re.fullmatch(TR.kPdbgRegex, text)
        command = m.group(2) if m else text
        at = re.match(r"%dbg\(RUN: at line (\d+)", text) if m else None
        line = int(at.group(1)) if at else 0
        try:
            tree = ShUtil.ShParser(command, False, True).parse()
        except Exception:  # lit's parse error: the run reports it
            complete = False
            continue
        for args in _commands(tree):
            found = _filecheck_arguments(args)
            if found is None:
                complete = complete and not _runs_unknown_filecheck(args, own)
                continue
            call = filecheck_call(found, line, filecheck_engine(args, chosen, configured))
            if call is not None and _same_file(call[0], own):
                calls.append(call[1])
            elif call is not None:
                elsewhere += call[1].prefixes
    return CheckedBy(tuple(dict.fromkeys(calls)), complete, tuple(dict.fromkeys(elsewhere)))


def _commands(tree) -> Iterable[list[str]]:
    """The argument lists of every command of lit's parsed RUN line."""
    import lit.ShUtil as ShUtil

    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ShUtil.Seq):
            stack += [node.rhs, node.lhs]
        elif isinstance(node, ShUtil.Pipeline):
            stack += reversed(node.commands)
        elif isinstance(node, ShUtil.Command):
            yield [str(a) for a in node.args]


def _runs_unknown_filecheck(args: Sequence[str], own: str) -> bool:
    """A command that may run FileCheck in a way not read here: a program, or the script an
    interpreter runs, named like one (`filecheck-wrapper.sh`, `python check_filecheck.py`)."""
    return any(
        "filecheck" in os.path.basename(a).lower() and not _same_file(a, own) for a in args[:2]
    )


def _same_file(path: str, own: str) -> bool:
    return path == own or os.path.realpath(path) == own


def _filecheck_arguments(args: Sequence[str]) -> list[str] | None:
    """FileCheck's arguments when the command runs a FileCheck (after `not`s): the project's
    in-process one, a FileCheck/filecheck program, or `python -m filecheck`."""
    from .update import filecheck_args

    found = filecheck_args(args)
    if found is not None:
        return found
    args = [a for a in args if a not in ("not", "!", "--crash")]
    if args and _FILECHECK_PROGRAM.fullmatch(os.path.basename(args[0])):
        return list(args[1:])
    for i, a in enumerate(args[:-1]):
        if a == "-m" and args[i + 1] == "filecheck":
            return list(args[i + 2 :])
    return None


def filecheck_engine(args: Sequence[str], chosen: str = "", configured: str = "auto") -> str:
    """The FileCheck a command that runs one runs: "python" for the Python port, else "llvm".
    The project's own FileCheck runs the `configured` engine (the suite's, or the run's;
    `auto` is LLVM's wherever one is installed); `python -m filecheck` is the port; a program
    named `filecheck` is the port and `FileCheck` LLVM's, unless the run `chose` an engine for
    FileCheck programs."""
    from .update import FILECHECK

    args = list(args)
    while args and (args[0] in ("!", "--crash") or os.path.basename(args[0]) == "not"):
        args.pop(0)
    if FILECHECK in args[:2]:
        return "python" if configured == "python" else "llvm"
    if "-m" in args[:-1] and args[args.index("-m") + 1] == "filecheck":
        return "python"
    if chosen:
        return "python" if chosen == "python" else "llvm"
    name = os.path.basename(args[0]) if args else ""
    return "python" if name in ("filecheck", "filecheck.py") else "llvm"


def filecheck_call(
    args: Sequence[str], run_line: int, engine: str = "llvm"
) -> tuple[str, FileCheckCall] | None:
    """(check file, what it checks) of FileCheck's arguments; None without a check file."""
    prefixes: list[str] = []
    comments: list[str] | None = None
    allow_unused = False
    check_file = None
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if not a.startswith("-") or a == "-":
            check_file = check_file or a
            continue
        key, eq, value = a.lstrip("-").partition("=")
        if key in _VALUED and not eq:
            value, i = (args[i] if i < len(args) else ""), i + 1
        words = [w.strip() for w in value.split(",") if w.strip()]
        if key in ("check-prefix", "check-prefixes"):
            prefixes += words
        elif key == "comment-prefixes":
            comments = [*(comments or []), *words]
        elif key == "allow-unused-prefixes":
            allow_unused = value.lower() not in ("false", "0") if eq else True
    if check_file is None:
        return None
    call = FileCheckCall(
        run_line,
        tuple(dict.fromkeys(prefixes)) or (DEFAULT_PREFIX,),
        tuple(comments) if comments is not None else DEFAULT_COMMENT_PREFIXES,
        allow_unused,
        engine,
    )
    return check_file, call


# ------------------------------------------------------------------------- the checks


def lint_text(text: str, checked: CheckedBy) -> list[Finding]:
    """Every finding of a file's text, given the FileChecks its RUN lines run on it; sorted by
    line."""
    lines = text.splitlines()
    prefixes = tuple(dict.fromkeys(p for c in checked.calls for p in c.prefixes))
    known = tuple(dict.fromkeys((*prefixes, *checked.elsewhere)))
    comments = tuple(dict.fromkeys(p for c in checked.calls for p in c.comment_prefixes))
    comments = comments or DEFAULT_COMMENT_PREFIXES
    found: dict[tuple, dict[int, _Directive]] = {}

    def directives(prefixes: tuple[str, ...], comments: tuple[str, ...]):
        if (prefixes, comments) not in found:  # one FileCheck's are often all of them
            found[prefixes, comments] = _directives(lines, prefixes, comments)
        return found[prefixes, comments]

    seen = directives(known, comments)
    findings = _leading_words(lines, known, comments, seen)
    read = [(c, directives(c.prefixes, c.comment_prefixes)) for c in checked.calls]
    findings += _unused_prefixes(read)
    findings += _followers_first(read)
    if checked.complete:
        findings += _unchecked_prefixes(lines, known, comments)
    unique = {(f.line, f.kind, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.kind.value, f.message))


def directive_pattern(prefixes: Sequence[str]) -> re.Pattern[str]:
    """FileCheck's directive: a prefix not preceded by a word character (letters, digits, `-`,
    `_`), an optional suffix, an optional {LITERAL}, a colon."""
    names = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(
        rf"(?<![A-Za-z0-9_-])(?P<prefix>{names})"
        rf"(?:-(?P<suffix>{'|'.join(SUFFIXES)}|COUNT-\d+))?(?:\{{LITERAL\}})?:"
    )


def _directives(
    lines: Sequence[str], prefixes: Sequence[str], comments: Sequence[str]
) -> dict[int, _Directive]:
    """The directive FileCheck reads on each line (by line number), for `prefixes`, skipping
    the lines whose first directive is a comment (`COM:`, `RUN:`)."""
    if not prefixes:
        return {}
    pattern = directive_pattern((*prefixes, *comments))
    found = {}
    for number, text in enumerate(lines, 1):
        m = pattern.search(text)
        while m and m["prefix"] in comments and m["prefix"] not in prefixes and m["suffix"]:
            m = pattern.search(text, m.end())  # COM-NEXT: is no comment
        if m is None or (m["prefix"] in comments and m["prefix"] not in prefixes):
            continue
        suffix = (m["suffix"] or "").split("-")[0]
        found[number] = _Directive(number, m["prefix"], suffix)
    return found


def _spellings(prefixes: Sequence[str]) -> frozenset[str]:
    """Every directive of `prefixes` (COUNT apart)."""
    return frozenset(s for p in prefixes for s in (p, *(f"{p}-{x}" for x in SUFFIXES)))


def _is_spelling(word: str, prefixes: Sequence[str], spellings: frozenset[str]) -> bool:
    """`word` is a directive of `prefixes` (`spellings`: theirs, COUNT apart)."""
    if word in spellings:
        return True
    name, count, n = word.rpartition("-COUNT-")
    return bool(count) and n.isdigit() and name in prefixes


def _leading_words(
    lines: Sequence[str],
    prefixes: Sequence[str],
    comments: Sequence[str],
    seen: dict[int, _Directive],
) -> list[Finding]:
    """Misspelled directives, and directives without their colon or with a space before it,
    at the start of a comment line that FileCheck reads no directive from."""
    if not prefixes:
        return []
    findings = []
    known = _spellings(prefixes)
    spellings = sorted(known)
    for number, text in enumerate(lines, 1):
        m = _LEADING.match(text)
        if m is None or number in seen:
            continue
        word, colon, space = m["word"], m["colon"], m["space"]
        if word in comments or word in _KEYWORDS:
            continue
        if _is_spelling(word, prefixes, known):
            rest = text[m.end() :].strip()
            if colon and space:
                findings.append(
                    Finding(
                        number,
                        Kind.SPACE_BEFORE_COLON,
                        f"'{word}{space}:' has a space before its colon, so FileCheck ignores "
                        "the line",
                        f"write '{word}:'",
                    )
                )
            elif not colon and _lacks_only_its_colon(word, space, rest):
                findings.append(
                    Finding(
                        number,
                        Kind.NO_COLON,
                        f"'{word}' without a colon is no directive, so FileCheck ignores the line",
                        f"write '{word}:'",
                    )
                )
            continue
        if not colon or _turned_off(word, prefixes):
            continue
        meant = closest_spelling(word, spellings)
        if meant is not None:
            findings.append(
                Finding(
                    number,
                    Kind.MISSPELLED,
                    f"'{word}:' is not a directive FileCheck knows, so it ignores the line",
                    f"did you mean '{meant}:'?",
                )
            )
    return findings


def _lacks_only_its_colon(word: str, space: str, rest: str) -> bool:
    """A directive's name at the start of a comment, then a pattern (not `,`, `'s` or a
    sentence about the directive: `// CHECK-NOT is enough here`), or nothing (`// CHECK-EMPTY`)."""
    if not rest:
        return "-" in word
    first = rest.split(maxsplit=1)[0].rstrip(",.;")
    return bool(space) and first not in _PROSE_AFTER


def closest_spelling(word: str, spellings: Sequence[str]) -> str | None:
    """The directive `word` misspells: the same but for case (`CHECK-next`, `BUf`; not a word
    of prose, `Check`, `note`); else the nearest by edit distance (a swap of neighbours counts
    one), within 1 for names of 4 to 8 characters, 2 for longer ones, and a swap of
    neighbours alone for shorter ones (`BFU` for `BUF`); or, for `-LITERAL` written as a
    suffix (`CHECK-SAME-LITERAL`), the directive with its {LITERAL} modifier."""
    literal = _LITERAL_AS_SUFFIX.fullmatch(word)
    if literal:
        meant = closest_spelling(literal[1], spellings)
        return f"{meant}{{LITERAL}}" if meant else None
    best, best_distance = None, None
    for spelling in spellings:
        if word == spelling:
            return spelling
        if word.upper() == spelling.upper() and ("-" in word or not _reads_as_prose(word)):
            return spelling
        limit = 1 if len(spelling) < 9 else 2
        if abs(len(spelling) - len(word)) > limit:
            continue
        distance = edit_distance(word, spelling)
        if len(spelling) < 4 and sorted(word) != sorted(spelling):
            continue  # of a short name, only a swap of neighbours is a misspelling
        if distance <= limit and (best_distance is None or distance < best_distance):
            best, best_distance = spelling, distance
    return best


def _reads_as_prose(word: str) -> bool:
    """A word as prose writes it: all lower-case, or capitalised (`Check`, `Note`)."""
    return word.islower() or word.istitle()


def edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, previous2[j - 2] + 1)
            row.append(cost)
        previous2, previous = previous, row
    return previous[-1]


# Each FileCheck of the file, with the directives it reads (by line).
_Read = Sequence[tuple[FileCheckCall, dict[int, _Directive]]]


def _unused_prefixes(read: _Read) -> list[Finding]:
    """A prefix a RUN line's FileCheck names that no line of the file uses."""
    findings = []
    for call, directives in read:
        if call.allow_unused:
            continue
        used = {d.prefix for d in directives.values()}
        for prefix in call.prefixes:
            if prefix not in used:
                findings.append(
                    Finding(
                        call.run_line,
                        Kind.UNUSED_PREFIX,
                        f"the FileCheck of RUN line {call.run_line} checks prefix '{prefix}', "
                        "which no line of the file uses",
                        f"write '{prefix}:' lines, or drop the prefix from the RUN line",
                    )
                )
    return findings


def _followers_first(read: _Read) -> list[Finding]:
    """A -NEXT, -SAME or -EMPTY before any match of the LLVM FileCheck that reads it (for the
    Python port, an -EMPTY: it matches a first -NEXT or -SAME on the input's first line)."""
    findings = []
    for call, directives in read:
        first = next((d for d in directives.values() if d.suffix not in ("DAG", "NOT")), None)
        if first is not None and first.suffix in FOLLOWERS[call.engine]:
            name = f"{first.prefix}-{first.suffix}"
            findings.append(
                Finding(
                    first.line,
                    Kind.FOLLOWER_FIRST,
                    f"'{name}:' comes before any match of the FileCheck of RUN line "
                    f"{call.run_line}, so it has no line to follow",
                    f"write '{first.prefix}:' or '{first.prefix}-LABEL:' for the first match",
                )
            )
    return findings


def _unchecked_prefixes(
    lines: Sequence[str], prefixes: Sequence[str], comments: Sequence[str]
) -> list[Finding]:
    """Prefixes the file's directives use that no RUN line's FileCheck checks: one finding per
    prefix, at its first line. An upper-case word and a colon is a prefix in use (not prose:
    `CRITICAL:`, `NOTE:`) when one of its lines says so (`_in_use`)."""
    known = _spellings(prefixes)
    spellings = sorted(known)
    lines_of: dict[str, list[int]] = {}
    in_use: set[str] = set()
    for number, text in enumerate(lines, 1):
        m = _LEADING.match(text)
        if m is None or not m["colon"] or m["space"] or not _UPPER_NAME.fullmatch(m["word"]):
            continue
        word = m["word"]
        if word in comments or word in _KEYWORDS or _is_spelling(word, prefixes, known):
            continue
        if prefixes and closest_spelling(word, spellings) is not None:
            continue  # said as misspelled
        name, suffix = _split_suffix(word)
        if name in prefixes or name in comments or name in _KEYWORDS:
            continue
        if _turned_off(name, prefixes):
            continue
        lines_of.setdefault(name, []).append(number)
        if _in_use(name, suffix, text[m.end() :], prefixes):
            in_use.add(name)
    findings = []
    for name, numbers in lines_of.items():
        if name not in in_use:
            continue
        count = f"{len(numbers)} line{'s' if len(numbers) != 1 else ''}"
        findings.append(
            Finding(
                numbers[0],
                Kind.UNCHECKED_PREFIX,
                f"'{name}:' lines ({count}, the first here) are checked by no RUN line: no "
                f"FileCheck of the file has --check-prefix={name}",
                f"add {name} to a RUN line's --check-prefixes, or use COM: for a comment",
            )
        )
    return findings


def _in_use(name: str, suffix: str, pattern: str, prefixes: Sequence[str]) -> bool:
    """A line of `name` shows it is a check prefix: with a FileCheck suffix (`BUF-LABEL:`), a
    name with CHECK in it (`CHECK-VEC:`), a checked prefix and more (`BUF-OLD:` when BUF is
    checked), or a pattern with FileCheck's own syntax or an IR value or symbol
    (`BUF: ins({{.*}}`, `BUF: %0 = `, `BUF: @forward`)."""
    return bool(
        suffix
        or "CHECK" in name
        or any(name.startswith((f"{p}-", f"{p}_")) for p in prefixes)
        or _PATTERN_SYNTAX.search(pattern)
    )


def _turned_off(word: str, prefixes: Sequence[str]) -> bool:
    """A directive turned off on purpose by a word before it: XCHECK:, DISABLED-CHECK-NEXT:."""
    name = _split_suffix(word)[0]
    return any(name != p and name.endswith(p) for p in (*prefixes, DEFAULT_PREFIX))


def _split_suffix(word: str) -> tuple[str, str]:
    """(prefix, suffix) of a word shaped like a directive (suffix "" when it has none;
    `LITERAL` for `-LITERAL` alone)."""
    m = re.fullmatch(rf"(.+?)(?:-({'|'.join(SUFFIXES)}|COUNT-\d+))?(-LITERAL)?", word)
    assert m is not None  # `.+` matches any word
    return m[1], m[2] or ("LITERAL" if m[3] else "")


# --------------------------------------------------------------------------- files


def lint_file(test, path: Path, chosen: str = "") -> list[Finding] | None:
    """The findings of one RUN/CHECK file, from lit's Test for it (`FileTestRunner.make_test`)
    and the FileCheck engine the run chose (mlirpipe_filecheck, "" for none); None when lit
    would not run its RUN lines (no RUN line, unsupported, a broken substitution), so that
    nothing can be said of its prefixes."""
    from ..tools.filecheck_env import ENGINE_ENV
    from .script import substituted_script

    script = substituted_script(test)
    if not script:
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    # A FileCheck in either branch of `%if FEATURE %{...%} %else %{...%}` reads the file on
    # some machine: the features named true, then none.
    named = {w for c in _CONDITION.findall(text) for w in _FEATURE_WORD.findall(c)}
    if named:
        for features in (named, ()):
            script += substituted_script(test, features) or []
    configured = chosen or test.config.environment.get(ENGINE_ENV) or "auto"
    return lint_text(text, checked_by(script, path, chosen, configured))
