"""lit's own controls of a run ($LIT_FILTER, $LIT_XFAIL, $LIT_OPTS, ...), read by lit's parser."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OPTS_ENV = "LIT_OPTS"
# The variables lit's parser reads (besides $LIT_OPTS) whose values it may reject.
CHECKED_ENV = ("LIT_FILTER", "LIT_FILTER_OUT", "LIT_MAX_WORKERS", "LIT_NUM_SHARDS", "LIT_RUN_SHARD")
# The variables that select or judge tests; none set and no $LIT_OPTS: nothing to read.
CONTROL_ENV = (
    "LIT_FILTER",
    "LIT_FILTER_OUT",
    "LIT_XFAIL",
    "LIT_XFAIL_NOT",
    "LIT_UNSUPPORTED",
    "LIT_UNSUPPORTED_NOT",
)
# What lit's options set (argparse dests) that a pytest run applies; any other option in
# $LIT_OPTS (workers, output, order, ...) is named as not applying.
APPLYING = frozenset(
    {
        "filter",
        "filter_out",
        "xfail",
        "xfail_not",
        "unsupported",
        "unsupported_not",
        "user_params",
        "maxIndividualTestTime",
        "max_failures",
        "numShards",
        "runShard",
    }
)
_EVERYTHING, _NOTHING = ".*", "^$"  # lit's defaults of --filter and --filter-out


class LitControlsError(ValueError):
    """A value lit itself rejects; the message quotes the variables and lit's reason."""


@dataclass(frozen=True, slots=True)
class LitControls:
    """The controls lit would obey in this environment, as lit's own parser read them."""

    filter: re.Pattern[str] = re.compile(_EVERYTHING)
    filter_out: re.Pattern[str] = re.compile(_NOTHING)
    xfail: tuple[str, ...] = ()
    xfail_not: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    unsupported_not: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()  # -D NAME=VALUE, in order
    timeout: int | None = None  # --timeout N (seconds per test; 0: none)
    max_failures: int | None = None
    shard: tuple[int, int] | None = None  # (K, N) of --run-shard K --num-shards N
    order: str = "smart"  # lit's --order (lexical, random, smart): the order lit shards in
    not_applying: tuple[str, ...] = ()  # the options of $LIT_OPTS a pytest run ignores

    @property
    def filters(self) -> bool:
        return self.filter.pattern != _EVERYTHING or self.filter_out.pattern != _NOTHING

    def selects(self, full_name: str) -> bool:
        """Whether lit runs the test of this full name (`SUITE :: path/in/suite`)."""
        return bool(self.filter.search(full_name)) and not self.filter_out.search(full_name)

    def mark(self, test: Any) -> bool:
        """Mark a lit Test as lit marks each test it discovered, before running it; whether
        the xfail list (and not the xfail-not list) names it."""
        if self.xfail or self.xfail_not:
            _mark_with_lit(test, self, "mark_xfail")
        if self.unsupported or self.unsupported_not:
            _mark_with_lit(test, self, "mark_unsupported")
        return "*" in test.xfails and not test.xfail_not


def read_lit_controls(env: Mapping[str, str]) -> LitControls:
    """The controls of $LIT_OPTS and lit's other variables in `env` (os.environ: lit's parser
    reads the process's own); the defaults when none is set. Raises LitControlsError on a
    value lit rejects."""
    if not any(env.get(name) for name in (OPTS_ENV, *CONTROL_ENV)):
        return LitControls()
    opts, parser = _parsed_by_lit(lambda reason: _rejected(env, reason))
    return LitControls(
        filter=opts.filter,
        filter_out=opts.filter_out,
        xfail=tuple(x for x in opts.xfail if x),
        xfail_not=tuple(x for x in opts.xfail_not if x),
        unsupported=tuple(x for x in getattr(opts, "unsupported", ()) if x),
        unsupported_not=tuple(x for x in getattr(opts, "unsupported_not", ()) if x),
        params=tuple(_param(p) for p in opts.user_params),
        timeout=opts.maxIndividualTestTime,
        max_failures=opts.max_failures,
        shard=opts.shard,
        order=_order(opts),
        not_applying=_not_applying(parser, opts, shlex.split(env.get(OPTS_ENV, ""))),
    )


def _order(opts: argparse.Namespace) -> str:
    """lit's --order (its TestOrder's value: lexical, random or smart)."""
    order = getattr(opts, "order", "smart")
    return str(getattr(order, "value", order))


