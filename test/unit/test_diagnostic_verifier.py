"""The `-verify-diagnostics` checker from strings: which line each `expected-*` line names, how
diagnostics meet them, and every message it prints, in mlir-opt's words."""

from __future__ import annotations

from pytest_mlirpipe.model import Diagnostic, Location
from pytest_mlirpipe.tools.diagnostic_verifier import DiagnosticVerifier


def verifier(text: str, only_expected: bool = False) -> DiagnosticVerifier:
    return DiagnosticVerifier(text, "t.mlir", only_expected)


def at(line: int, col: int = 3) -> Location:
    return Location("t.mlir", line, col)


def error(line: int | None, message: str, *notes: Diagnostic) -> Diagnostic:
    return Diagnostic("error", message, at(line) if line else None, notes)


# --- which line an expectation is about -------------------------------------------------------


def test_designators_name_the_lines_mlir_opt_gives_them():
    v = verifier(
        "op1\n"  # 1
        "// expected-error {{same line}}\n"  # 2
        "// expected-error@above {{above}}\n"  # 3: the last line that is no expectation
        "// expected-error@below {{below}}\n"  # 4
        "// expected-error @+3 {{plus}}\n"  # 5: spaces around the designator are allowed
        "// expected-error@-4 {{minus}}\n"  # 6
        "op7\n"  # 7
        "// expected-warning@unknown {{nowhere}}\n"  # 8
        "// expected-remark@below {{dangling}}\n"  # 9
    )
    lines = {e.text: e.line for e in v.expected}
    assert lines == {
        "same line": 2,
        "above": 1,
        "below": 7,
        "plus": 8,
        "minus": 2,
        "nowhere": None,
        "dangling": 10,  # a @below with no line after it: the end of the file
    }
    assert [e.kind for e in v.expected] == ["error"] * 5 + ["warning", "remark"]


def test_lines_not_in_the_exact_form_are_no_expectations():
    v = verifier(
        "// expected-error {{text}} and more\n"
        "// expected-error@ +1 {{spaced designator}}\n"
        "// expected-errors {{plural}}\n"
        "// expected-error text\n"
        "// expected-note@+1{{tight}}   \n"
    )
    assert [(e.kind, e.text) for e in v.expected] == [("note", "tight")]


def test_the_text_runs_from_the_first_open_to_the_last_close_braces():
    v = verifier("x // expected-error {{a}} {{b}}\n")
    assert v.expected[0].text == "a}} {{b"


# --- matching ---------------------------------------------------------------------------------


def test_a_diagnostic_containing_the_text_on_its_line_meets_the_expectation():
    v = verifier("x\n// expected-error@-1 {{not match}}\n")
    v.process([error(1, "type does not match the result")])
    assert v.finish()
    assert v.report == []


def test_an_expectation_not_met_is_reported_with_its_line_and_a_caret_under_it():
    v = verifier("op // expected-error {{wrong text}}\n")
    v.process([error(1, "right text")])
    assert not v.finish()
    assert v.report == [
        "t.mlir:1:3: error: unexpected error: right text\nop // expected-error {{wrong text}}\n  ^",
        't.mlir:1:7: error: expected error "wrong text" was not produced\n'
        "op // expected-error {{wrong text}}\n"
        "      ^~~~~~~~~~",
    ]


def test_a_diagnostic_of_another_kind_is_a_near_miss_reported_at_the_expectation():
    v = verifier("op // expected-warning {{text}}\n")
    v.process([error(1, "the text")])
    assert not v.finish()
    assert v.report[0] == (
        "t.mlir:1:7: error: 'error' diagnostic emitted when expecting a 'warning'\n"
        "op // expected-warning {{text}}\n"
        "      ^"
    )


def test_re_expectations_match_their_regex_parts_and_the_rest_literally():
    v = verifier("x\n// expected-error-re@-1 {{operand {{[0-9]+}} (i32)}}\n")
    v.process([error(1, "type of operand 12 (i32) is wrong")])
    assert v.finish()
    v = verifier("x\n// expected-error-re@-1 {{operand {{[0-9]+}} (i32)}}\n")
    v.process([error(1, "type of operand 12 xi32) is wrong")])
    assert not v.finish()


def test_notes_are_checked_one_by_one_but_not_the_op_mlir_prints_on_a_diagnostic():
    text = "op\n// expected-error@-1 {{bad}}\n// expected-note@-2 {{because}}\n"
    v = verifier(text)
    printed_op = Diagnostic("note", 'see current operation: "op"()', at(1))
    v.process([error(1, "bad", Diagnostic("note", "because of this", at(1)), printed_op)])
    assert v.finish()
    v = verifier("op\n")
    v.process([error(1, "bad", Diagnostic("note", "because of this", at(1)))])
    assert not v.finish()
    assert v.report[1] == "t.mlir:1:3: error: unexpected note: because of this\nop\n  ^"


def test_unknown_locations_meet_only_unknown_expectations():
    v = verifier("// expected-error@unknown {{lost}}\n// expected-error@unknown {{never}}\n")
    v.process([error(None, "lost somewhere"), error(None, "stray")])
    assert not v.finish()
    assert v.report == [
        "<unknown>:0: error: unexpected error: stray",
        '<unknown>:0: error: expected error "never" was not produced',
    ]


def test_a_diagnostic_located_in_another_file_or_at_line_0_is_unexpected():
    v = verifier("// expected-error@unknown {{module}}\n")
    v.process([Diagnostic("error", "module is bad", Location("t.mlir", 0, 0))])
    v.process([Diagnostic("error", "elsewhere", Location("other.mlir", 1, 1))])
    assert not v.finish()
    assert v.report == [
        "t.mlir:0:0: error: unexpected error: module is bad",
        "other.mlir:1:1: error: unexpected error: elsewhere",
        '<unknown>:0: error: expected error "module" was not produced',
    ]


def test_only_expected_ignores_diagnostics_nobody_expected():
    v = verifier("op // expected-error {{bad}}\n", only_expected=True)
    v.process([error(1, "bad"), error(1, "worse"), Diagnostic("warning", "bad", at(1))])
    assert v.finish()
    v = verifier("op // expected-error {{bad}}\n", only_expected=True)
    assert not v.finish()


def test_tabs_before_the_column_move_the_caret_to_the_tab_stop():
    v = verifier("\top // expected-error {{x}}\n")
    v.process([Diagnostic("error", "y", Location("t.mlir", 1, 2))])
    assert v.report == [
        "t.mlir:1:2: error: unexpected error: y\n        op // expected-error {{x}}\n        ^"
    ]


# --- malformed expectations -------------------------------------------------------------------


def test_a_regex_part_without_its_end_is_reported_and_fails_the_file():
    v = verifier("// expected-error-re {{doesn't {{match}}\n")
    assert v.report == [
        "t.mlir:1:4: error: found start of regex with no end '}}'\n"
        "// expected-error-re {{doesn't {{match}}\n"
        "   ^~~~~~~~~~~~~~~"
    ]
    assert v.expected == []
    assert not v.finish()


def test_an_invalid_regex_is_reported_with_the_reason():
    v = verifier("// expected-error-re {{a{{(}}b}}\n")
    assert v.report == [
        "t.mlir:1:4: error: invalid regex: missing ), unterminated subpattern at position 0\n"
        "// expected-error-re {{a{{(}}b}}\n"
        "   ^~~~~~~"
    ]
    assert not v.finish()
