"""The CHECK-line lint from strings: lit's expanded RUN lines in, findings with their lines out."""

from __future__ import annotations

import pytest

from pytest_mlirpipe.filetests.lint import (
    CheckedBy,
    FileCheckCall,
    Kind,
    checked_by,
    closest_spelling,
    edit_distance,
    lint_text,
)

SOURCE = "/suite/t.mlir"
FILECHECK = "/venv/bin/python -mpytest_mlirpipe.tools.filecheck"


def _script(*commands: str) -> list[str]:
    """RUN lines as lit's substitutions leave them (line N: the Nth command)."""
    return [f"%dbg(RUN: at line {n}) {c}" for n, c in enumerate(commands, 1)]


def _lint(text: str, *commands: str) -> list[tuple[int, Kind, str]]:
    found = lint_text(text, checked_by(_script(*commands), SOURCE))
    return [(f.line, f.kind, f.format("t.mlir")) for f in found]


OPT = f"mlirpipe-opt {SOURCE} | "


def test_the_default_prefix_is_check_and_a_correct_file_has_no_findings():
    text = (
        "// RUN: ...\n"
        "// CHECK-LABEL: func @f\n"
        "// CHECK-NEXT: arith.addf\n"
        "// CHECK-SAME: f32\n"
        "// CHECK-DAG: %[[A:.*]] = arith.constant\n"
        "// CHECK-NOT: memref.alloc\n"
        "// CHECK-COUNT-2: scf.for\n"
        "// CHECK-EMPTY:\n"
        "// CHECK-NEXT{LITERAL}: {{x}}\n"
        "// COM: CHEK: a comment says what it likes\n"
        "func.func @f() {\n  return\n}\n"
    )
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == []


@pytest.mark.parametrize(
    ("line", "meant"),
    [
        ("// CHEK: x", "CHECK:"),
        ("// CHECK-NXT: x", "CHECK-NEXT:"),
        ("// CHECK-SAM: x", "CHECK-SAME:"),
        ("// CHECKNEXT: x", "CHECK-NEXT:"),
        ("// CHECK_LABEL: func", "CHECK-LABEL:"),
        ("// CHECK-LABLE: func", "CHECK-LABEL:"),
        ("// CHECK-next: x", "CHECK-NEXT:"),
        ("# FOO-NTO: x", "FOO-NOT:"),
    ],
)
def test_a_misspelled_directive_is_said_with_what_it_probably_meant(line, meant):
    text = f"// CHECK: a\n// FOO: b\n{line}\n"
    assert _lint(text, OPT + f"{FILECHECK} --check-prefixes=CHECK,FOO {SOURCE}") == [
        (
            3,
            Kind.MISSPELLED,
            f"t.mlir:3: warning: '{line.split()[1]}' is not a directive FileCheck knows, so it "
            f"ignores the line; did you mean '{meant}'? [misspelled-directive]",
        )
    ]


def test_a_directive_without_its_colon_or_with_a_space_before_it_is_said():
    text = "// CHECK: a\n// CHECK-NEXT foo\n// CHECK : bar\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == [
        (
            2,
            Kind.NO_COLON,
            "t.mlir:2: warning: 'CHECK-NEXT' without a colon is no directive, so FileCheck "
            "ignores the line; write 'CHECK-NEXT:' [missing-colon]",
        ),
        (
            3,
            Kind.SPACE_BEFORE_COLON,
            "t.mlir:3: warning: 'CHECK :' has a space before its colon, so FileCheck ignores the "
            "line; write 'CHECK:' [space-before-colon]",
        ),
    ]


def test_a_sentence_about_a_directive_is_no_directive_without_its_colon():
    text = "// CHECK: a\n// CHECK-NOT is enough here\n// CHECK-DAG, because the order varies\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == []


def test_a_prefix_no_line_uses_is_said_at_its_run_line():
    text = "// CHECK: a\n"
    assert (
        _lint(text, "true", OPT + f"not {FILECHECK} -check-prefix FOO {SOURCE}")
        == [
            (
                2,
                Kind.UNUSED_PREFIX,
                "t.mlir:2: warning: the FileCheck of RUN line 2 checks prefix 'FOO', which no line "
                "of the file uses; write 'FOO:' lines, or drop the prefix from the RUN line "
                "[unused-prefix]",
            ),
            (
                1,
                Kind.UNCHECKED_PREFIX,
                "t.mlir:1: warning: 'CHECK:' lines (1 line, the first here) are checked by no RUN "
                "line: no FileCheck of the file has --check-prefix=CHECK; add CHECK to a RUN "
                "line's --check-prefixes, or use COM: for a comment [unchecked-prefix]",
            ),
        ][::-1]
    )


