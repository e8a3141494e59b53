"""Models that draw random numbers: the same seed for every torch run, and results judged as
samples: correct lowerings pass, a lowering made wrong fails."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.results.compare import Tolerances, compare
from pytest_mlirpipe.execution.results.samples import Draws, draws_of, reseeded


class RandStats(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.rand_like(x)
        return a.mean(), a.std()


class NormalSamples(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.randn(x.shape)


class ExponentialInPlace(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.exponential_(3.0).mean()


class BernoulliMean(torch.nn.Module):
    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return torch.bernoulli(p).mean()


MODELS = [
    (RandStats, torch.zeros(256, 256)),
    (NormalSamples, torch.zeros(128, 64)),
    (ExponentialInPlace, torch.zeros(256, 256)),
    (BernoulliMean, torch.full((256, 256), 0.3)),
]


@pytest.mark.parametrize(("model", "x"), MODELS, ids=[m.__name__ for m, _ in MODELS])
def test_a_model_drawing_random_numbers_passes_when_lowered_right(model, x, tmp_path) -> None:
    checker = ModelChecker(cache_dir=None, work_dir=tmp_path)
    (outcome,) = checker.check(model(), x, pipelines=["refbackend"])
    assert outcome.verdict == "PASS"
    assert {r.rule for r in outcome.comparison.results} == {"samples"}


# A Python pass that makes the lowering of torch.rand wrong: the 2**-64 that scales the random
# bits into [0, 1) is doubled, so every sample lands in [0, 2).
WIDEN_RAND = """\
from pytest_mlirpipe.lowering import passes


@passes.register("widen-rand", "doubles the scale of torch-mlir's uniform samples (wrong)")
def widen_rand(options):
    def run(op, pass_):
        from torch_mlir import ir

        from pytest_mlirpipe.lowering.op_query import all_ops

        for inner in all_ops(op):
            if inner.name != "arith.constant":
                continue
            value = inner.attributes["value"]
            if isinstance(value, ir.FloatAttr) and 5.4e-20 < value.value < 5.5e-20:
                with inner.location:
                    inner.attributes["value"] = ir.FloatAttr.get(value.type, 2 * value.value)

    return run
"""
WRONG_PIPELINE = """
[pipeline]
name = "refbackend-wide-rand"
extends = "refbackend"

