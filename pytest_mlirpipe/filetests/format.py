"""The lit test format of .mlir suites: lit's ShTest over the files pytest would collect."""

from __future__ import annotations

import re
from pathlib import Path

import lit.formats

from ..errors import did_you_mean
from ..model import ResultCode
from ..tools.filecheck import ENGINE_ENV, NOTES_ENV, read_disagreements
from ..tools.opt import REPRO_DIR_ENV
from .expect import Expectations, judge, read_expectations
from .lit_compat import time_limited
from .names import (
    CONTAINED_PARAM,
    DISAGREEMENTS_METRIC,
    FILECHECK_PARAM,
    REPRO_SUFFIX,
)
from .own_config import with_own_config
from .repeat import bad_repeat_count, repeat_count, repeated_under_lit
from .script import UNKNOWN_MARK, substituted
from .search_path import pipeline_search_path

# and the reports of FileCheck engines that disagreed (mlirpipe_filecheck = both).
FILECHECK_NOTES_SUFFIX = ".filecheck-notes"

_DIRECTIVE = re.compile(rb"\b(RUN|CHECK[\w-]*)\s*:")


def is_test_file(path: Path) -> bool:
    """A file with RUN: or CHECK directives; plain MLIR files are inputs, not tests."""
    try:
        return _DIRECTIVE.search(path.read_bytes()) is not None
    except OSError:
        return False


_MARKED = re.compile(re.escape(UNKNOWN_MARK) + r"(%\{[^}]*\}|%[\w-]+)")
_DBG = re.compile(r"%dbg\(RUN: at line (\d+)")


class MlirShTest(lit.formats.ShTest):
    """ShTest, minus the files without directives (so lit and pytest run the same files), with
    unknown `%name` substitutions reported instead of passed on to the commands, and with the
    file's MLIRPIPE-EXPECT (crash, timeout) and MLIRPIPE-TIMEOUT lines applied."""

    def __init__(self) -> None:
        super().__init__(execute_external=False)

    def execute(self, test, litConfig):
        import lit.Test

        path = test.getSourcePath()
        expected = read_expectations(path)
        if expected.problems:
            return lit.Test.Result(lit.Test.UNRESOLVED, "\n".join(expected.problems))
        changes = pipeline_search_path(test.config, litConfig)
        engine = litConfig.params.get(FILECHECK_PARAM)
        if engine:
            environment = changes.get("environment", test.config.environment)
            changes["environment"] = {**environment, ENGINE_ENV: engine}
        # A containing pytest process enforces the limit itself (it kills the child and every
        # process the child started); lit needs psutil to kill a command tree.
        if expected.timeout and not litConfig.params.get(CONTAINED_PARAM):
            supported, why = litConfig.maxIndividualTestTimeIsSupported
            if not supported:
                return lit.Test.Result(
                    lit.Test.UNRESOLVED,
                    f"{path}:{expected.timeout_line}: error: MLIRPIPE-TIMEOUT needs lit's "
                    f"time limits, which are not available here: {why}\n"
                    "  hint: pip install psutil",
                )
            changes["maxIndividualTestTime"] = expected.timeout
        if changes:
            with_own_config(test, **changes)
        result = self._execute(test, time_limited(test, litConfig), expected)
        code, output = judge(ResultCode.of(result.code), result.output or "", expected, path)
        if code.lit_code is not result.code or output != (result.output or ""):
            metrics = result.metrics
            result = lit.Test.Result(code.lit_code, output)
            result.metrics = metrics
        return result

    def _execute(self, test, litConfig, expected: Expectations):
        import lit.Test
        import lit.TestRunner as TR

        if test.config.unsupported:
            return lit.Test.Result(lit.Test.UNSUPPORTED, "Test is unsupported")
        parsed = TR.parseIntegratedTestScript(test, require_script=True)
        if isinstance(parsed, lit.Test.Result):
            return parsed
        if expected.kind and test.xfails:
            return lit.Test.Result(
                lit.Test.UNRESOLVED,
                f"{test.getSourcePath()}:{expected.kind_line}: error: MLIRPIPE-EXPECT and XFAIL "
                "exclude each other\n  hint: MLIRPIPE-EXPECT: crash/timeout expects that way of "
                "ending; XFAIL: * expects a wrong answer or an error; keep one",
            )
        if litConfig.noExecute:
            return lit.Test.Result(lit.Test.PASS)
        tmp_dir, tmp_base = TR.getTempPaths(test)
        notes = _side_files_beside(test, tmp_base)
        script, substitutions = substituted(test, parsed, tmp_dir, tmp_base)
        problems = _unknown_substitutions(script, test, substitutions) or _backgrounded(
            script, test
        )
        if problems:
            return lit.Test.Result(lit.Test.UNRESOLVED, problems)
        runs = repeat_count(litConfig)
        if runs is None:
            return lit.Test.Result(lit.Test.UNRESOLVED, bad_repeat_count(litConfig))
        if runs > 1:

            def once():
                return TR._runShTest(test, litConfig, False, script, tmp_base)

            result = repeated_under_lit(test, litConfig, once, runs)
        else:
            result = TR._runShTest(test, litConfig, False, script, tmp_base)
        return _with_disagreements(result, notes)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for test in super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig):
            if is_test_file(Path(test.getSourcePath())):
                yield test