def test_allow_unused_prefixes_is_honoured():
    text = "// A: a\n"
    run = OPT + f"{FILECHECK} --allow-unused-prefixes --check-prefixes=A,B {SOURCE}"
    assert _lint(text, run) == []


def test_lines_of_a_prefix_no_run_line_checks_are_said_once_at_the_first():
    text = "// CHECK: a\n// BUF: b\n// BUF: c\n// BUF-NEXT: d\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == [
        (
            2,
            Kind.UNCHECKED_PREFIX,
            "t.mlir:2: warning: 'BUF:' lines (3 lines, the first here) are checked by no RUN "
            "line: no FileCheck of the file has --check-prefix=BUF; add BUF to a RUN line's "
            "--check-prefixes, or use COM: for a comment [unchecked-prefix]",
        )
    ]


def test_prose_and_disabled_checks_are_not_prefixes():
    text = (
        "// CHECK: a\n// NOTE: generated\n// NOTE: twice\n// TODO: more\n// XCHECK: off\n"
        "// Check that x: y\n// expected-error@+1 {{bad}}\n// ONCE: a word\n"
    )
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == []


def test_next_same_or_empty_before_any_match_is_said():
    text = "// CHECK-NOT: x\n// CHECK-NEXT: a\n// CHECK: b\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == [
        (
            2,
            Kind.FOLLOWER_FIRST,
            "t.mlir:2: warning: 'CHECK-NEXT:' comes before any match of the FileCheck of RUN "
            "line 1, so it has no line to follow; write 'CHECK:' or 'CHECK-LABEL:' for the "
            "first match [nothing-to-follow]",
        )
    ]


def test_a_follower_after_another_prefix_of_the_same_filecheck_has_a_match_to_follow():
    text = "// A: a\n// B-SAME: b\n// B: c\n"
    assert _lint(text, OPT + f"{FILECHECK} --check-prefixes=A,B {SOURCE}") == []


def test_prefixes_come_from_every_filecheck_of_the_file_and_not_from_others():
    text = "// A: a\n// B: b\n"
    runs = (
        OPT + f"FileCheck --check-prefix=A {SOURCE}",
        f"cat {SOURCE} | /usr/lib/llvm-22/bin/FileCheck {SOURCE} --check-prefix=B && "
        "FileCheck --check-prefix=C /suite/other.mlir",
    )
    checked = checked_by(_script(*runs), SOURCE)
    assert [c.prefixes for c in checked.calls] == [("A",), ("B",)]
    assert [c.run_line for c in checked.calls] == [1, 2]
    assert _lint(text, *runs) == []


def test_comment_prefixes_replace_the_default_ones():
    checked = checked_by(_script(OPT + f"FileCheck --comment-prefixes=NB {SOURCE}"), SOURCE)
    assert checked.calls == (FileCheckCall(1, ("CHECK",), ("NB",)),)
    text = "// CHECK: a\n// NB: CHECK-NXT: a comment\n"
    assert lint_text(text, checked) == []


def test_a_line_that_says_check_within_its_text_is_not_a_directive_at_comment_start():
    text = "// CHECK: a {{CHEK: x}} [[V:%.*]]\nfoo // CHEK: y\n// CHECK: b\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == []


def test_without_a_recognised_filecheck_call_unchecked_lines_are_not_guessed():
    checked = CheckedBy((), complete=False)
    assert lint_text("// BUF: a\n// BUF: b\n", checked) == []
    assert checked_by(_script(f"my-filecheck-wrapper {SOURCE}"), SOURCE).complete is False
    assert checked_by(_script(f"python check_filecheck.py {SOURCE}"), SOURCE).complete is False


def test_a_path_that_says_filecheck_leaves_the_run_lines_readable():
    source = "/tmp/test_filecheck0/t.mlir"
    script = [f"%dbg(RUN: at line 1) mlir-opt {source} -o /tmp/filecheck/out"]
    assert checked_by(script, source) == CheckedBy((), complete=True)


def test_the_edit_distance_counts_a_swap_as_one():
    assert edit_distance("CHECK-LABLE", "CHECK-LABEL") == 1
    assert edit_distance("CHEK", "CHECK") == 1
    assert closest_spelling("AB", ["A"]) is None  # short names are never guessed at
    assert closest_spelling("CHECK-FOOBAR", ["CHECK-NEXT", "CHECK"]) is None


def test_a_short_name_is_misspelled_by_a_swap_of_neighbours_or_by_case_alone():
    assert closest_spelling("BFU", ["BUF"]) == "BUF"
    assert closest_spelling("BUf", ["BUF"]) == "BUF"
    assert closest_spelling("BUG", ["BUF"]) is None  # one replacement in 3 letters: a word
    assert closest_spelling("BU", ["BUF"]) is None


