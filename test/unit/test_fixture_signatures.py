"""The `mlirpipe` fixture's check() and compile() take exactly ModelChecker's keywords, with
the same defaults, and the tolerances travel as one object."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.results.compare import NO_TOLERANCES, Rule, Tolerances, compare
from pytest_mlirpipe.fixtures import MlirpipeFixture


def _parameters(fn) -> list[tuple[str, object, object]]:
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self"
    ]


@pytest.mark.parametrize("method", ["check", "compile"])
def test_the_fixture_takes_the_checkers_keywords_and_defaults(method):
    fixture, checker = getattr(MlirpipeFixture, method), getattr(ModelChecker, method)
    assert _parameters(fixture) == _parameters(checker)
    assert inspect.signature(fixture).return_annotation == (
        inspect.signature(checker).return_annotation
    )


def test_tolerances_not_given_leave_the_default_rule():
    f32 = np.dtype(np.float32)
    assert not NO_TOLERANCES.uniform
    assert NO_TOLERANCES.rule(f32, has_exact=True) is Rule.SCALED
    assert NO_TOLERANCES.of(f32) == (1e-4, 1e-5)


def test_given_tolerances_judge_every_inexact_result():
    f32 = np.dtype(np.float32)
    given = Tolerances(rtol=0.5)
    assert given.uniform and given.rule(f32, has_exact=True) is Rule.GIVEN
    assert given.of(f32) == (0.5, 1e-5)
    assert Tolerances(per_dtype={"float32": (0.1, 0.2)}).of(f32) == (0.1, 0.2)


def test_compare_takes_the_tolerances_as_one_object():
    actual, expected = [np.float32([1.0, 3.0])], [np.float32([1.0, 2.0])]
    assert not compare(actual, expected).ok
    assert compare(actual, expected, tolerances=Tolerances(rtol=0.5)).ok