def _side_files_beside(test, tmp_base: str) -> Path:
    """A failing stage's input IR goes beside the test's `%t` files (`Output/NAME.repro/`,
    where a crash's repro goes too), not to a new folder in $TMPDIR; so do the reports of
    FileCheck engines that disagree (returned: the file, emptied)."""
    notes = Path(tmp_base + FILECHECK_NOTES_SUFFIX)
    notes.unlink(missing_ok=True)
    environment = {
        **test.config.environment,
        REPRO_DIR_ENV: tmp_base + REPRO_SUFFIX,
        NOTES_ENV: str(notes),
    }
    with_own_config(test, environment=environment)
    return notes


def _with_disagreements(result, notes: Path):
    """`result` with the FileCheck engines' disagreement reports of the run (if any) added to
    its output, for lit's reports, and as a metric, for the plugin's warnings."""
    import lit.Test

    found = read_disagreements(str(notes))
    notes.unlink(missing_ok=True)
    if found:
        reports = "".join(str(d["report"]) for d in found)
        result.output = f"{result.output or ''}\n{reports}"
        result.addMetric(DISAGREEMENTS_METRIC, lit.Test.JSONMetricValue(found))
    return result


def _unknown_substitutions(script: list[str], test, substitutions) -> str:
    """One message per unknown `%name`, located at its RUN line, with close known names."""
    known = sorted(
        {
            pattern
            for pattern, _ in substitutions
            if re.fullmatch(r"%[\w{}:-]+", pattern) and pattern not in ("%%",)
        }
    )
    lines = []
    for ln in script:
        for m in _MARKED.finditer(ln):
            dbg = _DBG.match(ln)
            where = f"{test.getSourcePath()}:{dbg.group(1)}" if dbg else test.getSourcePath()
            name = m.group(1)
            hint = did_you_mean(name, known) or (
                "define it in lit.cfg.py / mlirpipe_tools, with DEFINE:, or write %% for a "
                "literal %"
            )
            lines.append(
                f"{where}: error: unknown substitution '{name}' in a RUN line\n  hint: {hint}"
            )
    return "\n".join(lines)


def _backgrounded(script: list[str], test) -> str:
    """One message per RUN line that puts a command in the background (`cmd &`), which lit's
    internal shell refuses: said before anything runs, so no command is left running."""
    import lit.ShUtil as ShUtil
    import lit.TestRunner as TR

    lines = []
    for ln in script:
        m = re.fullmatch(TR.kPdbgRegex, ln)
        command = m.group(2) if m else ln
        try:
            tree = ShUtil.ShParser(command, False, test.config.pipefail).parse()
        except Exception:  # lit's own parse error, reported by the run
            continue
        if not _has_operator(tree, "&"):
            continue
        dbg = _DBG.match(ln)
        where = f"{test.getSourcePath()}:{dbg.group(1)}" if dbg else test.getSourcePath()
        lines.append(
            f"{where}: error: unsupported shell operator: '&' (lit's internal shell runs every "
            f"command in the foreground)\n  {command.strip()}\n"
            "  hint: drop the '&'; to run one command after another, join them with && or ;"
        )
    return "\n".join(lines)


def _has_operator(tree, op: str) -> bool:
    """Whether lit's parsed command `tree` joins two commands with `op`."""
    import lit.ShUtil as ShUtil

    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ShUtil.Seq):
            if node.op == op:
                return True
            stack += [node.lhs, node.rhs]
    return False