def test_a_word_of_prose_is_no_case_slip_of_a_directive():
    assert closest_spelling("Check", ["CHECK"]) is None
    assert closest_spelling("note", ["NOTE"]) is None
    assert closest_spelling("check-next", ["CHECK-NEXT"]) == "CHECK-NEXT"
    text = "// CHECK: a\n// Check: the loop is gone\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == []


def test_literal_written_as_a_suffix_means_the_literal_modifier():
    spellings = ["CHECK", "CHECK-NEXT", "CHECK-SAME"]
    assert closest_spelling("CHECK-SAME-LITERAL", spellings) == "CHECK-SAME{LITERAL}"
    assert closest_spelling("CHECK-literal", spellings) == "CHECK{LITERAL}"
    assert closest_spelling("CHECK-SAM-LITERAL", spellings) == "CHECK-SAME{LITERAL}"
    assert closest_spelling("OTHER-LITERAL", spellings) is None


def test_a_disabled_check_line_is_no_prefix_whatever_prefixes_the_file_checks():
    text = "// LOOPS: a\n// XCHECK: off\n// XCHECK-NEXT: off\n"
    assert _lint(text, OPT + f"{FILECHECK} --check-prefix=LOOPS {SOURCE}") == []


def test_lines_a_filecheck_of_another_file_may_read_are_not_said_unchecked():
    runs = (f"split-file {SOURCE} /out/t", "mlir-opt /out/t/a.mlir | FileCheck /out/t/a.mlir")
    checked = checked_by(_script(*runs), SOURCE)
    assert (checked.calls, checked.elsewhere) == ((), ("CHECK",))
    text = "//--- a.mlir\n// CHECK: a\n// CHECK-NXT: b\n"
    assert [kind for _, kind, _ in _lint(text, *runs)] == [Kind.MISSPELLED]


def test_check_same_literal_is_said_to_mean_the_literal_modifier_not_an_unchecked_prefix():
    text = "// CHECK: a\n// CHECK-SAME-LITERAL: [[0, 1]]\n// FOO-SAME-LITERAL: [[2]]\n"
    assert _lint(text, OPT + f"{FILECHECK} {SOURCE}") == [
        (
            2,
            Kind.MISSPELLED,
            "t.mlir:2: warning: 'CHECK-SAME-LITERAL:' is not a directive FileCheck knows, so it "
            "ignores the line; did you mean 'CHECK-SAME{LITERAL}:'? [misspelled-directive]",
        ),
        (
            3,
            Kind.UNCHECKED_PREFIX,
            "t.mlir:3: warning: 'FOO:' lines (1 line, the first here) are checked by no RUN "
            "line: no FileCheck of the file has --check-prefix=FOO; add FOO to a RUN line's "
            "--check-prefixes, or use COM: for a comment [unchecked-prefix]",
        ),
    ]


def test_a_filecheck_is_judged_by_the_engine_its_run_line_runs():
    port = _script(f"xdsl-opt {SOURCE} | filecheck {SOURCE}")
    assert [c.engine for c in checked_by(port, SOURCE).calls] == ["python"]
    assert [c.engine for c in checked_by(port, SOURCE, chosen="llvm").calls] == ["llvm"]
    module = _script(f"xdsl-opt {SOURCE} | python3 -m filecheck {SOURCE}")
    assert [c.engine for c in checked_by(module, SOURCE, chosen="llvm").calls] == ["python"]
    llvm = _script(f"cat {SOURCE} | not /usr/bin/FileCheck {SOURCE}")
    assert [c.engine for c in checked_by(llvm, SOURCE).calls] == ["llvm"]
    assert [c.engine for c in checked_by(llvm, SOURCE, chosen="python").calls] == ["python"]
    own = _script(OPT + f"{FILECHECK} {SOURCE}")
    assert [c.engine for c in checked_by(own, SOURCE).calls] == ["llvm"]  # auto
    assert [c.engine for c in checked_by(own, SOURCE, configured="python").calls] == ["python"]


def test_a_first_next_or_same_is_said_for_llvms_filecheck_and_a_first_empty_for_either():
    text = "// CHECK-NEXT: a\n// CHECK: b\n"
    assert [k for _, k, _ in _lint(text, f"cat {SOURCE} | FileCheck {SOURCE}")] == [
        Kind.FOLLOWER_FIRST
    ]
    assert _lint(text, f"cat {SOURCE} | filecheck {SOURCE}") == []
    assert _lint(text.replace("NEXT", "SAME"), f"cat {SOURCE} | filecheck {SOURCE}") == []
    empty = "// CHECK-EMPTY:\n// CHECK: b\n"
    assert [k for _, k, _ in _lint(empty, f"cat {SOURCE} | filecheck {SOURCE}")] == [
        Kind.FOLLOWER_FIRST
    ]