def _param(text: str) -> tuple[str, str]:
    """lit's reading of `-D NAME=VALUE` (a bare NAME is the empty string)."""
    name, _, value = text.partition("=")
    return name, value


def _rejected(env: Mapping[str, str], reason: str) -> LitControlsError:
    shown = " ".join(f"{n}={env[n]!r}" for n in (OPTS_ENV, *CHECKED_ENV) if env.get(n))
    return LitControlsError(f"mlirpipe: {shown}: {reason} (lit stops on it too: fix or unset it)")


def _parsed_by_lit(rejected) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    """lit's own parse of `lit .` in this process's environment (its defaults from $LIT_*,
    $LIT_OPTS appended), and its parser. The one use of lit's command line, whose options
    differ between lit's versions: `lit.cl_arguments.parse_args()` reads sys.argv."""
    import lit.cl_arguments

    parsers: list[argparse.ArgumentParser] = []
    parse = argparse.ArgumentParser.parse_args

    def kept(self, *args, **kwargs):
        parsers.append(self)
        return parse(self, *args, **kwargs)

    said = io.StringIO()
    with contextlib.ExitStack() as scope:
        from unittest import mock  # asyncio and more: only when LIT_OPTS is read

        scope.enter_context(mock.patch.object(argparse.ArgumentParser, "parse_args", kept))
        scope.enter_context(mock.patch.object(sys, "argv", ["lit", "."]))
        scope.enter_context(contextlib.redirect_stdout(said))
        scope.enter_context(contextlib.redirect_stderr(said))
        try:
            opts = lit.cl_arguments.parse_args()
        except ValueError as exc:  # shlex: an unclosed quote
            raise rejected(str(exc)) from None
        except SystemExit as exit:
            if not exit.code:  # -h, --version: lit printed them and ended well
                raise rejected("asks for lit's help or version, not a run") from None
            lines = said.getvalue().strip().splitlines() or ["lit stops before running tests"]
            raise rejected(lines[-1].removeprefix("lit: error: ")) from None
    return opts, parsers[0]


def _mark_with_lit(test: Any, controls: LitControls, marker: str) -> None:
    """lit.main's own marking (mark_xfail, mark_unsupported) of one test; a lit without
    `marker` has no such option, so nothing can ask for it."""
    import lit.main

    opts = argparse.Namespace(
        xfail=list(controls.xfail),
        xfail_not=list(controls.xfail_not),
        exclude_xfail=False,  # a test excluded after it was collected: not applied
        unsupported=list(controls.unsupported),
        unsupported_not=list(controls.unsupported_not),
    )
    mark = getattr(lit.main, marker, None)
    if mark is not None:
        mark([test], opts)


class _Recorded(argparse.Namespace):
    """A namespace that notes which attributes are set once `recording` starts."""

    def start(self) -> None:
        self.__dict__["_set"] = set()

    def __setattr__(self, name: str, value: Any) -> None:
        if "_set" in self.__dict__:
            self.__dict__["_set"].add(name)
        super().__setattr__(name, value)

    @property
    def set(self) -> set[str]:
        return self.__dict__.get("_set", set())


def _not_applying(
    parser: argparse.ArgumentParser, opts: argparse.Namespace, words: list[str]
) -> tuple[str, ...]:
    """The options of $LIT_OPTS (as written, without their values) that set something a
    pytest run does not apply, each once, in order."""
    found: list[str] = []
    for group in _option_groups(words):
        namespace = _Recorded(**{k: _fresh(v) for k, v in vars(opts).items()})
        namespace.start()
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                _, unknown = parser.parse_known_args([".", *group], namespace=namespace)
        except SystemExit:  # lit took it in its whole command line, not on its own
            unknown = group
        if unknown or namespace.set - APPLYING - {"test_paths"}:
            name = group[0].split("=", 1)[0]
            if name not in found:
                found.append(name)
    return tuple(found)


def _fresh(value: Any) -> Any:
    """A string equal to `value` but not it: argparse sets again each option not given whose
    value *is* its string default (to convert it), which would look like the option set."""
    return "".join(list(value)) if isinstance(value, str) else value


def _option_groups(words: list[str]) -> list[list[str]]:
    """The words of $LIT_OPTS, each option with the words after it up to the next option."""
    groups: list[list[str]] = []
    for word in words:
        if (word.startswith("-") and word != "-") or not groups:
            groups.append([word])
        else:
            groups[-1].append(word)
    return groups
