"""A file's RUN lines as lit's shell gets them: lit's parsers and substitutions, nothing run."""

from __future__ import annotations

from collections.abc import Iterable

UNKNOWN_MARK = "\x01unknown-substitution\x01"
# Last in the substitution list: a '%name' that no substitution took (not '%%', a late
# `%{readfile:...}` or lit's `%dbg(...)`) is marked, and reported before anything runs.
UNKNOWN_SUBSTITUTION = (r"%(?=(?!dbg\(|\{readfile:)[A-Za-z_{])", UNKNOWN_MARK + "%")


def substituted(
    test, parsed: list, tmp_dir: str, tmp_base: str, features: Iterable[str] | None = None
) -> tuple[list[str], list]:
    """(the script with lit's substitutions applied, the substitutions but our marker);
    `features`: those `%if` sees (default: the config's available features)."""
    import lit.TestRunner as TR

    substitutions = TR.getDefaultSubstitutions(test, tmp_dir, tmp_base)
    if features is None:
        features = test.config.available_features
    conditions = {feature: True for feature in features}
    script = TR.applySubstitutions(
        parsed,
        [*substitutions, UNKNOWN_SUBSTITUTION],
        conditions,
        recursion_limit=test.config.recursiveExpansionLimit,
    )
    return script, substitutions


def substituted_script(test, features: Iterable[str] | None = None) -> list[str] | None:
    """The file's RUN lines as lit's shell gets them (DEFINE lines and substitutions applied),
    without running anything; None when lit would not run them (unsupported, no RUN line, a
    substitution error: the run itself reports it). `features`: those `%if` sees (default:
    the config's available features)."""
    import lit.Test
    import lit.TestRunner as TR

    if test.config.unsupported:
        return None
    try:
        parsed = TR.parseIntegratedTestScript(test, require_script=True)
        if isinstance(parsed, lit.Test.Result):
            return None
        tmp_dir, tmp_base = TR.getTempPaths(test)
        return substituted(test, parsed, tmp_dir, tmp_base, features)[0]
    except Exception:  # the run reports it, located
        return None