[[stage]]
name = "widen-rand"
before = "generalize-tensor-pad"
reason = "a deliberately wrong lowering of torch.rand"
passes = ["widen-rand"]
"""


def _wrong_rand_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModelChecker:
    """A checker that knows pipeline refbackend-wide-rand (torch.rand lowered wrong)."""
    (tmp_path / "widen_rand.py").write_text(WIDEN_RAND)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "widen_rand")
    (tmp_path / "pipes").mkdir()
    (tmp_path / "pipes" / "wide.toml").write_text(WRONG_PIPELINE)
    return ModelChecker(pipeline_dirs=[tmp_path / "pipes"], cache_dir=None, work_dir=tmp_path)


@pytest.mark.parametrize("model", [RandStats, BernoulliMean], ids=lambda m: m.__name__)
def test_a_lowering_that_draws_wrong_samples_fails(
    model, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker = _wrong_rand_checker(tmp_path, monkeypatch)
    x = torch.full((256, 256), 0.3) if model is BernoulliMean else torch.zeros(256, 256)
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(model(), x, pipelines=["refbackend-wide-rand"])
    text = info.value.format()
    assert "result 0 ('result0'): differs from torch's beyond the sample rule for random " in text
    assert "drew 65536 samples): |native - torch| = " in text
    assert "> 4 x max(|torch|, 1) / sqrt(samples) = 0.0156" in text


class OneDrawAndAMean(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.rand(1), torch.rand_like(x).mean()


def test_a_result_is_judged_by_its_own_draws_not_by_another_result_s_fewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker = _wrong_rand_checker(tmp_path, monkeypatch)
    with pytest.raises(ExecutionMismatch) as info:  # the single draw alone is not judged
        checker.check(OneDrawAndAMean(), torch.zeros(256, 256), pipelines=["refbackend-wide-rand"])
    text = info.value.format()
    assert "result 0 ('result0'): not judged: its 1 value may each be one of the few draws " in text
    assert "(aten.rand drew 1 samples; the sample rule needs 16 a value)" in text
    assert "result 1 ('result1'): differs from torch's beyond the sample rule for random " in text
    assert "(aten.rand_like drew 65536 samples): |native - torch| = " in text


def test_the_same_seed_gives_torch_the_same_samples_every_run() -> None:
    with reseeded():
        first = torch.rand(5)
    torch.rand(3)  # the user's own stream moves on, untouched by the reseeding
    with reseeded():
        second = torch.rand(5)
    assert torch.equal(first, second)


def test_random_ops_are_found_in_the_exported_program_with_their_sample_count() -> None:
    program = torch.export.export(RandStats(), (torch.zeros(16, 8),))
    per_result = ((("aten.rand_like",), 128),) * 2
    assert draws_of(program) == Draws(("aten.rand_like",), 128, (True, True), per_result)
    assert draws_of(torch.export.export(torch.nn.ReLU(), (torch.zeros(3),))) is None


DRAWS = Tolerances(draws=Draws(("aten.rand",), 10_000))


def test_samples_of_the_same_distribution_match_and_a_shifted_one_does_not() -> None:
    gen = np.random.default_rng(0)
    torch_samples = gen.random(10_000).astype(np.float32)
    same = gen.random(10_000).astype(np.float32)
    shifted = (gen.random(10_000) * 1.1).astype(np.float32)
    assert compare([same], [torch_samples], tolerances=DRAWS).ok
    failed = compare([shifted], [torch_samples], tolerances=DRAWS)
    assert not failed.ok
    assert failed.format().startswith(
        "result 0: differs from torch's beyond the sample rule for random results (aten.rand "
        "drew 10000 samples): the distributions of their values differ (Kolmogorov-Smirnov "
        "distance "
    )


def test_a_statistic_is_judged_by_the_sample_size() -> None:
    mean = np.array(0.5, dtype=np.float32)
    assert compare([np.array(0.53, np.float32)], [mean], tolerances=DRAWS).ok  # 0.03 <= 0.04
    assert not compare([np.array(0.55, np.float32)], [mean], tolerances=DRAWS).ok


def test_a_given_tolerance_still_judges_a_random_model_element_by_element() -> None:
    given = Tolerances(rtol=0.0, atol=0.01, draws=Draws(("aten.rand",), 10_000))
    result = compare([np.array(0.53, np.float32)], [np.array(0.5, np.float32)], tolerances=given)
    assert not result.ok and result.results[0].rule == "given"


def test_a_result_that_does_not_depend_on_a_draw_is_judged_by_the_usual_rules(tmp_path) -> None:
    class Both(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.rand_like(x).mean(), x * 2

    program = torch.export.export(Both(), (torch.zeros(64, 64),))
    assert draws_of(program).results == (True, False)
    (mean, doubled) = compare(
        [np.array(0.5, np.float32), np.arange(4, dtype=np.float32)[::-1].copy()],
        [np.array(0.5, np.float32), np.arange(4, dtype=np.float32)],
        tolerances=Tolerances(draws=draws_of(program)),
    ).results
    assert (mean.rule, mean.ok) == ("samples", True)
    assert (doubled.rule, doubled.ok) == ("per-dtype", False)  # a permutation is wrong here


def test_a_few_values_too_few_for_a_distribution_test_are_judged_each_as_a_statistic() -> None:
    few = Tolerances(draws=Draws(("aten.rand",), 10_000))
    wild = compare([np.array([100.0, 200.0, 300.0])], [np.array([0.1, 0.2, 0.3])], tolerances=few)
    assert not wild.ok
    assert "|native - torch| = 300 > 4 x max(|torch|, 1) / sqrt(samples) = 0.04" in wild.format()
    assert compare([np.array([0.12, 0.2])], [np.array([0.1, 0.2])], tolerances=few).ok


def test_equal_infinities_in_a_random_result_match() -> None:
    inf = np.array(np.inf, np.float32)
    assert compare([inf], [inf], tolerances=DRAWS).ok


def test_values_that_may_each_be_one_draw_are_not_judged_and_say_so() -> None:
    few_draws = Tolerances(draws=Draws(("aten.randn",), 10))
    (raw,) = compare(
        [np.array([4.1, -3.0, 0.2], np.float32)],
        [np.array([-0.4, 1.1, 0.3], np.float32)],
        tolerances=few_draws,
    ).results
    assert (raw.ok, raw.kind) == (True, "unjudged")
    assert raw.format() == (
        "result 0: not judged: its 3 values may each be one of the few draws (aten.randn drew "
        "10 samples; the sample rule needs 16 a value), so only its shape and dtype were "
        "compared (they match)"
    )
    # a statistic of enough draws is judged, and NaN where torch has none still fails
    assert compare([np.array(9.0)], [np.array(0.5)], tolerances=DRAWS).results[0].kind == "values"
    nan = compare([np.array([np.nan, 1.0])], [np.array([0.5, 1.0])], tolerances=few_draws)
    assert not nan.ok


class FewRawDraws(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.randn(3)


def test_a_passing_check_of_unjudged_random_values_warns(tmp_path) -> None:
    from pytest_mlirpipe import RandomResultNotJudged

    checker = ModelChecker(cache_dir=None, work_dir=tmp_path)
    with pytest.warns(RandomResultNotJudged) as caught:
        (outcome,) = checker.check(FewRawDraws(), torch.zeros(3), pipelines=["refbackend"])
    assert outcome.verdict == "PASS"
    assert str(caught[0].message) == (
        "case 'FewRawDraws' through pipeline 'refbackend': result 0 ('result0'): not judged: "
        "its 3 values may each be one of the few draws (aten.randn drew 3 samples; the sample "
        "rule needs 16 a value), so only its shape and dtype were compared (they match)"
    )


def test_the_warning_of_unjudged_values_points_at_the_test_s_line(mlirpipe) -> None:
    from pytest_mlirpipe import RandomResultNotJudged

    with pytest.warns(RandomResultNotJudged) as caught:
        line = sys._getframe().f_lineno + 1
        mlirpipe.check(FewRawDraws(), torch.zeros(3), pipelines=["refbackend"])
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
