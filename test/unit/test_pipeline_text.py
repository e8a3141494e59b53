"""MLIR's textual pass-pipeline syntax: elements, nesting, options, and every syntax error."""

from __future__ import annotations

import pytest

from pytest_mlirpipe.lowering.pipeline_text import (
    PipelineSyntaxError,
    parse_options,
    parse_pipeline,
)


def test_an_anchor_nests_its_passes_with_their_options_and_offsets():
    (anchor,) = parse_pipeline("func.func(a,b{x=1})")

    assert anchor.name == "func.func"
    assert anchor.is_anchor
    assert anchor.options is None
    assert anchor.text == "func.func(a,b{x=1})"
    a, b = anchor.children
    assert (a.name, a.options, a.offset, a.text, a.is_anchor) == ("a", None, 10, "a", False)
    assert (b.name, b.options, b.offset, b.text, b.is_anchor) == ("b", "x=1", 12, "b{x=1}", False)


def test_passes_of_an_element_carry_the_anchors_they_are_nested_in():
    (module,) = parse_pipeline("builtin.module(func.func(a{x=1}),b)")

    found = [(p.name, p.options, anchors) for p, anchors in module.passes()]

    assert found == [
        ("a", "x=1", ("builtin.module", "func.func")),
        ("b", None, ("builtin.module",)),
    ]


def test_a_pass_outside_any_anchor_is_its_own_only_pass():
    (element,) = parse_pipeline("canonicalize")

    assert element.passes() == [(element, ())]


def test_top_level_elements_are_split_at_commas_and_whitespace_is_ignored():
    elements = parse_pipeline('  a{x=1 y="a b"} ,  b ')

    assert [(e.name, e.options, e.offset, e.text) for e in elements] == [
        ("a", 'x=1 y="a b"', 2, 'a{x=1 y="a b"}'),
        ("b", None, 20, "b"),
    ]


def test_braces_and_parentheses_inside_quoted_options_do_not_end_the_options():
    (element,) = parse_pipeline("""a{x="}" y='(' z={1}}""")

    assert element.options == """x="}" y='(' z={1}"""


def test_an_empty_text_and_an_empty_nested_list_have_no_passes():
    assert parse_pipeline("") == ()
    (anchor,) = parse_pipeline("func.func()")
    assert anchor.children == ()
    assert anchor.passes() == []


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        pytest.param("func.func(a", "'(' after 'func.func' is never closed", 9, id="open-paren"),
        pytest.param("a(b,c", "'(' after 'a' is never closed", 1, id="open-paren-short"),
        pytest.param("a{x=1", "'{' is never closed", 1, id="open-brace"),
        pytest.param("func.func(a{x=1)", "'{' is never closed", 11, id="open-nested-brace"),
        pytest.param('a{x="1}', "'{' is never closed", 1, id="open-quote"),
        pytest.param("a,,b", "expected a pass name, found ','", 2, id="empty-name"),
        pytest.param("func.func(,a)", "expected a pass name, found ','", 10, id="empty-nested"),
        pytest.param("a,", "expected a pass name, found 'end of text'", 2, id="trailing-comma"),
        pytest.param("(a)", "expected a pass name, found '('", 0, id="no-anchor-name"),
        pytest.param("{x=1}", "expected a pass name, found '{'", 0, id="options-only"),
        pytest.param("a)", "unexpected ')' in pass pipeline", 1, id="stray-paren"),
        pytest.param("a b", "unexpected 'b' in pass pipeline", 2, id="missing-comma"),
        pytest.param(
            "func.func(a b)", "unexpected 'b' in pass pipeline", 12, id="missing-comma-nested"
        ),
    ],
)
def test_malformed_pipeline_is_reported_with_message_and_offset(text, message, offset):
    with pytest.raises(PipelineSyntaxError) as info:
        parse_pipeline(text)

    assert str(info.value) == message
    assert info.value.offset == offset


def test_a_syntax_error_is_a_value_error():
    assert issubclass(PipelineSyntaxError, ValueError)


@pytest.mark.parametrize(
    ("text", "options"),
    [
        (None, {}),
        ("", {}),
        ('a=1 b c="x y"', {"a": "1", "b": "true", "c": "x y"}),
        ("ops=linalg.*,tensor.empty", {"ops": "linalg.*,tensor.empty"}),
        (
            "copy-before-write unknown-type-conversion=identity-layout-map",
            {"copy-before-write": "true", "unknown-type-conversion": "identity-layout-map"},
        ),
    ],
)
def test_options_are_parsed_as_mlir_pass_options(text, options):
    assert parse_options(text) == options
